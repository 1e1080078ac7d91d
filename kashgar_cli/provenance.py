"""Where a benchmark or tournament result came from, recorded in its JSON."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import sys
from typing import Any


def provenance(**extra: Any) -> dict[str, Any]:
    """The command line, the UTC time, the machine's core count and the Python version, then `extra`."""
    return {"command": " ".join(sys.argv),
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "cores": os.cpu_count(), "python": platform.python_version(), **extra}
