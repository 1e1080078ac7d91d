"""Every text for people that a corpus of played games produces follows the words' convention
(docs/engine-api.md): seats, caravans and moves counted from 1 (JSON and codes from 0), every card
by its English name, no field of the card data as written.

The corpus: seeded games of 2, 3 and 4 players with every Cut-and-Thrust card, played by random
decisions, enough to touch every card. Its texts: the words of each legal decision in each
position, each event as every seat sees it, the steps of the card data, the cards and contracts,
and the errors a person can meet on the way (an illegal decision, a record whose move is another
seat's, a view asked to decide a choice among cards it does not show, a view of no seat).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import engine_ext
from engine_ext import record as records
from engine_ext import words as W
from engine_ext.decisions import Decision, DecisionError
from engine_ext.game import IllegalDecision, NoDecision, seen_by

GAMES = [(players, seed) for seed in range(3) for players in (2, 3, 4)]

DATA = engine_ext.cards()
ENGLISH = {c["slug"]: c["english"] for c in DATA["cards"]}
# a card's slug and its German name, where they are not its English name (any case): never in words
FOREIGN = sorted({w for c in DATA["cards"] for w in (c["slug"], c["name"])
                  if w.lower() != c["english"].lower()}, key=len, reverse=True)
FOREIGN_WORD = re.compile(r"(?<![\w-])(" + "|".join(re.escape(w) for w in FOREIGN) + r")(?![\w-])", re.IGNORECASE)
# fields and values of the card data and the state as written, a Python value, a step's syntax
RAW = re.compile(r"\bvp\b|wheat VP|\$|\||_|\bN:|\bNone\b|[{}]|\b(standard|special|contract) deck\b|'event'"
                 r"|\bplayer \d|\bbot \d")
SEAT = re.compile(r"\bseat (\d+)")
CARAVAN = re.compile(r"\b[Cc]aravan (\d+)")
CODE_BESIDE = re.compile(r"\bcaravan (\d+) \(c(\d+)")
CODE_SPAN = re.compile(r"`[^`]*`")


def _plain(text: str) -> str:
    """A text without the codes it shows as codes (in backticks), which keep the code's own form."""
    return CODE_SPAN.sub("", text)


def check_words(text: str, seats: Iterable[int] = (), caravans: Iterable[int] | None = None) -> None:
    """`text` names no card but in English, shows no raw field, and counts from 1: each "seat N" is
    one of `seats` (JSON indices) plus 1, each "caravan K" one of `caravans` plus 1 (None: any),
    and a code beside a caravan is that caravan's ("caravan 3 (c2...)")."""
    plain = _plain(text)
    assert text and not FOREIGN_WORD.search(plain), f"a slug or German name in words: {text!r}"
    assert not RAW.search(plain), f"raw data in words: {text!r}"
    named = {int(n) for n in SEAT.findall(plain)}
    assert named <= {s + 1 for s in seats}, f"seats {sorted(named)} of {sorted(seats)} (from 0): {text!r}"
    if caravans is not None:
        shown = {int(k) for k in CARAVAN.findall(plain)}
        assert shown <= {c + 1 for c in caravans}, f"caravans {sorted(shown)} of {sorted(caravans)}: {text!r}"
    for k, code in CODE_BESIDE.findall(plain):
        assert int(k) == int(code) + 1, text


@dataclass
class Corpus:
    """What the games produced: each text with the seats and caravans it may name."""

    decisions: list[tuple[str, set[int], set[int] | None]] = field(default_factory=list)
    events: list[tuple[str, set[int], set[int]]] = field(default_factory=list)
    errors: list[tuple[str, set[int]]] = field(default_factory=list)
    cards: set[str] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)


def _event_indices(event: dict[str, Any]) -> tuple[set[int], set[int]]:
    seats = {event[k] for k in ("player", "next_player") if isinstance(event.get(k), int)}
    caravans = set()
    for end in (event.get("from"), event.get("to")):
        if isinstance(end, dict):
            seats.add(end["player"])
            caravans.add(end["caravan"])
    return seats, caravans


def _decision_caravans(d: Decision, state: dict[str, Any]) -> set[int] | None:
    """The caravans a decision's words may name: its own, the pending step's; any of the decider's
    for a route (None where the decision names none of its own)."""
    pending = state.get("pending") or {}
    decider = pending.get("decider", state["turn_player"])
    if d.kind == "select":
        return {d.args[0]}
    if d.kind == "remove":
        return {d.args[0]}
    if d.kind == "route":
        return set(range(len(state["seats"][decider]["caravans"])))
    if d.kind == "keep" and isinstance(pending.get("caravan"), int):
        return {pending["caravan"]}
    return set()


def _play(players: int, seed: int, corpus: Corpus) -> list[str]:
    """One random game, its texts added to `corpus`; returns its moves."""
    said = W.words()
    g = engine_ext.new_game(players=players, seed=seed, variant="all")
    rng = random.Random(seed * 10 + players)
    moves: list[str] = []
    before: list[Decision] = []
    while not g.is_terminal:
        state = g.to_json()
        legal = g.legal()
        for d in legal:
            corpus.kinds.add(d.kind)
            corpus.decisions.append((said.decision(d, state), set(), _decision_caravans(d, state)))
            if d.kind in ("keep", "take"):
                corpus.cards.add(str(d.args[0]))
        for caravans in (s["caravans"] for s in state["seats"]):
            corpus.cards.update(c for car in caravans for c in car)
        stale = next((d for d in before if d not in legal), None)  # a decision of the last position
        if stale is not None:
            with pytest.raises((IllegalDecision, DecisionError)) as err:  # a route is read against the state
                g.apply(stale)
            corpus.errors.append((str(err.value), set()))
        for p in range(players):  # a view asked to decide what only the drawer sees
            if p != g.current_player and g.hidden_from(p):
                with pytest.raises(NoDecision) as nod:
                    engine_ext.from_json(g.view(p)).check_decision_point()
                corpus.errors.append((nod.value.message, {g.turn_player, p}))
        choice = rng.choice(legal)
        tp = g.turn_player
        events = g.apply(choice)
        moves.append(str(choice))
        for p in range(players):
            for event in seen_by(events, p, tp):
                for key in ("card", "turned"):
                    if event.get(key):
                        corpus.cards.add(str(event[key]))
                seats, caravans = _event_indices(event)
                corpus.events.append((said.event(event), seats, caravans))
        before = legal
    return moves


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    out = Corpus()
    for players, seed in GAMES:
        moves = _play(players, seed, out)
        rec = records.record_from_moves(moves[:12], players=players, seed=seed, variant="all")
        wrong = dict(rec, moves=[dict(m) for m in rec["moves"]])
        wrong["moves"][5]["seat"] = (rec["moves"][5]["seat"] + 1) % players  # another seat's move
        with pytest.raises(records.RecordError) as err:
            records.replay(wrong)
        out.errors.append((err.value.message, {rec["moves"][5]["seat"], wrong["moves"][5]["seat"]}))
        view = engine_ext.new_game(players=players, seed=seed).view(0)
        view["observer"] = players
        with pytest.raises(engine_ext.StateError) as bad:
            engine_ext.from_json(view)
        out.errors.append((bad.value.message, set()))
    return out


def test_the_corpus_touches_every_card_and_every_kind_of_decision(corpus: Corpus) -> None:
    assert corpus.cards >= set(ENGLISH) - {"matriarch"} and "matriarch" in corpus.cards
    assert corpus.kinds == {"select", "keep", "take", "fulfil", "choose", "remove", "skip", "pay", "route"}
    assert len(corpus.errors) > 100 and any("is not legal here" in e for e, _ in corpus.errors)
    assert any("is choosing among" in e for e, _ in corpus.errors)


def test_every_decision_s_words_follow_the_convention(corpus: Corpus) -> None:
    for text, seats, caravans in corpus.decisions:
        check_words(text, seats, caravans)


def test_every_event_s_words_follow_the_convention(corpus: Corpus) -> None:
    for text, seats, caravans in corpus.events:
        check_words(text, seats, caravans)
    said = {text for text, _, _ in corpus.events}
    assert any(re.search(r"^seat \d+: .* in caravan \d+ turned over", t) for t in said)


def test_every_error_met_follows_the_convention(corpus: Corpus) -> None:
    for text, seats in corpus.errors:
        check_words(text, seats)
    moved = [t for t, _ in corpus.errors if "is to move, not" in t]
    assert moved and all(re.search(r"^move 6 \(seat \d: `[^`]+`\): seat \d is to move, not seat \d", t) for t in moved)


def _every_step() -> Iterator[str]:
    for card in DATA["cards"]:
        for action in (card.get("caravan") or []) + [card.get("parting") or []]:
            yield from action


def test_the_card_data_in_words_follows_the_convention() -> None:
    """Steps, cards (what each is worth and does, and the web table's card) and contracts."""
    from service.table import words as table_words

    for step in _every_step():
        check_words(W.step_text(step))
    for slug in ENGLISH:
        assert W.card_name(slug) == ENGLISH[slug]
        effect = W.card_effect_text(slug)
        if effect:
            check_words(effect)
        shown = table_words.card(slug)
        check_words(shown["name"])
        if shown["vp_text"]:
            check_words(shown["vp_text"])
        assert shown["vp"] is None or isinstance(shown["vp"], int)
    assert table_words.card("bauer")["vp_text"] == "1 VP per wheat-field contract"
    for c in DATA["contracts"]:
        check_words(W.contract_text(c["number"]))


@pytest.mark.parametrize(("text", "seats", "caravans"), [
    ("keep bauer", (), None),                              # a slug
    ("keep Bauer (3 VP)", (), None),                       # a German name
    ("the spare Patriarch is for the Aristokratin", (), None),
    ("Farmer (wheat VP)", (), None),                       # a raw field
    ("shuffle the special deck", (), None),
    ("seat 1: +2 gold (now 5)", (1,), None),               # the JSON's seat 1 is "seat 2"
    ("seat 1: Patriarch in caravan 2 turned over", (0,), {2}),  # caravan c2 is "caravan 3"
    ("caravan 2 (c2:a)", (), None),                        # a code beside the wrong caravan
    ("bot 1 (novice): keep Farmer", (), None),             # a bot by its index
])
def test_the_check_finds_each_kind_of_slip(text: str, seats: tuple[int, ...], caravans: set[int] | None) -> None:
    with pytest.raises(AssertionError):
        check_words(text, seats, caravans)


def test_the_check_takes_words_that_follow_the_convention() -> None:
    check_words("seat 2: Patriarch in caravan 3 turned over", {1}, {2})
    check_words("`keep bauer` is not legal here; legal: `c0:a`, `keep recke`")  # codes, as codes
    check_words("Patriarch, caravan 3 (c2:a): draw 2 Standard cards and keep one", (), {2})
