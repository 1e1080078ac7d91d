"""Self-play positions for the lab's fits (`kashgar train`, `kashgar fit-eval`): seeded games played
by any bot spec, with what the caller records at every k-th turn start, in parallel processes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from lab.arena import cached_bot, imap_processes, new_state

T = TypeVar("T")
R = TypeVar("R")


def play_recording(policy: str, players: int, deal_seed: int, move_seed: int, every: int,
                   record: Callable[[Any], T]) -> tuple[list[T], int]:
    """One game of `policy` in every seat, dealt from `deal_seed`, decision k chosen with seed
    `move_seed + k`: `record(state)` at every `every`-th turn start (no decision pending), and the
    winner."""
    st = new_state("kashgar", players, deal_seed, None)
    bot = cached_bot(policy)
    rows: list[T] = []
    k = 0
    turn_starts = 0
    while not st.is_terminal():
        if st.pending() == 0:
            if turn_starts % every == 0:
                rows.append(record(st))
            turn_starts += 1
        st.apply(bot.choose(st, seed=(move_seed + k) & 0x7FFFFFFF))
        k += 1
    return rows, int(st.winner())


def _indexed(task: tuple[int, Callable[[Any], Any], Any]) -> tuple[int, Any]:
    i, fn, arg = task
    return i, fn(arg)


def in_order(fn: Callable[[T], R], tasks: list[T], workers: int) -> Iterator[R]:
    """`fn` over `tasks` in `workers` processes (`lab.arena.imap_processes`: Ctrl-C stops them all),
    the results in the tasks' order, each as soon as those before it are in."""
    waiting: dict[int, R] = {}
    nxt = 0
    for i, r in imap_processes(_indexed, [(i, fn, t) for i, t in enumerate(tasks)], workers):
        waiting[i] = r
        while nxt in waiting:
            yield waiting.pop(nxt)
            nxt += 1
