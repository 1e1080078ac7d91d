"""What the tests read of a `kashgar` command's output."""

from __future__ import annotations

import pytest


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's error: one line on stderr, no traceback."""
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()
