"""The progress of long commands on a pipe: plain lines at most every `lines_every` seconds and a
last one at the end, or nothing; never a bar's carriage returns (`kashgar_cli.progress`)."""

from __future__ import annotations

import io

from kashgar_cli.progress import Progress


class Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_a_pipe_gets_a_line_per_interval_and_a_last_one() -> None:
    out = Pipe()
    bar = Progress(4, unit="decision", desc="review", lines_every=0.0, stream=out)
    for done in range(1, 5):
        bar.update(done)
    bar.close()
    lines = out.getvalue().splitlines()
    assert [x.split(",")[0] for x in lines] == [f"review: {n} of 4 decisions ({25 * n}%)" for n in range(1, 5)]
    assert "\r" not in out.getvalue()


def test_a_long_interval_leaves_only_the_last_line() -> None:
    out = Pipe()
    bar = Progress(3, unit="game", lines_every=3600.0, stream=out)
    for done in range(1, 4):
        bar.update(done)
    bar.close()
    assert out.getvalue().splitlines() == [out.getvalue().splitlines()[0]]
    assert out.getvalue().startswith("3 of 3 games (100%), ")


def test_without_lines_a_pipe_gets_nothing() -> None:
    out = Pipe()
    bar = Progress(3, stream=out)
    assert not bar.enabled
    bar.update(3)
    bar.close()
    assert out.getvalue() == ""
