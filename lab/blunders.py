"""How often a bot throws away points: positions where fulfilling a contract gains at least
`min_vp` VP and a long reference search takes a contract, clearly preferring it to skipping,
and the share of a bot's choices there that skip (`kashgar blunders`), overall and by the
score (the player to move even, ahead or behind). The low levels are meant to be weak the human
way; a skipped sure contract is the plainest random blunder."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import engine_ext
from bots.base import log_odds
from lab.bots import make_bot

SCORES = ("even", "ahead", "behind")  # the mover's VP minus the best other seat's: within 3, 4+ up, 4+ down
GAMES_PER_POSITION = 50  # how far `contract_positions` looks before it gives up


@dataclass
class SkipRate:
    """A bot's choices on the contract positions: how many, and how many skipped the contract,
    overall and by the score (`by_score[s] = [choices, skips]`)."""

    spec: str
    by_score: dict[str, list[int]] = field(default_factory=lambda: {s: [0, 0] for s in SCORES})

    @property
    def choices(self) -> int:
        return sum(n for n, _ in self.by_score.values())

    @property
    def skips(self) -> int:
        return sum(k for _, k in self.by_score.values())

    @property
    def rate(self) -> float:
        return self.skips / self.choices if self.choices else 0.0


def _skip_code(game: Any) -> int | None:
    return next((c for c in game.legal_codes() if game.decision(c).kind == "skip"), None)


def _fulfil_gain(game: Any) -> int:
    """The most VP one fulfil decision gains the player to move (0: none can be fulfilled)."""
    me, best = game.current_player, 0
    for d in game.legal():
        if d.kind == "fulfil":
            after = game.clone()
            after.apply(d)
            best = max(best, after.vp(me) - game.vp(me))
    return best


def score_of(game: Any) -> str:
    """The score as the player to move sees it: one of `SCORES`."""
    me = game.current_player
    lead = game.vp(me) - max(game.vp(p) for p in range(game.players) if p != me)
    return "ahead" if lead >= 4 else "behind" if lead <= -4 else "even"


def contract_positions(count: int, *, seed: int = 1000, min_vp: int = 3, gap: float = 0.5,
                       reference_iterations: int = 5000, per_game: int = 2,
                       players: int = 2) -> list[dict[str, Any]]:
    """`count` full states (documents) from random play, games seeded `seed`, `seed + 1`, ...:
    at most `per_game` from a game, each where a fulfil gains `min_vp` VP or more, `skip` is legal,
    and a search of `reference_iterations` chooses a fulfil whose mean reward is at least `gap`
    log-odds above skip's (skip unvisited counts as clearly worse). ValueError when
    `GAMES_PER_POSITION` games a position have not found them."""
    reference = make_bot(f"ismcts:iterations={reference_iterations}")
    out: list[dict[str, Any]] = []
    for game_seed in range(seed, seed + GAMES_PER_POSITION * count):
        game, rng, found = engine_ext.new_game(players, game_seed), random.Random(game_seed), 0
        while not game.is_terminal and found < per_game:
            skip = _skip_code(game)
            if skip is not None and _fulfil_gain(game) >= min_vp:
                an = reference.analyse(game, seed=1)
                best = max(an.alternatives, key=lambda a: a.visits)
                skipped = next(a for a in an.alternatives if a.code == skip)
                if game.decision(best.code).kind == "fulfil" and (
                        not skipped.visits or log_odds(best.mean_reward) - log_odds(skipped.mean_reward) >= gap):
                    out.append(game.to_json())
                    found += 1
                    if len(out) == count:
                        return out
            game.apply(rng.choice(game.legal_codes()))
    raise ValueError(f"only {len(out)} of {count} positions in {GAMES_PER_POSITION * count} games from seed "
                     f"{seed} (min_vp {min_vp}, gap {gap})")


def skip_rate(spec: str, positions: list[dict[str, Any]], seeds: int = 20) -> SkipRate:
    """How often bot `spec`, searching with seeds 0 .. `seeds - 1` on each position, skips."""
    bot = make_bot(spec)
    out = SkipRate(spec)
    for doc in positions:
        game = engine_ext.from_json(doc)
        skip, cell = _skip_code(game), out.by_score[score_of(game)]
        for s in range(seeds):
            cell[0] += 1
            cell[1] += bot.analyse(game, seed=s).code == skip
    return out
