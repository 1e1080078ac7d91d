"""Words for people: decisions, events, cards and contracts in short English, from the card data.

One renderer for every interface (the API's `description` fields, `kashgar play`, the web page).
Everything is read from the card data, so a corrected card file is described as it now plays;
a card's effect steps are put in words from their rows of the step language (`engine_ext.steps`:
each step's `says`), and a step that is not in the language is shown as written.

Words for people count from 1, codes and JSON from 0 (docs/engine-api.md): "seat 1" is the JSON's
seat 0 (`seat_words`), "caravan 1" is the code's `c0` (`caravan_words`; "caravan 3 (c2:a)" where the
words show the code too), "move 1" is a record's first move. A seat may be named instead by the
names a caller gives (`seats=["you", "seat 2"]`). Cards are named in English (`english` in the card
data; `zigeuner` is "Traveller"), never by their slug, and no field of the card data is shown as
written (the Bauer's `vp = "wheat"` reads "1 VP per wheat-field contract").

The public functions (each takes the card data as an optional last argument: a `CardData`, or
the JSON that `GET /cards` serves; None: the engine's own, `carddata.default()`):

* `seat_words(index) -> str`: a seat ("seat 1" for the JSON's 0); `caravan_words(index, code=None)`:
  a caravan ("caravan 1" for `c0`; with a code, "caravan 3 (c2:a)").
* `card_name(slug) -> str`: a card's English name ("Nobles"; the slug when the data has none).
* `card_effect_text(slug) -> str`: what a card is worth and does
  ("1 VP; action: pay 1 gold, draw 2 Special cards and keep one; parting: +2 gold").
* `contract_text(number) -> str`: a contract ("contract #1 (2 VP; costs 4 ginger; needs 1 mule)").
* `decision_words(decision, state) -> str`: a legal decision (a `Decision`, its text or its JSON)
  in a state document (full or a view; the deciding seat is read from it), e.g.
  "Patriarch, caravan 1: draw 2 Standard cards and keep one", "fulfil contract #7 (...)".
* `event_text(event, seats=None) -> str`: one event of `Game.apply` (`engine_ext.game.events`),
  e.g. "seat 1: +2 pepper (now 5)" (the event's player 0).
* `turn_words(turn) -> str`: the turn being played ("turn 1" while the state's `turn` is 0).
* `step_text(step)`, `steps_text(steps)`: effect steps of the card file.
* `ask_text(kinds) -> str`: the question the engine asks, from the kinds of the legal decisions.
* `HIDDEN_CHOICE`: what a seat is told of another's choice among cards only that one has seen.

`Words(cards_json)` holds one copy of the card data and offers the same as methods (`name`,
`effect`, `contract`, `decision`, `event`, `action`); `words(data)` gives the one for `data`.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

from engine_ext import carddata, steps
from engine_ext.carddata import CardData
from engine_ext.core import TRADE_MULES, TRADE_SPICE
from engine_ext.decisions import Decision

__all__ = ["HIDDEN_CHOICE", "YOU", "Words", "ask_text", "card_effect_text", "card_name", "caravan_words",
           "contract_text", "decision_words", "event_text", "no_seat", "seat_words", "step_text", "steps_text",
           "turn_words", "vp_text", "words"]

OPTION_SLOT = {"a": 0, "b": 1}
DECK_WORDS = {"standard deck": "the Standard deck", "special deck": "the Special deck", "discard": "the discard pile",
              "removed": "out of the game", "drawn": "the drawn cards", "spare": "the spare cards",
              "unused": "the unused cards"}

UNSEEN_FRONT = {"a": "its front card's first action", "b": "its front card's second action",
                "part": "its front card's parting action (it leaves the game)",
                "pass": "its front card goes to the back, no action"}

CardsData = CardData | Mapping[str, Any] | None


class _StepWords(string.Formatter):
    """A step's `says` template (`engine_ext.steps`) filled in with its arguments as written.
    A field names an argument; its format spec picks the form: `{R:it}` (the chosen resource as
    "it"), `{n:gain}` (an amount of the step's resource), `{k:count}` (an amount on its own),
    `{k:cards}` (an amount of cards of the step's deck), `{MASK:plural}`."""

    def __init__(self, parsed: steps.Parsed) -> None:
        super().__init__()
        self.given = parsed.given

    def _resource(self, it: bool = False) -> str:
        res = str(self.given.get("R", ""))
        return ("it" if it else "of it") if res == "$" else res

    def format_field(self, value: Any, format_spec: str) -> str:
        arg: steps.Arg = value
        v = self.given.get(arg.field)
        if arg.optional:
            if v is None:
                return arg.absent
            if arg.kind == steps.FLAGS:
                says = {f.word: f.says for f in arg.flags}
                return " (" + ", ".join(says[w] for w in v) + ")"
            return arg.says if arg.kind == steps.OPTION else arg.says.format(v)
        if arg.kind == steps.RESOURCE:
            return self._resource(it=format_spec == "it")
        if arg.kind == steps.DECK:
            return str(v).capitalize()  # "the Special deck", as the decks are named everywhere
        if arg.kind == steps.MASK:
            words = " or ".join("a spice" if w == "spice" else w for w in str(v).split("|"))
            return words.replace("a spice", "spices") if format_spec == "plural" else words
        count = steps.COUNTS.get(str(v))
        if format_spec == "gain":
            return count.gain.format(res=self._resource()) if count else f"{v} {self._resource()}"
        if format_spec == "cards":
            deck = str(self.given.get("DECK", "")).capitalize()
            if count:
                return count.words.replace("1 per", f"1 {deck} card per", 1)
            return f"{v} {deck} card{'' if str(v) == '1' else 's'}"
        if format_spec == "count" and count:
            return count.words
        return str(v)


def step_text(step: str) -> str:
    """One effect step of the card data in words (as written if it is not a step of the language)."""
    try:
        parsed = steps.parse(step)
    except steps.StepError:
        return step
    return _StepWords(parsed).format(parsed.step.says, **{a.field: a for a in parsed.step.args})


def steps_text(effect: Sequence[str]) -> str:
    """An action's steps in words, in order (a condition runs into the step it guards)."""
    out = ""
    for s in effect:
        out += ("" if not out else " " if out.endswith(":") else ", ") + step_text(s)
    return out


def _amount(n: Any, what: str) -> str:
    """`n` of a resource: "4 ginger", "1 mule", "2 mules"."""
    if what == "mules" and n == 1:
        what = "mule"
    return f"{n} {what}"


YOU = "you"  # a seat named so (the person at the web table) is spoken to: "your caravan", "you keep"


def _whose(name: str) -> str:
    """The possessive of a seat's name: "your" for YOU, else "seat 2's"."""
    return "your" if name == YOU else f"{name}'s"


def _does(name: str, verb: str) -> str:
    """A seat's name and a verb that agrees with it: "you keep", "seat 2 keeps" (`verb` given in
    the third person)."""
    return f"{name} {verb[:-1]}" if name == YOU else f"{name} {verb}"


def seat_words(index: Any) -> str:
    """A seat for people: "seat 1" is the JSON's seat 0 (words count from 1); "a seat" for no index."""
    return f"seat {index + 1}" if isinstance(index, int) and not isinstance(index, bool) else "a seat"


def no_seat(index: Any, players: int) -> str:
    """Why a seat's index (JSON, from 0) names no seat: "no seat of index 4 in a 2-player game (0 to 1)"."""
    return f"no seat of index {index} in a {players}-player game (0 to {players - 1})"


def caravan_words(index: Any, code: str | None = None) -> str:
    """A caravan for people: "caravan 1" is the code's `c0` (words count from 1); with `code`, the
    code too: "caravan 3 (c2:a)". "a caravan" for no index."""
    if not isinstance(index, int) or isinstance(index, bool):
        return "a caravan"
    return f"caravan {index + 1}" + (f" ({code})" if code else "")


def turn_words(turn: Any) -> str:
    """The turn being played, for people: "turn 1" while the state's `turn` (the turns completed)
    is 0."""
    return f"turn {turn + 1}" if isinstance(turn, int) and not isinstance(turn, bool) else "a turn"


def vp_text(vp: Any) -> str:
    """A card's `vp` in words: "2 VP", "-1 VP", "1 VP per wheat-field contract" (the Bauer's
    `"wheat"`); "" for none (0 or absent)."""
    if vp == "wheat":
        return "1 VP per wheat-field contract"
    return f"{vp} VP" if isinstance(vp, int) and vp else ""




class Words:
    """Descriptions of cards, contracts, decisions and events from one copy of the card data
    (the JSON that `GET /cards` serves: `{"cards": [...], "contracts": [...]}`)."""

    def __init__(self, cards: Mapping[str, Any]) -> None:
        self.cards: dict[str, Mapping[str, Any]] = {str(c["slug"]): c for c in cards.get("cards", [])}
        self.contracts: dict[int, Mapping[str, Any]] = {int(c["number"]): c for c in cards.get("contracts", [])}
        self._actions: dict[tuple[str, str], str] = {}

    @classmethod
    def of(cls, data: CardData) -> Words:
        return cls({"cards": [k.to_json() for k in data.kinds], "contracts": [c.to_json() for c in data.contracts]})

    # ---- cards and contracts ------------------------------------------------------------
    def name(self, slug: Any) -> str:
        """A card's English name (its slug when the data has none)."""
        return str(self.cards.get(str(slug), {}).get("english") or slug)

    def action(self, slug: str, option: str) -> str:
        """What card `slug` does when played with `option` (`a`, `b`, `part` or `pass`); worked out
        once per card and option."""
        key = (slug, option)
        said = self._actions.get(key)
        if said is None:
            said = self._actions[key] = self._action(slug, option)
        return said

    def _action(self, slug: str, option: str) -> str:
        card = self.cards.get(slug)
        if card is None:
            return ""
        if option == "pass":
            return "no action, it goes to the back of its caravan"
        if option == "part":
            effect = card.get("parting")
        else:
            actions = card.get("caravan") or []
            slot = OPTION_SLOT.get(option, -1)
            effect = actions[slot] if 0 <= slot < len(actions) else None
        return steps_text(effect) if effect else ""

    def effect(self, slug: str) -> str:
        """What a card is worth and what its actions do, in one line."""
        card = self.cards.get(slug)
        if card is None:
            return ""
        worth = vp_text(card.get("vp"))
        parts = [worth] if worth else []
        actions = [self.action(slug, o) for o in ("a", "b")]
        actions = [a for a in actions if a]
        if len(actions) == 1:
            parts.append(f"action: {actions[0]}")
        else:
            parts += [f"action {i}: {a}" for i, a in enumerate(actions, 1)]
        if parting := self.action(slug, "part"):
            parts.append(f"parting: {parting}")
        return "; ".join(parts) or "no action"

    def card(self, slug: str) -> str:
        """A card's English name and its effect: "Nobles (1 VP; action: ...)"."""
        if slug not in self.cards:
            return str(slug)
        return f"{self.name(slug)} ({self.effect(slug)})"

    def contract(self, number: Any) -> str:
        """"contract #N (VP; what it costs; the mules it needs; what it pays)"."""
        try:
            c = self.contracts.get(int(number))
        except (TypeError, ValueError):
            c = None
        if c is None:
            return f"contract #{number}"
        parts = [f"{c.get('vp')} VP"]
        if c.get("kind") == "wheat":
            parts.insert(0, "wheat field")
        cost = ", ".join(_amount(v, k) for k, v in (c.get("cost") or {}).items())
        parts.append(f"costs {cost}" if cost else "costs nothing")
        if c.get("mules"):
            parts.append(f"needs {_amount(c['mules'], 'mules')}")
        if c.get("payout"):
            parts.append("pays " + ", ".join(_amount(v, k) for k, v in c["payout"].items()))
        return f"contract #{number} ({'; '.join(parts)})"

    # ---- decisions --------------------------------------------------------------------
    def decision(self, decision: Decision | str | Mapping[str, Any], state: Mapping[str, Any]) -> str:
        """What a legal decision in `state` (a state document, full or a view) does."""
        d = decision if isinstance(decision, Decision) else Decision.from_json(decision)
        pending = state.get("pending") or {}
        wait = pending.get("wait", "turn")
        seat = pending.get("decider", state.get("turn_player", 0))
        try:
            caravans: list[list[str]] = state["seats"][seat]["caravans"]
        except (KeyError, IndexError, TypeError):
            caravans = []
        k, a = d.kind, d.args
        if k == "select":
            car, option = a
            front = caravans[car][0] if car < len(caravans) and caravans[car] else None
            if front is None:  # a state that does not show the caravan: words that need none
                return f"{caravan_words(car).capitalize()}: {UNSEEN_FRONT.get(option, option)}"
            who = f"{self.name(front)}, {caravan_words(car)}"
            if option == "part":
                return f"{who}, parting (it leaves the game): {self.action(str(front), 'part') or 'no effect'}"
            return f"{who}: {self.action(str(front), option) or 'no effect'}"
        if k == "choose":
            res = a[0]
            if wait == "trade":
                return f"take {_amount(1 if res == 'mules' else 2, res)} for 1 gold"
            if wait == "zimt":
                return f"pay 1 {res} for 1 cinnamon of the contract"
            if wait == "set_distinct":
                return f"choose {res} to set"
            return f"choose {res}"
        if k == "keep":
            where = "at the front of" if pending.get("to_front") else "at the back of"
            car = pending.get("caravan")
            return f"keep {self.card(a[0])}" + (f" {where} {caravan_words(car)}" if isinstance(car, int) else "")
        if k == "take":
            return f"take {self.card(a[0])} from the discard pile"
        if k == "fulfil":
            if wait == "wheat":
                return f"fulfil {self.contract(a[0])} for free"
            if wait == "contracts_free":
                return f"fulfil {self.contract(a[0])} for free"
            return f"fulfil {self.contract(a[0])}"
        if k == "remove":
            car, pos = a
            try:
                card = self.name(caravans[car][pos])
            except (IndexError, TypeError):
                card = "the card"
            return f"remove {card} ({caravan_words(car)}, card {pos + 1}) from the game"
        if k == "pay":
            return f"pay {a[0]} gold to trade: for each, +{TRADE_SPICE} of a spice or +{TRADE_MULES} mule"
        if k == "route":
            return self._route(d, caravans)
        return {"fulfil": "fulfil no contract", "wheat": "fulfil none of them", "remove": "remove no card",
                "remove_any": "remove no more cards"}.get(wait, "do nothing")

    def _route(self, d: Decision, caravans: list[list[str]]) -> str:
        """The Hirte's route: where each front card goes, in the order they move."""
        js = d.to_json()
        sources = [i for i, c in enumerate(caravans) if c]
        to = list(js.get("to", []))
        if len(to) != len(sources):
            return "move the front cards: " + ", ".join(f"to {caravan_words(t)}" for t in to)
        dest = dict(zip(sources, to, strict=True))
        order = js.get("order") or sorted(sources, key=lambda s: (dest[s], s))
        moves = [f"{self.name(caravans[s][0])} from {caravan_words(s)} to {caravan_words(dest[s])}" for s in order]
        return "move the front cards: " + ", ".join(moves)

    def code_shown(self, decision: Decision | str | Mapping[str, Any]) -> str:
        """A decision's code as words may show it beside them ("c2:a", "fulfil 7"); "" for one that
        names a card by its slug (`keep`, `take`: the words name it in English)."""
        d = decision if isinstance(decision, Decision) else Decision.from_json(decision)
        return "" if d.kind in ("keep", "take") else str(d)

    # ---- events -------------------------------------------------------------------------
    def event(self, event: Mapping[str, Any], seats: Sequence[str] | None = None) -> str:
        """One event of `Game.apply` in words; `seats` names the seats (default `seat_words`: the
        event's player 0 is "seat 1")."""

        def who(p: Any) -> str:
            if seats is not None and isinstance(p, int) and 0 <= p < len(seats):
                return seats[p]
            return seat_words(p)

        kind = event.get("event")
        if kind == "resource":
            before, after = event.get("from", 0), event.get("to", 0)
            change = after - before if isinstance(before, int) and isinstance(after, int) else 0
            return f"{who(event.get('player'))}: {change:+d} {event.get('resource')} (now {after})"
        if kind == "fulfil":
            return f"{_does(who(event.get('player')), 'fulfils')} {self.contract(event.get('contract'))}"
        if kind == "turn_end":
            if event.get("game_over"):
                return "the game is over"
            return f"turn ends; {who(event.get('next_player'))} to play"
        if kind == "card":
            return self._card_event(event, who)
        return f"{kind or 'something'} happened"

    def _card_event(self, event: Mapping[str, Any], who: Any) -> str:
        slug = event.get("card")
        card = self.name(slug) if slug else "a card"
        src, dst = event.get("from"), event.get("to")
        sampled = " (one possible draw: the deck order was made up)" if event.get("sampled") else ""
        if isinstance(src, dict) and src == dst:
            return f"{who(src.get('player'))}: {card} in {caravan_words(src.get('caravan'))} turned over" + (
                f", now {self.name(event['turned'])}" if event.get("turned") else "")
        turned = f", turned over to {self.name(event['turned'])}" if event.get("turned") else ""
        if isinstance(dst, dict):
            owner, car = who(dst.get("player")), caravan_words(dst.get("caravan"))
            if isinstance(src, dict):
                if src.get("player") == dst.get("player"):
                    return f"{owner}: {card} moves from {caravan_words(src.get('caravan'))} to {car}{turned}"
                origin = f"{_whose(who(src.get('player')))} {caravan_words(src.get('caravan'))}"
                return f"{card} moves from {origin} to {_whose(owner)} {car}{turned}"
            if src == "drawn":
                return f"{_does(owner, 'keeps')} {card} in {car}{turned}{sampled}"
            if src == "discard":
                return f"{_does(owner, 'takes')} {card} from the discard pile into {car}{turned}{sampled}"
            if src == "spare":
                return f"{_does(owner, 'starts')} {car} with {card}{turned}"
            return f"{card} goes from {DECK_WORDS.get(str(src), src)} to {_whose(owner)} {car}{turned}{sampled}"
        place = DECK_WORDS.get(str(dst), str(dst))
        if isinstance(src, dict):
            owner, car = who(src.get("player")), caravan_words(src.get("caravan"))
            if dst == "removed":
                return f"{owner}: {card} leaves {car} and the game{turned}"
            return f"{owner}: {card} goes from {car} to {place}{turned}"
        if dst == "drawn":
            return f"{card} is drawn from {DECK_WORDS.get(str(src), src)}{sampled}"
        if src == "drawn" and dst == "special deck":
            return f"{card if slug else 'a Special card'} goes back under the Special deck"
        if src == "discard" and dst == "standard deck":
            return f"{card} is shuffled from the discard pile into the Standard deck"
        return f"{card} goes from {DECK_WORDS.get(str(src), src)} to {place}{turned}{sampled}"


_WORDS: dict[int, tuple[object, Words]] = {}


def words(data: CardsData = None) -> Words:
    """The `Words` of `data` (a `CardData` or the JSON of `GET /cards`; None: the engine's card
    data); kept for the last few `CardData` given."""
    if data is None:
        data = carddata.default()
    if not isinstance(data, CardData):
        return Words(data)
    found = _WORDS.get(id(data))
    if found is None or found[0] is not data:
        if len(_WORDS) > 4:
            _WORDS.clear()
        found = (data, Words.of(data))
        _WORDS[id(data)] = found
    return found[1]


def card_name(slug: str, data: CardsData = None) -> str:
    """A card's English name ("zigeuner" is "Traveller"); the slug when the data has no such card."""
    return words(data).name(slug)


def card_effect_text(slug: str, data: CardsData = None) -> str:
    """What a card is worth and what its actions and parting action do ('' for an unknown card)."""
    return words(data).effect(slug)


def contract_text(number: int, data: CardsData = None) -> str:
    """A contract: its number, VP, cost, the mules it needs, what it pays."""
    return words(data).contract(number)


def decision_words(decision: Decision | str | Mapping[str, Any], state: Mapping[str, Any],
                  data: CardsData = None) -> str:
    """A legal decision (a Decision, its text or JSON) of the seat to decide in `state` (a state
    document, full or a view) in words."""
    return words(data).decision(decision, state)


def event_text(event: Mapping[str, Any], seats: Sequence[str] | None = None, data: CardsData = None) -> str:
    """One event of `Game.apply` in words; `seats` names the seats (default `seat_words`: "seat 1"
    for the event's player 0)."""
    return words(data).event(event, seats)


#: Another seat's choice among cards only it has seen (`Game.hidden_from`): its code and its words
#: would name them, so this is all the seat is told.
HIDDEN_CHOICE = "chooses among the cards it drew (not shown to you)"

#: The question the engine asks, by the kind of the legal decisions (the first kind present wins).
ASKS = {
    "select": "Your turn: play the front card of one of your caravans",
    "keep": "Keep one of the cards you drew",
    "take": "Take a card from the discard pile",
    "fulfil": "Fulfil a contract, or not",
    "remove": "Choose a card to remove",
    "choose": "Choose a resource",
    "pay": "Choose how much gold to pay",
    "route": "Choose where the front cards go",
}


def ask_text(kinds: Sequence[str]) -> str:
    """What the engine asks, from the kinds of the legal decisions ("Your decision" for none)."""
    return next((ASKS[k] for k in ASKS if k in kinds), "Your decision")
