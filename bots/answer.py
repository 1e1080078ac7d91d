"""The answer of a search: one typed value from the bots up to the service and the lab.

A search of a `bots.position.Position` (`bots.suggest.search`) gives an `Answer`: the decision as an
engine `Decision` (and its core code in the position), every alternative at the root with its
statistics (`AlternativeStats`), the expected line as `Decision`s, the counts, and the `Level` it
was searched at. The parts of a long search are merged into one `Answer` (`merge`) and calibrated
once (`calibrate`); nothing reads a decision's text again on the way up. It becomes JSON once, at
the edge (`Answer.to_json`: the HTTP answer, the job store, `kashgar engine`), and a job's parts are
read back from JSON once (`Answer.from_json`). As OpenSpiel's `SearchNode` and python-chess's
`Move`: values, not dicts.

The figures are those an answer reports: a mean reward and a win chance rounded to 6 digits, an
expected VP to 4 (`STATS`), so that an answer read back from its JSON is the answer written
(`Answer.from_json(a.to_json(), position) == a`), and the merge of parts read back from a job's
store is the merge of the parts searched here. A figure the search has not got is None: the mean
reward and expected VP of an alternative never visited, the win chance of an alternative before
calibration, without a fit for the level, or where the fit does not tell alternatives apart
(`bots.win_prob`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bots.base import Analysis, expected_line, final_choice
from bots.levels import Level
from bots.merge import merge_root_stats
from bots.position import Position
from bots.win_prob import N_WEIGHTS, order_of, progress_of, resolves, weights_for, win_prob
from engine_ext.decisions import Decision

#: The digits an answer's figures are rounded to (visit-weighted means when parts are merged).
STATS = {"mean_reward": 6, "win_prob": 6, "expected_vp": 4}


def _rounded(x: float | None, digits: int) -> float | None:
    """A reported figure: rounded, None for no statistic (None or NaN)."""
    return None if x is None or math.isnan(x) else round(x, digits)


@dataclass(frozen=True, slots=True)
class AlternativeStats:
    """One decision at the root of a search, from the deciding player's view: its visits, its mean
    reward (None: never visited), its calibrated chance of winning (None: see the module) and the
    expected VP of the player after it (None: never visited)."""

    decision: Decision
    code: int  # the core's code of `decision` in the answer's position
    visits: int
    mean_reward: float | None
    win_prob: float | None
    expected_vp: float | None

    @property
    def text(self) -> str:
        """The decision's code text ("c2:a"), as the JSON's `decision_text` says it."""
        return str(self.decision)

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision.to_json(), "decision_text": str(self.decision), "visits": self.visits,
                "mean_reward": self.mean_reward, "win_prob": self.win_prob, "expected_vp": self.expected_vp}


@dataclass(frozen=True, slots=True)
class Answer:
    """What a search of a position found, merged over its parts and calibrated.

    `decision` (with its `code`) is the final choice, one of `alternatives` (most visited first);
    `win_prob` is the chosen decision's calibrated chance, which the answer keeps where the fit does
    not tell alternatives apart (their own are None there, `bots.win_prob`); `line` is the expected
    line from `decision` on. `iterations` add up over the parts, `elapsed_ms` is the longest part's;
    `seed` is the request's (a part's: its own); `parts` is how many searches were merged (the
    request's `parallel`, as planned: 1 for one search), `workers` how many processes searched.
    `bot` names the bot of an answer of one search (None for a merge of several, whose JSON names no
    bot nor player, as it never did); `player` is the seat to move."""

    decision: Decision
    code: int
    alternatives: tuple[AlternativeStats, ...]
    line: tuple[Decision, ...]
    win_prob: float | None
    iterations: int
    elapsed_ms: float
    seed: int
    level: Level
    compiled: bool
    workers: int
    parts: int
    player: int
    bot: str | None

    @property
    def chosen(self) -> AlternativeStats:
        """The statistics of the chosen decision."""
        for alt in self.alternatives:
            if alt.code == self.code:
                return alt
        raise ValueError(f"the answer's decision {self.decision} is not among its alternatives")

    @property
    def expected_vp(self) -> float | None:
        return self.chosen.expected_vp

    def alternative(self, decision: Decision) -> AlternativeStats | None:
        """The statistics of `decision` (None: not among the alternatives)."""
        return next((alt for alt in self.alternatives if alt.decision == decision), None)

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON (`docs/engine-api.md`, "The bots API the service uses"), without the
        words (`service.describe.describe_answer` adds them)."""
        out: dict[str, Any] = {
            "decision": self.decision.to_json(),
            "decision_text": str(self.decision),
            "alternatives": [alt.to_json() for alt in self.alternatives],
            "line": [str(d) for d in self.line],
            "win_prob": self.win_prob,
            "expected_vp": self.expected_vp,
            "iterations": self.iterations,
            "elapsed_ms": self.elapsed_ms,
            "seed": self.seed,
        }
        if self.bot is not None:
            out["bot"] = self.bot
            out["player"] = self.player
        out["level"] = self.level.name
        out["compiled"] = self.compiled
        out["workers"] = self.workers
        out["parts"] = self.parts
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], position: Position) -> Answer:
        """An answer of `position` read back from its JSON (`to_json`; a job's part): each decision
        read once and given its code in the position. ValueError (a DecisionError) for a decision
        that is none there."""
        st, data = position.game.state, position.game.engine.data

        def decision(js: Any) -> tuple[Decision, int]:
            d = Decision.from_json(js)
            return d, int(d.to_code(st, data))

        alts = []
        for a in doc["alternatives"]:
            d, code = decision(a["decision"])
            alts.append(AlternativeStats(d, code, int(a["visits"]), _float(a.get("mean_reward")),
                                         _float(a.get("win_prob")), _float(a.get("expected_vp"))))
        chosen, code = decision(doc["decision"])
        bot = doc.get("bot")
        return cls(decision=chosen, code=code, alternatives=tuple(alts),
                   line=tuple(Decision.parse(str(t)) for t in doc.get("line") or []),
                   win_prob=_float(doc.get("win_prob")), iterations=int(doc.get("iterations") or 0),
                   elapsed_ms=float(doc.get("elapsed_ms") or 0.0), seed=int(doc.get("seed") or 0),
                   level=position.level, compiled=bool(doc.get("compiled")), workers=int(doc.get("workers") or 1),
                   parts=int(doc.get("parts") or 1), player=int(position.game.current_player),
                   bot=None if bot is None else str(bot))


def _float(x: Any) -> float | None:
    return None if x is None else float(x)


def of_analysis(an: Analysis, position: Position, workers: int = 1) -> Answer:
    """The answer of one search of `position` (a bot's `Analysis`, whose decisions are core codes),
    calibrated for the position's level. The line's steps are read as decisions of the position (as
    the search reports them); a step that names none there ends it."""
    st, data = position.game.state, position.game.engine.data
    alts = tuple(AlternativeStats(Decision.from_code(a.code, st, data), a.code, a.visits,
                                  _rounded(a.mean_reward, STATS["mean_reward"]), None,
                                  _rounded(a.expected_vp, STATS["expected_vp"]))
                 for a in an.alternatives)
    line: list[Decision] = []
    for c in an.line:
        try:
            line.append(Decision.from_code(c, st, data))
        except ValueError:
            break
    answer = Answer(decision=Decision.from_code(an.code, st, data), code=an.code, alternatives=alts,
                    line=tuple(line), win_prob=None, iterations=an.iterations, elapsed_ms=round(an.elapsed_ms, 3),
                    seed=an.seed, level=position.level, compiled=bool(position.game.engine.COMPILED),
                    workers=workers, parts=1, player=an.player, bot=an.bot)
    return calibrate(answer, position)


def calibrate(answer: Answer, position: Position) -> Answer:
    """`answer` with every win chance calibrated from its mean reward for the position's level, its
    number of players, the game's progress and the mover's place in turn order (`bots.win_prob`;
    `with_chances`)."""
    st = position.game.state
    weights = weights_for(position.level, position.players)
    order = order_of(st) if weights is not None and len(weights) > N_WEIGHTS else 0
    return with_chances(answer, weights, progress_of(st), order)


def with_chances(answer: Answer, weights: list[float] | None, progress: float, order: int = 0) -> Answer:
    """`answer` with every win chance the fit `weights` gives its mean reward at `progress` (and
    the mover's place `order`, for weights of `MODEL_ORDER`): where the fit does not tell
    alternatives apart (`bots.win_prob.resolves`), each alternative's is None and the answer's is
    the chance the fit gives the mover whatever it plays; None everywhere without a fit."""
    apart = weights is None or resolves(weights, progress)
    alts = []
    chance_of_choice = None
    for alt in answer.alternatives:
        chance = _rounded(win_prob(weights, alt.mean_reward, progress, order), STATS["win_prob"])
        alts.append(replace(alt, win_prob=chance if apart else None))
        if alt.code == answer.code:
            chance_of_choice = chance
    return replace(answer, alternatives=tuple(alts), win_prob=chance_of_choice)


def merge(parts: Sequence[Answer], position: Position, temperature: float | None = None,
          margin: float | None = None) -> Answer:
    """The parts of one search of `position` (root-parallel, `bots.merge`) as one answer, before
    calibration (its win chances None: `calibrate` maps the merged mean rewards, not a mean of the
    parts' chances). Visits add up; mean reward and expected VP are visit-weighted means over the
    parts that have them; the decision is chosen from the merged visits as one search chooses
    (`final_choice`) with `temperature` and `margin` (None: the position's level's), the first part's
    seed and the position's key; iterations and workers add up, elapsed_ms is the longest part's."""
    if not parts:
        raise ValueError("no parts to merge")
    first = parts[0]
    config = position.level.config
    temperature = config.temperature if temperature is None else temperature
    margin = config.margin if margin is None else margin
    decisions: dict[int, Decision] = {}
    rows = []
    for part in parts:
        row = []
        for alt in part.alternatives:
            decisions.setdefault(alt.code, alt.decision)
            v = alt.visits
            sums: list[Any] = []
            for x in (alt.mean_reward, alt.expected_vp):  # a part without the statistic adds nothing to its mean
                sums += [x * v, v] if v > 0 and x is not None else [0.0, 0]
            row.append((alt.code, v, *sums))
        rows.append(row)
    alts = []
    for code, visits, r_sum, r_n, x_sum, x_n in merge_root_stats(rows):
        alts.append(AlternativeStats(decisions[code], code, visits,
                                     round(r_sum / r_n, STATS["mean_reward"]) if r_n else None, None,
                                     round(x_sum / x_n, STATS["expected_vp"]) if x_n else None))
    alts.sort(key=lambda a: (-a.visits, -(a.mean_reward or 0.0)))
    means = [float("nan") if a.mean_reward is None else a.mean_reward for a in alts]
    best = alts[final_choice([float(a.visits) for a in alts], temperature, first.seed, position.key, means, margin)]
    line = expected_line(best.decision, [
        (list(p.line), next((x.visits for x in p.alternatives if x.code == best.code), 0)) for p in parts])
    return Answer(decision=best.decision, code=best.code, alternatives=tuple(alts), line=tuple(line), win_prob=None,
                  iterations=sum(p.iterations for p in parts), elapsed_ms=max(p.elapsed_ms for p in parts),
                  seed=first.seed, level=position.level, compiled=first.compiled,
                  workers=sum(p.workers for p in parts), parts=len(parts), player=first.player, bot=None)
