"""What the tests read of a `kashgar` command's output."""

from __future__ import annotations

import signal

import pytest


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's error: one line on stderr, no traceback."""
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def sigint_as_at_a_terminal() -> None:
    """A `preexec_fn` that gives the child SIGINT's default action, as a shell at a terminal does.

    A process inherits an ignored SIGINT, and a non-interactive shell ignores it in every command it
    starts in the background (`scripts/test &`): a test run started that way passed SIG_IGN on to the
    commands it Ctrl-C'd, and Python keeps an ignored SIGINT ignored (no KeyboardInterrupt), so they
    ran on past the test's timeout. The Ctrl-C tests stand for a person at a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
