"""Words for `kashgar play`: what a decision does, what a contract asks, what happened.

Everything is read from the card data as `GET /cards` serves it (`{"cards": [...], "contracts":
[...]}`), so a game through a service reads the same as one in-process, and a card edited in
`engine_ext/data/cards.toml` is described as it now plays. A step is put in words from its row of
the step language's table (`engine_ext.steps`: its `says`); a step that is not in the language is
shown as written.
"""

from __future__ import annotations

import string
from typing import Any

from engine_ext import steps

OPTION_SLOT = {"a": 0, "b": 1}


class _StepWords(string.Formatter):
    """A step's `says` template (`engine_ext.steps`) filled in with its arguments as written.
    A field names an argument; its format spec picks the form: `{R:it}` (the chosen resource as
    "it"), `{n:gain}` (an amount of the step's resource), `{k:count}` (an amount on its own),
    `{MASK:plural}`."""

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
        if arg.kind == steps.MASK:
            words = " or ".join("a spice" if w == "spice" else w for w in str(v).split("|"))
            return words.replace("a spice", "spices") if format_spec == "plural" else words
        count = steps.COUNTS.get(str(v))
        if format_spec == "gain":
            return count.gain.format(res=self._resource()) if count else f"{v} {self._resource()}"
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


def steps_text(steps: list[str]) -> str:
    """An action's steps in words, in order (a condition runs into the step it guards)."""
    out = ""
    for s in steps:
        out += ("" if not out else " " if out.endswith(":") else ", ") + step_text(s)
    return out


class CardText:
    """Descriptions of cards, contracts, decisions and events from one copy of the card data."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.cards = {c["slug"]: c for c in data.get("cards", [])}
        self.contracts = {int(c["number"]): c for c in data.get("contracts", [])}

    def action(self, slug: str, option: str) -> str:
        """What card `slug` does when played with `option` (`a`, `b`, `part` or `pass`)."""
        card = self.cards.get(slug)
        if card is None:
            return ""
        if option == "pass":
            return "no action, it goes to the back of its caravan"
        if option == "part":
            steps = card.get("parting")
        else:
            actions = card.get("caravan") or []
            slot = OPTION_SLOT.get(option, -1)
            steps = actions[slot] if 0 <= slot < len(actions) else None
        if not steps:
            return ""
        return steps_text(steps)

    def card(self, slug: str) -> str:
        """A card's English name, its VP and its actions, in one line."""
        card = self.cards.get(slug)
        if card is None:
            return slug
        acts = [f"{o}: {what}" for o in ("a", "b", "part") if (what := self.action(slug, o))]
        vp = card.get("vp")
        worth = ", 1 VP per wheat-field contract" if vp == "wheat" else f", {vp} VP" if vp else ""
        return f"{self.name(slug)}{worth} ({'; '.join(acts)})"

    def name(self, slug: str) -> str:
        """A card's English name (its slug when the data has none)."""
        return str(self.cards.get(slug, {}).get("english") or slug)

    def contract(self, number: int) -> str:
        """`#N: VP, what it costs, the mules it needs, what it pays`."""
        c = self.contracts.get(int(number))
        if c is None:
            return f"#{number}"
        cost = ", ".join(f"{k} {v}" for k, v in c.get("cost", {}).items())
        mules = f"; needs {c['mules']} mules" if c.get("mules") else ""
        payout = "; pays " + ", ".join(f"{k} {v}" for k, v in c["payout"].items()) if c.get("payout") else ""
        return f"#{number} {c.get('vp')} VP: pay {cost or 'nothing'}{mules}{payout}"

    def decision(self, decision: dict[str, Any], state: dict[str, Any], player: int) -> str:
        """What a legal decision of `player` in `state` does ('' when its text says it all)."""
        kind = decision.get("kind")
        if kind == "select":
            try:
                slug = state["seats"][player]["caravans"][decision["caravan"]][0]
            except (KeyError, IndexError, TypeError):
                return ""
            what = self.action(slug, decision.get("option", ""))
            part = " (parting: leaves the game)" if decision.get("option") == "part" else ""
            return f"{self.name(slug)}{part}: {what}" if what else ""
        if kind in ("keep", "take"):
            return self.card(str(decision.get("card")))
        if kind == "fulfil":
            return self.contract(int(decision.get("contract", -1)))
        if kind == "remove":
            try:
                return str(state["seats"][player]["caravans"][decision["caravan"]][decision["position"]])
            except (KeyError, IndexError, TypeError):
                return ""
        return ""

    def event(self, event: dict[str, Any]) -> str:
        """One event of `apply` in words."""
        kind = event.get("event")
        if kind == "card":
            turned = f" (turned: {event['turned']})" if event.get("turned") else ""
            return f"{event.get('card')}: {_place(event.get('from'))} -> {_place(event.get('to'))}{turned}"
        if kind == "resource":
            return (f"player {event.get('player')}: {event.get('resource')} "
                    f"{event.get('from')} -> {event.get('to')}")
        if kind == "fulfil":
            return (f"player {event.get('player')} fulfils {self.contract(int(event.get('contract', -1)))}"
                    f" (+{event.get('vp')} VP)")
        if kind == "turn_end":
            if event.get("game_over"):
                return "the game is over"
            return f"turn ends; player {event.get('next_player')} to play"
        return str(event)


def _place(where: Any) -> str:
    """Where a card is: a deck or pile by name, or a player's caravan."""
    if isinstance(where, dict) and "player" in where:
        car = f" caravan c{where['caravan']}" if "caravan" in where else ""
        return f"player {where['player']}{car}"
    return str(where)
