"""A corpus of real game states for the load tests, made by seeded self-play.

Every entry is a decision point of a game played by the greedy bot (with a little seeded random
play mixed in, so that the games differ), taken from every phase of the game and every kind of
decision, for 2, 3 and 4 players. An entry holds the state as the player to move sees it (what a
game client posts to `/suggest`), one of that player's legal decisions (for `/apply`) and labels.

Regenerate the stored corpus (deterministic: same seeds, same file)::

    python -m loadtests.corpus --out loadtests/corpus.json

Check that the stored file is what the current engine makes::

    python -m loadtests.corpus --check
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_PATH = HERE / "corpus.json"
DEFAULT_SEEDS = tuple(range(1, 7))  # two games per player count
PHASES = ("opening", "middle", "late", "final")
PLAYERS = (2, 3, 4)
SCHEMA = "kashgar/loadtest-corpus@1"


def phase_of(turn: int, last_turn: int, end_triggered: bool) -> str:
    """`final` once the end is triggered; otherwise by the share of the game played."""
    if end_triggered:
        return "final"
    share = turn / max(1, last_turn)
    if share < 0.25:
        return "opening"
    if share < 0.7:
        return "middle"
    return "late"


def self_play(players: int, seed: int, epsilon: float = 0.1, max_steps: int = 3000) -> list[dict[str, Any]]:
    """Every decision point of one seeded game: the view of the player to move, a legal decision
    (the one played), the turn and whether the end was triggered."""
    import engine_ext
    from bots import make_bot

    bot = make_bot("greedy")
    rng = random.Random(seed * 7919 + players)
    game = engine_ext.new_game(players=players, seed=seed)
    points: list[dict[str, Any]] = []
    steps = 0
    while not game.is_terminal and steps < max_steps:
        legal = game.legal()
        full = game.to_json()
        player = game.current_player
        if rng.random() < epsilon:
            decision = rng.choice(legal)
        else:
            code = bot.choose(game, seed=seed * 100_003 + steps)
            decision = legal[list(game.state.legal_codes()).index(code)]  # same order as legal()
        points.append(
            {
                "player": player,
                "turn": int(full["turn"]),
                "end_triggered": bool(full["end_triggered"]),
                "mid_turn": full.get("pending") is not None,
                "kind": decision.to_json()["kind"],
                "legal_count": len(legal),
                "state": game.to_json(observer=player),
                "decision": decision.to_json(),
                "decision_text": str(decision),
            }
        )
        game.apply(decision)
        steps += 1
    for p in points:
        p["last_turn"] = int(game.to_json()["turn"])
    return points


def select(points: list[dict[str, Any]], players: int, seed: int, per_bucket: int = 1) -> list[dict[str, Any]]:
    """A few points of each (phase, decision kind) bucket of one game, picked by a seeded rng;
    only states where the player has a real choice (two or more legal decisions)."""
    rng = random.Random(seed * 31 + players)
    buckets: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in points:
        if p["legal_count"] < 2:
            continue
        phase = phase_of(p["turn"], p["last_turn"], p["end_triggered"])
        buckets.setdefault((phase, p["kind"]), []).append(p)
    out: list[dict[str, Any]] = []
    for (phase, kind), items in sorted(buckets.items()):
        for p in rng.sample(items, min(per_bucket, len(items))):
            out.append(
                {
                    "id": f"p{players}-s{seed}-t{p['turn']}-{kind}-{phase}",
                    "players": players,
                    "seed": seed,
                    "phase": phase,
                    "kind": kind,
                    "mid_turn": p["mid_turn"],
                    "turn": p["turn"],
                    "legal_count": p["legal_count"],
                    "state": p["state"],
                    "decision": p["decision"],
                    "decision_text": p["decision_text"],
                }
            )
    return out


def generate(seeds: Iterable[int] = DEFAULT_SEEDS, players: Iterable[int] = PLAYERS) -> dict[str, Any]:
    """The corpus document: for each player count, the games of `seeds` (seed i plays with
    players[i % len(players)] unless every count is wanted for every seed)."""
    entries: list[dict[str, Any]] = []
    counts = tuple(players)
    for i, seed in enumerate(seeds):
        n = counts[i % len(counts)]
        entries.extend(select(self_play(n, seed), n, seed))
    return {"schema": SCHEMA, "seeds": list(seeds), "players": list(counts), "entries": entries}


def load(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The stored corpus entries (generated on the fly from the default seeds if the file is missing)."""
    p = Path(path) if path else DEFAULT_PATH
    if p.exists():
        doc = json.loads(p.read_text())
    else:
        doc = generate()
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{p}: not a {SCHEMA} document")
    return list(doc["entries"])


def summary(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Counts by player count, phase and decision kind."""
    out: dict[str, dict[str, int]] = {"players": {}, "phase": {}, "kind": {}}
    for e in entries:
        for key in ("players", "phase", "kind"):
            k = str(e[key])
            out[key][k] = out[key].get(k, 0) + 1
    return out


def dumps(doc: dict[str, Any]) -> str:
    """The corpus document as the stored file holds it (compact, sorted keys, one line)."""
    return json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\n"


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The JSON pointer of the first place where `a` and `b` differ (None: equal), with both values
    when they are scalars."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}/{key} (only in the {'fresh' if key in b else 'stored'} one)"
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}/{i}")
            if found:
                return found
        return None if len(a) == len(b) else f"{path} ({len(a)} stored vs {len(b)} fresh items)"
    if a == b and type(a) is type(b):
        return None
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return path or "/"
    return f"{path or '/'} ({a!r} stored vs {b!r} fresh)"


def _why(stored: str, fresh: dict[str, Any]) -> str:
    if not stored:
        return "no stored file"
    try:
        where = first_difference(json.loads(stored), fresh)
    except ValueError:
        return "the stored file is not JSON"
    return f"first difference at {where}" if where else "only the formatting differs"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Regenerate (or check) the load-test corpus of real game states.")
    ap.add_argument("--out", default=str(DEFAULT_PATH), help="where to write the corpus JSON")
    ap.add_argument("--seeds", type=int, nargs="*", default=list(DEFAULT_SEEDS), help="self-play seeds")
    ap.add_argument("--check", action="store_true", help="compare the stored file with a fresh generation")
    args = ap.parse_args(argv)
    doc = generate(args.seeds)
    text = dumps(doc)
    if args.check:
        stored = Path(args.out).read_text() if Path(args.out).exists() else ""
        if stored != text:
            again = "python -m loadtests.corpus"
            if Path(args.out).resolve() != DEFAULT_PATH:
                again += f" --out {args.out}"
            print(f"{args.out} differs from a fresh generation ({_why(stored, doc)}); regenerate with: {again}")
            return 1
        print(f"{args.out}: up to date ({len(doc['entries'])} states)")
        return 0
    Path(args.out).write_text(text)
    print(f"wrote {args.out}: {len(doc['entries'])} states, {len(text) // 1024} KiB")
    print(json.dumps(summary(doc["entries"]), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
