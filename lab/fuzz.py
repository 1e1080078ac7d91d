"""Engine fuzzing: whole seeded games, every state checked as it is reached.

Each game is set up from its seed alone (2 to 4 players, with or without the Cut-and-Thrust cards,
and a policy: random decisions, or a one-ply player that takes the decision after which it has the
most VP, with a random one now and then, so that games reach the late states random play rarely
does). After every decision the state's JSON document must read back as itself, and a game
reloaded from an earlier document (at the last full check) and played on alike must write the same
document (a document must not depend on how its state was reached); every `check_every` decisions
the bookkeeping must hold (`engine_ext.checks`), the mover's view must read
back as itself, and a determinization of that view must show the mover the same view and offer
the same decisions. Optionally each game is played on both builds of the engine in lockstep, which
must reach the same state after every decision. A failure keeps what it takes to replay it: the
seed, the step, the document before the failing decision and that decision.

A caller may also give the policy (`chooser`: the game and a seed to a decision code), e.g. a search
bot, so that games go where strong play goes; its decisions must be legal. This module knows no
bots: `kashgar fuzz --bot SPEC` makes the chooser (`kashgar_cli/fuzz.py`).

`kashgar fuzz` runs many games in parallel processes (`kashgar_cli/fuzz.py`).
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from engine_ext.checks import problems
from engine_ext.game import Engine

POLICIES = ("random", "greedy")
GREEDY_RANDOM = 0.2  # the greedy policy's chance of a random decision
Chooser = Callable[[Any, int], int]  # (game, seed) -> the decision code to play


@dataclass(frozen=True)
class GameSetup:
    """What a fuzz game is, derived from its seed."""

    seed: int
    players: int
    variant: str | None
    policy: str

    @classmethod
    def from_seed(cls, seed: int) -> GameSetup:
        rnd = random.Random(seed ^ 0x6B617368)
        return cls(seed, 2 + seed % 3, "all" if rnd.random() < 0.5 else None, POLICIES[rnd.random() < 0.6])


@dataclass
class Failure:
    """A broken check: where (setup, step: decisions applied so far) and what."""

    setup: GameSetup
    step: int
    check: str
    message: str
    before: dict[str, Any] | None = None  # the state document before the failing decision
    decision: str = ""                    # that decision, as text
    trace: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        s = self.setup
        return (f"seed {s.seed} ({s.players} players, variant {s.variant or 'none'}, {s.policy}), "
                f"step {self.step}: {self.check}: {self.message}")


@dataclass
class GameResult:
    """One fuzz game: how many decisions it played and what failed (None: nothing)."""

    setup: GameSetup
    decisions: int = 0
    finished: bool = False
    failure: Failure | None = None
    checks: dict[str, int] = field(default_factory=dict)


class CheckFailed(Exception):
    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"{check}: {message}")
        self.check = check
        self.message = message


def _choose(g: Any, rnd: random.Random, policy: str) -> int:
    codes = g.legal_codes()
    if policy == "greedy" and len(codes) > 1 and rnd.random() >= GREEDY_RANDOM:
        me = g.current_player
        best, best_v = codes[0], -1.0
        for c in codes:
            s = g.state.clone()
            s.apply_unchecked(c)
            v = s.vp(me) + rnd.random()  # ties at random
            if v > best_v:
                best, best_v = c, v
        return int(best)
    return int(rnd.choice(codes))


def _check_state(engine: Engine, g: Any, step: int, full: bool, counts: dict[str, int]) -> dict[str, Any]:
    """Check `g` (see the module); returns its full document."""
    doc = g.to_json()
    back = engine.from_json(doc).to_json()
    counts["round_trip"] = counts.get("round_trip", 0) + 1
    if back != doc:
        keys = sorted(k for k in set(doc) | set(back) if doc.get(k) != back.get(k))
        raise CheckFailed("round_trip", f"the state document reads back differently at {keys}")
    if not full:
        return doc
    counts["bookkeeping"] = counts.get("bookkeeping", 0) + 1
    found = problems(g)
    if found:
        raise CheckFailed("bookkeeping", "; ".join(found))
    if g.is_terminal:
        return doc
    me = g.current_player
    view = g.view(me)
    counts["view"] = counts.get("view", 0) + 1
    if engine.from_json(view).view(me) != view:
        raise CheckFailed("view", f"seat {me}'s view reads back differently")
    det = g.determinize(me, step * 7919 + 1)
    if det.view(me) != view:
        raise CheckFailed("determinization", f"a determinization shows seat {me} another view")
    if sorted(det.legal_codes()) != sorted(g.legal_codes()):
        raise CheckFailed("determinization", f"a determinization offers seat {me} other decisions")
    return doc


def _check_twin(g: Any, doc: dict[str, Any], twin: Any, full: bool, counts: dict[str, int]) -> None:
    """`g` (whose document is `doc`) and `twin` are alike."""
    counts["builds"] = counts.get("builds", 0) + 1
    if g.state.fingerprint() != twin.state.fingerprint() or g.legal_codes() != twin.legal_codes():
        raise CheckFailed("builds", "the compiled and the interpreted engine reached different states")
    if full and doc != twin.to_json():
        raise CheckFailed("builds", "the compiled and the interpreted engine write different documents")


def _chosen(g: Any, chooser: Chooser, seed: int) -> int:
    code = int(chooser(g, seed))
    if code not in g.legal_codes():
        raise CheckFailed("policy", f"the policy chose {code}, not a legal decision")
    return code


def fuzz_game(engine: Engine, seed: int, *, check_every: int = 5, max_decisions: int = 20000,
              twin: Engine | None = None, chooser: Chooser | None = None, policy: str = "") -> GameResult:
    """Play fuzz game `seed` on `engine`, checking as it goes (see the module); with `twin` (the
    other build of the engine), play the same decisions there too and check both stay alike. With
    `chooser`, every seat plays its decisions (decision k seeded from the game's seed and k) instead
    of the seed's policy; `policy` names it in the setup."""
    setup = GameSetup.from_seed(seed)
    if chooser is not None:
        setup = replace(setup, policy=policy or "chooser")
    res = GameResult(setup)
    rnd = random.Random(seed)
    g = engine.new_game(setup.players, seed=seed, variant=setup.variant)
    t = twin.new_game(setup.players, seed=seed, variant=setup.variant) if twin is not None else None
    before: dict[str, Any] | None = None
    decision = ""
    try:
        doc = _check_state(engine, g, 0, True, res.checks)
        reloaded = engine.from_json(doc)
        if t is not None:
            _check_twin(g, doc, t, True, res.checks)
        while not g.is_terminal and res.decisions < max_decisions:
            before, decision = doc, ""  # a failing policy: the state it failed on, no decision
            if chooser is not None:
                code = _chosen(g, chooser, (seed * 7919 + res.decisions * 104729) & 0x7FFFFFFF)
            else:
                code = _choose(g, rnd, setup.policy)
            decision = str(g.decision(code))
            g.state.apply(code)
            res.decisions += 1
            full = res.decisions % check_every == 0 or g.is_terminal
            doc = _check_state(engine, g, res.decisions, full, res.checks)
            reloaded.state.apply(code)
            res.checks["reload"] = res.checks.get("reload", 0) + 1
            if reloaded.to_json() != doc:
                raise CheckFailed("reload", "a game reloaded from an earlier document and played alike writes "
                                            "another document")
            if full:
                reloaded = engine.from_json(doc)
            if t is not None:
                t.state.apply(code)
                _check_twin(g, doc, t, full, res.checks)
        res.finished = bool(g.is_terminal)
        if not res.finished:
            raise CheckFailed("length", f"no end after {max_decisions} decisions")
    except CheckFailed as exc:
        res.failure = Failure(setup, res.decisions, exc.check, exc.message, before, decision)
    except Exception as exc:  # noqa: BLE001 - any crash of the engine is a finding
        res.failure = Failure(setup, res.decisions, "crash", f"{type(exc).__name__}: {exc}", before, decision,
                              traceback.format_exc(limit=6))
    return res
