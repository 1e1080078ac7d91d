"""Progress bars of the long commands (arena, tune, calibrate, selfplay, fuzz), drawn by tqdm.

A bar shows the count, the rate and the time left on stderr, and only on a terminal: with stderr
redirected to a file (a log), nothing is drawn, so logs hold no carriage-return lines.
"""

from __future__ import annotations

import sys

from tqdm import tqdm


class Progress:
    """A bar over `total` items: `update(done, note)` moves it to `done`, `close()` ends its line.
    `enabled=False`, a total of 0 or a stderr that is not a terminal draw nothing."""

    def __init__(self, total: int, enabled: bool = True, unit: str = "game", desc: str = "") -> None:
        self.total = total
        self.bar = tqdm(total=total, unit=unit, desc=desc or None, file=sys.stderr, dynamic_ncols=True,
                        disable=True if not enabled or total <= 0 else None, leave=True)

    @property
    def enabled(self) -> bool:
        return not self.bar.disable

    def update(self, done: int, note: str = "") -> None:
        if self.bar.disable:
            return
        if note:
            self.bar.set_postfix_str(note, refresh=False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        self.bar.close()
