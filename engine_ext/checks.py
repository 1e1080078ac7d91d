"""What every state of a game must satisfy, checked on its full JSON document.

`problems(game)` lists each broken rule of bookkeeping as a sentence (empty: consistent): every
person card and contract of the game is in exactly one place, resources stay in their bounds, each
seat's VP are what its caravans and contracts are worth, the display holds at most 4 contracts.
The property tests and `kashgar fuzz` (`lab.fuzz`) use it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine_ext.carddata import CardData
from engine_ext.carddata import default as default_card_data
from engine_ext.words import seat_words

RESOURCE_CAPS = {"mules": 6}  # every other resource caps at 9
OTHER_CAP = 9


def deck_cards(spec: Any) -> list[Any]:
    """The cards of a deck entry of a full state document (a list, or {"cards": [...]})."""
    if isinstance(spec, list):
        return spec
    if isinstance(spec, dict) and "cards" in spec:
        return list(spec["cards"])
    raise ValueError("a full state lists its decks")


def person_counts(doc: dict[str, Any]) -> Counter[str]:
    """Every person card of a full state document, by kind (Matriarchs as Patriarchs)."""
    c: Counter[str] = Counter()
    for seat in doc["seats"]:
        for caravan in seat["caravans"]:
            c.update(caravan)
    c.update(doc["discard"])
    c.update(doc["removed"])
    c.update(deck_cards(doc["decks"]["standard"]))
    c.update(deck_cards(doc["decks"]["special"]))
    pend = doc.get("pending")
    if pend:
        if pend["drawn_from"] != "contract" and isinstance(pend["drawn"], list):
            c.update(pend["drawn"])
        if pend["action"] == "part":
            c[pend["card"]] += 1
    if doc["spare_patriarch"]:
        c["patriarch"] += 1
    c["patriarch"] += c.pop("matriarch", 0)
    return c


def contract_numbers(doc: dict[str, Any]) -> list[int]:
    """Every contract number of a full state document, wherever it is (repeats included)."""
    out = list(doc["display"]) + deck_cards(doc["decks"]["contract"])
    for seat in doc["seats"]:
        out += seat["contracts"]
    pend = doc.get("pending")
    if pend and pend["drawn_from"] == "contract" and isinstance(pend["drawn"], list):
        out += pend["drawn"]
    return out


def expected_vp(doc: dict[str, Any], p: int, data: CardData | None = None) -> int:
    """Seat `p`'s VP as its caravans and contracts are worth (a Bauer counts its wheat fields)."""
    data = data or default_card_data()
    seat = doc["seats"][p]
    wheat = sum(1 for n in seat["contracts"] if data.contracts[n - 1].kind == "wheat")
    vp = sum(data.contracts[n - 1].vp for n in seat["contracts"])
    for caravan in seat["caravans"]:
        for slug in caravan:
            kind = data.by_slug["patriarch" if slug == "matriarch" else slug]
            vp += wheat if kind.vp == "wheat" else int(kind.vp)
    return vp


def start_cards_dealt(players: int) -> int:
    """How many Start cards a game deals: 3 per player, one under each Patriarch. They stay with
    their seat's caravans until parted with (then they are removed from the game)."""
    return 3 * players


def patriarchs_in_game(players: int, aristokratin_dealt: bool) -> int:
    """How many Patriarchs a game holds: one per Start card, plus the spare one when the Aristokratin
    was dealt (her parting gives it as a new caravan; without her it goes back to the box)."""
    return start_cards_dealt(players) + (1 if aristokratin_dealt else 0)


def manifest(doc: dict[str, Any], aristokratin_dealt: bool, data: CardData | None = None) -> Counter[str]:
    """What a game holds besides its Start cards: every Standard and Special card, the variant's
    additional cards and 3 Patriarchs per player, plus the spare Patriarch when the Aristokratin
    was dealt (without her it goes back to the box)."""
    data = data or default_card_data()
    c: Counter[str] = Counter()
    for k in data.kinds:
        if k.deck in ("standard", "special"):
            c[k.slug] = k.copies
    c.update(doc["variant"]["additional"])
    c["patriarch"] = patriarchs_in_game(doc["players"], aristokratin_dealt)
    return c


def doc_problems(doc: dict[str, Any], vps: list[int] | None = None, data: CardData | None = None) -> list[str]:
    """The broken rules of full state document `doc` (see the module); `vps`: the VP the engine
    reports per seat, compared with what the document is worth (None: not compared)."""
    data = data or default_card_data()
    out: list[str] = []
    counts = person_counts(doc)
    starts = {k.slug for k in data.kinds if k.deck == "start"}
    dealt = sum(v for k, v in counts.items() if k in starts)
    if dealt != start_cards_dealt(doc["players"]):
        out.append(f"{dealt} Start cards in play, want {start_cards_dealt(doc['players'])}: one was created or lost")
    doubled = sorted(k for k in starts if counts[k] > 1)
    if doubled:
        out.append(f"Start cards in two places: {', '.join(doubled)}")
    want = manifest(doc, counts["aristokratin"] > 0, data)
    have = Counter({k: v for k, v in counts.items() if k not in starts})
    if have != want:
        extra = sorted((have - want).elements())
        lost = sorted((want - have).elements())
        out.append(f"person cards not each in one place: extra {extra}, missing {lost}")
    numbers = sorted(contract_numbers(doc))
    if numbers != list(range(1, len(data.contracts) + 1)):
        seen = Counter(numbers)
        twice = sorted(n for n, k in seen.items() if k > 1)
        missing = sorted(set(range(1, len(data.contracts) + 1)) - set(seen))
        out.append(f"contracts not each in one place: twice {twice}, missing {missing}")
    for p, seat in enumerate(doc["seats"]):
        for r, v in seat["resources"].items():
            cap = RESOURCE_CAPS.get(r, OTHER_CAP)
            if not 0 <= v <= cap:
                out.append(f"{seat_words(p)} has {v} {r} (allowed 0 to {cap})")
        if vps is not None:
            worth = expected_vp(doc, p, data)
            if vps[p] != worth:
                out.append(f"{seat_words(p)} has {vps[p]} VP, its cards and contracts are worth {worth}")
    if len(doc["display"]) > 4:
        out.append(f"{len(doc['display'])} contracts on display (at most 4)")
    return out


def problems(game: Any) -> list[str]:
    """The broken rules of `game` (an `engine_ext.Game`): its full document and its VP."""
    doc = game.to_json()
    return doc_problems(doc, [game.vp(p) for p in range(doc["players"])], game.engine.data)
