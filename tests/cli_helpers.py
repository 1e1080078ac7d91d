"""What the tests read of a `kashgar` command's output."""

from __future__ import annotations

import re
import signal

import pytest

from kashgar_cli.main import main


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

def refused(argv: list[str], capsys: pytest.CaptureFixture[str], status: int = 2) -> str:
    """Run `kashgar ARGV` here: it must exit `status` with its error as the last line on stderr (after
    argparse's usage, if any) and no traceback. Returns that line."""
    code: int | str | None
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == status, err
    assert out == "" and "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert re.match(rf"kashgar {argv[0]}: error: \S", line), err
    assert [x for x in err.splitlines() if "error" in x] == [line]
    return line
