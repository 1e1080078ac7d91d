"""Words for `kashgar play`: what a decision does, what a contract asks, what happened.

Everything is read from the card data as `GET /cards` serves it (`{"cards": [...], "contracts":
[...]}`), so a game through a service reads the same as one in-process, and a card edited in
`engine_ext/data/cards.toml` is described as it now plays. A step is put in words from the step
language documented at the top of that file; a step this module does not know is shown as written.
"""

from __future__ import annotations

from typing import Any

OPTION_SLOT = {"a": 0, "b": 1}


FULFIL_FLAGS = {"free": "for free", "nomules": "without the mules it needs", "small": "a small one",
                "gold_for_spices": "gold may stand in for missing spices",
                "spices_for_cinnamon": "any spice may stand in for its cinnamon"}
COUNTS = {"N:contracts": "per contract you hold", "N:caravan": "per card in this caravan",
          "N:patriarchs": "per Patriarch at the front of a caravan"}


def _gain(sign: str, res: str, amount: str) -> str:
    """`+2 ginger`, `-3 mules`, `+1 gold per contract you hold`, `+half your mules`."""
    if amount == "N:halfmules":
        return f"{sign}half as many {res} as you have"
    if amount in COUNTS:
        return f"{sign}1 {res} {COUNTS[amount]}"
    return f"{sign}{amount} {res}"


def _mask(word: str) -> str:
    """A resource mask (`spice`, `cinnamon|pepper`, `spice|gold`) in words."""
    return " or ".join("a spice" if w == "spice" else w for w in word.split("|"))


# Steps whose words are a template: (verb, number of arguments) -> text, with {res} the resource
# ("of it" for the chosen one), {it} the resource ("it" for the chosen one), {n} the second
# argument and {a0}.. each argument.
TEMPLATES: dict[tuple[str, int], str] = {
    ("turn_self", 0): "turn this card over",
    ("turn_opponents", 0): "the opponents turn their Patriarchs and Matriarchs over",
    ("patriarchs_front", 0): "every Patriarch goes to the front of its caravan",
    ("route_fronts", 0): "every player moves each caravan's front card to the back of another of their caravans "
                  "(several may go to the same one)",
    ("take_discard", 0): "take a card from the discard pile",
    ("new_caravan", 0): "start a new caravan",
    ("refresh_display", 0): "replace the face-up contracts",
    ("remove_this", 0): "you may remove another card of this caravan",
    ("remove_patriarch", 0): "remove this caravan's Patriarch or Matriarch",
    ("trade", 0): "pay gold: for each, +2 of a spice or +1 mules",
    ("set", 2): "set {it} to {n}",
    ("contracts_wheat", 1): "draw {a0} contracts, fulfil a wheat field among them for free",
    ("contracts_free", 1): "draw {a0} contracts, fulfil the small and special ones for free",
    ("contracts_free", 2): "draw {a0} contracts, fulfil up to {a1} small or special ones among them for free",
    ("opp_set", 2): "every opponent: set {res} to {n}",
    ("opp_dec_if_ge", 3): "every opponent with {a1} {res} or more: -{a2} {res}",
    ("if_opp_zero", 1): "then, if an opponent has no {res}:",
    ("steal", 2): "take {n} {res} from every opponent who has any",
    ("raise_to_max_opp", 1): "raise {it} to the most any opponent has",
    ("remove_any", 1): "remove up to {a0} cards of your caravans",
    ("shuffle", 1): "shuffle the {a0} deck",
}


def step_text(step: str) -> str:
    """One effect step of the card data in words (as written if it is not known here)."""
    w = step.split()
    if not w:
        return step
    verb, args = w[0], w[1:]
    res = ("of it" if args[0] == "$" else args[0]) if args else ""
    it = "it" if args and args[0] == "$" else res
    n = args[1] if len(args) > 1 else ""
    template = TEMPLATES.get((verb, len(args)))
    if template is not None:
        return template.format(res=res, it=it, n=n, **{f"a{i}": a for i, a in enumerate(args)})
    if verb in ("pay", "inc", "opp_inc", "opp_dec") and len(args) == 2:
        sign = {"pay": "", "inc": "+", "opp_inc": "+", "opp_dec": "-"}[verb]
        who = {"pay": "pay ", "opp_inc": "every opponent: ", "opp_dec": "every opponent: "}.get(verb, "")
        return who + _gain(sign, res, n)
    if verb == "choose" and args:
        rest = " ".join(args[1:]).replace("min ", "of which you have at least ").replace("not $", "other than that")
        return f"choose {_mask(args[0])}" + (f" {rest}" if rest else "")
    if verb == "draw" and len(args) >= 2:
        where = " (to the front)" if "front" in args[2:] else ""
        count = f"1 {COUNTS[args[1]]}" if args[1] in COUNTS else args[1]
        return f"draw {count} from the {args[0]} deck, keep 1{where}"
    if verb == "fulfil" and all(a in FULFIL_FLAGS for a in args):
        return "fulfil a contract" + (f" ({', '.join(FULFIL_FLAGS[a] for a in args)})" if args else "")
    if verb == "set_distinct" and len(args) == 3:
        return f"set {args[1]} different {_mask(args[0]).replace('a spice', 'spices')} to {args[2]} each"
    return step


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
