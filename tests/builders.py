"""Helpers to build `kashgar/state@1` documents compactly and to drive a Game in tests.

Everything here is written from `docs/rules.md` and `docs/engine-api.md`, not from the engine: the
card manifest, the VP of each card and the contract table below are the project's card reference
restated as test data, so that the card tests check the engine against the reference instead of
against itself.

`make_state(...)` builds a full (trusted, `observer: null`) state. Decks are given as
`{"count": n, "known": [[index_from_top, card], ...]}` with `n` computed from the manifest (every
card not seen in a caravan, the discard pile, the removed pile, the display or a fulfilled pile is
in its deck), or left out so that the engine derives them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SPICES: tuple[str, ...] = ("ginger", "cloves", "pepper", "anise", "cinnamon")
RESOURCES: tuple[str, ...] = (*SPICES, "gold", "mules")

# --- card manifest (docs/rules.md#decks) ---------------------------------------------------------

START_RANKS: dict[str, int] = {
    "kraemerin": 1,
    "knecht": 2,
    "prophet": 3,
    "schreiber": 4,
    "schankmaid": 5,
    "kraeuterfrau": 6,
    "wagner": 7,
    "waldbaeuerin": 8,
    "stadtwache": 9,
    "zigeuner": 10,
    "dorfschoenheit": 11,
    "aristokratin": 12,
}
START: tuple[str, ...] = tuple(START_RANKS)

STANDARD: dict[str, int] = {
    "adelige": 4,
    "baecker": 2,
    "bauer": 4,
    "boettcher": 4,
    "geldeintreiber": 2,
    "gewuerzhaendler": 9,
    "goennerin": 4,
    "graue_eminenz": 2,
    "hochstapler": 3,
    "hoeker": 4,
    "korbmacher": 4,
    "kurtisane": 2,
    "marktfrau": 6,
    "mulihaendlerin": 3,
    "mundschenk": 2,
    "nachtwaechter": 2,
    "pflanzerin": 4,
    "quacksalber": 5,
    "recke": 2,
    "schmied": 2,
    "zimtfuerst": 4,
    "zuechter": 2,
}
SPECIAL: dict[str, int] = {
    "bootsmann": 2,
    "fahrender_haendler": 2,
    "gildenherr": 2,
    "haendlertochter": 2,
    "hufschmied": 2,
    "schneider": 2,
}
ADDITIONAL: dict[str, int] = {
    "bettler": 2,
    "gesandter": 2,
    "hirte": 2,
    "karawanenfuehrer": 2,
    "taschenspielerin": 2,
    "torwache": 2,
}
PATRIARCHS = 13
PATRIARCH_SLUGS = ("patriarch", "matriarch")

# VP of each person card kind (docs/rules.md#cards); the Bauer is variable (wheat fields).
CARD_VP: dict[str, int] = {
    "patriarch": 0,
    "matriarch": 0,
    "adelige": 1,
    "aristokratin": 0,
    "baecker": 0,
    "bettler": -2,
    "boettcher": 0,
    "bootsmann": 2,
    "dorfschoenheit": 3,
    "fahrender_haendler": 2,
    "geldeintreiber": 0,
    "gesandter": 1,
    "gewuerzhaendler": -1,
    "gildenherr": 3,
    "goennerin": 0,
    "graue_eminenz": 1,
    "haendlertochter": 2,
    "hirte": 1,
    "hochstapler": 1,
    "hoeker": 0,
    "hufschmied": 1,
    "karawanenfuehrer": 2,
    "knecht": 1,
    "korbmacher": 0,
    "kraemerin": 1,
    "kraeuterfrau": 0,
    "kurtisane": 1,
    "marktfrau": 0,
    "mulihaendlerin": 0,
    "mundschenk": 1,
    "nachtwaechter": 1,
    "pflanzerin": 0,
    "prophet": 2,
    "quacksalber": 0,
    "recke": 3,
    "schankmaid": 1,
    "schmied": 1,
    "schneider": 1,
    "schreiber": 0,
    "stadtwache": 2,
    "taschenspielerin": 2,
    "torwache": 3,
    "wagner": 1,
    "waldbaeuerin": 1,
    "zigeuner": 0,
    "zimtfuerst": 1,
    "zuechter": 1,
}
ALL_KINDS: tuple[str, ...] = tuple(CARD_VP) + ("bauer",)

# Options offered at turn start (docs/rules.md#cards): two caravan actions, no parting action, `!`.
TWO_CARAVAN_ACTIONS = frozenset({"patriarch", "bootsmann", "kurtisane"})
NO_PARTING = frozenset({"patriarch", "matriarch"})
CANNOT_PASS = frozenset({"patriarch", "matriarch", "torwache"})


def deck_of(card: str) -> str:
    """Which deck a person card belongs to: start, standard, special, additional or patriarch."""
    if card in PATRIARCH_SLUGS:
        return "patriarch"
    if card in START_RANKS:
        return "start"
    if card in STANDARD:
        return "standard"
    if card in SPECIAL:
        return "special"
    if card in ADDITIONAL:
        return "additional"
    raise KeyError(card)


# --- contracts (docs/rules.md#contract-table) -----------------------------------------------------

_SHORT = {"gi": "ginger", "cl": "cloves", "pe": "pepper", "an": "anise", "ci": "cinnamon", "go": "gold",
          "mu": "mules"}


@dataclass(frozen=True)
class Contract:
    number: int
    kind: str  # small, large, wheat, pepper, gold
    vp: int
    mules_required: int
    cost: Mapping[str, int]
    payout: Mapping[str, int]

    @property
    def is_special(self) -> bool:
        return self.kind in ("wheat", "pepper", "gold")


def _contracts() -> dict[int, Contract]:
    table: dict[int, Contract] = {}

    def add(kind: str, vp: int, req: int, cost: dict[str, int], payout: dict[str, int] | None = None) -> None:
        n = len(table) + 1
        table[n] = Contract(n, kind, vp, req, cost, payout or {})

    for s in ("gi", "cl", "pe", "an", "ci", "gi", "cl", "pe"):
        add("small", 2, 1, {_SHORT[s]: 4})
    for a, b in (("gi", "cl"), ("cl", "pe"), ("pe", "an"), ("an", "ci"), ("ci", "gi"), ("gi", "pe"),
                 ("cl", "an"), ("pe", "ci")):
        add("small", 3, 2, {_SHORT[a]: 3, _SHORT[b]: 3})
    for s in ("ci", "gi", "cl", "an"):
        add("large", 4, 3, {"mules": 1, _SHORT[s]: 6})
    for a, b in (("gi", "an"), ("cl", "ci"), ("pe", "gi"), ("an", "cl"), ("ci", "pe"), ("gi", "cl")):
        add("large", 5, 4, {"mules": 1, _SHORT[a]: 4, _SHORT[b]: 4})
    for a, b in (("pe", "an"), ("ci", "cl")):
        add("large", 6, 5, {"mules": 2, "gold": 3, _SHORT[a]: 4, _SHORT[b]: 4})
    for s in ("gi", "cl", "pe", "an", "ci", "gi"):
        add("wheat", 1, 1, {_SHORT[s]: 2})
    for a, b in (("cl", "an"), ("pe", "ci")):
        add("wheat", 2, 2, {_SHORT[a]: 2, _SHORT[b]: 2})
    for s in ("gi", "an"):
        add("pepper", 3, 2, {"gold": 3, _SHORT[s]: 3}, {"pepper": 6})
    for a, b in (("cl", "ci"), ("an", "gi")):
        add("gold", 3, 2, {_SHORT[a]: 4, _SHORT[b]: 4}, {"gold": 6})
    assert len(table) == 40
    return table


CONTRACTS: dict[int, Contract] = _contracts()
WHEAT_FIELDS: frozenset[int] = frozenset(n for n, c in CONTRACTS.items() if c.kind == "wheat")

# --- building states --------------------------------------------------------------------------

DEFAULT_FILLER: list[list[str]] = [["patriarch", "korbmacher"], ["patriarch", "marktfrau"],
                                   ["patriarch", "pflanzerin"]]
DEFAULT_DISPLAY: tuple[int, ...] = (1, 9, 17, 29)

Variant = str | Sequence[str] | None


def variant_additional(variant: Variant, used: Iterable[str] = ()) -> list[str]:
    """The `variant.additional` list: None = automatic (all 12 if any additional card is used)."""
    if variant is None:
        if any(c in ADDITIONAL for c in used):
            variant = "all"
        else:
            return []
    if variant == "off":
        return []
    if variant == "all":
        return [slug for slug, n in ADDITIONAL.items() for _ in range(n)]
    assert not isinstance(variant, str), variant
    return list(variant)


def standard_manifest(variant: Variant = "off") -> Counter[str]:
    """All cards of the Standard deck (with the variant's additional cards)."""
    manifest = Counter(STANDARD)
    manifest.update(variant_additional(variant))
    return manifest


def resources_dict(base: int = 3, **values: int) -> dict[str, int]:
    res = {r: base for r in RESOURCES}
    res.update(values)
    return res


def _known_deck(count: int, top: Sequence[Any]) -> dict[str, Any]:
    assert count >= len(top), f"deck holds {count} cards, cannot put {len(top)} on top"
    return {"count": count, "known": [[i, c] for i, c in enumerate(top)]}


def make_state(
    players: int = 2,
    caravans: Sequence[Sequence[Sequence[str]] | None] | None = None,
    resources: Sequence[Mapping[str, int] | None] | None = None,
    contracts: Sequence[Sequence[int]] | None = None,
    display: Sequence[int] | None = None,
    discard: Sequence[str] = (),
    removed: Sequence[str] = (),
    standard_top: Sequence[str] | None = None,
    special_top: Sequence[str] | None = None,
    contract_top: Sequence[int] | None = None,
    decks: Mapping[str, Any] | None = None,
    variant: Variant = None,
    turn_player: int = 0,
    start_player: int = 0,
    turn: int = 0,
    turn_limit: int = 400,
    end_triggered: bool = False,
    spare_patriarch: bool = True,
    last_scored: Sequence[int] | None = None,
    rng: int = 12345,
) -> dict[str, Any]:
    """A full `kashgar/state@1` document at the start of `turn_player`'s turn.

    caravans[p] is player p's list of caravans (front first); a missing or None entry gets
    `DEFAULT_FILLER`. resources[p] overrides some of player p's resources (the rest are 3).
    standard_top / special_top / contract_top put known cards on top of the decks (the deck's
    count is derived from the manifest); `decks` gives a deck verbatim instead.
    A decks entry not given at all is left out of the document. The display defaults to
    DEFAULT_DISPLAY with the contracts used elsewhere replaced.
    """
    cars: list[list[list[str]]] = []
    for p in range(players):
        given = caravans[p] if caravans is not None and p < len(caravans) else None
        cars.append([list(c) for c in (given if given is not None else DEFAULT_FILLER)])
    fulfilled = [list(contracts[p]) if contracts is not None and p < len(contracts) else []
                 for p in range(players)]

    if display is None:
        busy = {n for f in fulfilled for n in f} | set(contract_top or ())
        display = [n for n in (*DEFAULT_DISPLAY, 2, 10, 18, 30, 3, 11, 19, 31) if n not in busy][:4]
    placed = [*display, *(n for f in fulfilled for n in f), *(contract_top or ())]
    assert len(placed) == len(set(placed)), f"a contract is in two places: {placed}"

    in_play: list[str] = [c for seat in cars for car in seat for c in car]
    used = [*in_play, *discard, *removed, *(standard_top or ())]
    additional = variant_additional(variant, used)

    seats = []
    for p in range(players):
        res = resources_dict()
        if resources is not None and p < len(resources) and resources[p] is not None:
            res.update(resources[p])  # type: ignore[arg-type]
        seats.append({
            "resources": res,
            "caravans": cars[p],
            "contracts": fulfilled[p],
            "last_scored": last_scored[p] if last_scored is not None else -1,
        })

    doc: dict[str, Any] = {
        "schema": "kashgar/state@1",
        "players": players,
        "variant": {"additional": additional},
        "turn_limit": turn_limit,
        "start_player": start_player,
        "turn_player": turn_player,
        "turn": turn,
        "end_triggered": end_triggered,
        "game_over": False,
        "observer": None,
        "seats": seats,
        "display": list(display),
        "discard": list(discard),
        "removed": list(removed),
        "spare_patriarch": spare_patriarch,
        "pending": None,
        "rng": rng,
    }

    seen = Counter([*in_play, *discard, *removed])
    out_decks: dict[str, Any] = {}
    if standard_top is not None:
        manifest = Counter(STANDARD)
        manifest.update(additional)
        count = sum(n - min(n, seen[c]) for c, n in manifest.items())
        out_decks["standard"] = _known_deck(count, standard_top)
    if special_top is not None:
        count = sum(n - min(n, seen[c]) for c, n in SPECIAL.items())
        out_decks["special"] = _known_deck(count, special_top)
    if contract_top is not None:
        taken = set(display) | {n for f in fulfilled for n in f}
        out_decks["contract"] = _known_deck(40 - len(taken), contract_top)
    if decks:
        out_decks.update(decks)
    if out_decks:
        doc["decks"] = out_decks
    return doc


def remaining_standard(doc: Mapping[str, Any], keep_out: Iterable[str] = ()) -> list[str]:
    """The Standard-deck cards of `doc`'s variant not seen in it (minus `keep_out`), as a list."""
    seen: Counter[str] = Counter()
    for seat in doc["seats"]:
        for car in seat["caravans"]:
            seen.update(car)
    seen.update(doc["discard"])
    seen.update(doc["removed"])
    seen.update(keep_out)
    manifest = Counter(STANDARD)
    manifest.update(doc["variant"]["additional"])
    rest = manifest - seen
    return sorted(rest.elements())


# --- driving a game ---------------------------------------------------------------------------


_SELECT = re.compile(r"^c\d+:(a|b|part|pass)$")


def _value(x: Any) -> Any:
    return x() if callable(x) else x


def current_player(g: Any) -> int:
    return int(_value(g.current_player))


def turn_player(g: Any) -> int:
    return int(_value(g.turn_player))


def is_terminal(g: Any) -> bool:
    return bool(_value(g.is_terminal))


def legal_texts(g: Any) -> list[str]:
    return [str(d) for d in g.legal()]


def play(g: Any, *decisions: str) -> None:
    """Apply each decision text in turn, checking first that it is legal."""
    for d in decisions:
        legal = legal_texts(g)
        assert d in legal, f"{d!r} is not legal here; legal: {legal}"
        g.apply(d)


def options(g: Any, prefix: str) -> set[str]:
    """The legal decision texts starting with `prefix` (e.g. 'c0:', 'choose ', 'fulfil ')."""
    return {t for t in legal_texts(g) if t.startswith(prefix)}


def seat(g: Any, p: int) -> dict[str, Any]:
    return g.to_json()["seats"][p]  # type: ignore[no-any-return]


def res(g: Any, p: int = 0) -> dict[str, int]:
    return dict(seat(g, p)["resources"])


def caravans(g: Any, p: int = 0) -> list[list[str]]:
    return [list(c) for c in seat(g, p)["caravans"]]


def deck(doc: Mapping[str, Any], name: str) -> list[Any]:
    """Deck `name` of a state document as a top-first list; unknown cards are None."""
    d = doc["decks"][name]
    if isinstance(d, list):
        return list(d)
    if "cards" in d:  # full order with who knows each position
        return list(d["cards"])
    cards: list[Any] = [None] * int(d["count"])
    for i, c in d.get("known", []):
        cards[int(i)] = c
    return cards


def assert_turn_over(g: Any, next_player: int) -> None:
    """The turn is complete: nothing pending and `next_player` is to choose a caravan."""
    doc = g.to_json()
    assert doc["pending"] is None, f"turn still pending: {doc['pending']}; legal: {legal_texts(g)}"
    assert current_player(g) == next_player
    assert turn_player(g) == next_player
    assert all(_SELECT.match(t) for t in legal_texts(g)), legal_texts(g)


def with_changes(base: Mapping[str, int], **delta: int) -> dict[str, int]:
    out = dict(base)
    for k, v in delta.items():
        out[k] = out[k] + v
    return out


def solo(
    card: str,
    *,
    rest: Sequence[str] = ("korbmacher",),
    res0: Mapping[str, int] | None = None,
    res1: Mapping[str, int] | None = None,
    others: Sequence[Sequence[str]] = (("patriarch", "marktfrau"), ("patriarch", "pflanzerin")),
    **kw: Any,
) -> dict[str, Any]:
    """Player 0 to move with `card` at the front of caravan 0 (followed by `rest`)."""
    cars = kw.pop("caravans", None)
    p0 = [[card, *rest], *[list(c) for c in others]]
    players = kw.get("players", 2)
    resources = kw.pop("resources", None) or [res0, res1, *([None] * (players - 2))]
    all_cars = [p0, *(cars[1:] if cars else [])]
    return make_state(caravans=all_cars, resources=resources, **kw)


def random_record(seed: int, moves: int, rng_seed: int, players: int = 2) -> dict[str, Any]:
    """The record of a game dealt from `seed` and played by random decisions (`rng_seed`) for at
    most `moves` moves: a review searches each decision from its seat's view, so any play will do."""
    import random

    import engine_ext
    from engine_ext import record as records

    rng = random.Random(rng_seed)
    game = engine_ext.new_game(players=players, seed=seed)
    played: list[str] = []
    while not game.is_terminal and len(played) < moves:
        move = rng.choice(game.legal())
        game.apply(move)
        played.append(str(move))
    return records.record_from_moves(played, players=players, seed=seed)


def bot_record(seed: int, levels: tuple[str, str] = ("club", "novice"), moves: int | None = None) -> dict[str, Any]:
    """The record of a 2-player game dealt from `seed` and played by the bots of `levels` (seat by
    seat), to its end or for at most `moves` moves."""
    import engine_ext
    from bots.levels import make_bot
    from engine_ext import record as records
    from engine_ext.decisions import Decision

    bots = [make_bot(x) for x in levels]
    game = engine_ext.new_game(players=2, seed=seed)
    played: list[str] = []
    while not game.is_terminal and (moves is None or len(played) < moves):
        an = bots[game.current_player].analyse(game.state, seed=len(played))
        text = str(Decision.from_code(an.code, game.state, game.engine.data))
        game.apply(text)
        played.append(text)
    return records.record_from_moves(played, players=2, seed=seed)

def private_draw() -> tuple[dict[str, Any], str, int, int]:
    """From random play: a full state, the decision after which its turn player (the drawer)
    chooses among Special cards only it has drawn, the drawer and the other seat."""
    import random

    import engine_ext

    for seed in range(100):
        game = engine_ext.new_game(players=2, seed=seed)
        rng = random.Random(seed)
        while not game.is_terminal:
            doc, drawer = dict(game.to_json()), game.turn_player
            decision = str(rng.choice(game.legal()))
            game.apply(decision)
            if game.hidden_from(1 - drawer) and game.to_json()["pending"]["drawn_from"] == "special":
                return doc, decision, drawer, 1 - drawer
    raise AssertionError("no private draw in 100 random games")
