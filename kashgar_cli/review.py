"""`kashgar review RECORD.json`: where each seat lost its chances in a game, decision by decision, as
`POST /reviews` answers it: in this process, or by a running service (`--url`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from kashgar_cli.errors import CliError
from kashgar_cli.progress import Progress

CLASS_WORDS = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "review",
        help="review a game record: each decision against a level's choice",
        description="Search every decision of a game record (kashgar/record@1, as `kashgar play --record` and the "
        "web table write it) that had more than one legal choice, from the view of the seat that made it, and "
        "judge the move played against the level's choice: the loss in win chance, inaccuracies, mistakes and "
        "blunders, and each seat's accuracy (docs/review.md).",
    )
    p.add_argument("record", help="game record JSON file ('-' = stdin)")
    p.add_argument("--level", default="master", help="the level that judges (default master)")
    p.add_argument("--seats", type=int, nargs="+", default=None, help="the seats to review (default: every seat)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--url", default=None, help="review on a running service (its workers) instead of here")
    p.add_argument("--api-key", default=os.environ.get("KASHGAR_API_KEY"),
                   help="the service's API key (default: KASHGAR_API_KEY)")
    p.add_argument("--json", action="store_true", help="print the whole review as JSON")
    p.set_defaults(func=run)


def read_record(path: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise CliError(f"{path} is not JSON: {exc}") from None
    if isinstance(doc, dict) and isinstance(doc.get("record"), dict) and "schema" not in doc:
        doc = doc["record"]  # as POST /table/record answers it
    return doc


class Bar:
    """The progress of decisions reviewed: a bar on a terminal, a line every few seconds on a pipe
    (`kashgar_cli.progress`), made at the first report, when the total is known."""

    LINES_EVERY_S = 5.0

    def __init__(self) -> None:
        self.progress: Progress | None = None

    def update(self, done: int, total: int) -> None:
        if total <= 0:
            return
        if self.progress is None:
            self.progress = Progress(total, unit="decision", desc="review", lines_every=self.LINES_EVERY_S)
        self.progress.update(done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()


def review_here(record: Any, level: str, seats: list[int] | None, seed: int,
                progress: Callable[[int, int], None]) -> dict[str, Any]:
    from service import review
    from service.errors import APIError

    try:
        spec = review.plan(record, level, seats, seed)
    except APIError as err:
        raise CliError(f"{err.message} (at {err.pointer or '/'})") from None
    done = [0]

    def tick(report: dict[str, Any]) -> None:
        progress(done[0] + len(report.get("decisions", [])), len(spec.moves))

    results = []
    for i in range(spec.parts):
        results.append(review.run_part(spec.to_dict(), i, tick))
        done[0] += len(results[-1]["decisions"])
    return review.combine(spec.to_dict(), results)


def review_there(url: str, api_key: str | None, record: Any, level: str, seats: list[int] | None, seed: int,
                 progress: Callable[[int, int], None]) -> dict[str, Any]:
    from kashgar_client import KashgarClient
    from kashgar_client.errors import KashgarAPIError, KashgarError

    client = KashgarClient(url, api_key=api_key)
    try:
        job = client.review(record, level=level, seats=seats, seed=seed,
                            on_progress=lambda j: progress(j.progress.decisions_done, j.progress.decisions_total))
    except KashgarAPIError as err:
        raise CliError(f"the service answered {err.status}: {err.message}") from None
    except KashgarError as err:
        raise CliError(str(err)) from None
    assert job.review is not None
    return job.review


def table(review: dict[str, Any]) -> str:
    """The review in words: each seat's figures, then every decision that lost win chance. Seats and
    moves are counted from 1 (`engine_ext.words.seat_words`: "seat 1" is the JSON's seat 0; a
    decision's `move` is its number in the record, from 1)."""
    from engine_ext.words import seat_words

    lines = [f"Review at {review['level']}: {review['reviewed']} decisions"]
    lines.append(f"{'':<7}  {'accuracy':>8}  {'mean loss':>9}  {'inaccuracies':>12}  {'mistakes':>8}  "
                 f"{'blunders':>8}")
    for s in review["seats"]:
        acc = "-" if s["accuracy"] is None else f"{s['accuracy']:.1f}"
        mean = "-" if s["mean_loss"] is None else f"{100 * s['mean_loss']:.1f}%"
        lines.append(f"{seat_words(s['seat']):<7}  {acc:>8}  {mean:>9}  {s['inaccuracy']:>12}  {s['mistake']:>8}  "
                     f"{s['blunder']:>8}")
    flagged = [d for d in review["decisions"] if d.get("class")]
    if flagged:
        lines.append("")
        lines.append("Where chances were lost (win chance played -> best):")
    for d in flagged:
        lines.append(f"move {d['move']:>3}, {seat_words(d['seat'])} {CLASS_WORDS[d['class']]} {d['class']}: "
                     f"{d['played_words']} ({100 * d['played_win_prob']:.0f}%); better: {d['best_words']} "
                     f"({100 * d['best_win_prob']:.0f}%)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    bar = Bar()
    try:
        if args.url:
            out = review_there(args.url, args.api_key, record, args.level, args.seats, args.seed, bar.update)
        else:
            out = review_here(record, args.level, args.seats, args.seed, bar.update)
    finally:
        bar.close()
    print(json.dumps(out, indent=2) if args.json else table(out))
    return 0
