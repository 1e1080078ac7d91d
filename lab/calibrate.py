"""Calibrated `win_prob`: the chance that the player to move wins, from the search's mean reward.

The search's mean reward (`mean_reward`) is a score: the evaluation at its leaves squashed by a
softmax over the seats, which reads 0.7 to 0.9 at the opening of a 2-player game. `win_prob` maps it
to a chance by a logistic model fitted, for each level and number of players, on self-play games of
that level (every seat plays the level; `kashgar calibrate`)::

    logit P(the mover wins) = w0 + w1 * x + w2 * t + w3 * t * x,   x = logit(mean reward)

where t is the game's progress (the leader's VP / 25, as the search's evaluation uses it), plus,
in a fit on records that name each decision's place in turn order (`MODEL_ORDER`), a term u_k for
the mover's place k (u_0 = 0 for the start player, whose chance master's search overstates), where
that term predicts better, cross-validated (`place_gain`). So
`win_prob` reads: if every seat went on playing at this level, the player to move would win this
often from positions that the search scores like this one. Whole games are held out of the fit to
measure it (Brier score and log-loss against the raw mean reward, and a reliability table); the
fitted weights and those measures are in `bots/data/win_calibration.json`, each entry with the model it
was fitted under (`MODEL`; an entry of another model gives no weights).

`predict` (used both to measure a fit and to answer) takes the slope in x as max(0, w1 + w3 * t): a
fit whose slope is negative early in the game (novice 2p below t = 0.21, for one) would otherwise
give the alternative the search likes best the lowest win_prob. So win_prob never falls as the mean
reward rises (alternatives tie where the slope is 0). The held-out measures in the shipped file are
of the clipped map, as it answers.

The service reads the file through `load_calibration`, which reads it again when it changes on disk
(another mtime, size or inode; looked at once a second at most), so a new fit or a mended file takes
effect without a restart, within a second.
"""

from __future__ import annotations

import gzip
import json
import logging
import lzma
import math
import os
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from bots.win_prob import (
    MODEL,
    MODEL_ORDER,
    _features,
    order_of,
    predict,
    progress_of,
)

L2 = 1e-3  # ridge penalty of the fit (not on the intercept)
BINS = 10  # reliability table: bins of the predicted chance
MIN_BIN = 500  # the largest gap between predicted and observed is taken over bins of this many decisions
FOLDS = 5  # cross-validation of the places' terms (`place_gain`)

log = logging.getLogger("kashgar.calibrate")


@dataclass(frozen=True)
class Record:
    """One searched decision of a self-play game: game index, progress, mean reward of the decision
    played, whether its player went on to win (1) or not (0), and that player's place in turn
    order, 0 for the start player (None in records saved before it was kept). The start player is
    dealt, so the place, not the seat number, is what can bias the outcome."""

    game: int
    progress: float
    reward: float
    won: int
    order: int | None = None


# ---------------------------------------------------------------------------- data


def play_game(task: tuple[str, int, int] | tuple[str, int, int, str | None, int]) -> list[Record]:
    """Self-play game `seed` of `level` with `players` seats: every decision the search made (not
    forced ones) with the mean reward of the decision played, labelled with the game's winner.

    With a level `played_by` and `every` (the task's last two fields), that level plays the game in
    every seat and `level` is asked, as the service asks it (`served_reward`), at every `every`-th
    decision that level searched: for a level whose own games cost too much to play (grandmaster,
    6.9 core-seconds a decision), its mean reward labelled with the outcome of the game played on
    at `played_by`'s level."""
    from lab.arena import cached_bot, new_state

    level, players, seed = task[:3]
    played_by, every = (task[3], task[4]) if len(task) == 5 else (None, 1)
    bot = cached_bot(f"level:{played_by or level}")
    st = new_state("kashgar", players, seed, None)
    seen: list[tuple[int, float, float, int]] = []
    k = searched = 0
    while not st.is_terminal():
        move_seed = (seed * 7919 + k * 104729) & 0x7FFFFFFF
        an = bot.analyse(st, seed=move_seed)
        if an.iterations > 0 and not math.isnan(an.mean_reward):
            if played_by is None:
                seen.append((an.player, progress_of(st), an.mean_reward, order_of(st)))
            elif searched % every == 0:
                seen.append((an.player, progress_of(st), served_reward(st, level, move_seed), order_of(st)))
            searched += 1
        st.apply(an.code)
        k += 1
    winner = int(st.winner())
    return [Record(seed, t, r, int(p == winner), k) for p, t, r, k in seen]


def served_reward(state: Any, level: str, seed: int) -> float:
    """The mean reward of the decision `level` answers for `state` through the service's search
    (`lab.served`)."""
    from lab.served import served_answer

    reward = served_answer(state, level, seed).chosen.mean_reward
    return float("nan") if reward is None else reward


def collect(level: str, players: int, games: int, seed: int, workers: int = 1,
            log: Callable[[str], None] | None = None, progress: bool = False,
            played_by: str | None = None, every: int = 1) -> list[Record]:
    """Records of `games` self-play games of `level` (deal seeds seed, seed + 1, ...), played in
    `workers` processes; a progress bar on a terminal (`progress`), else a line per 100 games (`log`).
    With `played_by`, games of that level, `level` asked at every `every`-th searched decision
    (`play_game`)."""
    from kashgar_cli.progress import Progress
    from lab.arena import imap_processes

    tasks: list[tuple[str, int, int] | tuple[str, int, int, str | None, int]] = [
        (level, players, seed + g) if played_by is None else (level, players, seed + g, played_by, every)
        for g in range(games)]
    out: list[Record] = []
    bar = Progress(games, progress, desc=f"{level} {players}p")
    for i, recs in enumerate(imap_processes(play_game, tasks, workers), 1):
        out += recs
        bar.update(i)
        if log and i % 100 == 0 and not bar.enabled:
            log(f"{level} {players}p: {i}/{games} games")
    bar.close()
    out.sort(key=lambda r: r.game)
    return out


RECORDS_FORMAT = "kashgar-calibration-records/1"
REWARD_DECIMALS = 6  # as `/suggest` rounds `mean_reward`


def write_records(path: str | os.PathLike[str], header: dict[str, Any], records: list[Record]) -> None:
    """Save `records` (JSON lines: a header, then [game, progress, reward, won, order] per record,
    the reward to `REWARD_DECIMALS` places as `/suggest` reports it,
    the place in turn order left out where it is not known) so that a fit can be made again, or
    under another model, without playing the games again. `header` names what was played (level,
    players, preset, ...); the header also says how many records follow (`records`), which reading
    checks. The file is written whole or not at all: an interrupted run leaves the old one."""
    from bots.atomic import write_whole

    def dump(fh: TextIO) -> None:
        fh.write(json.dumps({"format": RECORDS_FORMAT, **header, "records": len(records)}) + "\n")
        for r in records:
            row: list[Any] = [r.game, r.progress, round(r.reward, REWARD_DECIMALS), r.won]
            if r.order is not None:
                row.append(r.order)
            fh.write(json.dumps(row) + "\n")

    write_whole(path, dump)


def read_records(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[Record]]:
    """The header and records of a file of `write_records` (compressed where its name ends in .xz
    or .gz, as the records kept in lab/data/calibration are); ValueError naming the line that is
    wrong."""
    name = str(path)
    try:
        with (lzma.open(path, "rt", encoding="utf-8") if name.endswith(".xz")
              else gzip.open(path, "rt", encoding="utf-8") if name.endswith(".gz")
              else open(path, encoding="utf-8")) as fh:
            lines = fh.read().splitlines()
    except (EOFError, zlib.error, lzma.LZMAError) as exc:  # a cut or damaged compressed file
        raise ValueError(f"not a whole {'xz' if name.endswith('.xz') else 'gzip'} file ({exc})") from None
    try:
        header = json.loads(lines[0]) if lines else None
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != RECORDS_FORMAT:
        raise ValueError(f"line 1: not a header of {RECORDS_FORMAT}")
    records = []
    for n, line in enumerate(lines[1:], 2):
        try:
            row = json.loads(line)
            game, progress, reward, won = row[:4]
            order = row[4] if len(row) == 5 else None
            ok = (len(row) in (4, 5) and isinstance(game, int) and not isinstance(game, bool)
                  and won in (0, 1) and not isinstance(won, bool)
                  and all(_number(v) and 0.0 <= v <= 1.0 for v in (progress, reward))
                  and (order is None or (isinstance(order, int) and not isinstance(order, bool) and order >= 0)))
        except (ValueError, TypeError, RecursionError):  # RecursionError: JSON nested too deep
            ok = False
        if not ok:
            raise ValueError(f"line {n}: want [game, progress, reward, won] or [game, progress, reward, won, order] "
                             "(game an integer, progress and reward in 0..1, won 0 or 1, order an integer >= 0)")
        records.append(Record(game, float(progress), float(reward), int(won), order))
    if not records:
        raise ValueError("no records")
    placed = sum(r.order is not None for r in records)
    if 0 < placed < len(records):
        raise ValueError(f"{placed} of {len(records)} records name their place in turn order and the others do not: "
                         "records of two runs mixed in one file?")
    said = header.get("records")  # files written before it was kept say nothing
    if isinstance(said, int) and not isinstance(said, bool) and said != len(records):
        raise ValueError(f"the header says {said} records, the file holds {len(records)}: a file cut short, or "
                         "records added to it?")
    return header, records


def merge_records(parts: list[tuple[dict[str, Any], list[Record]]]) -> tuple[dict[str, Any], list[Record]]:
    """One header and list of records of the runs `parts` (`read_records` results) played on
    consecutive deal seeds, in order: what one run of all their games writes, since a self-play game
    depends only on its deal seed. The header is the first run's with the games summed. ValueError
    where the runs are of another level, seat count or preset than the first, do not follow on from
    each other's deal seeds, or hold a game outside their own seeds."""
    if not parts:
        raise ValueError("no records to merge")
    first = parts[0][0]
    merged = {k: v for k, v in first.items() if k not in ("format", "records")}
    records: list[Record] = []
    games = 0
    for i, (header, recs) in enumerate(parts, 1):
        for key, what in (("level", "level"), ("players", "seat count"), ("preset", "preset")):
            if _comparable(key, header.get(key)) != _comparable(key, first.get(key)):
                raise ValueError(f"run {i} is of another {what} than run 1")
        seed, count = header.get("seed"), header.get("games")
        if not (isinstance(seed, int) and isinstance(count, int)) or isinstance(seed, bool) or isinstance(count, bool):
            raise ValueError(f"run {i}: its header names no deal seed and game count (seed, games)")
        if i > 1 and seed != merged["seed"] + games:
            raise ValueError(f"run {i} starts at deal seed {seed}, not {merged['seed'] + games} where run {i - 1} "
                             "ended: runs must follow on from each other's deal seeds, in order")
        outside = next((r.game for r in recs if not seed <= r.game < seed + count), None)
        if outside is not None:
            raise ValueError(f"run {i}: game {outside} is not one of its deal seeds {seed}..{seed + count - 1}")
        games += count
        records += recs
    merged["games"] = games
    return merged, records


def _comparable(key: str, value: Any) -> Any:
    """A header's value as runs are compared: a preset as the search's settings now (a run saved
    before a setting was added does not name it)."""
    if key == "preset" and isinstance(value, dict):
        from bots.win_prob import current_preset

        return current_preset(value)
    return value


# ---------------------------------------------------------------------------- fit


def fit(records: list[Record], l2: float = L2, iterations: int = 50, players: int | None = None) -> list[float]:
    """The weights of the logistic model, by Newton's method on the penalised log-loss: w0..w3
    (`MODEL`), and with `players` given, u_1..u_(players-1) after them, the terms of the places
    in turn order after the start player's (`MODEL_ORDER`; every record must have its place)."""
    import numpy as np

    if not records:
        raise ValueError("no records to fit")
    rows = [_features(r.reward, r.progress) for r in records]
    if players is not None:
        if any(r.order is None or not 0 <= r.order < players for r in records):
            raise ValueError(f"a record without its place in turn order among {players} players")
        rows = [f + [float(r.order == k) for k in range(1, players)] for f, r in zip(rows, records, strict=True)]
    X = np.array(rows)
    y = np.array([r.won for r in records], dtype=float)
    w = np.zeros(X.shape[1])
    pen = np.full(X.shape[1], l2 * len(records))
    pen[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        grad = X.T @ (p - y) + pen * w
        hess = (X * (p * (1.0 - p))[:, None]).T @ X + np.diag(pen) + 1e-9 * np.eye(X.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return [float(v) for v in w]


def _loss(p: float, won: int) -> float:
    """Log-loss of predicting `p` for an outcome `won` (p clipped off 0 and 1)."""
    return -math.log(min(1 - 1e-12, max(1e-12, p if won else 1 - p)))


def scores(probs: list[float], records: list[Record]) -> dict[str, float]:
    """Brier score and log-loss of `probs` against the records' outcomes."""
    n = len(records)
    brier = sum((p - r.won) ** 2 for p, r in zip(probs, records, strict=True)) / n
    ll = sum(_loss(p, r.won) for p, r in zip(probs, records, strict=True)) / n
    return {"brier": round(brier, 5), "log_loss": round(ll, 5)}


def reliability(probs: list[float], records: list[Record], bins: int = BINS) -> list[dict[str, Any]]:
    """Predicted against observed: for each bin of the predicted chance, its count, the mean
    prediction and the share of wins."""
    acc = _tally(probs, records, lambda p, _: min(bins - 1, int(p * bins)))
    return [{"bin": f"{i / bins:.1f}-{(i + 1) / bins:.1f}", "n": int(n), "predicted": round(s / n, 3),
             "observed": round(w / n, 3)} for i, (n, s, w) in sorted(acc.items())]


def _tally(probs: list[float], records: list[Record],
           key: Callable[[float, Record], int]) -> dict[int, list[float]]:
    """Per group (`key` of a prediction and its record): count, sum of predictions, wins."""
    acc: dict[int, list[float]] = {}
    for p, r in zip(probs, records, strict=True):
        a = acc.setdefault(key(p, r), [0.0, 0.0, 0.0])
        a[0] += 1
        a[1] += p
        a[2] += r.won
    return acc


def by_order(probs: list[float], records: list[Record]) -> list[dict[str, Any]] | None:
    """Predicted against observed per place in turn order: for each place (0: the start player),
    its decisions, the mean prediction and the share of them its player went on to win. The model
    has no place in it, so a place whose mean prediction stays off its share (the start player's,
    say) shows a bias the search's reward does not carry. None when a record has no place (saved
    before it was kept)."""
    if any(r.order is None for r in records):
        return None
    acc = _tally(probs, records, lambda _, r: int(r.order or 0))
    return [{"order": order, "n": int(n), "predicted": round(s / n, 3), "observed": round(w / n, 3)}
            for order, (n, s, w) in sorted(acc.items())]


def largest_gap(probs: list[float], records: list[Record], min_bin: int = MIN_BIN) -> float:
    """The largest |predicted - observed| over the reliability bins holding at least `min_bin`
    decisions (0 when none has)."""
    return max((abs(b["predicted"] - b["observed"]) for b in reliability(probs, records) if b["n"] >= min_bin),
               default=0.0)


def gap_spread(probs: list[float], records: list[Record], min_bin: int = MIN_BIN, resamples: int = 200,
               seed: int = 0) -> list[float]:
    """The 5th and 95th percentiles of `largest_gap` over resamples of whole games (with
    replacement): how far the figure moves with which games are held out. Every decision of a game
    shares its outcome, so the games, not the decisions, are the sample, and with a few hundred
    games the largest gap moves by several points. Not a confidence interval for miscalibration:
    a largest of noisy gaps, it lies above the true largest gap (a perfectly calibrated map's
    spread does not reach 0)."""
    by_game: dict[int, list[tuple[float, Record]]] = {}
    for p, r in zip(probs, records, strict=True):
        by_game.setdefault(r.game, []).append((p, r))
    games = sorted(by_game)
    rnd = random.Random(seed)
    gaps = []
    for _ in range(resamples):
        pairs = [pr for g in (rnd.choice(games) for _ in games) for pr in by_game[g]]
        gaps.append(largest_gap([p for p, _ in pairs], [r for _, r in pairs], min_bin))
    gaps.sort()
    return [round(gaps[int(0.05 * (resamples - 1))], 3), round(gaps[int(0.95 * (resamples - 1))], 3)]


def split(records: list[Record], held_out: float, seed: int) -> tuple[list[Record], list[Record]]:
    """Whole games to the fit and to the held-out set (a `held_out` share of the games)."""
    games = sorted({r.game for r in records})
    rnd = random.Random(seed)
    rnd.shuffle(games)
    test = set(games[:int(round(len(games) * held_out))])
    return [r for r in records if r.game not in test], [r for r in records if r.game in test]


def place_gain(records: list[Record], players: int, folds: int = FOLDS, seed: int = 0) -> float:
    """How much a term per place in turn order (`MODEL_ORDER`) lowers the log-loss per decision
    against the model without it (`MODEL`), cross-validated: the games (whole, as their decisions
    share one outcome) are dealt into `folds` folds, each predicted by both models fitted on the
    others. Above 0 where the places' terms predict better; below 0 where they only fit noise, as
    at the low levels, whose search hardly favours the start player. 0 (no evidence either way)
    for fewer than two games, which cannot be cross-validated."""
    games = sorted({r.game for r in records})
    if len(games) < 2:
        return 0.0
    random.Random(seed).shuffle(games)
    fold = {g: i % folds for i, g in enumerate(games)}
    total = 0.0
    for k in range(min(folds, len(games))):
        train = [r for r in records if fold[r.game] != k]
        plain, places = fit(train), fit(train, players=players)
        total += sum(_loss(predict(plain, r.reward, r.progress), r.won)
                     - _loss(predict(places, r.reward, r.progress, r.order or 0), r.won)
                     for r in records if fold[r.game] == k)
    return total / len(records)


def calibrate(records: list[Record], held_out: float = 0.3, seed: int = 0,
              players: int | None = None) -> dict[str, Any]:
    """Fit on the games not held out and measure on the held-out ones (raw mean reward against the
    calibrated chance); the weights kept are then fitted on every game. With `players` given and
    every record's place in turn order known, the model has a term per place (`MODEL_ORDER`) where
    it predicts better, cross-validated over the games not held out (`place_gain` above 0;
    reported as `place_gain`), and none (`MODEL`) where it does not."""
    ordered = players is not None and all(r.order is not None for r in records)
    train, test = split(records, held_out, seed)
    gain = place_gain(train, players, seed=seed) if ordered and players is not None else None
    by = players if gain is not None and gain > 0 else None
    w_train = fit(train, players=by)
    calibrated = [predict(w_train, r.reward, r.progress, r.order or 0) for r in test]
    raw = [r.reward for r in test]
    return {
        "model": MODEL_ORDER if by else MODEL,
        "weights": fit(records, players=by),
        **({"place_gain": round(gain, 5)} if gain is not None else {}),
        "games": len({r.game for r in records}),
        "decisions": len(records),
        "held_out": {
            "games": len({r.game for r in test}),
            "decisions": len(test),
            "win_rate": round(sum(r.won for r in test) / max(1, len(test)), 4),
            "raw": scores(raw, test),
            "calibrated": scores(calibrated, test),
            "reliability_raw": reliability(raw, test),
            "reliability_calibrated": reliability(calibrated, test),
            "bin_gap_calibrated_spread": gap_spread(calibrated, test, seed=seed),
            **({"by_order_calibrated": places} if (places := by_order(calibrated, test)) is not None else {}),
        },
    }


def markdown(doc: dict[str, Any], min_bin: int = MIN_BIN) -> str:
    """A Markdown table of a calibration file: per level and seat count, the held-out Brier score and
    log-loss of the raw mean reward and of `win_prob`, and the largest gap between predicted and
    observed over the reliability bins holding at least `min_bin` decisions, for `win_prob` with its
    spread over resampled held-out games (`gap_spread`) where the entry has one, and the places'
    cross-validated gain (`place_gain`; their terms are in the fit where it is above 0). A measure an
    entry lacks (one written by hand, by another version, or fitted on records without places)
    reads "-"."""
    rows = ["| level | players | games | held-out decisions | Brier raw | Brier win_prob | log-loss raw | "
            "log-loss win_prob | largest bin gap raw | largest bin gap win_prob [spread] | place_gain |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    levels = doc.get("levels")
    for name, by_players in (levels.items() if isinstance(levels, dict) else ()):
        for players, e in sorted(by_players.items() if isinstance(by_players, dict) else ()):
            h = e.get("held_out") if isinstance(e, dict) else None
            cells = [_cell(e, "games", fmt="d"), _cell(h, "decisions", fmt="d"),
                     _cell(h, "raw", "brier"), _cell(h, "calibrated", "brier"),
                     _cell(h, "raw", "log_loss"), _cell(h, "calibrated", "log_loss"),
                     _gap(h, "reliability_raw", min_bin), _gap_with_spread(h, min_bin),
                     _cell(e, "place_gain", fmt="+.4f")]
            rows.append(f"| {name} | {players} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _cell(doc: Any, *keys: str, fmt: str = ".4f") -> str:
    """doc[keys[0]][keys[1]]... formatted, or "-" where it is missing or not a number."""
    for k in keys:
        doc = doc.get(k) if isinstance(doc, dict) else None
    if not _number(doc) or (fmt == "d" and not isinstance(doc, int)):
        return "-"
    return format(doc, fmt)


def _gap_with_spread(held_out: Any, min_bin: int) -> str:
    gap = _gap(held_out, "reliability_calibrated", min_bin)
    return gap if gap == "-" else gap + _spread(held_out, "bin_gap_calibrated_spread")


def _gap(held_out: Any, key: str, min_bin: int) -> str:
    """The largest |predicted - observed| over the bins of reliability table `key` with at least
    `min_bin` decisions, or "-" when there is no such table or no such bin (a fit on few games)."""
    bins = held_out.get(key) if isinstance(held_out, dict) else None
    if not isinstance(bins, list):
        return "-"
    gaps = [abs(b["predicted"] - b["observed"]) for b in bins
            if isinstance(b, dict) and all(_number(b.get(k)) for k in ("n", "predicted", "observed"))
            and b["n"] >= min_bin]
    return f"{max(gaps):.3f}" if gaps else "-"


def _spread(held_out: Any, key: str) -> str:
    """" [lo, hi]" from held_out[key], or "" where there is none (an entry of an earlier version)."""
    iv = held_out.get(key) if isinstance(held_out, dict) else None
    if not (isinstance(iv, list) and len(iv) == 2 and all(_number(v) for v in iv)):
        return ""
    return f" [{iv[0]:.3f}, {iv[1]:.3f}]"
