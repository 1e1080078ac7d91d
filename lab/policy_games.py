"""Games of a search bot in every seat with the search's root visits at every decision, for the
learned policy (`lab.policy`): one JSON line a game, its deal seed, players, winner, VP and its
decisions in order, each [code, visits, value] with visits [[code, count], ...] over the legal
decisions and value the search's mean reward of the chosen one for the mover (both null where only
one was legal). The states are replayed from the deal seed and the codes."""

from __future__ import annotations

import json
import sys
from typing import Any

from lab.arena import cached_bot, new_state


def play_game(spec: str, players: int, deal: int, move_seed: int) -> dict[str, Any]:
    """One game of `spec` in every seat, dealt from `deal`, decision k seeded as `lab.arena.play_out`
    seeds it; every decision's code and the search's root visits."""
    st = new_state("kashgar", players, deal, None)
    bot = cached_bot(spec)
    moves: list[list[Any]] = []
    k = 0
    while not st.is_terminal():
        a = bot.analyse(st, seed=(move_seed + k * 104729) & 0x7FFFFFFF)
        searched = a.iterations > 0
        visits = [[alt.code, alt.visits] for alt in a.alternatives] if searched else None
        moves.append([a.code, visits, round(a.mean_reward, 5) if searched else None])
        st.apply(a.code)
        k += 1
    return {"deal": deal, "players": players, "winner": int(st.winner()),
            "vp": [int(st.vp(p)) for p in range(players)], "moves": moves}


def main(argv: list[str]) -> int:
    """`python -m lab.policy_games SPEC PLAYERS FIRST_DEAL GAMES OUT.jsonl`: appends a line a game."""
    spec, players, first, games, out = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), argv[4]
    for g in range(games):
        deal = first + g
        rec = play_game(spec, players, deal, deal * 7919)
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
