"""How often a bot throws away points: positions where fulfilling a contract gains at least
`min_vp` VP and a long reference search values it clearly above skipping, and the share of a
bot's choices there that skip it (`kashgar blunders`). The low levels are meant to be weak the
human way; a skipped sure contract is the plainest random blunder."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import engine_ext
from bots.levels import make_bot


@dataclass
class SkipRate:
    """A bot's choices on the contract positions: how many, and how many skipped the contract."""

    spec: str
    choices: int
    skips: int

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


def contract_positions(count: int, *, seed: int = 1000, min_vp: int = 3, gap: float = 0.15,
                       reference_iterations: int = 5000, per_game: int = 2,
                       players: int = 2) -> list[dict[str, Any]]:
    """`count` full states (documents) from random play, games seeded `seed`, `seed + 1`, ...:
    at most `per_game` from a game, each where a fulfil gains `min_vp` VP or more, `skip` is legal
    and a search of `reference_iterations` values the best well-visited move (50 visits or more)
    at least `gap` above `skip`."""
    engine = engine_ext.get_engine(engine_ext.compiled_available())
    reference = make_bot(f"ismcts:iterations={reference_iterations}")
    out: list[dict[str, Any]] = []
    game_seed = seed
    while len(out) < count:
        game, rng, found = engine.new_game(players, game_seed), random.Random(game_seed), 0
        while not game.is_terminal and found < per_game and len(out) < count:
            skip = _skip_code(game)
            if skip is not None and _fulfil_gain(game) >= min_vp:
                alts = reference.analyse(game, seed=1).alternatives
                top = max(a.mean_reward for a in alts if a.visits >= 50)
                if top - next(a.mean_reward for a in alts if a.code == skip) >= gap:
                    out.append(game.to_json())
                    found += 1
            game.apply(rng.choice(game.legal_codes()))
        game_seed += 1
    return out


def skip_rate(spec: str, positions: list[dict[str, Any]], seeds: int = 20) -> SkipRate:
    """How often bot `spec`, searching with seeds 0 .. `seeds - 1` on each position, skips."""
    bot = make_bot(spec)
    engine = engine_ext.get_engine(engine_ext.compiled_available())
    skips = choices = 0
    for doc in positions:
        game = engine.from_json(doc)
        skip = _skip_code(game)
        for s in range(seeds):
            choices += 1
            skips += bot.analyse(game, seed=s).code == skip
    return SkipRate(spec, choices, skips)
