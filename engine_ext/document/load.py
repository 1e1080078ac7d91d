"""Documents read into the core's state array: every field checked, every card placed once.

Card instances get ids by kind in a canonical order, so a document never names instance ids, and
two documents that differ only in which copy of a card is where load to states that play the same.
The step a document leaves pending is read by `load_pending`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine_ext import core as L
from engine_ext.carddata import RESOURCES, CardData
from engine_ext.checks import patriarchs_in_game, start_cards_dealt
from engine_ext.document.builder import PERSON_DECKS, STD_DECKS, Builder
from engine_ext.document.deal import variant_counts
from engine_ext.document.load_pending import load_pending
from engine_ext.document.schema import DECK_NAMES, StateError, is_strict_int, validate_schema
from engine_ext.words import card_name, no_seat, seat_words


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
        raise StateError("/observer", no_seat(observer, n))
    counts = variant_counts(doc.get("variant"), data)
    rng = doc.get("rng", 1) if observer is None else 1
    b = Builder(data, counts, int(rng))
    d, st = b.d, b.core
    d[L.S_PLAYERS] = n
    d[L.S_START] = _int(doc, "start_player", 0, n - 1)
    d[L.S_TURNPL] = _int(doc, "turn_player", 0, n - 1)
    d[L.S_TURN] = _int(doc, "turn", 0, 10000)
    d[L.S_TURNLIM] = _int(doc, "turn_limit", 1, 10000, 400)
    if L.at_turn_limit(d) and not doc.get("game_over"):
        raise StateError("/turn", f"turn {d[L.S_TURN]} is at or past the turn limit {d[L.S_TURNLIM]}, "
                                  "so the game is over")
    d[L.S_ENDTRIG] = 1 if doc.get("end_triggered") else 0
    d[L.S_SPARE] = -1
    d[L.S_DECIDER] = d[L.S_TURNPL]
    pending = doc.get("pending")
    if observer is not None and "rng" in doc:
        raise StateError("/rng", "a view has no rng: the seed of the state's shuffles is hidden from every player")
    _check_game_over(doc, b)
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
            # an empty caravan has no first or last card, as play leaves it
            d[L.O_CAR + car * 3] = d[L.O_CAR + car * 3 + 1] = -1
            for pos, slug in enumerate(caravan):
                card, flip = b.card(slug, f"{base}/caravans/{c}/{pos}", PERSON_DECKS)
                d[L.O_FLIP + card] = flip
                st._relink_back(car, card)
                d[L.O_LOC + card] = car
                st._card_enter(p, card)  # what it is worth to its owner
        for i, number in enumerate(seat["contracts"]):
            st._take_contract(p, b.contract(number, f"{base}/contracts/{i}"), False)
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
        hidden_limbo = load_pending(pending, doc, b, n)
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
    _check_deal(b, seats, bool(doc.get("spare_patriarch")), all(decks.get(k) is not None for k in DECK_NAMES))
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
        d[L.O_PL + p * 8 + L.PL_VPC] = doc["seats"][p].get("vp_turn_start", st.vp(p))
    return d, int(rng) or 1, observer


def _check_game_over(doc: dict[str, Any], b: Builder) -> None:
    """A finished game ended a turn: its last round's (after someone reached 25 VP), or the
    turn limit's (`core.ends_after`, the turn player's being the last turn played); and it waits
    for nothing."""
    if not doc.get("game_over"):
        return
    if doc.get("pending"):
        raise StateError("/pending", "a finished game has no step pending")
    d = b.d
    if d[L.S_TURN] == 0 or not L.ends_after(d, d[L.S_TURNPL]):
        raise StateError("/game_over", f"the game ends at the turn limit or after the last player's turn "
                                       f"({seat_words(L.last_seat(d))}'s) once the end is triggered: not over "
                                       f"at `turn` {d[L.S_TURN]}, `turn_player` {d[L.S_TURNPL]}")


def _check_deal(b: Builder, seats: list[Any], spare: bool, decks_given: bool) -> None:
    """The Start cards and Patriarchs add up for `n` players (`checks`: 3 per player, one more
    Patriarch with the Aristokratin). A seat's Start cards stay with its caravans or are removed,
    so a seat holds at most its 3. No deck holds one, so every document shows them all, a view too.
    Fewer Start cards than the game deals is a card lost (422 on the place it left: a seat's empty
    caravan, else the seat holding fewest) where the document gives every deck (`decks_given`:
    listed or counted, as a game's full state and its views do) and every seat's caravans hold a
    Start card, as a game's do until its seats part with them; otherwise it is a hand-made
    position (a test's, a puzzle's, or the engine's document of one), whose Patriarchs are not
    counted."""
    data, n = b.data, len(seats)
    starts = [ptr for deck, ptr in b.dealt if deck == "start"]
    pats = [ptr for deck, ptr in b.dealt if deck == "patriarch"]
    for p in range(n):
        mine = [ptr for ptr in starts if ptr.startswith(f"/seats/{p}/")]
        if len(mine) > start_cards_dealt(1):
            raise StateError(mine[start_cards_dealt(1)], f"{seat_words(p)} was dealt {start_cards_dealt(1)} Start "
                                                         "cards, this is one more")
    if len(starts) > start_cards_dealt(n):
        raise StateError(starts[start_cards_dealt(n)], f"a {n}-player game deals {start_cards_dealt(n)} Start cards, "
                                                       "this is one more")
    if len(starts) < start_cards_dealt(n):
        if decks_given and all(any(ptr.startswith(f"/seats/{p}/") for ptr in starts) for p in range(n)):
            raise _lost_start_card(seats, starts)
        return
    aristokratin = data.by_slug["aristokratin"].index
    dealt = not b.pool.get(aristokratin, [None])
    aristocrat = card_name("aristokratin", data)
    if spare and not dealt:
        raise StateError("/spare_patriarch", f"the spare Patriarch is for the {aristocrat}, and she was not dealt "
                                             "(without her it goes back to the box)")
    want = patriarchs_in_game(n, dealt)
    have = len(pats) + spare
    where = f"with the {aristocrat}'s spare" if dealt else f"without the {aristocrat}"
    for p in range(n):
        mine = [ptr for ptr in pats if ptr.startswith(f"/seats/{p}/")]
        most = patriarchs_in_game(1, dealt and not spare)
        if len(mine) > most:
            raise StateError(mine[most], f"{seat_words(p)} holds at most {most} Patriarchs, this is one more")
    if have > want:
        raise StateError(pats[want - spare], f"a {n}-player game has {want} Patriarchs ({where}), this is one more")
    if have < want:
        raise StateError("/spare_patriarch" if dealt and not spare and have == want - 1 else "/removed",
                         f"a {n}-player game has {want} Patriarchs ({where}), {have} are in play, removed or spare")


def _lists_cards(spec: Any) -> bool:
    """Whether a deck entry names every card of its deck (a list, or {"cards": [...]}), not a count."""
    return isinstance(spec, list) or (isinstance(spec, dict) and spec.get("cards") is not None)


def _lost_start_card(seats: list[Any], starts: list[str]) -> StateError:
    """A Start card is missing: the pointer is the first empty caravan (a caravan holds its
    Patriarch and the Start card under it until they are parted with, and then both are removed),
    else the caravans of the seat holding the fewest Start cards."""
    n = len(seats)
    where = next((f"/seats/{p}/caravans/{c}" for p, seat in enumerate(seats)
                  for c, caravan in enumerate(seat["caravans"]) if not caravan), None)
    if where is None:
        held = [sum(1 for ptr in starts if ptr.startswith(f"/seats/{p}/")) for p in range(n)]
        where = f"/seats/{held.index(min(held))}/caravans"
    return StateError(where, f"a Start card is missing: a {n}-player game deals {start_cards_dealt(n)} (one under "
                             f"each of a seat's 3 Patriarchs; a Start card parted with is removed), {len(starts)} are "
                             "in the caravans or removed")


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


def _load_person_deck(b: Builder, spec: Any, name: str, observer: int | None, hidden_limbo: int) -> None:
    d = b.d
    decks = STD_DECKS if name == "standard" else ("special",)
    deck = L.DECK_STANDARD if name == "standard" else L.DECK_SPECIAL
    cap = L.DECK_MASK[deck] + 1
    loc = L.L_STD if name == "standard" else L.L_SPC
    pointer = f"/decks/{name}"
    bit = 1 << observer if observer is not None and name == "special" else 0
    known, count = _read_deck(spec, pointer, lambda x, ptr: b.card(x, ptr, decks)[0], d, L.O_KNOWN, bit)
    rest = b.leftovers(decks)
    b.shuffle(rest)  # the part of the deck the document leaves out is shuffled
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
        names = ", ".join(sorted(b.data.kinds[b.data.card_kind[card]].slug for card in rest))
        lost = (f"{names} {'is' if len(rest) == 1 else 'are'} nowhere (not with a seat, discarded, removed, drawn "
                "or in the deck), so ") if _lists_cards(spec) and rest else ""
        raise StateError(pointer, f"card counts do not add up: {lost}the {name} deck must hold "
                                  f"{len(known) + len(rest)} cards, not {count}")
    if count > cap:
        raise StateError(pointer, f"the {name} deck holds at most {cap} cards")
    # every card left goes into the deck (the counts add up): the pools of its cards empty at once
    _fill_deck(d, deck, [known[i] if i in known else rest.pop() for i in range(count - 1, -1, -1)][::-1],
               L.O_LOC, loc)
    b.clear_pools(decks)


def _fill_deck(d: list[int], deck: int, cards: list[int], loc_off: int, loc: int) -> None:
    """Put `cards`, first on top, under `deck` (as `core.deck_put_under` one by one), each at `loc`."""
    off, mask, start = L.DECK_OFF[deck], L.DECK_MASK[deck], d[L.DECK_TOP[deck]] + d[L.DECK_N[deck]]
    for j, card in enumerate(cards):
        d[off + ((start + j) & mask)] = card
        d[loc_off + card] = loc
    d[L.DECK_N[deck]] += len(cards)


def _load_contract_deck(b: Builder, spec: Any, observer: int | None, hidden_limbo: int) -> None:
    d = b.d
    pointer = "/decks/contract"
    bit = 1 << observer if observer is not None else 0
    known, count = _read_deck(spec, pointer, b.contract, d, L.O_CKNOWN, bit)
    rest = sorted(b.contracts_left)
    b.shuffle(rest)
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
    _fill_deck(d, L.DECK_CONTRACT, [known[i] if i in known else rest.pop() for i in range(count - 1, -1, -1)][::-1],
               L.O_CLOC, L.CL_DECK)
    b.contracts_left.clear()


def _contract_count_error(b: Builder, spec: Any, known: dict[int, int], rest: list[int], count: int) -> StateError:
    """Why the contract deck's count does not add up, on the field most likely wrong: the display
    when it shows fewer than 4 contracts while contracts are unaccounted for (the rules refill it at
    once from the deck), else the deck; a full state's deck names the contracts that are nowhere."""
    want = len(known) + len(rest)
    shown = b.d[L.S_DISP_N]
    listed = _lists_cards(spec)
    lost = (f"contracts {sorted(c + 1 for c in rest)} are nowhere (not on the display, with a seat, drawn "
            f"or in the deck), so ") if listed and rest else ""
    if shown < 4 and want > count:
        return StateError("/display", f"the display shows {shown} contracts, not 4 (it is refilled from the "
                                      f"contract deck at once while the deck has any); {lost}with this display "
                                      f"the contract deck (/decks/contract) would hold {want} contracts, not {count}")
    return StateError("/decks/contract", f"card counts do not add up: {lost}the contract deck must hold "
                                         f"{want} contracts, not {count}")
