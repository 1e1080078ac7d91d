"""A person's rating on the ladder's Elo scale, from the games they played against the bots.

The model. Each game the person played is one result against each other seat: 1 where the person
finished above that seat, 0 where below, 1/2 where level (the winner, tie-break included, finishes
above every other seat; the other seats are placed by VP). A bot seat's Elo is its level's
measured `elo` (the level file, `bots/data/levels.toml`: novice 0 to master 1033), or N for a seat
of level `elo:N` (a bot that played at Elo N, the two levels around it mixed: `bots/strength.py`).
The person's Elo `r` scores `s` against a seat of Elo `e` with the logistic Elo model, as the
ladder was measured:

    P(the person finishes above the seat) = 1 / (1 + 10 ** (-(r - e) / 400))

The pairs of one game are not independent (a person who wins a 4-player game beats all three), so
each pair of an `n`-player game counts with weight `3 / (n + 1)` (1 for 2 players, 3/4 for 3, 3/5
for 4): the inverse of the design effect of the `n - 1` pairs under the rank model whose pairwise
marginals are exactly the logistic model (each seat's play its Elo plus an independent Gumbel
noise of scale 400 / ln 10), at equal strength. The coverage test plays games of that model.

The prior: normal, centred on the middle of the ladder (halfway between its weakest and strongest
level's Elo) with a standard deviation of 350 Elo, so that one game says little: a first game won
against novice moves the rating from the middle by about a tenth of the ladder, not to +infinity.

The rating is the maximum of the posterior (MAP: the log-likelihood above, weighted, plus the log
prior; concave, found by Newton's method) and its interval the posterior's profile: the Elo values
where the log posterior is `z**2 / 2` below its maximum (z = 1.96 for 95%), found by bisection on
each side, so an interval can be asymmetric (a person who beat every bot is bounded below by the
games, above mostly by the prior).

* `rate(games, prior_mean=..., prior_sd=350)` -> `Rating` (`elo`, `low`, `high`, `games`).
* `Game`: the Elo of each other seat and the person's score against it; `game_of_result` makes one
  from the seats' levels (None: the person; `elo:N`: a bot at Elo N), their VP and the winner,
  `game_of_record` from a game record (`engine_ext.record`), both raising `RatingError` naming the
  field at fault.
* `ladder(levels)`: the level name -> Elo of the levels that have one; `ladder_middle`;
  `nearest_level`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bots.strength import elo_of_spec

#: Elo points per factor of 10 in the odds (the logistic Elo scale the ladder is measured on).
ELO_SCALE = 400.0
K = math.log(10.0) / ELO_SCALE
#: The prior's standard deviation: a third of the ladder's span on each side of its middle.
PRIOR_SD = 350.0
Z95 = 1.959963984540054


class RatingError(ValueError):
    """Input a rating cannot use; `pointer` is the JSON pointer of the field at fault, within the
    result or record it was read from."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer


@dataclass(frozen=True)
class Game:
    """One game from the person's seat: the Elo of each other seat and the person's score against it
    (1: finished above it, 0: below, 0.5: level)."""

    opponents: tuple[float, ...]
    scores: tuple[float, ...]

    @property
    def players(self) -> int:
        return len(self.opponents) + 1

    @property
    def weight(self) -> float:
        """What each pair of this game counts for (3 / (n + 1), see the module's docstring)."""
        return 3.0 / (self.players + 1)


@dataclass(frozen=True)
class Rating:
    elo: float
    low: float
    high: float
    games: int
    prior_mean: float
    prior_sd: float
    confidence: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        """Whole Elo points, as a rating is read."""
        return {"elo": round(self.elo), "interval": [round(self.low), round(self.high)], "games": self.games,
                "confidence": self.confidence, "prior": {"mean": round(self.prior_mean), "sd": round(self.prior_sd)}}


def expected_score(elo: float, opponent: float) -> float:
    """The logistic Elo model's chance that `elo` finishes above `opponent`."""
    return 1.0 / (1.0 + 10.0 ** (-(elo - opponent) / ELO_SCALE))


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


Terms = list[tuple[float, float, float]]  # (opponent's Elo, score, total weight)


def _terms(games: Iterable[Game]) -> Terms:
    """The games' pairs, those of the same opponent's Elo, score and weight summed into one term (a
    request of thousands of games has a few dozen)."""
    total: dict[tuple[float, float], float] = {}
    for g in games:
        w = g.weight
        for e, s in zip(g.opponents, g.scores, strict=True):
            total[(e, s)] = total.get((e, s), 0.0) + w
    return [(e, s, w) for (e, s), w in total.items()]


def _log_post(r: float, terms: Terms, prior_mean: float, prior_sd: float) -> float:
    total = -0.5 * ((r - prior_mean) / prior_sd) ** 2
    for e, s, w in terms:
        x = K * (r - e)
        total += w * (s * _log_sigmoid(x) + (1.0 - s) * _log_sigmoid(-x))
    return total


def log_posterior(r: float, games: Sequence[Game], prior_mean: float, prior_sd: float) -> float:
    """The log posterior of Elo `r` (up to a constant): the weighted pairwise log-likelihood and the prior."""
    return _log_post(r, _terms(games), prior_mean, prior_sd)


def _slopes(r: float, terms: Terms, prior_mean: float, prior_sd: float) -> tuple[float, float]:
    """The log posterior's first and second derivatives at `r`."""
    d1 = -(r - prior_mean) / prior_sd ** 2
    d2 = -1.0 / prior_sd ** 2
    for e, s, w in terms:
        p = expected_score(r, e)
        d1 += w * K * (s - p)
        d2 -= w * K * K * p * (1.0 - p)
    return d1, d2


def _mode(terms: Terms, prior_mean: float, prior_sd: float) -> float:
    """The posterior's maximum: Newton's method (the log posterior is strictly concave), each step
    at most 200 Elo."""
    r = prior_mean
    for _ in range(200):
        d1, d2 = _slopes(r, terms, prior_mean, prior_sd)
        step = max(-200.0, min(200.0, -d1 / d2))
        r += step
        if abs(step) < 1e-7:
            break
    return r


def _bound(terms: Terms, prior_mean: float, prior_sd: float, mode: float, top: float, drop: float,
           side: float) -> float:
    """The Elo on `side` (-1 below, +1 above) of the mode where the log posterior is `drop` below its
    top. The prior alone falls by `drop` within `sqrt(2 drop)` prior sds, the posterior no later."""
    near, far = mode, mode + side * math.sqrt(2.0 * drop) * prior_sd
    for _ in range(100):
        mid = 0.5 * (near + far)
        if top - _log_post(mid, terms, prior_mean, prior_sd) < drop:
            near = mid
        else:
            far = mid
        if abs(far - near) < 1e-6:
            break
    return 0.5 * (near + far)


def rate(games: Iterable[Game], prior_mean: float, prior_sd: float = PRIOR_SD, confidence: float = 0.95) -> Rating:
    """The person's rating (MAP) and its profile interval at `confidence` (see the module's docstring).
    No games: the prior's centre and its own interval."""
    gs = list(games)
    if prior_sd <= 0 or not math.isfinite(prior_sd) or not math.isfinite(prior_mean):
        raise ValueError("the prior needs a finite centre and a positive standard deviation")
    if not 0 < confidence < 1:
        raise ValueError("confidence is between 0 and 1")
    z = _z(confidence)
    terms = _terms(gs)
    mode = _mode(terms, prior_mean, prior_sd)
    top = _log_post(mode, terms, prior_mean, prior_sd)
    drop = z * z / 2.0
    low = _bound(terms, prior_mean, prior_sd, mode, top, drop, -1.0)
    high = _bound(terms, prior_mean, prior_sd, mode, top, drop, +1.0)
    return Rating(mode, low, high, len(gs), prior_mean, prior_sd, confidence)


def _z(confidence: float) -> float:
    """The two-sided normal quantile of `confidence` (bisection on erf: no scipy in the product)."""
    if abs(confidence - 0.95) < 1e-12:
        return Z95
    lo, hi = 0.0, 10.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if math.erf(mid / math.sqrt(2.0)) < confidence:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# ---- the ladder -----------------------------------------------------------------------------

def ladder(levels: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Level name -> measured Elo, of the levels (as `GET /levels` or `Level.to_dict` gives them)
    that have one."""
    out: dict[str, float] = {}
    for lv in levels:
        elo = lv.get("elo")
        if isinstance(elo, (int, float)) and not isinstance(elo, bool) and math.isfinite(elo):
            out[str(lv["name"])] = float(elo)
    return out


def served_ladder(path: str | None = None) -> dict[str, float]:
    """The ladder of the level file in use ($KASHGAR_LEVELS, else the shipped one)."""
    from bots.levels import load_levels

    return ladder(lv.to_dict() for lv in load_levels(path))


def ladder_middle(elos: Mapping[str, float]) -> float:
    """Halfway between the weakest and the strongest level's Elo: the prior's centre."""
    if not elos:
        raise ValueError("no level has a measured Elo")
    return (min(elos.values()) + max(elos.values())) / 2.0


def nearest_level(elo: float, elos: Mapping[str, float]) -> str:
    """The level whose Elo is nearest `elo` (the weaker of two as near)."""
    if not elos:
        raise ValueError("no level has a measured Elo")
    return min(elos, key=lambda name: (abs(elos[name] - elo), elos[name]))


# ---- games from results and records -------------------------------------------------------

def pairwise_scores(vp: Sequence[int | float], winner: int | None, seat: int) -> list[float]:
    """`seat`'s score against each other seat, in seat order: the winner finishes above every other
    seat (it won the tie-break, if any); the others are placed by VP, level VP a draw. Without a
    winner (-1 or None) every pair is placed by VP."""
    out = []
    for other in range(len(vp)):
        if other == seat:
            continue
        if winner is not None and 0 <= winner < len(vp) and winner in (seat, other):
            out.append(1.0 if winner == seat else 0.0)
        else:
            out.append(1.0 if vp[seat] > vp[other] else 0.0 if vp[seat] < vp[other] else 0.5)
    return out


def _elo_of(level: Any, elos: Mapping[str, float], pointer: str) -> float:
    """A bot seat's Elo: its level's on the ladder, or N of `elo:N` (a bot that played at Elo N:
    `bots.strength`)."""
    if not isinstance(level, str):
        raise RatingError(f"a bot seat's level is a level name or elo:N, not {level!r}", pointer)
    try:
        elo = elo_of_spec(level)
    except ValueError as exc:
        raise RatingError(str(exc), pointer) from None
    if elo is not None:
        return elo
    if level not in elos:
        known = ", ".join(f"{n} ({e:.0f})" for n, e in sorted(elos.items(), key=lambda kv: kv[1]))
        raise RatingError(f"level {level!r} has no measured Elo on this ladder; levels: {known}", pointer)
    return elos[level]


def game_of_result(levels: Sequence[str | None], vp: Sequence[int | float], winner: int | None,
                   elos: Mapping[str, float], levels_at: str = "/levels", vp_at: str = "/vp",
                   winner_at: str = "/winner") -> Game:
    """The game of a result: each seat's level (None: the person's, exactly one; `elo:N`: a bot at
    Elo N), each seat's VP and the winner (None: the most VP, level VP a draw); RatingError naming the field."""
    if not 2 <= len(levels) <= 4:
        raise RatingError(f"a game has 2 to 4 seats, not {len(levels)}", levels_at)
    people = [i for i, lv in enumerate(levels) if lv is None]
    if len(people) != 1:
        raise RatingError(f"one seat is the person's (level null), not {len(people)}", levels_at)
    if len(vp) != len(levels):
        raise RatingError(f"one VP per seat: {len(levels)} seats, {len(vp)} VP", vp_at)
    if winner is not None and not (winner == -1 or 0 <= winner < len(levels)):
        raise RatingError(f"the winner is a seat index from 0 to {len(levels) - 1}, not {winner}", winner_at)
    if winner is not None and 0 <= winner < len(levels) and vp[winner] < max(vp):
        raise RatingError(f"seat index {winner} has fewer VP than another seat: it cannot be the winner", winner_at)
    seat = people[0]
    opponents = tuple(_elo_of(lv, elos, f"{levels_at}/{i}") for i, lv in enumerate(levels) if i != seat)
    return Game(opponents, tuple(pairwise_scores(vp, winner, seat)))


def game_of_record(record: Mapping[str, Any], elos: Mapping[str, float]) -> Game:
    """The game of a record (`engine_ext.record`): its seats' levels (one null: the person) and its
    result (over: `is_terminal`); RatingError naming the field of the record. The result is taken as
    the record writes it (`engine_ext.record.replay` checks that it replays)."""
    players = record.get("players")
    if not isinstance(players, int) or isinstance(players, bool) or not 2 <= players <= 4:
        raise RatingError("a record names its players, 2 to 4", "/players")
    seats = record.get("seats")
    if not isinstance(seats, list) or not seats:
        raise RatingError("the record names no seats' levels (a record of `kashgar play --record` or the "
                          "table names them)", "/seats")
    levels: list[str | None] = [None] * players
    named = [False] * players
    for i, s in enumerate(seats):
        seat = s.get("seat") if isinstance(s, dict) else None
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < players:
            raise RatingError(f"a seat index from 0 to {players - 1}", f"/seats/{i}/seat")
        if named[seat]:
            raise RatingError(f"seat index {seat} is named twice", f"/seats/{i}/seat")
        named[seat] = True
        level = s.get("level")
        if level is not None and not isinstance(level, str):
            raise RatingError(f"a level name, elo:N or null, not {level!r}", f"/seats/{i}/level")
        levels[seat] = level
    if not all(named):
        raise RatingError(f"the record names {sum(named)} of its {players} seats", "/seats")
    if levels.count(None) != 1:
        raise RatingError(f"a rating reads records with one person's seat (level null) and bots at the others; "
                          f"this one has {levels.count(None)} seats of no level", "/seats")
    result = record.get("result")
    if not isinstance(result, dict):
        raise RatingError("the record has no result", "/result")
    if result.get("is_terminal") is not True:
        raise RatingError("the record's game is not over", "/result/is_terminal")
    vp = result.get("vp")
    if not isinstance(vp, list) or len(vp) != players or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in vp):
        raise RatingError(f"the result's vp: one number per seat ({players})", "/result/vp")
    winner = result.get("winner")
    if winner is not None and (not isinstance(winner, int) or isinstance(winner, bool)):
        raise RatingError("the result's winner is a seat index", "/result/winner")
    at = {s["seat"]: i for i, s in enumerate(seats)}
    try:
        return game_of_result(levels, vp, winner, elos, vp_at="/result/vp", winner_at="/result/winner")
    except RatingError as exc:
        if exc.pointer.startswith("/levels/"):  # a seat's level: the record's own field
            seat = int(exc.pointer.rsplit("/", 1)[1])
            raise RatingError(exc.message, f"/seats/{at[seat]}/level") from None
        raise


__all__ = ["Game", "K", "PRIOR_SD", "Rating", "RatingError", "expected_score", "game_of_record", "game_of_result",
           "ladder", "ladder_middle", "log_posterior", "nearest_level", "pairwise_scores", "rate", "served_ladder"]
