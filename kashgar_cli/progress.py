"""Progress of the long commands (review, arena, tune, calibrate, selfplay, fuzz, bench), on stderr.

On a terminal a bar (tqdm, a base dependency) shows the count, the rate and the time left. On a pipe
or a file no bar is drawn (a log holds no carriage-return lines); a command that asks for them
(`lines_every`, as `kashgar review` does) writes instead one plain line every few seconds, such as
`review: 12 of 96 decisions (13%), 41 s`, so a log shows that it is alive.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from tqdm import tqdm


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        return 0


class Progress:
    """Progress over `total` items: `update(done, note)` moves it to `done`, `close()` ends it.

    `enabled=False` or a total of 0 show nothing. On a stream that is not a terminal nothing is shown
    unless `lines_every` (seconds) is given: then one line every `lines_every` seconds at most, and a
    last one at `close()` if the count moved since the line before."""

    def __init__(self, total: int, enabled: bool = True, unit: str = "game", desc: str = "",
                 lines_every: float | None = None, stream: TextIO | None = None) -> None:
        self.total = total
        self.unit = unit
        self.desc = desc
        self.stream = stream if stream is not None else sys.stderr
        on = enabled and total > 0
        terminal = self.stream.isatty()
        self.bar: tqdm | None = None
        if on and terminal:
            # a pseudo-terminal may say it has 0 columns and 0 rows (tqdm then hides its bar): 80 by 24
            sized = _columns(self.stream) > 0
            self.bar = tqdm(total=total, unit=unit, desc=desc or None, file=self.stream, dynamic_ncols=sized,
                            ncols=None if sized else 80, nrows=None if sized else 24, leave=True)
        self.lines_every = lines_every if on and not terminal else None
        self.start = time.monotonic()
        self.last_line = self.start
        self.done = 0
        self.written = 0

    @property
    def enabled(self) -> bool:
        return self.bar is not None or self.lines_every is not None

    @property
    def count(self) -> int:
        """How many items are done so far."""
        return self.bar.n if self.bar is not None else self.done

    def write(self, line: str, file: TextIO | None = None) -> None:
        """A line of output (default stdout) that a bar, if drawn, moves below."""
        out = file if file is not None else sys.stdout
        if self.bar is not None:
            self.bar.write(line, file=out)
        else:
            print(line, file=out)

    def update(self, done: int, note: str = "") -> None:
        if self.bar is not None:
            if note:
                self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(done - self.bar.n)
            return
        self.done = done
        if self.lines_every is not None and time.monotonic() - self.last_line >= self.lines_every:
            self._line(note)

    def _line(self, note: str = "") -> None:
        now = time.monotonic()
        self.last_line = now
        self.written = self.done
        pct = 100 * self.done / self.total if self.total else 100.0
        head = f"{self.desc}: " if self.desc else ""
        tail = f", {note}" if note else ""
        self.stream.write(f"{head}{self.done} of {self.total} {self.unit}s ({pct:.0f}%), "
                          f"{now - self.start:.0f} s{tail}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.lines_every is not None and self.done != self.written:
            self._line()
