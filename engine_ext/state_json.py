"""States as JSON documents (`kashgar/state@1`): full states, players' views, and new games.

The core keeps a state as one integer array; this module is the only place that knows how
that array maps to the document. Card instances get ids by kind in a canonical order, so a
document never names instance ids, and two documents that differ only in which copy of a card
is where load to states that play the same.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import Any, TypeGuard

import jsonschema
from jsonschema.exceptions import best_match

from engine_ext import core as L
from engine_ext import program
from engine_ext.carddata import RES_INDEX, RESOURCES, CardData
from engine_ext.checks import patriarchs_in_game, start_cards_dealt

SCHEMA_ID = "kashgar/state@1"
MAX_DOC_BYTES = 32 * 1024  # a real state is at most about 3 KB (4 players, late in the game)
MAX_DEPTH = 32  # a real state nests 5 deep (decks/contract/known/0/1)
SCHEMA_ERRORS = 16  # the schema errors looked at to name the wrong field
DECK_NAMES = ("standard", "special", "contract")
WAIT_NAMES = {L.P_CHOOSE: "choose", L.P_KEEP: "keep", L.P_FULFIL: "fulfil", L.P_WHEAT: "wheat",
              L.P_CINNAMON: "zimt", L.P_REMOVE: "remove", L.P_REMOVE_ANY: "remove_any",
              L.P_REMOVE_PAT: "remove_patriarch", L.P_ROUTE: "route", L.P_TAKE: "take",
              L.P_TRADE_PAY: "trade_pay", L.P_TRADE: "trade", L.P_SETDIST: "set_distinct",
              L.P_CFREE: "contracts_free"}
WAIT_CODES = {v: k for k, v in WAIT_NAMES.items()}
SLOT_NAMES = ("a", "b", "part")


class StateError(ValueError):
    """A state document that cannot be a Kashgar state. `pointer` is the JSON pointer of the
    field that is wrong, `message` says what is wrong with it."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled with both fields, so it crosses a process boundary (arena workers, root-parallel
        # parts) intact; the default rebuilds it from the one-string args and fails
        return (type(self), (self.pointer, self.message))


#: Seeds of a deal (and of the searches) are the integers 0 .. SEEDS - 1.
SEEDS = 1 << 63


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    text = resources.files("engine_ext").joinpath("data/state.schema.json").read_text(encoding="utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


def state_schema() -> dict[str, Any]:
    """The published state schema (`data/state.schema.json`) as one self-contained document: its
    `$defs` references replaced by what they name (for embedding, e.g. in the OpenAPI document)."""
    full = schema()
    out: dict[str, Any] = _inline_refs(full, full.get("$defs", {}))
    return out


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with its local `$ref`s replaced by what they name (validation is several
    times faster without reference lookups; the shipped file keeps its `$defs`)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline_refs(defs[ref.split("/")[-1]], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


def is_strict_int(value: Any) -> TypeGuard[int]:
    """A JSON integer as the engine reads one: an int, not a bool and not a whole float (3.0).
    JSON Schema counts 3.0 as an integer; the engine does not (a float loses precision past
    2**53, which would silently change an `rng`, and an integer field is written as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


_STRICT_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: is_strict_int(value))
_StrictValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_STRICT_TYPES)


@lru_cache(maxsize=1)
def _validator() -> Any:
    full = schema()
    return _StrictValidator(_inline_refs(full, full.get("$defs", {})))


def json_pointer(path: Any) -> str:
    """The JSON pointer (RFC 6901) of a path of keys and indices: `~` and `/` escaped."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _message(e: jsonschema.ValidationError) -> str:
    """What is wrong, in words: for a value that fits none of a field's alternatives by type
    alone (an `observer` of 0.0), the types it may have rather than "not valid under any"."""
    if e.validator in ("oneOf", "anyOf") and e.context:
        here = [c for c in e.context if not c.relative_path]
        if here and all(c.validator == "type" for c in here):
            types = " or ".join(dict.fromkeys(repr(c.validator_value) for c in here))
            return f"{e.instance!r} is not of type {types}"
    return str(e.message)


def _not_json(doc: Any) -> StateError:
    """Where a document holds what no JSON text can (it comes from a Python caller): a key that is
    not a string, a value of another type, an integer too long to write, or nesting deeper than
    MAX_DEPTH."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while stack:
        path, node = stack.pop()
        where = json_pointer(path)
        if len(path) > MAX_DEPTH:
            return StateError(where, f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(k, str):
                    return StateError(where, f"an object's keys are strings, not {type(k).__name__} ({k!r:.40})")
                stack.append(((*path, k), v))
        elif isinstance(node, list | tuple):
            stack.extend(((*path, i), v) for i, v in enumerate(node))
        elif isinstance(node, int) and not isinstance(node, bool):
            if node.bit_length() > 64 * 8:
                return StateError(where, f"an integer of {node.bit_length()} bits is no state's number")
        elif not isinstance(node, str | float | bool) and node is not None:
            return StateError(where, f"not a JSON value: a {type(node).__name__}")
    return StateError("", "not a JSON document")


def validate_schema(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise StateError("", "a state is a JSON object")
    try:
        size = len(json.dumps(doc, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        raise _not_json(doc) from None
    if size > MAX_DOC_BYTES:
        raise StateError("", f"the state document is larger than {MAX_DOC_BYTES} bytes ({size}; a real state "
                             "is a few KB)")
    validator = _validator()
    # the first errors are enough to name the field (a large wrong document has thousands)
    errors = sorted(itertools.islice(validator.iter_errors(doc), SCHEMA_ERRORS),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        # inside a field's alternatives (`oneOf`: a deck as a list or as {"count", "known"}), the
        # error of the alternative the value is meant as, which names the field itself
        errors = [best_match([e]) or e for e in errors]
        e = max(errors, key=lambda e: len(e.absolute_path))
        path = list(e.absolute_path)
        if e.validator == "required" and isinstance(e.instance, dict):
            missing = [k for k in e.validator_value if k not in e.instance]
            path += missing[:1]  # point at the missing field itself
        if e.validator == "additionalProperties" and isinstance(e.instance, dict):
            known = set(e.schema.get("properties", {}))
            patterns = list(e.schema.get("patternProperties", {}))
            extra = sorted(k for k in e.instance if k not in known and not any(re.search(p, k) for p in patterns))
            path += extra[:1]  # point at the unknown field itself
        raise StateError(json_pointer(path), _message(e))


# ---- variants ------------------------------------------------------------------------------

def variant_counts(variant: Any, data: CardData) -> dict[int, int]:
    """How many copies of each Cut-and-Thrust kind are shuffled in (pointer /variant)."""
    additional = [k for k in data.kinds if k.deck == "additional"]
    if variant in (None, "base", "off"):
        return {}
    if variant == "all":
        return {k.index: k.copies for k in additional}
    where = "/variant"  # of each slug: /variant/i in a list, /variant/additional/i in the object
    if isinstance(variant, list):
        slugs = variant
    elif isinstance(variant, dict):
        where = "/variant/additional"
        slugs = variant.get("additional", [])
        if not isinstance(slugs, list):
            raise StateError("/variant/additional", "must be a list of card slugs")
    else:
        raise StateError("/variant", "must be null, 'all', or {'additional': [slugs]}")
    counts: dict[int, int] = {}
    for i, slug in enumerate(slugs):
        kind = data.by_slug.get(slug) if isinstance(slug, str) else None
        if kind is None or kind.deck != "additional":
            raise StateError(f"{where}/{i}", f"{slug!r} is not a Cut-and-Thrust card")
        counts[kind.index] = counts.get(kind.index, 0) + 1
        if counts[kind.index] > kind.copies:
            raise StateError(f"{where}/{i}", f"the game has only {kind.copies} {slug}")
    return counts


def variant_json(counts: dict[int, int], data: CardData) -> dict[str, Any]:
    return {"additional": [data.kinds[k].slug for k in sorted(counts) for _ in range(counts[k])]}


# ---- new games ------------------------------------------------------------------------------

def new_game_doc(players: int, seed: int, variant: Any, data: CardData, turn_limit: int = 400) -> dict[str, Any]:
    """The setup of the rules, shuffled by `seed`, as a full state document."""
    if not isinstance(players, int) or not 2 <= players <= 4:
        raise StateError("/players", "2, 3 or 4 players")
    if not is_strict_int(seed) or not 0 <= seed < SEEDS:
        raise StateError("/seed", "the seed is an integer in 0..2^63-1")
    counts = variant_counts(variant, data)
    rnd = random.Random(seed)
    start = [k for k in data.kinds if k.deck == "start"]
    rnd.shuffle(start)
    dealt = start[: start_cards_dealt(players)]
    seats = []
    for p in range(players):
        seats.append({
            "resources": {r: 3 for r in RESOURCES},
            "caravans": [["patriarch", dealt[p * 3 + c].slug] for c in range(3)],
            "contracts": [],
            "last_scored": -1,
        })
    first = min(range(len(dealt)), key=lambda i: dealt[i].rank) // 3
    standard = [k.slug for k in data.kinds if k.deck == "standard" for _ in range(k.copies)]
    standard += [data.kinds[k].slug for k in sorted(counts) for _ in range(counts[k])]
    special = [k.slug for k in data.kinds if k.deck == "special" for _ in range(k.copies)]
    contracts = [c.number for c in data.contracts]
    rnd.shuffle(standard)
    rnd.shuffle(special)
    rnd.shuffle(contracts)
    return {
        "schema": SCHEMA_ID,
        "players": players,
        "variant": variant_json(counts, data),
        "turn_limit": turn_limit,
        "start_player": first,
        "turn_player": first,
        "turn": 0,
        "end_triggered": False,
        "game_over": False,
        "observer": None,
        "seats": seats,
        "display": contracts[:4],
        "discard": [],
        "removed": [],
        # the spare Patriarch waits for the Aristokratin; without her it goes back to the box
        "spare_patriarch": any(k.slug == "aristokratin" for k in dealt),
        "decks": {"standard": standard, "special": special, "contract": contracts[4:]},
        "pending": None,
        "rng": rnd.getrandbits(63) | 1,
    }


# ---- document -> state ---------------------------------------------------------------------

class _Builder:
    """Places every card of a document into the core's array, checking that they add up."""

    def __init__(self, data: CardData, counts: dict[int, int], seed: int = 1) -> None:
        self.data = data
        self.shuffler = random.Random(seed)
        self.d = [0] * L.D_SIZE
        for card in range(L.NCARDS):  # no card follows one outside a caravan, as play leaves it
            self.d[L.O_NXT + card] = -1
        self.pool: dict[int, list[int]] = {}
        for kind, ids in data.ids_by_kind.items():
            k = data.kinds[kind]
            n = counts.get(kind, 0) if k.deck == "additional" else len(ids)
            self.pool[kind] = list(ids[:n])
            for card in ids[n:]:
                self.d[L.O_LOC + card] = L.L_UNUSED
        self.contracts_left = set(range(L.NCON))
        self.dealt: list[tuple[str, str]] = []  # (deck, pointer) of each Patriarch and Start card placed

    def card(self, slug: Any, pointer: str, allowed: tuple[str, ...]) -> tuple[int, int]:
        """An instance id for a card named in the document, and whether it is turned."""
        if not isinstance(slug, str) or slug not in self.data.by_slug:
            raise StateError(pointer, f"unknown card {slug!r}")
        kind = self.data.by_slug[slug]
        flip = 0
        if kind.slug == "matriarch":
            kind, flip = self.data.patriarch, 1
        if kind.deck not in allowed:
            raise StateError(pointer, f"a {kind.deck} card ({slug}) cannot be here")
        pool = self.pool.get(kind.index, [])
        if not pool:
            raise StateError(pointer, f"more {kind.slug} cards than this game has")
        if kind.deck in ("patriarch", "start"):
            self.dealt.append((kind.deck, pointer))
        return pool.pop(0), flip

    def contract(self, number: Any, pointer: str) -> int:
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= L.NCON:
            raise StateError(pointer, "a contract is a number 1..40")
        c = number - 1
        if c not in self.contracts_left:
            raise StateError(pointer, f"contract {number} appears twice")
        self.contracts_left.remove(c)
        return c

    def leftovers(self, decks: tuple[str, ...]) -> list[int]:
        out = []
        for kind, ids in self.pool.items():
            if self.data.kinds[kind].deck in decks:
                out.extend(ids)
        return sorted(out, key=lambda card: (self.data.card_kind[card], card))


PERSON_DECKS = ("patriarch", "start", "standard", "special", "additional")
STD_DECKS = ("standard", "additional")


def _int(doc: dict[str, Any], key: str, lo: int, hi: int, default: int | None = None) -> int:
    v = doc.get(key, default)
    if not is_strict_int(v) or not lo <= v <= hi:
        raise StateError(f"/{key}", f"must be an integer in {lo}..{hi}")
    return v


def load_doc(doc: Any, data: CardData) -> tuple[list[int], int, int | None]:
    """Check a document and turn it into the core's array. Returns (array, rng, observer)."""
    validate_schema(doc)
    n = _int(doc, "players", 2, 4)
    seats = doc["seats"]
    if len(seats) != n:
        raise StateError("/seats", f"{n} players need {n} seats, not {len(seats)}")
    observer = doc.get("observer")
    if observer is not None and not is_strict_int(observer):
        raise StateError("/observer", "must be null or a seat number (an integer)")
    if observer is not None and not 0 <= observer < n:
        raise StateError("/observer", f"no player {observer} in a {n}-player game")
    counts = variant_counts(doc.get("variant"), data)
    rng = doc.get("rng", 1) if observer is None else 1
    b = _Builder(data, counts, int(rng))
    d = b.d
    d[L.S_PLAYERS] = n
    d[L.S_START] = _int(doc, "start_player", 0, n - 1)
    d[L.S_TURNPL] = _int(doc, "turn_player", 0, n - 1)
    d[L.S_TURN] = _int(doc, "turn", 0, 10000)
    d[L.S_TURNLIM] = _int(doc, "turn_limit", 1, 10000, 400)
    if d[L.S_TURN] >= d[L.S_TURNLIM] and not doc.get("game_over"):
        raise StateError("/turn", f"turn {d[L.S_TURN]} is at or past the turn limit {d[L.S_TURNLIM]}, "
                                  "so the game is over")
    d[L.S_ENDTRIG] = 1 if doc.get("end_triggered") else 0
    d[L.S_SPARE] = -1
    d[L.S_DECIDER] = d[L.S_TURNPL]
    pending = doc.get("pending")
    if observer is not None and "rng" in doc:
        raise StateError("/rng", "a view has no rng: the seed of the state's shuffles is hidden from every player")
    _check_game_over(doc, d, n)
    d[L.S_PHASE] = L.PH_OVER if doc.get("game_over") else (L.PH_EFFECT if pending else L.PH_SELECT)
    # caravans
    for p, seat in enumerate(seats):
        base = f"/seats/{p}"
        for r, name in enumerate(RESOURCES):
            d[L.O_RES + p * 7 + r] = seat["resources"][name]
        caravans = seat["caravans"]
        d[L.O_NCAR + p] = len(caravans)
        for c, caravan in enumerate(caravans):
            car = p * 4 + c
            d[L.O_CAR + car * 3] = -1  # an empty caravan has no first card, as play leaves it
            prev = -1
            for pos, slug in enumerate(caravan):
                card, flip = b.card(slug, f"{base}/caravans/{c}/{pos}", PERSON_DECKS)
                d[L.O_LOC + card] = car
                d[L.O_FLIP + card] = flip
                d[L.O_NXT + card] = -1
                if prev < 0:
                    d[L.O_CAR + car * 3] = card
                else:
                    d[L.O_NXT + prev] = card
                prev = card
                kind = data.kinds[data.card_kind[card]]
                if kind.vp == "wheat":
                    d[L.O_PL + p * 8 + L.PL_NBAUER] += 1
                else:
                    d[L.O_PL + p * 8 + L.PL_CARDVP] += int(kind.vp)
            d[L.O_CAR + car * 3 + 1] = prev
            d[L.O_CAR + car * 3 + 2] = len(caravan)
        for i, number in enumerate(seat["contracts"]):
            con = b.contract(number, f"{base}/contracts/{i}")
            d[L.O_CLOC + con] = p
            d[L.O_PL + p * 8 + L.PL_NCON] += 1
            d[L.O_PL + p * 8 + L.PL_CVP] += data.contracts[con].vp
            if data.contracts[con].kind == "wheat":
                d[L.O_PL + p * 8 + L.PL_NWHEAT] += 1
        last = d[L.O_PL + p * 8 + L.PL_LAST] = seat.get("last_scored", -1)
        if last >= d[L.S_TURN]:
            raise StateError(f"{base}/last_scored", f"a VP total is scored when a turn ends: on turn {d[L.S_TURN] - 1} "
                                                    f"at the latest (turn {d[L.S_TURN]} has not ended), not {last}")
    # the face-up contracts
    for i, number in enumerate(doc["display"]):
        con = b.contract(number, f"/display/{i}")
        d[L.O_DISP + i] = con
        d[L.O_CLOC + con] = L.CL_DISPLAY
    d[L.S_DISP_N] = len(doc["display"])
    # the mid-turn step, with any drawn cards
    hidden_limbo = 0
    if pending:
        hidden_limbo = _load_pending(pending, doc, b, n)
    for i, slug in enumerate(doc["discard"]):
        card, _ = b.card(slug, f"/discard/{i}", STD_DECKS)
        d[L.O_DISC + i] = card
        d[L.O_LOC + card] = L.L_DISC
    d[L.S_DISC_N] = len(doc["discard"])
    for i, slug in enumerate(doc["removed"]):
        card, flip = b.card(slug, f"/removed/{i}", PERSON_DECKS)
        d[L.O_LOC + card] = L.L_BOX
        d[L.O_FLIP + card] = flip
    decks = doc.get("decks") or {}
    _load_person_deck(b, decks.get("standard"), "standard", observer, hidden_limbo if d[L.S_LIMBO_SRC] == 0 else 0)
    _load_person_deck(b, decks.get("special"), "special", observer, hidden_limbo if d[L.S_LIMBO_SRC] == 1 else 0)
    _load_contract_deck(b, decks.get("contract"), observer, hidden_limbo if d[L.S_LIMBO_SRC] == 2 else 0)
    _check_deal(b, n, bool(doc.get("spare_patriarch")))
    # Patriarchs and Start cards not in play
    pats = b.pool.get(data.patriarch.index, [])
    if doc.get("spare_patriarch"):
        if not pats:
            raise StateError("/spare_patriarch", "no Patriarch is left for the spare")
        d[L.S_SPARE] = pats[0]
        d[L.O_LOC + pats[0]] = L.L_SPARE
        pats = pats[1:]
    for card in pats + b.leftovers(("start",)):
        d[L.O_LOC + card] = L.L_UNUSED
    for p in range(n):
        # the VP total the end of the turn compares with (a change since then is scored on this turn)
        d[L.O_PL + p * 8 + L.PL_VPC] = doc["seats"][p].get("vp_turn_start", _vp(d, p))
    return d, int(rng) or 1, observer


def _check_game_over(doc: dict[str, Any], d: list[int], n: int) -> None:
    """A finished game ended a turn: its last round's (after someone reached 25 VP), or the
    turn limit's; and it waits for nothing."""
    if not doc.get("game_over"):
        return
    if doc.get("pending"):
        raise StateError("/pending", "a finished game has no step pending")
    last_seat = (d[L.S_START] + n - 1) % n
    if d[L.S_TURN] == 0 or (d[L.S_TURN] < d[L.S_TURNLIM] and not (d[L.S_ENDTRIG] and d[L.S_TURNPL] == last_seat)):
        raise StateError("/game_over", f"the game ends at the turn limit or after the last player's turn (player "
                                       f"{last_seat}) once the end is triggered: not over at turn {d[L.S_TURN]}, "
                                       f"player {d[L.S_TURNPL]}")


def _check_deal(b: _Builder, n: int, spare: bool) -> None:
    """The Start cards and Patriarchs add up for `n` players (`checks`: 3 per player, one more
    Patriarch with the Aristokratin). A seat's Start cards stay with its caravans or are removed,
    so a seat holds at most its 3; a document that deals fewer Start cards than the game has is a
    hand-made position, and then the Patriarchs are not counted."""
    data = b.data
    starts = [ptr for deck, ptr in b.dealt if deck == "start"]
    pats = [ptr for deck, ptr in b.dealt if deck == "patriarch"]
    for p in range(n):
        mine = [ptr for ptr in starts if ptr.startswith(f"/seats/{p}/")]
        if len(mine) > start_cards_dealt(1):
            raise StateError(mine[start_cards_dealt(1)], f"player {p} was dealt {start_cards_dealt(1)} Start cards, "
                                                         "this is one more")
    if len(starts) > start_cards_dealt(n):
        raise StateError(starts[start_cards_dealt(n)], f"a {n}-player game deals {start_cards_dealt(n)} Start cards, "
                                                       "this is one more")
    if len(starts) < start_cards_dealt(n):
        return
    aristokratin = data.by_slug["aristokratin"].index
    dealt = not b.pool.get(aristokratin, [None])
    if spare and not dealt:
        raise StateError("/spare_patriarch", "the spare Patriarch is for the Aristokratin, and she was not dealt "
                                             "(without her it goes back to the box)")
    want = patriarchs_in_game(n, dealt)
    have = len(pats) + spare
    where = "with the Aristokratin's spare" if dealt else "without the Aristokratin"
    for p in range(n):
        mine = [ptr for ptr in pats if ptr.startswith(f"/seats/{p}/")]
        most = patriarchs_in_game(1, dealt and not spare)
        if len(mine) > most:
            raise StateError(mine[most], f"player {p} holds at most {most} Patriarchs, this is one more")
    if have > want:
        raise StateError(pats[want - spare], f"a {n}-player game has {want} Patriarchs ({where}), this is one more")
    if have < want:
        raise StateError("/spare_patriarch" if dealt and not spare and have == want - 1 else "/removed",
                         f"a {n}-player game has {want} Patriarchs ({where}), {have} are in play, removed or spare")


def _vp(d: list[int], p: int) -> int:
    """Seat `p`'s VP total in the layout `d` (as `State.vp`)."""
    b = L.O_PL + p * 8
    return int(d[b + L.PL_CVP] + d[b + L.PL_CARDVP] + d[b + L.PL_NBAUER] * d[b + L.PL_NWHEAT])


def _read_deck(spec: Any, pointer: str, place: Callable[[Any, str], int], d: list[int], known_off: int,
               observer_bit: int) -> tuple[dict[int, int], int | None]:
    """The positions a deck document names (position -> card or contract id) and its count,
    from any of its forms: a list (top first), {"cards", "known_by"} or {"count", "known"}.
    Sets what each named card's position is known to: `known_by`, or `observer_bit` in a view."""
    known: dict[int, int] = {}
    if isinstance(spec, list):
        for i, x in enumerate(spec):
            known[i] = place(x, f"{pointer}/{i}")
        return known, len(spec)
    if not isinstance(spec, dict):
        return known, None
    cards = spec.get("cards")
    masks = spec.get("known_by")
    if cards is None and masks is not None:
        raise StateError(f"{pointer}/known_by", "who knows each card's place goes with the cards, in order ('cards')")
    if cards is not None:
        for i, x in enumerate(cards):
            known[i] = place(x, f"{pointer}/cards/{i}")
        masks = masks if masks is not None else [0] * len(cards)
        if len(masks) != len(cards):
            raise StateError(f"{pointer}/known_by", f"one mask of seats per card: {len(cards)}, not {len(masks)}")
        seats = (1 << d[L.S_PLAYERS]) - 1
        for i, mask in enumerate(masks):
            if mask & ~seats:
                raise StateError(f"{pointer}/known_by/{i}", f"a mask of the seats 0..{d[L.S_PLAYERS] - 1} "
                                                            f"(at most {seats}), not {mask}")
            d[known_off + known[i]] = mask
        return known, len(cards)
    for j, (idx, x) in enumerate(spec.get("known", [])):
        if idx in known:
            raise StateError(f"{pointer}/known/{j}", f"position {idx} is given twice")
        known[idx] = place(x, f"{pointer}/known/{j}/1")
        d[known_off + known[idx]] = observer_bit
    count = spec.get("count")
    return known, count if isinstance(count, int) else None


def _load_person_deck(b: _Builder, spec: Any, name: str, observer: int | None, hidden_limbo: int) -> None:
    d = b.d
    decks = STD_DECKS if name == "standard" else ("special",)
    off, cap = (L.O_STD, L.STD_CAP) if name == "standard" else (L.O_SPC, L.SPC_CAP)
    loc = L.L_STD if name == "standard" else L.L_SPC
    pointer = f"/decks/{name}"
    bit = 1 << observer if observer is not None and name == "special" else 0
    known, count = _read_deck(spec, pointer, lambda x, ptr: b.card(x, ptr, decks)[0], d, L.O_KNOWN, bit)
    rest = b.leftovers(decks)
    b.shuffler.shuffle(rest)  # the part of the deck the document leaves out is shuffled
    # cards drawn mid-turn that the document does not name come from the unseen pool
    for i in range(hidden_limbo):
        if not rest:
            raise StateError("/pending/drawn", "more drawn cards than the deck could hold")
        card = rest.pop(0)
        b.pool[b.data.card_kind[card]].remove(card)
        slot = d[L.S_LIMBO_N] - hidden_limbo + i
        d[L.O_LIMBO + slot] = card
        d[L.O_LOC + card] = L.L_LIMBO
    if count is None:
        count = len(known) + len(rest)
    if count != len(known) + len(rest) or (known and max(known) >= count):
        raise StateError(pointer, f"card counts do not add up: the {name} deck must hold "
                                  f"{len(known) + len(rest)} cards, not {count}")
    if count > cap:
        raise StateError(pointer, f"the {name} deck holds at most {cap} cards")
    for i in range(count):
        card = known[i] if i in known else rest.pop(0)
        if i not in known:
            b.pool[b.data.card_kind[card]].remove(card)
        d[off + i] = card
        d[L.O_LOC + card] = loc
    top, n_ = (L.S_STD_TOP, L.S_STD_N) if name == "standard" else (L.S_SPC_TOP, L.S_SPC_N)
    d[top] = 0
    d[n_] = count


def _load_contract_deck(b: _Builder, spec: Any, observer: int | None, hidden_limbo: int) -> None:
    d = b.d
    pointer = "/decks/contract"
    bit = 1 << observer if observer is not None else 0
    known, count = _read_deck(spec, pointer, b.contract, d, L.O_CKNOWN, bit)
    rest = sorted(b.contracts_left)
    b.shuffler.shuffle(rest)
    for i in range(hidden_limbo):
        if not rest:
            raise StateError("/pending/drawn", "more drawn contracts than the deck could hold")
        con = rest.pop(0)
        b.contracts_left.remove(con)
        slot = d[L.S_LIMBO_N] - hidden_limbo + i
        d[L.O_LIMBO + slot] = con
        d[L.O_CLOC + con] = L.CL_LIMBO
    if count is None:
        count = len(known) + len(rest)
    if count != len(known) + len(rest) or (known and max(known) >= count):
        raise _contract_count_error(b, spec, known, rest, count)
    for i in range(count):
        con = known[i] if i in known else rest.pop(0)
        b.contracts_left.discard(con)
        d[L.O_CON + i] = con
        d[L.O_CLOC + con] = L.CL_DECK
    d[L.S_CON_TOP] = 0
    d[L.S_CON_N] = count


def _contract_count_error(b: _Builder, spec: Any, known: dict[int, int], rest: list[int], count: int) -> StateError:
    """Why the contract deck's count does not add up, on the field most likely wrong: the display
    when it shows fewer than 4 contracts while contracts are unaccounted for (the rules refill it at
    once from the deck), else the deck; a full state's deck names the contracts that are nowhere."""
    want = len(known) + len(rest)
    shown = b.d[L.S_DISP_N]
    listed = isinstance(spec, list) or (isinstance(spec, dict) and spec.get("cards") is not None)
    lost = (f"contracts {sorted(c + 1 for c in rest)} are nowhere (not on the display, with a seat, drawn "
            f"or in the deck), so ") if listed and rest else ""
    if shown < 4 and want > count:
        return StateError("/display", f"the display shows {shown} contracts, not 4 (it is refilled from the "
                                      f"contract deck at once while the deck has any); {lost}with this display "
                                      f"the contract deck (/decks/contract) would hold {want} contracts, not {count}")
    return StateError("/decks/contract", f"card counts do not add up: {lost}the contract deck must hold "
                                         f"{want} contracts, not {count}")


def _res_index(v: Any, pointer: str) -> int:
    if v is None:
        return -1
    if v not in RES_INDEX:
        raise StateError(pointer, f"unknown resource {v!r}")
    return RES_INDEX[v]


def _card_at(d: list[int], data: CardData, car: int, pos: int, slug: str, pointer: str) -> int:
    """The card at `pos` of caravan `car` (0 = front), which must be a `slug`."""
    card = d[L.O_CAR + car * 3]
    for _ in range(pos):
        card = d[L.O_NXT + card] if card >= 0 else -1
    if card < 0 or pos >= d[L.O_CAR + car * 3 + 2]:
        raise StateError(pointer, "no card at that position of the caravan")
    actual = data.kinds[data.card_kind[card]].slug
    if d[L.O_FLIP + card]:
        actual = "matriarch"
    if actual != slug:
        raise StateError(pointer, f"the card there is {actual}, not {slug}")
    return card


def _load_pending(pend: dict[str, Any], doc: dict[str, Any], b: _Builder, n: int) -> int:
    """The registers of a step waiting for a decision. Returns how many drawn cards the
    document leaves unnamed (a view of another player's secret draw). The step must be one where
    the acting card's action stops for a decision (`engine_ext.program`), with the registers that
    decision reads in the ranges the engine produces; the others mean nothing there and are not
    read (a document written before they were left out may hold anything in them)."""
    d = b.d
    data = b.data
    tp = d[L.S_TURNPL]
    wait = WAIT_CODES[pend["wait"]]
    d[L.S_PEND] = wait
    c = pend["caravan"]
    if not 0 <= c < d[L.O_NCAR + tp]:
        raise StateError("/pending/caravan", f"player {tp} has no caravan {c}")
    car = tp * 4 + c
    d[L.S_CAR] = car
    slot = SLOT_NAMES.index(pend["action"])
    d[L.S_SLOT] = slot
    kind = data.by_slug.get(pend["card"])
    if kind is None:
        raise StateError("/pending/card", f"unknown card {pend['card']!r}")
    act = data.tables["kact"][kind.index * 3 + slot]
    if act < 0:
        raise StateError("/pending/action", f"{kind.slug} has no action {pend['action']!r}")
    d[L.S_ACT] = act
    step = pend["step"]
    if not 0 <= step < data.tables["a_len"][act]:
        raise StateError("/pending/step", f"{kind.slug}'s action has no step {step}")
    d[L.S_PC] = step
    here = program.stop(data, act, step)
    action = kind.actions[slot]
    what = f"step {step} of {kind.slug}'s action {pend['action']} ({action[step] if action else '?'!r})"
    d[L.S_CARD] = _acting_card(pend, b, kind.slug, car, here)
    waits = here.waits()
    if not waits:
        raise StateError("/pending/step", f"{what} asks for no decision")
    if wait not in waits:
        raise StateError("/pending/wait", f"{what} waits for {' or '.join(WAIT_NAMES[w] for w in waits)}, "
                                          f"not {pend['wait']}")
    _load_registers(pend, b, here, wait, n)
    zc = pend.get("contract")
    d[L.S_CINNAMON_CON] = 0
    if wait == L.P_CINNAMON:
        if zc is None:
            raise StateError("/pending/contract", "the Zimtfürst pays the cinnamon of a contract: name it")
        if d[L.O_CLOC + zc - 1] != L.CL_DISPLAY or data.contracts[zc - 1].cost.get("cinnamon", 0) < d[L.S_N]:
            raise StateError("/pending/contract", f"contract {zc} is not on the display with {d[L.S_N]} cinnamon "
                                                  "left to pay")
        d[L.S_CINNAMON_CON] = zc - 1
    elif zc is not None:
        raise StateError("/pending/contract", f"only the Zimtfürst's cinnamon names a contract, not {pend['wait']}")
    unnamed = _load_drawn(pend, b, here, wait, what, doc.get("observer"))
    if wait == L.P_CFREE and not unnamed:
        _check_free_picks(d, data)
    return unnamed


def _check_free_picks(d: list[int], data: CardData) -> None:
    """A Hufschmied's pick among named drawn contracts waits as play makes it wait: with as many
    free ones (not large) as it may take, or more, before the first pick, and one at least above
    the last pick after it (else play takes them, or ends the step, without asking)."""
    free = [c + 1 for c in (d[L.O_LIMBO + i] for i in range(d[L.S_LIMBO_N]))
            if data.contracts[c].kind != "large" and c > d[L.S_LAST]]
    if d[L.S_LAST] == -1 and len(free) < d[L.S_N]:
        raise StateError("/pending/drawn", f"the Hufschmied picks {d[L.S_N]} of its free contracts only when at least "
                                           f"{d[L.S_N]} are free (not large); free here: {free or 'none'}")
    if not free:
        raise StateError("/pending/drawn", f"no free contract (not large) is left above contract {d[L.S_LAST] + 1}, "
                                           "the last pick: play would have ended the step")


def _acting_card(pend: dict[str, Any], b: _Builder, slug: str, car: int, here: program.Stop) -> int:
    """The card whose action is pending: in its caravan at `position`, in another caravan of its
    player its own action moved it to (`moved_to`, a Hirte), or out of play (parted with, or
    removed by its own action)."""
    d, data = b.d, b.data
    tp = d[L.S_TURNPL]
    pos: Any = pend.get("position")
    moved: Any = pend.get("moved_to")
    if d[L.S_SLOT] == L.OPT_PART:
        if pos is not None or moved is not None:
            raise StateError("/pending/position" if pos is not None else "/pending/moved_to",
                             f"a card parted with is out of play: {slug}'s position is null")
    elif moved is not None:
        if pos is not None:
            raise StateError("/pending/moved_to", "the card is at its position in its caravan or moved, not both")
        if not here.can_move():
            raise StateError("/pending/moved_to", f"{slug}'s action has moved no card so far")
        q = moved["seat"]
        if q != tp or not 0 <= moved["caravan"] < d[L.O_NCAR + q] or q * 4 + moved["caravan"] == car:
            raise StateError("/pending/moved_to", f"its own action moves a card only to another caravan of its "
                                                  f"player (seat {tp}), not to seat {q} caravan {moved['caravan']}")
        return _card_at(d, data, q * 4 + moved["caravan"], moved["position"], slug, "/pending/moved_to")
    elif pos is not None:
        return _card_at(d, data, car, pos, slug, "/pending/position")
    elif not here.can_take_out():
        raise StateError("/pending/position", f"{slug}'s caravan action cannot have taken it out of play: "
                                              f"give its position in caravan {car - tp * 4}")
    card, _ = b.card(slug, "/pending/card", PERSON_DECKS)
    d[L.O_LOC + card] = L.L_BOX
    return card


def _register_values(d: list[int], here: program.Stop, wait: int, n: int, regs: dict[str, Any]) -> dict[str, Any]:
    """What each register `wait` reads here can hold (a range, or one value the step sets)."""
    tp = d[L.S_TURNPL]
    _op, a, b, c = here.op
    out: dict[str, Any] = {"reg": tuple(sorted(here.reg_values()))}
    if wait == L.P_CHOOSE:
        out.update(n=(a,), last=(b,), flags=(c,))
    elif wait == L.P_FULFIL:
        out.update(flags=(a,))
    elif wait == L.P_CINNAMON:
        out.update(n=range(1, 10), last=range(0, 5))
    elif wait == L.P_CFREE:
        out.update(n=range(1, b + 1), last=range(-1, L.NCON))
    elif wait == L.P_REMOVE_ANY:
        out.update(n=range(1, a + 1))
    elif wait == L.P_ROUTE:
        # the players route in turn from the turn player on: `hirte_left` are still to come
        left = regs.get("hirte_left", 0)
        out.update(hirte_left=range(0, n), hirte_next=((tp + n - left) % n,) if is_strict_int(left) else ())
    elif wait == L.P_TRADE:
        out.update(n=range(1, 10), last=tuple(r for r in range(L.NRES) if r != L.GOLD))
    elif wait == L.P_SETDIST:
        out.update(reg=(c,), reg2=(a,), n=range(1, b + 1), last=range(-1, 5))
    return out


def _load_registers(pend: dict[str, Any], b: _Builder, here: program.Stop, wait: int, n: int) -> None:
    """The registers `wait` reads here, checked; the others at their resting values."""
    d = b.d
    regs = pend.get("registers", {})
    allowed = _register_values(d, here, wait, n, regs)
    live = here.live_registers(wait)
    for name, (i, rest) in program.REGISTERS.items():
        d[i] = rest
        if name not in live:
            continue
        ok = allowed[name]
        v = regs.get(name, ok[0] if len(ok) == 1 else rest)
        if v not in ok:
            want = (f"{ok[0]}" if len(ok) == 1 else f"in {ok[0]}..{ok[-1]}" if isinstance(ok, range)
                    else f"one of {sorted(ok)}")
            raise StateError(f"/pending/registers/{name}", f"must be {want} while waiting for {pend['wait']} here, "
                                                           f"not {v}")
        d[i] = v
    if wait in (L.P_CFREE, L.P_SETDIST) and (d[L.S_N] == here.op[2]) != (d[L.S_LAST] == -1):
        raise StateError("/pending/registers/last", "is -1 exactly while nothing is chosen yet (n is the step's "
                                                    f"{here.op[2]})")
    # everyone but the turn player decides only on the Hirte's routes, in turn
    decides = (d[L.S_ROUTER] + n - 1) % n if wait == L.P_ROUTE else d[L.S_TURNPL]
    decider = pend.get("decider", decides)
    if decider != decides:
        raise StateError("/pending/decider", f"player {decides} decides here, not {decider}")
    d[L.S_DECIDER] = decider


def _load_drawn(pend: dict[str, Any], b: _Builder, here: program.Stop, wait: int, what: str,
                observer: int | None) -> int:
    """The drawn cards `wait` chooses among (none for the others); returns how many are unnamed.
    They may be left unnamed (`{"count": n}`) only where `observer`'s view does not show them."""
    d = b.d
    tp = d[L.S_TURNPL]
    drawn = pend.get("drawn")
    n_drawn = int(drawn.get("count", 0)) if isinstance(drawn, dict) else len(drawn) if isinstance(drawn, list) else 0
    src = here.draws_from(wait)
    d[L.S_LIMBO_SRC] = L.DECK_STANDARD
    d[L.S_LIMBO_FRONT] = 0
    if src is None:
        if n_drawn:
            raise StateError("/pending/drawn", f"no cards are drawn while waiting for {pend['wait']}")
        return 0
    op, a, amount, front = here.op
    given = pend.get("drawn_from")
    if given is not None and DECK_NAMES.index(given) != src:
        raise StateError("/pending/drawn_from", f"{what} draws from the {DECK_NAMES[src]} deck, not {given}")
    if op == L.OP_DRAW and "to_front" in pend and bool(pend["to_front"]) != bool(front):
        raise StateError("/pending/to_front", f"{what} keeps the card at the {'front' if front else 'back'}")
    most = min(L.LIMBO_CAP, (amount if amount >= 0 else L.LIMBO_CAP) if op == L.OP_DRAW else a)
    if not 1 <= n_drawn <= most:
        raise StateError("/pending/drawn", f"{what} waits on 1 to {most} drawn cards, not {n_drawn}")
    d[L.S_LIMBO_SRC] = src
    d[L.S_LIMBO_FRONT] = 1 if op == L.OP_DRAW and front else 0
    knew = pend.get("drawn_known_by")
    if knew is not None:
        if observer is not None or src == L.DECK_STANDARD:
            raise StateError("/pending/drawn_known_by", "who knew the drawn cards' places goes only in a full state "
                                                        "with drawn Special cards or contracts")
        seats = (1 << d[L.S_PLAYERS]) - 1
        if len(knew) != n_drawn:
            raise StateError("/pending/drawn_known_by", f"one mask of seats per drawn card: {n_drawn}, not {len(knew)}")
        for i, mask in enumerate(knew):
            if mask & ~seats:
                raise StateError(f"/pending/drawn_known_by/{i}", f"a mask of the seats 0..{d[L.S_PLAYERS] - 1} "
                                                                 f"(at most {seats}), not {mask}")
    if isinstance(drawn, dict):
        d[L.S_LIMBO_N] = n_drawn
        if not drawn_hidden_from(d, observer):  # else the engine would make up cards a seat sees
            who = "a full state" if observer is None else f"seat {observer}'s view"
            raise StateError("/pending/drawn", f"{who} shows the cards drawn for {what}: list them")
        return n_drawn
    assert isinstance(drawn, list)
    for i, x in enumerate(drawn):
        if src == L.DECK_CONTRACT:
            con = b.contract(x, f"/pending/drawn/{i}")
            d[L.O_LIMBO + i] = con
            d[L.O_CLOC + con] = L.CL_LIMBO
            d[L.O_CKNOWN + con] = (1 << tp) | ((knew[i] << L.KNEW) if knew else 0)
        else:
            card, _ = b.card(x, f"/pending/drawn/{i}", STD_DECKS if src == L.DECK_STANDARD else ("special",))
            d[L.O_LIMBO + i] = card
            d[L.O_LOC + card] = L.L_LIMBO
            d[L.O_KNOWN + card] = (1 << tp) | ((knew[i] << L.KNEW) if knew else 0)
    d[L.S_LIMBO_N] = n_drawn
    return 0


# ---- state -> document ---------------------------------------------------------------------

def _slug(d: list[int], card: int, data: CardData) -> str:
    kind = data.kinds[data.card_kind[card]]
    if kind.slug == "patriarch" and d[L.O_FLIP + card]:
        return "matriarch"
    return kind.slug


def dump_doc(d: list[int], rng: int, data: CardData, observer: int | None = None) -> dict[str, Any]:
    n = d[L.S_PLAYERS]
    tp = d[L.S_TURNPL]
    seats = []
    for p in range(n):
        caravans = []
        for c in range(d[L.O_NCAR + p]):
            car = p * 4 + c
            cards = []
            card = d[L.O_CAR + car * 3]
            for _ in range(d[L.O_CAR + car * 3 + 2]):
                cards.append(_slug(d, card, data))
                card = d[L.O_NXT + card]
            caravans.append(cards)
        owned = [c + 1 for c in range(L.NCON) if d[L.O_CLOC + c] == p]
        seats.append({
            "resources": {r: d[L.O_RES + p * 7 + i] for i, r in enumerate(RESOURCES)},
            "caravans": caravans,
            "contracts": owned,
            "last_scored": d[L.O_PL + p * 8 + L.PL_LAST],
        })
        if d[L.O_PL + p * 8 + L.PL_VPC] != _vp(d, p):  # points changed on this turn, not yet recorded
            seats[-1]["vp_turn_start"] = d[L.O_PL + p * 8 + L.PL_VPC]
    in_game: dict[int, int] = {}
    for card in range(len(data.card_kind)):
        kind = data.card_kind[card]
        if data.kinds[kind].deck == "additional" and d[L.O_LOC + card] != L.L_UNUSED:
            in_game[kind] = in_game.get(kind, 0) + 1
    # the acting card is named by `pending`, also when it is out of play (parting)
    removed = sorted(_slug(d, c, data) for c in range(len(data.card_kind)) if d[L.O_LOC + c] == L.L_BOX
                     and not (d[L.S_PHASE] == L.PH_EFFECT and c == d[L.S_CARD]))
    doc: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "players": n,
        "variant": variant_json(in_game, data),
        "turn_limit": d[L.S_TURNLIM],
        "start_player": d[L.S_START],
        "turn_player": tp,
        "turn": d[L.S_TURN],
        "end_triggered": bool(d[L.S_ENDTRIG]),
        "game_over": d[L.S_PHASE] == L.PH_OVER,
        "observer": observer,
        "seats": seats,
        "display": [d[L.O_DISP + i] + 1 for i in range(d[L.S_DISP_N])],
        "discard": [_slug(d, d[L.O_DISC + i], data) for i in range(d[L.S_DISC_N])],
        "removed": removed,
        "spare_patriarch": d[L.S_SPARE] >= 0,
        "decks": {
            "standard": _dump_deck(d, L.O_STD, L.STD_CAP, L.S_STD_TOP, L.S_STD_N, L.O_KNOWN, data, observer, False),
            "special": _dump_deck(d, L.O_SPC, L.SPC_CAP, L.S_SPC_TOP, L.S_SPC_N, L.O_KNOWN, data, observer, False),
            "contract": _dump_deck(d, L.O_CON, L.CON_CAP, L.S_CON_TOP, L.S_CON_N, L.O_CKNOWN, data, observer, True),
        },
        "pending": _dump_pending(d, data, observer) if d[L.S_PHASE] == L.PH_EFFECT else None,
    }
    if observer is None:
        doc["rng"] = int(rng)
    return doc


def _dump_deck(d: list[int], off: int, cap: int, stop: int, sn: int, known_off: int, data: CardData,
               observer: int | None, contract: bool) -> Any:
    top, n = d[stop], d[sn]
    cards = [d[off + ((top + i) & (cap - 1))] for i in range(n)]

    def name(x: int) -> Any:
        return x + 1 if contract else _slug(d, x, data)

    if observer is None:
        masks = [d[known_off + x] for x in cards]
        if any(masks):
            return {"cards": [name(x) for x in cards], "known_by": masks}
        return [name(x) for x in cards]
    known = [[i, name(x)] for i, x in enumerate(cards) if off != L.O_STD and (d[known_off + x] >> observer) & 1]
    return {"count": n, "known": known}


def action_owner(data: CardData, act: int) -> str:
    """The slug of the card kind whose action number `act` is."""
    kact = data.tables["kact"]
    return data.kinds[kact.index(act) // 3].slug


def _position_in(d: list[int], car: int, card: int) -> int | None:
    """Where `card` is in caravan `car` (0 = front), or None."""
    c = d[L.O_CAR + car * 3]
    for i in range(d[L.O_CAR + car * 3 + 2]):
        if c == card:
            return i
        c = d[L.O_NXT + c]
    return None


def decks_left_out(doc: dict[str, Any]) -> tuple[int, ...]:
    """The decks (`DECK_*`) whose order a full state document does not give in full, which the
    loader made up."""
    given = doc.get("decks")
    decks: dict[str, Any] = given if isinstance(given, dict) else {}
    return tuple(i for i, name in enumerate(DECK_NAMES)
                 if not (isinstance(decks.get(name), list)
                         or (isinstance(decks.get(name), dict) and "cards" in decks[name])))


def private_draw(d: list[int]) -> bool:
    """Whether the pending step of an exported state `d` chooses among cards drawn for the turn
    player's eyes only: Special cards and contracts (drawn Standard cards are shown to all)."""
    return d[L.S_LIMBO_N] > 0 and d[L.S_LIMBO_SRC] != L.DECK_STANDARD


def drawn_hidden_from(d: list[int], observer: int | None) -> bool:
    """Whether the cards drawn for the pending step (an exported state `d`) are hidden from
    `observer`: a private draw (`private_draw`) of another seat's turn."""
    return observer is not None and observer != d[L.S_TURNPL] and private_draw(d)


def _dump_pending(d: list[int], data: CardData, observer: int | None) -> dict[str, Any]:
    tp = d[L.S_TURNPL]
    car = d[L.S_CAR]
    card = d[L.S_CARD]
    pos: int | None = None
    moved: dict[str, int] | None = None
    if d[L.S_SLOT] != 2:
        pos = _position_in(d, car, card)
        if pos is None and d[L.O_LOC + card] < L.L_STD:  # in another caravan (locations below the
            # decks are caravans): its own action moved it there (a Hirte's routing)
            other = d[L.O_LOC + card]
            at = _position_in(d, other, card)
            if at is not None:
                moved = {"seat": other // 4, "caravan": other % 4, "position": at}
    kind = action_owner(data, d[L.S_ACT])
    wait = d[L.S_PEND]
    # only what this step reads: registers, the drawn cards' deck and where the kept one goes are
    # left over from earlier steps elsewhere (and a reloaded game would not have them)
    here = program.stop(data, d[L.S_ACT], d[L.S_PC])
    draws = here.draws_from(wait) is not None
    src = d[L.S_LIMBO_SRC]
    limbo = [d[L.O_LIMBO + i] for i in range(d[L.S_LIMBO_N])]
    drawn: Any
    if src == L.DECK_CONTRACT:
        drawn = [x + 1 for x in limbo]
    else:
        drawn = [_slug(d, x, data) for x in limbo]
    if drawn_hidden_from(d, observer):
        drawn = {"count": len(limbo)}
    live = here.live_registers(wait)
    out: dict[str, Any] = {
        "wait": WAIT_NAMES.get(wait, "none"),
        "decider": d[L.S_DECIDER],
        "card": kind,
        "caravan": car - tp * 4,
        "position": pos,
        "action": SLOT_NAMES[d[L.S_SLOT]],
        "step": d[L.S_PC],
        "drawn": drawn,
        "drawn_from": DECK_NAMES[src if draws else L.DECK_STANDARD],
        "to_front": wait == L.P_KEEP and bool(d[L.S_LIMBO_FRONT]),
        "contract": d[L.S_CINNAMON_CON] + 1 if wait == L.P_CINNAMON else None,
        "registers": {name: d[i] for name, (i, _) in program.REGISTERS.items() if name in live},
    }
    if moved is not None:
        out["moved_to"] = moved
    if observer is None and private_draw(d):
        known = L.O_CKNOWN if src == L.DECK_CONTRACT else L.O_KNOWN
        knew = [d[known + x] >> L.KNEW for x in limbo]
        if any(knew):
            out["drawn_known_by"] = knew
    return out
