"""`kashgar fuzz`: play many seeded games and check every state (`lab.fuzz`).

Exit status 0 when every game passed, 1 when any check failed; each failure is printed with its
seed and step, and written in full (the state before the failing decision, the decision) to
`--out` as JSON, ready to become a test.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import TYPE_CHECKING, Any

from kashgar_cli.errors import check_seeds, process_count
from kashgar_cli.interrupt import INTERRUPTED, say_interrupted, workers_ignore_sigint

if TYPE_CHECKING:  # the lab is imported when the command runs, never by `kashgar serve`
    from lab.fuzz import GameResult


def _play(task: tuple[int, bool | None, int, int, bool, str]) -> GameResult:
    import engine_ext
    from lab.fuzz import fuzz_game

    seed, compiled, every, cap, both, bot = task
    twin = engine_ext.get_engine(False) if both else None
    chooser = None
    if bot:
        from lab.arena import cached_bot

        chooser = cached_bot(bot).choose
    return fuzz_game(engine_ext.get_engine(True if both else compiled), seed, check_every=every,
                     max_decisions=cap, twin=twin, chooser=chooser, policy=bot)


def run(args: argparse.Namespace) -> int:
    from kashgar_cli.progress import Progress
    from lab.arena import imap_processes

    if args.games < 1 or args.check_every < 1 or args.max_decisions < 1:
        print("kashgar fuzz: --games, --check-every and --max-decisions must be at least 1")
        return 2
    if args.max_failures < 0:
        print("kashgar fuzz: --max-failures must be 0 (never stop) or more")
        return 2
    import engine_ext

    check_seeds(args.seed, args.games, engine_ext.SEEDS - 1)
    compiled = {"default": None, "compiled": True, "interpreted": False}[args.engine]
    if args.both_builds:
        if not engine_ext.compiled_available():
            print("kashgar fuzz: --both-builds needs the compiled engine (pip install -e .)")
            return 2
    if args.bot:
        from lab.arena import cached_bot

        try:
            cached_bot(args.bot)
        except (KeyError, ValueError) as exc:
            print(f"kashgar fuzz: --bot: {exc}")
            return 2
    tasks = [(args.seed + i, compiled, args.check_every, args.max_decisions, bool(args.both_builds), args.bot)
             for i in range(args.games)]
    bar = Progress(args.games, not args.no_progress)
    t0 = time.perf_counter()
    failures = []
    decisions = 0
    checks: dict[str, int] = {}
    played = 0
    interrupted = False
    try:
        with workers_ignore_sigint():
            for played, res in enumerate(imap_processes(_play, tasks, args.workers), start=1):
                decisions += res.decisions
                for k, v in res.checks.items():
                    checks[k] = checks.get(k, 0) + v
                if res.failure is not None:
                    failures.append(res.failure)
                bar.update(played, f"{len(failures)} failed")
                if 0 < args.max_failures <= len(failures):
                    break  # the rest would most likely fail alike
    except KeyboardInterrupt:
        interrupted = True
        say_interrupted("fuzz", f" after {played} of {args.games} games", after_bar=not args.no_progress)
    else:
        bar.close()
    secs = time.perf_counter() - t0
    for f in sorted(failures, key=lambda f: f.setup.seed):
        print(f"FAILED {f.summary()}")
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            path = os.path.join(args.out, f"fuzz-{f.setup.seed}.json")
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(f.to_json(), fh, indent=1)
            print(f"  written to {path}")
    summary = {"games": played, "failed": len(failures), "decisions": decisions, "checks": checks,
               "seeds": [args.seed, args.seed + args.games - 1], "seconds": round(secs, 1)}
    stopped = "by Ctrl-C" if interrupted else f"after {len(failures)} failures (--max-failures)"
    if played < args.games:
        summary["stopped"] = stopped
    if args.json:
        print(json.dumps(summary))
    else:
        note = f" of {args.games}, stopped {stopped}" if played < args.games else ""
        print(f"{played} games{note} (seeds {args.seed}..{args.seed + args.games - 1}), {decisions} decisions, "
              f"{sum(checks.values())} checks ({', '.join(f'{k} {v}' for k, v in sorted(checks.items()))}), "
              f"{len(failures)} failed, {secs:.1f} s")
    if interrupted:
        return INTERRUPTED
    return 1 if failures else 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fuzz", help="play seeded games and check every state (engine bugs)",
        description="Play seeded games (random or one-ply greedy play, or a bot's with --bot; 2 to 4 players, "
                    "with and without the Cut-and-Thrust cards) and check each state: its JSON document "
                    "reads back as itself, and every --check-every decisions the card bookkeeping, the "
                    "mover's view and a determinization of it. Exit status 1 if any check failed.")
    p.add_argument("-n", "--games", type=int, default=100)
    p.add_argument("--seed", type=int, default=0, help="the first game's seed (games use seed, seed+1, ...)")
    p.add_argument("-j", "--workers", type=process_count, default=os.cpu_count() or 1, help="processes")
    p.add_argument("--engine", choices=("default", "compiled", "interpreted"), default="default")
    p.add_argument("--both-builds", action="store_true",
                   help="play each game on the compiled and the interpreted engine in lockstep and check "
                        "that they stay alike (slower)")
    p.add_argument("--bot", default="", metavar="SPEC",
                   help="every seat plays with this bot or level (e.g. ismcts:iterations=50, club) instead of "
                        "the seed's random or greedy policy; its decisions must be legal")
    p.add_argument("--check-every", type=int, default=5, help="decisions between full checks")
    p.add_argument("--max-decisions", type=int, default=20000, help="a game still going after these fails")
    p.add_argument("--max-failures", type=int, default=20,
                   help="stop after this many failed games (0: play them all)")
    p.add_argument("--out", metavar="DIR", help="write each failure (with the state before it) as JSON here")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)
