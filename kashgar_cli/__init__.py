"""The `kashgar` console command."""

from __future__ import annotations

import os
import sys
from types import TracebackType

_hook = sys.excepthook


def _interrupted_while_loading(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    """Ctrl-C before `main` runs (while the command's modules load, which takes longer on a loaded
    machine) ends the command as Ctrl-C does later: one line and status 130, no traceback."""
    if issubclass(kind, KeyboardInterrupt):
        sys.stderr.write("kashgar: interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    _hook(kind, value, tb)


# Only in the `kashgar` command itself (its console script, or `python -m kashgar_cli.main`), not in
# a program that imports this package.
if os.path.basename(sys.argv[0] if sys.argv else "") == "kashgar" or sys.argv[:1] == ["-m"]:
    sys.excepthook = _interrupted_while_loading
