"""Ctrl-C during a run with worker processes: one KeyboardInterrupt, in this process only."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

INTERRUPTED = 130  # the exit status of a command stopped by SIGINT (128 + 2), as the shells use


@contextmanager
def workers_ignore_sigint() -> Iterator[None]:
    """Within the block, SIGINT (sent by Ctrl-C to the whole process group) raises KeyboardInterrupt
    in this process and is ignored by the processes forked from it meanwhile: their pool is
    terminated by this one (leaving the `with Pool` block), and none prints a traceback of its own."""
    me = os.getpid()

    def handler(signum: int, frame: FrameType | None) -> None:
        if os.getpid() == me:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def say_interrupted(command: str, note: str = "", after_bar: bool = True) -> None:
    """The line Ctrl-C leaves on stderr (first ending the line of a progress bar, if one ran)."""
    newline = "\n" if after_bar else ""
    name = f"kashgar {command}" if command else "kashgar"  # no command yet: Ctrl-C while it loads
    print(f"{newline}{name}: interrupted{note}", file=sys.stderr)
