"""Let the service hold the rules: a game of Kashgar dealt by POST /games and played on by POST
/apply, the bots' decisions from POST /suggest on their own seat's view; your program keeps the
full state between calls (the service keeps nothing). Seat 0 is "you": here it takes the hint
a weaker level gives it.

    python docs/examples/service_game.py --url http://127.0.0.1:8000      # KASHGAR_API_KEY: the key

The last line printed is the outcome as JSON."""

from __future__ import annotations

import argparse
import json

from kashgar_client import KashgarClient


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--seed", type=int, default=1, help="the deal (leave it out in a real game: a random one)")
    p.add_argument("--level", default="novice", help="the bots' level (GET /levels)")
    p.add_argument("--max-decisions", type=int, default=0, help="stop after this many (0: play to the end)")
    args = p.parse_args(argv)

    api = KashgarClient(args.url, timeout=30)  # the API key: KASHGAR_API_KEY (or api_key=...)
    state = api.new_game(players=args.players, seed=args.seed).state  # the full state: keep it on your side
    assert state is not None
    decisions = 0
    while True:
        position = api.legal(state)  # whose decision it is, and the legal ones
        if position.is_terminal or (args.max_decisions and decisions >= args.max_decisions):
            break
        seat = position.current_player
        # Each seat decides on what it can see: its view of the full state (POST /legal with observer).
        view = api.legal(state, observer=seat).state
        assert view is not None
        level = "novice" if seat == 0 else args.level  # seat 0 ("you") plays the novice's hint
        suggestion = api.suggest(view, level=level, seed=args.seed + decisions)  # a job is followed to its end
        applied = api.apply(state, suggestion.decision_text)  # on the full state: real draws, not made-up ones
        print(f"seat {seat}: {suggestion.description}")
        for event in applied.events:
            print(f"    {event['description']}")
        state = applied.state
        assert state is not None
        decisions += 1
    print(json.dumps({"decisions": decisions, "is_terminal": position.is_terminal, "vp": position.vp,
                      "winner": position.winner, "turn": state["turn"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
