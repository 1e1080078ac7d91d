"""The Python face of the engine: `Engine` (one core build plus the card data) and `Game`
(a state with decisions as values, JSON in and out, views and determinization)."""

from __future__ import annotations

import random
from collections.abc import Callable
from types import ModuleType
from typing import Any

from engine_ext import core as L
from engine_ext.carddata import RESOURCES, CardData
from engine_ext.decisions import Decision, DecisionError, code_problem, route_sources
from engine_ext.document.array import drawn_hidden_from, state_over
from engine_ext.document.deal import new_game_doc
from engine_ext.document.dump import decks_left_out, dump_decision_context, dump_doc
from engine_ext.document.load import load_doc
from engine_ext.document.schema import StateError, is_strict_int
from engine_ext.words import seat_words

DecisionLike = Decision | str | dict[str, Any] | int


class IllegalDecision(ValueError):
    """A well-formed decision that is not legal in this state."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer


class NoDecision(StateError):
    """A game in which no decision can be chosen as loaded: `code` says why ("game_over": there is
    none; "hidden_choice": the view holds made-up cards where its player to move chooses)."""

    def __init__(self, pointer: str, message: str, code: str) -> None:
        super().__init__(pointer, message)
        self.code = code

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.pointer, self.message, self.code))


class Engine:
    """One build of the core (compiled or interpreted) with one set of card data."""

    def __init__(self, core: ModuleType, data: CardData) -> None:
        self.core = core
        self.data = data
        self.rules = core.Rules(data.tables)
        self.COMPILED: bool = bool(getattr(core, "COMPILED", False))

    def __repr__(self) -> str:
        return f"<Engine {'compiled' if self.COMPILED else 'interpreted'}>"

    def new_game(self, players: int = 2, seed: int = 0, variant: Any = None, turn_limit: int = 400) -> Game:
        return self.from_json(new_game_doc(players, seed, variant, self.data, turn_limit))

    def from_json(self, doc: Any) -> Game:
        """A game from a state document (full, or a view); StateError names the wrong field."""
        d, rng, observer = load_doc(doc, self.data)
        st = self.core.State(self.rules)
        st.load(d, rng)
        # what the checks above let through must still leave a decision to make, each of them one
        # that reads back (a safety net: play must never reach a state that is not over and
        # offers nothing, which a playout cannot go on from)
        where = "/pending" if doc.get("pending") else "/turn_player"
        codes = st.legal_codes()
        if not st.is_terminal() and not codes:
            raise StateError(where, "no decision is possible in this state")
        routes = len(route_sources(st)) if any(code >> 8 == L.K_ROUTE for code in codes) else 0
        for code in codes:
            problem = code_problem(code, self.data, lambda: routes)
            if problem:
                raise StateError(where, f"the state offers a decision that is none: {problem}")
        # play carries out a mid-turn step with one possible outcome, never asks it, unless it
        # chooses among cards drawn for the turn player's eyes only (`core.apply_unchecked`)
        if doc.get("pending") and len(codes) == 1 and not st.private_draw():
            only = Decision.from_code(codes[0], st, self.data)
            raise StateError(where, f"a step with one possible outcome ({only}) is carried out, never asked")
        full = observer is None
        return Game(self, st, observer, made_up_decks=decks_left_out(doc) if full else (),
                    seed_made_up=full and "rng" not in doc)

    def cards(self) -> dict[str, Any]:
        return {"cards": [k.to_json() for k in self.data.kinds],
                "contracts": [c.to_json() for c in self.data.contracts]}


class Game:
    """A game state with decisions as values. Mutable: `apply` changes it."""

    def __init__(self, engine: Engine, state: Any, observer: int | None = None,
                 made_up_decks: tuple[int, ...] = (), seed_made_up: bool = False) -> None:
        self.engine = engine
        self.state = state
        self.observer = observer
        # a full state whose document left out some decks' order (`DECK_*`), or the seed of its
        # shuffles (reshuffles of the discard pile): made up when it was loaded
        self.made_up_decks = made_up_decks
        self.seed_made_up = seed_made_up

    # ---- queries -------------------------------------------------------------------
    @property
    def players(self) -> int:
        return int(self.state.players)

    @property
    def current_player(self) -> int:
        return int(self.state.current_player())

    @property
    def turn_player(self) -> int:
        return int(self.state.turn_player())

    @property
    def is_terminal(self) -> bool:
        return bool(self.state.is_terminal())

    def vp(self, p: int) -> int:
        return int(self.state.vp(p))

    def scores(self) -> list[int]:
        return [self.vp(p) for p in range(self.players)]

    def winner(self) -> int:
        return int(self.state.winner())

    def legal_codes(self) -> list[int]:
        return list(self.state.legal_codes())

    def legal(self) -> list[Decision]:
        return [self.decision(c) for c in self.legal_codes()]

    def decision(self, code: int) -> Decision:
        return Decision.from_code(code, self.state, self.engine.data)

    def code(self, d: DecisionLike) -> int:
        """The core's code of a decision given as a Decision, its text or JSON (or a code)."""
        if isinstance(d, int) and not isinstance(d, bool):
            problem = code_problem(d, self.engine.data, lambda: len(route_sources(self.state)))
            if problem:
                raise DecisionError(problem)
            return d
        if isinstance(d, str):
            d = Decision.parse(d)
        elif isinstance(d, dict):
            d = Decision.from_json(d)
        if not isinstance(d, Decision):
            raise DecisionError("a decision is a Decision, a text or a JSON object")
        return d.to_code(self.state, self.engine.data)

    # ---- changes -------------------------------------------------------------------
    def hidden_from(self, observer: int | None) -> bool:
        """Whether the decision now pending is a choice among drawn Special cards or contracts
        that `observer` has not seen (only the turn player sees them): its legal decisions name
        them, and a view of `observer` holds made-up cards in their place."""
        return drawn_hidden_from(self.state, observer)

    def refuse_hidden_choice(self) -> None:
        """NoDecision ("hidden_choice") when this game is a seat's view and the player to move is
        choosing among cards that view does not show: the view holds made-up cards in their place,
        so neither a decision nor a search on it would mean anything."""
        if self.hidden_from(self.observer):
            raise NoDecision("/pending/drawn", f"{seat_words(self.turn_player)} is choosing among cards it drew "
                             f"that this view ({seat_words(self.observer)}'s) has not seen; send the full state, or "
                             "the view "
                             "of that seat", "hidden_choice")

    def check_decision_point(self) -> None:
        """NoDecision unless the player to move has a decision to choose that this game shows:
        "game_over" when the game is over, else `refuse_hidden_choice`."""
        if self.is_terminal:
            raise NoDecision("/game_over", "the game is over: there is no decision to choose", "game_over")
        self.refuse_hidden_choice()

    def apply(self, d: DecisionLike, observer: int | None = None) -> list[dict[str, Any]]:
        """Apply a legal decision; returns what happened (events), as seen by `observer` when
        given: a Special card it did not see drawn or put back is not named. On a game loaded from
        a view, a card drawn from a deck whose place that view's seat did not know is marked
        `"sampled": true`: the view's deck order is made up, so it is one possible draw, not the
        real one. IllegalDecision if not legal."""
        code = self.legal_code(d)
        before = self.state.export()
        self.state.apply_unchecked(code)
        return events(before, self.state.export(), self.engine.data, observer, sampled_for=self.observer)

    def legal_code(self, d: DecisionLike) -> int:
        """The code of `d`; IllegalDecision when it is not legal here (or the game is over)."""
        code = self.code(d)
        if self.is_terminal:
            raise IllegalDecision("the game is over")
        if not self.state.is_legal(code):
            shown = d if isinstance(d, str) else str(self.decision(code)) if isinstance(d, int) else str(d)
            legal = ", ".join(f"`{x}`" for x in self.legal())
            raise IllegalDecision(f"`{shown}` is not legal here; legal: {legal}")
        return code

    def outcome_made_up(self, d: DecisionLike) -> bool:
        """On a game loaded from a view: whether what `d` leads to, as that view's seat sees it,
        hangs on what the view made up (its decks' order and its shuffles: a draw, a refill of the
        display from the contract deck, a reshuffle of the discard pile). `d` is applied here and
        in `SAMPLED_WORLDS` other worlds that agree with the view (`determinize`), and the views
        after it compared. On a full state: False where its document gave every deck's order and the
        seed of its shuffles (the real ones); else the same test, compared whole but for the decks,
        in worlds where what it left out is made up again (`_remade`)."""
        if self.observer is None:
            if self.made_up_decks or self.seed_made_up:
                return self._differs_between_worlds(d, self._remade, None)
            return False
        if self.hidden_from(self.observer):  # `d` would choose among cards this view made up
            raise StateError("/pending/drawn", f"{seat_words(self.turn_player)} is choosing among cards it drew "
                             f"that this view ({seat_words(self.observer)}'s) has not seen: its outcome is not this "
                             "view's to "
                             "judge")
        observer = self.observer
        return self._differs_between_worlds(d, lambda seed: self.state.determinize(observer, seed), observer)

    def _remade(self, seed: int) -> Any:
        """A copy of this full state with what its document left out made up again by `seed`: the
        order of the decks it did not give, and the seed of its shuffles if it did not give that."""
        d = self.state.export()
        rnd = random.Random(seed)
        for deck in self.made_up_decks:
            slots = [L.deck_slot(d, deck, i) for i in range(d[L.DECK_N[deck]])]
            cards = [d[s] for s in slots]
            rnd.shuffle(cards)
            for s, card in zip(slots, cards, strict=True):
                d[s] = card
        st = self.state.clone()
        st.load(d, rnd.getrandbits(64) | 1 if self.seed_made_up else self.state.get_rng())
        return st

    def _differs_between_worlds(self, d: DecisionLike, world: Callable[[int], Any], view: int | None) -> bool:
        """Whether `d` leads to another state (seat `view`'s view of it; None: the full state, but
        for its decks and seed) here than in `SAMPLED_WORLDS` other worlds (`world(seed)`)."""
        code = self.legal_code(d)
        first: dict[str, Any] | None = None
        for seed in range(SAMPLED_WORLDS + 1):
            st = self.state.clone() if seed == 0 else world(seed)
            if not st.is_legal(code):  # a decision other worlds do not offer hangs on what is made up
                return True
            st.apply_unchecked(code)
            seen = dump_doc(st.export(), 1, self.engine.data, view)
            if view is None:
                seen = {k: v for k, v in seen.items() if k not in ("decks", "rng")}
            if first is None:
                first = seen
            elif seen != first:
                return True
        return False

    def clone(self) -> Game:
        return Game(self.engine, self.state.clone(), self.observer, self.made_up_decks, self.seed_made_up)

    def determinize(self, observer: int, seed: int) -> Game:
        """A copy whose hidden order is re-sampled from what seat `observer` knows (ValueError for
        a seat not in the game: the builds read an out-of-range seat differently)."""
        if not is_strict_int(observer) or not 0 <= observer < self.players:
            raise ValueError(f"observer must be a seat from 0 to {self.players - 1}, got {observer!r}")
        return Game(self.engine, self.state.determinize(observer, seed & (2**64 - 1)), None)

    def shuffle_unknown(self, seed: int) -> None:
        """Shuffle afresh, by `seed`, what no seat knows (the Standard deck, the unknown places of
        the other decks, the state's random stream): what is to come changes, what any seat knows
        does not. A full state only (ValueError for a view, whose hidden order is made up)."""
        if self.observer is not None:
            raise ValueError("shuffle_unknown takes a full state, not a seat's view")
        self.state.shuffle_unknown(seed & (2**64 - 1))

    # ---- JSON ----------------------------------------------------------------------
    def to_json(self, observer: int | None = None) -> dict[str, Any]:
        """The full state, or the view of player `observer` (hidden deck order left out)."""
        if observer is None:
            observer = self.observer
        if observer is not None and (not is_strict_int(observer) or not 0 <= observer < self.players):
            raise ValueError(f"observer must be a seat from 0 to {self.players - 1} (or None), got {observer}")
        return dump_doc(self.state.export(), int(self.state.get_rng()), self.engine.data, observer)

    def decision_context(self) -> dict[str, Any]:
        """What the words of a decision here read of the document (`engine_ext.words`): the turn
        player, the seats' caravans and the pending step; cheaper than `to_json`."""
        return dump_decision_context(self.state.export(), self.engine.data)

    def view(self, player: int) -> dict[str, Any]:
        return self.to_json(observer=player)

    def __repr__(self) -> str:
        return (f"<Game {self.players}p turn {self.state.export()[L.S_TURN]} player {self.current_player} "
                f"vp {self.scores()}>")


DECKS = (L.L_STD, L.L_SPC)  # the places with a hidden order
CONTRACT_DECK = -1  # `_made_up_places`' name for the contract deck (card places are 0 and up)
SAMPLED_WORLDS = 8  # other worlds `Game.outcome_made_up` compares with
PRIVATE_PLACES = ("special deck", "drawn")  # a card moving between these is seen by the drawer alone


def seen_by(events: list[dict[str, Any]], observer: int | None, drawer: int) -> list[dict[str, Any]]:
    """`events` of a decision in `drawer`'s turn as `observer` sees them (None: all of them): a card
    moving between the Special deck and the drawn cards is not named (`"card": null`) for another
    seat, as only the drawer sees it, and comes after the named events."""
    if observer is None or observer == drawer:
        return events
    hidden = [e.get("event") == "card" and e.get("from") in PRIVATE_PLACES and e.get("to") in PRIVATE_PLACES
              for e in events]
    # the unnamed ones go last: events come in card order, so their place among the named ones
    # would tell whether a hidden card sorts before or after a kept one
    return ([e for e, h in zip(events, hidden, strict=True) if not h]
            + [dict(e, card=None) for e, h in zip(events, hidden, strict=True) if h])


def _made_up_places(before: list[int], after: list[int], data: CardData, sampled_for: int | None) -> set[int]:
    """The places a card drawn from was made up on a view of seat `sampled_for` (None: a full
    state, nothing made up): a deck (`DECKS`, or `CONTRACT_DECK`) whose cards that seat does not
    know hold more than one kind, and the discard pile when it was reshuffled into the Standard
    deck in this step (its cards moved there) holding more than one kind. A place whose unknown
    cards are all of one kind gives that kind whatever the order: nothing is made up."""
    if sampled_for is None:
        return set()
    kinds: dict[int, set[int]] = {}
    for card in range(len(data.card_kind)):
        place = before[L.O_LOC + card]
        if place == L.L_DISC or (place in DECKS and not (before[L.O_KNOWN + card] >> sampled_for) & 1):
            kinds.setdefault(place, set()).add(data.card_kind[card])
    places = {place for place, found in kinds.items() if len(found) > 1 and place != L.L_DISC}
    if L.L_DISC in kinds and len(kinds[L.L_DISC]) > 1 and any(
            before[L.O_LOC + card] == L.L_DISC and after[L.O_LOC + card] == L.L_STD
            for card in range(len(data.card_kind))):
        places.add(L.L_DISC)
    unknown = sum(1 for c in range(L.NCON)
                  if before[L.O_CLOC + c] == L.CL_DECK and not (before[L.O_CKNOWN + c] >> sampled_for) & 1)
    if unknown > 1:
        places.add(CONTRACT_DECK)
    return places


def events(before: list[int], after: list[int], data: CardData, observer: int | None = None,
           sampled_for: int | None = None) -> list[dict[str, Any]]:
    """What a decision changed, as a list of events (resources, cards, contracts), as `observer`
    sees them when given (`seen_by`). `sampled_for`: the seat of the view the state was loaded
    from, whose decks' order was made up: a card it draws from a deck without knowing its place
    is marked `"sampled": true`."""
    out: list[dict[str, Any]] = []
    n = after[L.S_PLAYERS]
    made_up = _made_up_places(before, after, data, sampled_for)
    now = state_over(after, data)
    seat = 0 if sampled_for is None else sampled_for  # read only when `made_up` holds a place
    for p in range(n):
        for r, name in enumerate(RESOURCES):
            i = L.O_RES + p * 7 + r
            if before[i] != after[i]:
                out.append({"event": "resource", "player": p, "resource": name,
                            "from": before[i], "to": after[i]})
    for c in range(L.NCON):
        if before[L.O_CLOC + c] != after[L.O_CLOC + c] and 0 <= after[L.O_CLOC + c] < 4:
            fulfil: dict[str, Any] = {"event": "fulfil", "player": after[L.O_CLOC + c], "contract": c + 1,
                                      "vp": data.contracts[c].vp}
            if (before[L.O_CLOC + c] == L.CL_DECK and CONTRACT_DECK in made_up
                    and not (before[L.O_CKNOWN + c] >> seat) & 1):
                fulfil["sampled"] = True  # drawn from the contract deck and taken at once (a Hufschmied)
            out.append(fulfil)
    names = {L.L_STD: "standard deck", L.L_DISC: "discard", L.L_SPC: "special deck", L.L_BOX: "removed",
             L.L_LIMBO: "drawn", L.L_SPARE: "spare", L.L_UNUSED: "unused"}
    for card in range(len(data.card_kind)):
        a, b = before[L.O_LOC + card], after[L.O_LOC + card]
        if a != b or before[L.O_FLIP + card] != after[L.O_FLIP + card]:
            slug = data.kinds[data.card_kind[card]].slug
            ev: dict[str, Any] = {"event": "card", "card": slug}
            ev["from"] = {"player": a >> 2, "caravan": a & 3} if a < 16 else names.get(a, str(a))
            ev["to"] = {"player": b >> 2, "caravan": b & 3} if b < 16 else names.get(b, str(b))
            if before[L.O_FLIP + card] != after[L.O_FLIP + card]:
                ev["turned"] = data.kinds[now._card_kind(card)].slug  # a turned Patriarch is a Matriarch
            # drawn from a made-up order (from a reshuffled discard pile: into the deck is no draw)
            unseen = b != L.L_STD if a == L.L_DISC else not (before[L.O_KNOWN + card] >> seat) & 1
            if a != b and a in made_up and unseen:
                ev["sampled"] = True
            if a == L.L_LIMBO and b == L.L_LIMBO:
                continue
            out.append(ev)
    if before[L.S_TURN] != after[L.S_TURN]:
        out.append({"event": "turn_end", "next_player": after[L.S_TURNPL],
                    "game_over": after[L.S_PHASE] == L.PH_OVER})
    return seen_by(out, observer, before[L.S_TURNPL])
