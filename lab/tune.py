"""Calibrate the level presets into a measured ladder.

Each level is played against its neighbour (2-player games, seats rotated) and must be at least
`min_gap` Elo stronger than the level below it (the measured difference, a point estimate), with
the 95% interval of that difference above zero (the two levels are told apart at 95%; from about
200 games a step, a difference of 100 Elo already puts it there). Two directions:

- `from_top=False` (bottom up): the weakest preset is the anchor; a level that is not clearly
  stronger than the one below is strengthened (budget x `grow`, temperature / `grow`) and replayed.
- `from_top=True` (top down): the strongest preset is the anchor; a level that is not clearly
  weaker than the one above is weakened (budget / `grow`, temperature x `grow`) and replayed. This
  is the direction that works when more budget stops buying strength at the top (it does in
  Kashgar from a few hundred iterations, BENCHMARKS.md): weaker play can always be had.

Up to `max_rounds` replays a step. The ladder's Elo is the sum of measured adjacent differences
(the weakest level is 0). A step the upper level won without losing a game measures no
difference, only a lower bound of it (the low end of its interval): that level and those above it
get `elo_lower_bound`, not an `elo` (a sweep of 60 games used to be stored as +1,600, the clamp of
a score of 1). Writes the level file (unless none is named) with the default level it names, a
Markdown and a JSON table, and a PNG plot; `next_steps` says what the file still lacks (the
`win_prob` calibration of its presets).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bots.levels import DEFAULT_LEVEL, Level, dump_levels, levels_path, load_levels, load_presets, own_default
from lab.arena import TOY_EVALUATORS, run_arena, unplayable

FIELDS_DOC = (
    "Presets of the same SO-ISMCTS search (bots/ismcts.py); data, not code. Fields: iterations (budget per\n"
    "decision), time_ms (0: none), c (UCB exploration: a large c spreads the visits, so a temperature-1\n"
    "choice weighs the options more evenly), rollout (\"eval\": `depth` random decisions then the\n"
    "evaluation; \"turn\": the rest of the turn epsilon-greedily, random with chance eps, then the\n"
    "evaluation), macro (1: below the root the tree branches\n"
    "on turns, the decisions within a turn are greedy; 2: the other seats' turns are greedy too, so the\n"
    "tree holds only the searcher's turns), evaluator (\"default\"/\"kashgar\": the hand-made\n"
    "heuristic; \"fitted\": bots/data/eval_weights.json or `weights`; \"tuned\": bots/data/eval_tuned.json, tuned by\n"
    "play; \"vp\": points alone), scale (multiplies the evaluator's softmax scale), temperature (the final\n"
    "choice is sampled over visits ** (1/T); 0 = most visited), margin (a sampled choice only among the\n"
    "most visited move and those whose mean reward is within this many log-odds of its; 0 = every move;\n"
    "with the VP evaluator at 2 players a point is 0.35 whatever the score). Low\n"
    "levels are meant to be weak the human way: a small budget, a short-sighted evaluation and a\n"
    "temperature of at most 1 over the plausible moves (`kashgar blunders` measures how often a level\n"
    "passes up a contract worth points; BENCHMARKS.md, 2026-11-25).\n"
    "elo / elo_ci: the measured rating (the weakest level = 0) and the 95% half-width of its step;\n"
    "elo_lower_bound instead of elo: a step at or below the level was won without a lost game, so only a\n"
    "bound is known (play more games). default: the level a request without a level is answered by.\n"
    "mix: measured points [p, elo] of the level's mix with the level below (a request's `elo`, bots/strength.py)."
)


def check_game(levels: list[Level], game: str) -> None:
    """Refuse presets that `game` cannot play (a ValueError naming them), before any game."""
    bad = unplayable([(lv.name, lv.config.evaluator) for lv in levels], game)
    if bad:
        raise ValueError(f"the toy game plays only presets with evaluator {' or '.join(TOY_EVALUATORS)}, "
                         f"not those of {', '.join(bad)}: give --levels a file of such presets")


@dataclass
class Step:
    lower: str
    upper: str
    round: int
    iterations: int
    temperature: float
    games: int
    score: float
    elo: float
    low: float
    high: float
    ok: bool
    swept: bool = False  # the upper level won every game: `elo` is no measure, `low` a lower bound

    def elo_text(self) -> str:
        """The step's Elo as a person should read it: a number, or a bound for a sweep."""
        return f">= {self.low:+.0f} (won all {self.games} games)" if self.swept else f"{self.elo:+.0f}"


def _spec(lv: Level) -> str:
    """The arena spec of a level's preset (every setting spelled out)."""
    d = lv.config.to_dict()
    if not d.get("weights"):
        d.pop("weights", None)
    return "ismcts:" + ",".join(f"{k}={v}" for k, v in d.items())


def same_search(a: Level, b: Level) -> bool:
    """Whether two presets differ only in budget and temperature: only then does a larger budget
    or a cooler choice say which is stronger (a macro search at 150 iterations can beat a plain
    one at 1,000)."""
    keep = {"iterations": 0, "temperature": 0.0}
    return a.config.with_(**keep) == b.config.with_(**keep)


def above(lower: Level, cur: Level, grow: float) -> Level:
    """`cur`, lifted where needed to at least one growth step above `lower` (budget x `grow`,
    temperature halved): after a level was strengthened, the preset above it may no longer be
    stronger, and playing it would only waste a round. A preset of another search (`same_search`)
    is played as given."""
    lc, cc = lower.config, cur.config
    if not same_search(lower, cur):
        return cur
    iterations = max(cc.iterations, int(math.ceil(lc.iterations * grow)))
    temperature = min(cc.temperature, round(lc.temperature / grow, 4))
    if iterations == cc.iterations and temperature == cc.temperature:
        return cur
    return replace(cur, config=cc.with_(iterations=iterations, temperature=temperature))


def _hotter(t: float, cap: float, grow: float) -> float:
    """The temperature one shrink step up: times `grow` (0.05 from 0), at most `cap`."""
    return min(cap, round(t * grow, 4) if t > 0 else 0.05)


def below(upper: Level, cur: Level, grow: float, floor: int = 1, cap: float = 1.0) -> Level:
    """`cur`, lowered where needed to at least one shrink step below `upper` (budget / `grow` but
    not under `floor`, temperature x `grow` up to `cap`): the mirror of `above` for top-down
    calibration. A preset of another search (`same_search`) is played as given."""
    uc, cc = upper.config, cur.config
    if not same_search(upper, cur):
        return cur
    iterations = min(cc.iterations, max(floor, int(uc.iterations // grow)))
    temperature = max(cc.temperature, _hotter(uc.temperature, cap, grow))
    if iterations == cc.iterations and temperature == cc.temperature:
        return cur
    return replace(cur, config=cc.with_(iterations=iterations, temperature=temperature))


def weaken(lv: Level, grow: float, floor: int = 1, cap: float = 1.0) -> Level:
    """One shrink step: budget / `grow` (not under `floor`: with fewer iterations than a few per
    legal decision, visit counts say nothing and sampling them is a random move) and temperature
    x `grow`, up to `cap` (above 1 the choice is flatter than what the search saw, towards a random
    move). Returns `lv` itself when neither can move."""
    c = lv.config
    temperature = max(c.temperature, _hotter(c.temperature, cap, grow))
    iterations = min(c.iterations, max(floor, int(c.iterations // grow)))
    if iterations == c.iterations and temperature == c.temperature:
        return lv
    return replace(lv, config=c.with_(iterations=iterations, temperature=temperature))


def _step(lower: Level, upper: Level, rnd: int, games: int, seed: int, workers: int, game: str,
          min_gap: float, moved: Level, log: Callable[[str], None] | None) -> Step:
    """Play `upper` against `lower` (`moved` is the one being calibrated) and judge the gap."""
    lo_spec, up_spec = _spec(lower), _spec(upper)
    if lo_spec == up_spec:
        up_spec += ",c=" + str(upper.config.c)  # never a bot against itself
    rep = run_arena([lo_spec, up_spec], games=games, players=2, seed=seed, workers=workers, game=game,
                    progress=log is not None)
    e, lo, hi = rep.elo[up_spec]
    ok = e >= min_gap and lo > 0
    swept = rep.games > 0 and rep.wins[up_spec] == rep.games
    if log:
        told = (f"won all {rep.games} games: at least {lo:+.0f} Elo (a bound, not a measure)" if swept
                else f"{e:+.0f} Elo [{lo:+.0f}, {hi:+.0f}]")
        log(f"{upper.name} vs {lower.name} (round {rnd}, {moved.name}: {moved.config.iterations} it, "
            f"T={moved.config.temperature}): {told} {'ok' if ok else 'too close'}")
    return Step(lower.name, upper.name, rnd, moved.config.iterations, moved.config.temperature, rep.games,
                rep.wins[up_spec] / max(1, rep.games), e, lo, hi, ok, swept)


def _rated(ladder: list[Level], final: list[Step]) -> list[Level]:
    """`ladder` (weakest first) with Elo = the sum of the final adjacent steps (weakest = 0) and, as
    each level's interval, the half-width of its step to the level below. From the first step the
    upper level swept (`Step.swept`), no level has an Elo: each gets `elo_lower_bound`, the bound
    of the level below plus the low end of its step's interval. The measured points of a level's mix
    with the one below (`mix`, bots/strength.py) are dropped: they were measured on the old ladder."""
    out = [replace(ladder[0], elo=0.0, elo_ci=0.0, elo_lower_bound=None, extra={})]
    for lv, st in zip(ladder[1:], final, strict=True):
        prev = out[-1]
        if prev.elo is not None and not st.swept:
            half = (st.high - st.low) / 2 if math.isfinite(st.high - st.low) else None
            out.append(replace(lv, elo=prev.elo + st.elo, elo_ci=half, elo_lower_bound=None, extra={}))
        else:
            base = prev.elo if prev.elo is not None else (prev.elo_lower_bound or 0.0)
            out.append(replace(lv, elo=None, elo_ci=None, elo_lower_bound=base + st.low, extra={}))
    return out


def place_levels(levels: list[Level], *, games: int = 200, min_gap: float = 100.0, max_rounds: int = 3,
                 grow: float = 2.0, workers: int = 1, seed: int = 0, game: str = "kashgar",
                 log: Callable[[str], None] | None = None, from_top: bool = False,
                 floor: int = 1, cap: float = 1.0, top_games: int = 0,
                 verify: bool = False) -> tuple[list[Level], list[Step]]:
    """The calibrated levels (weakest first, rated) and every match played. Top down, `floor` is the
    smallest budget a preset is lowered to and `cap` the highest temperature it is raised to; a
    preset at both stays as it is (its step is reported, clear or not). `top_games` (0: `games`):
    the games of the step below the strongest level, whose games cost the most (the other steps
    can then afford more games, and so narrower intervals). `verify`: change no preset, measure
    every adjacent step once (a check of a finished ladder on fresh seeds, pass or fail)."""
    steps: list[Step] = []
    last = len(levels) - 1

    def n_games(upper: int) -> int:
        return top_games if top_games and upper == last else games

    final: list[Step] = []
    if verify:
        for i in range(1, len(levels)):
            st = _step(levels[i - 1], levels[i], 0, n_games(i), seed + 1000 * i, workers, game, min_gap,
                       levels[i], log)
            steps.append(st)
            final.append(st)
        return _rated(list(levels), final), steps
    if from_top:
        ladder = [levels[-1]]
        for i in range(len(levels) - 2, -1, -1):
            upper = ladder[0]
            cur = below(upper, levels[i], grow, floor, cap)
            for rnd in range(max_rounds + 1):
                st = _step(cur, upper, rnd, n_games(i + 1), seed + 1000 * i + rnd, workers, game, min_gap, cur,
                           log)
                steps.append(st)
                weaker = weaken(cur, grow, floor, cap)
                if st.ok or rnd == max_rounds or weaker is cur:
                    break
                cur = weaker
            ladder.insert(0, cur)
            final.insert(0, st)
        return _rated(ladder, final), steps
    ladder = [levels[0]]
    for i in range(1, len(levels)):
        lower = ladder[-1]
        cur = above(lower, levels[i], grow)
        for rnd in range(max_rounds + 1):
            st = _step(lower, cur, rnd, n_games(i), seed + 1000 * i + rnd, workers, game, min_gap, cur, log)
            steps.append(st)
            if st.ok or rnd == max_rounds:
                break
            cur = replace(cur, config=cur.config.with_(iterations=int(math.ceil(cur.config.iterations * grow)),
                                                       temperature=round(cur.config.temperature / grow, 4)))
        ladder.append(cur)
        final.append(st)
    return _rated(ladder, final), steps


def _rating(lv: Level) -> float:
    """A level's Elo, else its lower bound (what the ladder's order is judged on)."""
    return lv.elo if lv.elo is not None else (lv.elo_lower_bound or 0.0)


def markdown_table(levels: list[Level], steps: list[Step]) -> str:
    lines = ["| level | iterations | temperature | Elo | 95% CI (of the step) |", "|---|---|---|---|---|"]
    for lv in levels:
        ci = f"±{lv.elo_ci:.0f}" if lv.elo_ci is not None else ""
        elo = f"{lv.elo:.0f}" if lv.elo is not None else f">= {lv.elo_lower_bound or 0.0:.0f} (a bound)"
        lines.append(f"| {lv.name} | {lv.config.iterations} | {lv.config.temperature} | {elo} | {ci} |")
    lines += ["", "| match | round | games | score | Elo diff | 95% CI | ok |", "|---|---|---|---|---|---|---|"]
    for s in steps:
        lines.append(f"| {s.upper} vs {s.lower} | {s.round} | {s.games} | {s.score:.3f} | {s.elo_text()} | "
                     f"[{s.low:+.0f}, {s.high:+.0f}] | {'yes' if s.ok else 'no'} |")
    return "\n".join(lines) + "\n"


def plot(levels: list[Level], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    xs = list(range(1, len(levels) + 1))
    ys = [lv.elo or 0.0 for lv in levels]
    err = [lv.elo_ci or 0.0 for lv in levels]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4)
    ax.set_xticks(xs, [lv.name for lv in levels], rotation=30)
    ax.set_ylabel("Elo (weakest level = 0)")
    ax.set_title("Kashgar AI level ladder (bars: 95% half-width of the step from the level below)", fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def final_steps(steps: list[Step]) -> list[Step]:
    """The last match of each adjacent pair (the one its level was kept after)."""
    last: dict[tuple[str, str], Step] = {}
    for st in steps:
        last[(st.lower, st.upper)] = st
    return list(last.values())


def written_default(levels_in: str | Path | None, tuned: list[Level]) -> str:
    """The default level the written file names: the one the file tuned names (`default = ...`),
    else `expert` where it has one, else its strongest level: a server then answers a request without
    a level with the level the file says (`kashgar tune` prints it), not silently with the first."""
    names = [lv.name for lv in tuned]
    own = own_default(levels_in)
    if own in names:
        return own
    return DEFAULT_LEVEL if DEFAULT_LEVEL in names else names[-1]


def next_steps(levels_out: str | Path | None, levels: list[Level], game: str = "kashgar",
               workers: int = 1) -> list[str]:
    """What to run next for a level file just written: the `win_prob` calibration of the presets
    that have none at 2 players (a fit holds for a level's preset as it is, so a preset tuned anew
    has none; without one /suggest answers `win_prob: null` for it)."""
    from bots.win_prob import CALIBRATION_FILE, weights_for

    if game != "kashgar" or levels_out is None:
        return []
    missing = [lv.name for lv in levels if weights_for(lv, 2) is None]
    if not missing:
        return []
    return [f"win_prob: no calibration of {', '.join(missing)} in {CALIBRATION_FILE} (a fit holds for a "
            "preset as it is): /suggest answers win_prob null for them until one is fitted. Next, "
            f"`KASHGAR_LEVELS={levels_out} kashgar calibrate --levels {','.join(missing)} -n 200 -j {workers}` "
            "(self-play at 2, 3 and 4 players; --players 2 for fewer), then serve with the same "
            f"KASHGAR_LEVELS={levels_out}."]


def check_tune(levels_in: str | None, game: str, out_dir: str | Path) -> list[Level]:
    """What `tune` checks before any game: the level file (ValueError naming it), presets `game`
    cannot play (ValueError) and the report folder (made here; OSError)."""
    try:
        levels = load_levels(levels_in)
    except ValueError as exc:  # not TOML (tomllib's error is a ValueError), or not a level file
        raise ValueError(f"level file {levels_in or levels_path()}: {exc}") from None
    check_game(levels, game)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return levels


def tune(*, levels_in: str | None = None, levels_out: str | Path | None, out_dir: str | Path, games: int = 200,
         min_gap: float = 100.0, max_rounds: int = 3, workers: int = 1, seed: int = 0, game: str = "kashgar",
         log: Callable[[str], None] | None = None, from_top: bool = False, floor: int = 1,
         cap: float = 1.0, grow: float = 2.0, top_games: int = 0, verify: bool = False) -> dict[str, Any]:
    """Calibrate (or with `verify`, measure) the presets of `levels_in` (default: the level file in
    use); write the rated levels to `levels_out` (None: no level file) and the tables and plot to
    `out_dir`. A bad level file or a preset `game` cannot play is a ValueError before any game."""
    levels = check_tune(levels_in, game, out_dir)
    out = Path(out_dir)
    tuned, steps = place_levels(levels, games=games, min_gap=min_gap, max_rounds=max_rounds, workers=workers,
                                seed=seed, game=game, log=log, from_top=from_top, floor=floor, cap=cap,
                                grow=grow, top_games=top_games, verify=verify)
    finals = final_steps(steps)
    clear = sum(1 for s in finals if s.ok)
    direction = ("verified: every preset as given, each step measured once" if verify
                 else "top down, from the strongest preset" if from_top else "bottom up, from the weakest preset")
    per_step = f"{games} games per step" + (f", {top_games} below the strongest" if top_games else "")
    header = (f"Kashgar AI difficulty levels, calibrated by `kashgar tune` ({per_step}, 2 players, "
              f"{direction}).\n"
              f"Goal: adjacent levels >= {min_gap:.0f} Elo apart with the step's 95% interval above 0; "
              f"met by {clear} of {len(tuned) - 1} steps.\n"
              f"{FIELDS_DOC}")
    default = written_default(levels_in, tuned)
    if levels_out is not None:
        presets = load_presets(levels_in)  # the named presets off the ladder go along unchanged
        Path(levels_out).write_text(dump_levels(tuned, header, presets, default), encoding="utf-8")
    md = markdown_table(tuned, steps)
    (out / "ladder.md").write_text(md, encoding="utf-8")
    doc = {"levels": [lv.to_dict() for lv in tuned], "steps": [s.__dict__ for s in steps],
           "games_per_step": games, "top_games": top_games or games, "min_gap": min_gap, "game": game,
           "from_top": from_top, "verify": verify, "default": default,
           "swept": [s.upper for s in finals if s.swept],
           "monotone": all(_rating(b) > _rating(a) for a, b in zip(tuned, tuned[1:], strict=False)),
           "all_steps_ok": all(s.ok for s in finals)}
    (out / "ladder.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    doc["plot"] = plot(tuned, out / "ladder.png")
    return doc
