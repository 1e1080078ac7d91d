"""The `kashgar` console command."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from types import FrameType, TracebackType

_hook = sys.excepthook

#: Seconds a command has, after Ctrl-C, to end by its own KeyboardInterrupt (one line, status 130)
#: before it is ended here: code that catches every exception (a library's import, a finalizer)
#: can swallow the KeyboardInterrupt, and the command would go on as if no key was pressed. The
#: commands that stop worker processes on Ctrl-C set their own handler meanwhile
#: (`kashgar_cli.interrupt.workers_ignore_sigint`), so they take the time they need.
GRACE_S = 2.0
_ending = threading.Event()


def _interrupted_while_loading(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    """Ctrl-C before `main` runs (while the command's modules load, which takes longer on a loaded
    machine) ends the command as Ctrl-C does later: one line and status 130, no traceback."""
    if issubclass(kind, KeyboardInterrupt):
        sys.stderr.write("kashgar: interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    _hook(kind, value, tb)


def _end_after_grace() -> None:
    time.sleep(GRACE_S)
    os.write(2, b"kashgar: interrupted\n")
    os._exit(130)


def _ctrl_c(signum: int, frame: FrameType | None) -> None:
    """Python's own Ctrl-C (a KeyboardInterrupt here), and the command ends within GRACE_S
    whatever becomes of it."""
    if not _ending.is_set():
        _ending.set()
        threading.Thread(target=_end_after_grace, name="kashgar-ctrl-c", daemon=True).start()
    signal.default_int_handler(signum, frame)


# Only in the `kashgar` command itself (its console script, or `python -m kashgar_cli.main`), not in
# a program that imports this package; a Ctrl-C the command was started to ignore stays ignored.
if os.path.basename(sys.argv[0] if sys.argv else "") == "kashgar" or sys.argv[:1] == ["-m"]:
    sys.excepthook = _interrupted_while_loading
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _ctrl_c)
