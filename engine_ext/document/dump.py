"""The core's state array written as a document: a full state, or a seat's view of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine_ext import core as L
from engine_ext import program
from engine_ext.carddata import RESOURCES, CardData
from engine_ext.document.array import drawn_hidden_from, state_over
from engine_ext.document.deal import variant_json
from engine_ext.document.schema import DECK_NAMES, SCHEMA_ID, SLOT_NAMES, WAIT_NAMES


def _names(st: L.State, data: CardData) -> Callable[[int], str]:
    """A card's name in state `st`: its kind's as it is now (`State._card_kind`: a turned Patriarch
    is a Matriarch)."""
    kinds, kind_now = data.kinds, st._card_kind
    return lambda card: kinds[kind_now(card)].slug


def dump_doc(d: list[int], rng: int, data: CardData, observer: int | None = None) -> dict[str, Any]:
    """The document of state array `d` (and the seed of its shuffles `rng`): the full state, or
    seat `observer`'s view of it."""
    st = state_over(d, data)
    name = _names(st, data)
    n = d[L.S_PLAYERS]
    tp = d[L.S_TURNPL]
    seats = []
    for p in range(n):
        caravans = _dump_caravans(d, p, name)
        owned = [c + 1 for c in range(L.NCON) if d[L.O_CLOC + c] == p]
        seats.append({
            "resources": {r: d[L.O_RES + p * 7 + i] for i, r in enumerate(RESOURCES)},
            "caravans": caravans,
            "contracts": owned,
            "last_scored": d[L.O_PL + p * 8 + L.PL_LAST],
        })
        if d[L.O_PL + p * 8 + L.PL_VPC] != st.vp(p):  # points changed on this turn, not yet recorded
            seats[-1]["vp_turn_start"] = d[L.O_PL + p * 8 + L.PL_VPC]
    in_game: dict[int, int] = {}
    for card in range(len(data.card_kind)):
        kind = data.card_kind[card]
        if data.kinds[kind].deck == "additional" and d[L.O_LOC + card] != L.L_UNUSED:
            in_game[kind] = in_game.get(kind, 0) + 1
    # the acting card is named by `pending`, also when it is out of play (parting)
    removed = sorted(name(c) for c in range(len(data.card_kind)) if d[L.O_LOC + c] == L.L_BOX
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
        "game_over": bool(st.is_terminal()),
        "observer": observer,
        "seats": seats,
        "display": [d[L.O_DISP + i] + 1 for i in range(d[L.S_DISP_N])],
        "discard": [name(d[L.O_DISC + i]) for i in range(d[L.S_DISC_N])],
        "removed": removed,
        "spare_patriarch": d[L.S_SPARE] >= 0,
        "decks": {
            name: _dump_deck(st, deck, data, observer) for deck, name in enumerate(DECK_NAMES)
        },
        "pending": _dump_pending(st, data, observer) if d[L.S_PHASE] == L.PH_EFFECT else None,
    }
    if observer is None:
        doc["rng"] = int(rng)
    return doc


def _dump_caravans(d: list[int], p: int, name: Callable[[int], str]) -> list[list[str]]:
    """Seat `p`'s caravans, each front card first."""
    caravans = []
    for c in range(d[L.O_NCAR + p]):
        car = p * 4 + c
        cards = []
        card = d[L.O_CAR + car * 3]
        for _ in range(d[L.O_CAR + car * 3 + 2]):
            cards.append(name(card))
            card = d[L.O_NXT + card]
        caravans.append(cards)
    return caravans


def dump_decision_context(d: list[int], data: CardData) -> dict[str, Any]:
    """The part of state array `d`'s document that says what a decision in it does (what
    `engine_ext.words` reads): the turn player, each seat's caravans and the pending step."""
    st = state_over(d, data)
    name = _names(st, data)
    return {
        "turn_player": d[L.S_TURNPL],
        "seats": [{"caravans": _dump_caravans(d, p, name)} for p in range(d[L.S_PLAYERS])],
        "pending": _dump_pending(st, data, None) if d[L.S_PHASE] == L.PH_EFFECT else None,
    }


def _dump_deck(st: L.State, deck: int, data: CardData, observer: int | None) -> Any:
    """A deck (`DECK_*`), top first: all its cards (with who knows where each is, if anyone does),
    or, in a view, how many and those whose places the observer knows (never a Standard card's)."""
    d = st.d
    n = d[L.DECK_N[deck]]
    if observer is not None and deck == L.DECK_STANDARD:  # no seat knows a Standard card's place
        return {"count": n, "known": []}
    cards = [d[L.deck_slot(d, deck, i)] for i in range(n)]
    contract = deck == L.DECK_CONTRACT
    known_off = L.O_CKNOWN if contract else L.O_KNOWN

    card_name = _names(st, data)

    def name(x: int) -> Any:
        return x + 1 if contract else card_name(x)

    if observer is None:
        masks = [d[known_off + x] for x in cards]
        if any(masks):
            return {"cards": [name(x) for x in cards], "known_by": masks}
        return [name(x) for x in cards]
    known = [[i, name(x)] for i, x in enumerate(cards) if (d[known_off + x] >> observer) & 1]
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


def _dump_pending(st: L.State, data: CardData, observer: int | None) -> dict[str, Any]:
    """The step waiting for a decision: whose action, where it stopped, and what that decision reads."""
    d = st.d
    tp = d[L.S_TURNPL]
    car = d[L.S_CAR]
    card = d[L.S_CARD]
    pos: int | None = None
    moved: dict[str, int] | None = None
    if d[L.S_SLOT] != L.OPT_PART:
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
        drawn = [_names(st, data)(x) for x in limbo]
    if drawn_hidden_from(st, observer):
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
    if observer is None and st.private_draw():
        known = L.O_CKNOWN if src == L.DECK_CONTRACT else L.O_KNOWN
        knew = [d[known + x] >> L.KNEW for x in limbo]
        if any(knew):
            out["drawn_known_by"] = knew
    return out
