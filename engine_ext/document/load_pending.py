"""The step a document leaves pending, read into the core's state array: it must be one where the
acting card's program stops for a decision (`engine_ext.program`), with the registers and drawn cards
that decision reads."""

from __future__ import annotations

from typing import Any

from engine_ext import core as L
from engine_ext import program
from engine_ext.document.array import drawn_hidden_from
from engine_ext.document.builder import PERSON_DECKS, STD_DECKS, Builder
from engine_ext.document.schema import DECK_NAMES, SLOT_NAMES, WAIT_CODES, WAIT_NAMES, StateError, is_strict_int
from engine_ext.words import caravan_words, card_name, seat_words


def _card_at(b: Builder, car: int, pos: int, slug: str, pointer: str) -> int:
    """The card at `pos` of caravan `car` (0 = front), which must be a `slug` (a turned Patriarch
    is a Matriarch: `State._card_kind`)."""
    card = b.core._at(car, pos)
    if card < 0:
        raise StateError(pointer, "no card at that position of the caravan")
    actual = b.data.kinds[b.core._card_kind(card)].slug
    if actual != slug:
        raise StateError(pointer, f"the card there is the {card_name(actual, b.data)}, not the "
                                  f"{card_name(slug, b.data)}")
    return card


def load_pending(pend: dict[str, Any], doc: dict[str, Any], b: Builder, n: int) -> int:
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
        raise StateError("/pending/caravan", f"{seat_words(tp)} has no {caravan_words(c, f'c{c}')}")
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
        _check_free_picks(b)
    return unnamed


def _check_free_picks(b: Builder) -> None:
    """A Hufschmied's pick among named drawn contracts waits as play makes it wait
    (`State._cfree_waits`): with as many free ones (not large) as it may take, or more, before the
    first pick, and one at least above the last pick after it (else play takes them, or ends the
    step, without asking)."""
    d, st = b.d, b.core
    if st._cfree_waits(d[L.S_N], d[L.S_LAST]):
        return
    free = [c + 1 for c in (d[L.O_LIMBO + i] for i in range(d[L.S_LIMBO_N])) if st._cfree(c, d[L.S_LAST])]
    if d[L.S_LAST] == -1:
        raise StateError("/pending/drawn", f"the Hufschmied picks {d[L.S_N]} of its free contracts only when at least "
                                           f"{d[L.S_N]} are free (not large); free here: {free or 'none'}")
    raise StateError("/pending/drawn", f"no free contract (not large) is left above contract {d[L.S_LAST] + 1}, "
                                       "the last pick: play would have ended the step")


def _acting_card(pend: dict[str, Any], b: Builder, slug: str, car: int, here: program.Stop) -> int:
    """The card whose action is pending: in its caravan at `position`, in another caravan of its
    player its own action moved it to (`moved_to`, a Hirte), or out of play (parted with, or
    removed by its own action)."""
    d = b.d
    tp = d[L.S_TURNPL]
    pos: Any = pend.get("position")
    moved: Any = pend.get("moved_to")
    if d[L.S_SLOT] == L.OPT_PART:
        if pos is not None or moved is not None:
            raise StateError("/pending/position" if pos is not None else "/pending/moved_to",
                             f"a card parted with is out of play: the {card_name(slug, b.data)}'s position is null")
    elif moved is not None:
        if pos is not None:
            raise StateError("/pending/moved_to", "the card is at its position in its caravan or moved, not both")
        if not here.can_move():
            raise StateError("/pending/moved_to", f"the {card_name(slug, b.data)}'s action has moved no card so far")
        q = moved["seat"]
        if q != tp or not 0 <= moved["caravan"] < d[L.O_NCAR + q] or q * 4 + moved["caravan"] == car:
            raise StateError("/pending/moved_to", f"its own action moves a card only to another caravan of its "
                                                  f"player ({seat_words(tp)}), not to {seat_words(q)}'s "
                                                  f"{caravan_words(moved['caravan'])}")
        return _card_at(b, q * 4 + moved["caravan"], moved["position"], slug, "/pending/moved_to")
    elif pos is not None:
        return _card_at(b, car, pos, slug, "/pending/position")
    elif not here.can_take_out():
        raise StateError("/pending/position", f"the {card_name(slug, b.data)}'s caravan action cannot have taken "
                                              f"it out of play: give its position in {caravan_words(car - tp * 4)}")
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


def _load_registers(pend: dict[str, Any], b: Builder, here: program.Stop, wait: int, n: int) -> None:
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
        raise StateError("/pending/decider", f"{seat_words(decides)} decides here, not {seat_words(decider)}")
    d[L.S_DECIDER] = decider


def _load_drawn(pend: dict[str, Any], b: Builder, here: program.Stop, wait: int, what: str,
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
        if not drawn_hidden_from(b.core, observer):  # else the engine would make up cards a seat sees
            who = "a full state" if observer is None else f"{seat_words(observer)}'s view"
            raise StateError("/pending/drawn", f"{who} shows the cards drawn for {what}: list them")
        return n_drawn
    assert isinstance(drawn, list)
    for i, x in enumerate(drawn):
        if src == L.DECK_CONTRACT:
            con = b.contract(x, f"/pending/drawn/{i}")
            d[L.O_LIMBO + i] = con
            d[L.O_CLOC + con] = L.CL_LIMBO
            L.mark_drawn(d, L.O_CKNOWN, con, tp, knew[i] if knew else 0)
        else:
            card, _ = b.card(x, f"/pending/drawn/{i}", STD_DECKS if src == L.DECK_STANDARD else ("special",))
            d[L.O_LIMBO + i] = card
            d[L.O_LOC + card] = L.L_LIMBO
            L.mark_drawn(d, L.O_KNOWN, card, tp, knew[i] if knew else 0)
    d[L.S_LIMBO_N] = n_drawn
    return 0
