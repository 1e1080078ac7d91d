"""Calibrate the level presets into a measured ladder.

Bottom up, each level is played against the one below it (2-player games, seats rotated). If it is
not at least `min_gap` Elo stronger with the 95% interval of the difference above zero (so the two
levels' intervals do not overlap), its preset is strengthened (budget x `grow`, temperature x 0.5)
and the match is played again, up to `max_rounds` times. The ladder's Elo is the sum of measured
adjacent differences (the weakest level is 0). Writes the level file, a Markdown and a JSON table,
and a PNG plot of the ladder.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bots.arena import run_arena
from bots.levels import Level, dump_levels, load_levels

FIELDS_DOC = (
    "Presets of the same SO-ISMCTS search (bots/ismcts.py); data, not code. Fields: iterations (budget per\n"
    "decision), time_ms (0: none), c (UCB exploration), rollout (\"eval\": `depth` random decisions then the\n"
    "heuristic; \"playout\": to the end), depth, scale (softmax scale of the heuristic), temperature (the final\n"
    "choice is sampled over visits ** (1/T); 0 = most visited). Low levels are weak the human way: a small\n"
    "budget and a temperature over the moves the search liked, never a random blunder.\n"
    "elo / elo_ci: the measured rating (the weakest level = 0) and the 95% half-width of its step."
)


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


def _spec(lv: Level) -> str:
    c = lv.config
    return (f"ismcts:iterations={c.iterations},c={c.c},depth={c.depth},temperature={c.temperature},"
            f"rollout={c.rollout},scale={c.scale},evaluator={c.evaluator}")


def above(lower: Level, cur: Level, grow: float) -> Level:
    """`cur`, lifted where needed to at least one growth step above `lower` (budget x `grow`,
    temperature halved): after a level was strengthened, the preset above it may no longer be
    stronger, and playing it would only waste a round."""
    lc, cc = lower.config, cur.config
    iterations = max(cc.iterations, int(math.ceil(lc.iterations * grow)))
    temperature = min(cc.temperature, round(lc.temperature * 0.5, 4))
    if iterations == cc.iterations and temperature == cc.temperature:
        return cur
    return replace(cur, config=cc.with_(iterations=iterations, temperature=temperature))


def calibrate(levels: list[Level], *, games: int = 200, min_gap: float = 100.0, max_rounds: int = 3,
              grow: float = 2.0, workers: int = 1, seed: int = 0, game: str = "kashgar",
              log: Callable[[str], None] | None = None) -> tuple[list[Level], list[Step]]:
    out = [replace(levels[0], elo=0.0, elo_ci=0.0)]
    steps: list[Step] = []
    for i in range(1, len(levels)):
        lower = out[-1]
        cur = above(lower, levels[i], grow)
        for rnd in range(max_rounds + 1):
            lo_spec, up_spec = _spec(lower), _spec(cur)
            if lo_spec == up_spec:
                up_spec += ",c=" + str(cur.config.c)  # never a bot against itself
            rep = run_arena([lo_spec, up_spec], games=games, players=2, seed=seed + 1000 * i + rnd,
                            workers=workers, game=game)
            wins = rep.wins[up_spec]
            e, lo, hi = rep.elo[up_spec]
            ok = e >= min_gap and lo > 0
            steps.append(Step(lower.name, cur.name, rnd, cur.config.iterations, cur.config.temperature, rep.games,
                              wins / max(1, rep.games), e, lo, hi, ok))
            if log:
                log(f"{cur.name} vs {lower.name} (round {rnd}, {cur.config.iterations} it, "
                    f"T={cur.config.temperature}): {e:+.0f} Elo [{lo:+.0f}, {hi:+.0f}] {'ok' if ok else 'too close'}")
            if ok or rnd == max_rounds:
                break
            cfg = cur.config.with_(iterations=int(math.ceil(cur.config.iterations * grow)),
                                   temperature=round(cur.config.temperature * 0.5, 4))
            cur = replace(cur, config=cfg)
        half = (hi - lo) / 2 if math.isfinite(hi - lo) else None
        base = lower.elo or 0.0
        out.append(replace(cur, elo=base + e, elo_ci=half))
    return out, steps


def markdown_table(levels: list[Level], steps: list[Step]) -> str:
    lines = ["| level | iterations | temperature | Elo | 95% CI (of the step) |", "|---|---|---|---|---|"]
    for lv in levels:
        ci = f"±{lv.elo_ci:.0f}" if lv.elo_ci is not None else ""
        lines.append(f"| {lv.name} | {lv.config.iterations} | {lv.config.temperature} | {lv.elo or 0.0:.0f} | {ci} |")
    lines += ["", "| match | round | games | score | Elo diff | 95% CI | ok |", "|---|---|---|---|---|---|---|"]
    for s in steps:
        lines.append(f"| {s.upper} vs {s.lower} | {s.round} | {s.games} | {s.score:.3f} | {s.elo:+.0f} | "
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
    ax.set_title("Kashgar AI level ladder")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def tune(*, levels_in: str | None = None, levels_out: str | Path, out_dir: str | Path, games: int = 200,
         min_gap: float = 100.0, max_rounds: int = 3, workers: int = 1, seed: int = 0, game: str = "kashgar",
         log: Callable[[str], None] | None = None) -> dict[str, Any]:
    levels = load_levels(levels_in)
    tuned, steps = calibrate(levels, games=games, min_gap=min_gap, max_rounds=max_rounds, workers=workers,
                             seed=seed, game=game, log=log)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clear = sum(1 for s in steps if s.ok)
    header = (f"Kashgar AI difficulty levels, calibrated by `kashgar tune` ({games} games per step, 2 players).\n"
              f"Goal: adjacent levels >= {min_gap:.0f} Elo apart with the step's 95% interval above 0; "
              f"met by {clear} of {len(tuned) - 1} steps.\n"
              f"{FIELDS_DOC}")
    Path(levels_out).write_text(dump_levels(tuned, header), encoding="utf-8")
    md = markdown_table(tuned, steps)
    (out / "ladder.md").write_text(md, encoding="utf-8")
    doc = {"levels": [lv.to_dict() for lv in tuned], "steps": [s.__dict__ for s in steps],
           "games_per_step": games, "min_gap": min_gap, "game": game,
           "monotone": all((b.elo or 0) > (a.elo or 0) for a, b in zip(tuned, tuned[1:], strict=False)),
           "all_steps_ok": all(s.ok for s in steps if s.round == max(x.round for x in steps
                                                                      if x.upper == s.upper))}
    (out / "ladder.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    doc["plot"] = plot(tuned, out / "ladder.png")
    return doc
