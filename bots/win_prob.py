"""Calibrated `win_prob`: the chance that the player to move wins, from the search's mean reward.

The search's mean reward (`mean_reward`) is a score: the evaluation at its leaves squashed by a
softmax over the seats, which reads 0.7 to 0.9 at the opening of a 2-player game. `win_prob` maps it
to a chance by a logistic model fitted, for each level and number of players, on self-play games of
that level (every seat plays the level; `kashgar calibrate`, in `lab.calibrate`)::

    logit P(the mover wins) = w0 + w1 * x + w2 * t + w3 * t * x,   x = logit(mean reward)

where t is the game's progress (the leader's VP / `engine_ext.core.END_VP`, as the search's evaluation uses it), plus,
in a fit on records that name each decision's place in turn order (`MODEL_ORDER`), a term u_k for
the mover's place k (u_0 = 0 for the start player). The fitted weights and their held-out measures
are in `bots/data/win_calibration.json`, each entry with the model it was fitted under (`MODEL`; an
entry of another model gives no weights).

`predict` takes the slope in x as max(0, w1 + w3 * t), so win_prob never falls as the mean reward
rises (a fit whose slope is negative early in the game would otherwise give the alternative the
search likes best the lowest win_prob). Where that slope is 0 (`resolves` is False: novice's fits
before the leader has about 5 VP) the fit gives every alternative the same chance, whatever the
search found: that is no chance of the alternative, so `bots.answer.calibrate` gives each alternative a
`win_prob` of None there, and the answer's own `win_prob` is the mover's chance at this point of
the game at that level, whatever it plays.

The service reads the file through `load_calibration`, which reads it again when it changes on
disk (another mtime, size or inode; looked at once a second at most), so a new fit takes effect
without a restart.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bots.base import log_odds
from engine_ext.core import END_VP, S_START

CALIBRATION_FILE = Path(__file__).parent / "data" / "win_calibration.json"
MODEL = ("logit P(the mover wins) = w0 + w1 * x + w2 * t + w3 * t * x, x = logit(mean reward), "
         "t = the leader's VP / 25; fitted per level and number of players on self-play games of the level")
MODEL_ORDER = (MODEL.replace("w3 * t * x,", "w3 * t * x + u_k, k = the mover's place in turn order "
                                            "(0: the start player; u_0 = 0, u_1.. follow w3),"))
N_WEIGHTS = 4  # of MODEL; MODEL_ORDER adds one per place after the start player's
EPS = 1e-4  # mean rewards are clipped to [EPS, 1 - EPS] before the logit

log = logging.getLogger("kashgar.win_prob")


def order_of(st: Any) -> int:
    """The place in turn order of the player to move in engine state `st` (0: the start player)."""
    return (int(st.current_player()) - int(st.export()[S_START])) % int(st.players)


def progress_of(st: Any) -> float:
    """How far the game of engine state `st` is: the leader's VP / END_VP, in 0..1 (public). A
    Bettler (-2 VP) or a Gewürzhändler (-1) can leave every seat below 0 early in the game; that
    counts as 0 (the records' progress is in 0..1, and their reader refuses any other)."""
    return min(1.0, max(0.0, max(float(st.vp(p)) for p in range(int(st.players))) / END_VP))


def _features(r: float, t: float) -> list[float]:
    x = log_odds(r, EPS)
    return [1.0, x, t, t * x]


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)



def predict(weights: list[float], reward: float, progress: float, order: int = 0) -> float:
    """The calibrated chance of winning for a mean reward at a progress (and, for weights of
    `MODEL_ORDER`, the mover's place in turn order): the model with its slope in x = logit(reward)
    taken as max(0, w1 + w3 * t), so that the chance never falls as the reward rises (it would
    where a fit's slope is negative, early in the game)."""
    w0, w1, w2, w3 = weights[:N_WEIGHTS]
    _, x, t, _ = _features(reward, progress)
    u = weights[N_WEIGHTS + order - 1] if order > 0 and len(weights) > N_WEIGHTS else 0.0
    return _sigmoid(w0 + w2 * t + u + max(0.0, w1 + w3 * t) * x)


def resolves(weights: list[float], progress: float) -> bool:
    """Whether weights tell alternatives apart at a progress: their slope in x = logit(mean reward),
    max(0, w1 + w3 * t) as `predict` takes it, is above 0 (at 0 every mean reward gets one chance)."""
    return weights[1] + weights[3] * progress > 0.0


Stamp = tuple[int, int, int]  # a file's inode, mtime (ns) and size: another stamp, another content


def _stamp(st: os.stat_result) -> Stamp:
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class CalibrationLoader:
    """`load_calibration(path=None)`: the calibration file (`CALIBRATION_FILE` by default) as
    {"levels": {level: {players: {"weights": ...}}}}; {} when there is none, or it is damaged (the
    server's fault, not the request's: logged, and win_prob is null).

    The parsed file is kept while its inode, mtime and size stay the same, and read again when they
    change (`kashgar calibrate` moved a new file over it, or it was mended, or it appeared). They are
    looked at (one os.stat) at most once every `check_s` seconds (CHECK_S) per file, not on every
    call: a served request asks for it each time, and a new fit can wait a second to take effect.
    `cache_clear()` forgets every file read."""

    MAX_FILES = 8
    CHECK_S = 1.0

    def __init__(self, check_s: float = CHECK_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.check_s = check_s
        self.clock = clock
        # a file's name to its stamp when read (None: there was none), its content, and when it was last looked at
        self._docs: dict[str, tuple[Stamp | None, dict[str, Any], float]] = {}
        self._lock = threading.Lock()

    def __call__(self, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        name = os.fspath(path or CALIBRATION_FILE)
        now = self.clock()
        hit = self._docs.get(name)
        if hit is not None and now - hit[2] < self.check_s:
            return hit[1]
        try:
            stamp: Stamp | None = _stamp(os.stat(name))
        except FileNotFoundError:  # no fits: every win_prob is None
            stamp = None
        except OSError as exc:
            log.error("calibration file %s unreadable (%s): win_prob is null until it is mended", name, exc)
            return {}
        if hit is not None and hit[0] == stamp:
            doc = hit[1]
        elif stamp is None:
            doc = {}
        else:
            stamp, doc = self._read(name, stamp)
        with self._lock:
            if len(self._docs) >= self.MAX_FILES and name not in self._docs:
                self._docs.clear()
            self._docs[name] = (stamp, doc, now)  # a damaged file too: logged once, read again once changed
        return doc

    @staticmethod
    def _read(name: str, stamp: Stamp) -> tuple[Stamp | None, dict[str, Any]]:
        """The stamp of the file read (its own, should it be replaced since the stat; None: removed
        since) and its content."""
        try:
            with open(name, encoding="utf-8") as fh:
                stamp = _stamp(os.fstat(fh.fileno()))
                doc = json.load(fh)
        except FileNotFoundError:  # removed since the stat
            return None, {}
        except (OSError, ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
            log.error("calibration file %s unreadable (%s): win_prob is null until it is mended", name, exc)
            return stamp, {}
        if not isinstance(doc, dict):
            log.error("calibration file %s is not a JSON object: win_prob is null until it is mended", name)
            return stamp, {}
        return stamp, doc

    def cache_clear(self) -> None:
        with self._lock:
            self._docs.clear()


load_calibration = CalibrationLoader()


def preset_of(level: Any) -> dict[str, Any]:
    """The settings of a level's search that a fit holds for (`Level.config`)."""
    return level.config.to_dict()


def current_preset(stored: dict[str, Any]) -> dict[str, Any]:
    """A preset saved with a fit or records (`preset_of` when they were made), as the search's
    settings now: a setting added since, absent from `stored`, at its default (which searches as
    before it existed)."""
    from bots.ismcts_bot import ISMCTSConfig

    return {**ISMCTSConfig().to_dict(), **stored}


def same_preset(stored: Any, level: Any) -> bool:
    """Whether a preset saved with a fit or records is `level`'s search now (`current_preset`), so
    that a new setting does not void every fit."""
    return isinstance(stored, dict) and current_preset(stored) == preset_of(level)


_FOUND: dict[tuple[str, int, str | None], tuple[dict[str, Any], Any, list[float] | None]] = {}


def weights_for(level: Any, players: int, path: str | None = None) -> list[float] | None:
    """The fitted weights of `level` (a `bots.levels.Level`) with `players` seats; None when none
    were fitted for it, they were fitted for other settings of its search (a changed preset), or
    under another model than this code's (`MODEL`: the weights would mean something else). Looked
    up once per level, player count and calibration file read (`load_calibration`)."""
    doc = load_calibration(path)
    key = (level.name, players, path)
    found = _FOUND.get(key)
    if found is not None and found[0] is doc and found[1] == level.config:
        return found[2]
    weights = _weights_in(doc, level, players)
    if len(_FOUND) > 256:
        _FOUND.clear()
    _FOUND[key] = (doc, level.config, weights)
    return weights


def _weights_in(doc: dict[str, Any], level: Any, players: int) -> list[float] | None:
    levels = doc.get("levels")
    entry = levels.get(level.name, {}) if isinstance(levels, dict) else None
    entry = entry.get(str(players)) if isinstance(entry, dict) else None
    if not isinstance(entry, dict) or not same_preset(entry.get("preset"), level):
        return None
    model = entry.get("model")
    if model not in (MODEL, MODEL_ORDER):
        return None
    weights = entry.get("weights")
    if (not isinstance(weights, list) or len(weights) != N_WEIGHTS + (players - 1 if model == MODEL_ORDER else 0)
            or not all(isinstance(w, (int, float)) and math.isfinite(w) for w in weights)):
        log.error("calibration of %s with %d players is malformed: win_prob is null", level.name, players)
        return None
    return [float(w) for w in weights]


def win_prob(weights: list[float] | None, reward: float | None, progress: float, order: int = 0) -> float | None:
    """`predict` for a reported mean reward (None when there is no statistic or no fit)."""
    if weights is None or reward is None or math.isnan(reward):
        return None
    return predict(weights, reward, progress, order)
