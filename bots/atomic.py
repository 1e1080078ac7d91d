"""Files written whole or not at all: a new file beside the old one, synced, then moved over it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TextIO


def write_whole(path: str | os.PathLike[str], write: Callable[[TextIO], None]) -> None:
    """Write the text file `path` by `write(fh)` so that a reader sees the old file or the new one,
    never a part: `write` fills a temporary file beside it (`path.tmp-PID`), which is synced and
    renamed over `path`. A failure or an interrupt (Ctrl-C included) leaves the old file as it
    was and no temporary file behind, and is raised again."""
    path = os.fspath(path)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself, durable too (best effort)
        folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
