"""One-line errors of the `kashgar` commands, and the argparse types that check values up front.

A subcommand refuses bad input by raising `CliError`; `kashgar_cli.main.main` prints it as
argparse does (`kashgar SUB: error: MESSAGE` on stderr) and exits with its status (2 unless
given). The argparse types below do the same for single options at parse time, before any game.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.config import Settings

# An output file's directory must exist: a typo then fails at once instead of after every game,
# and never makes a stray directory.
OUT_HELP = " (its directory must exist)"


class CliError(SystemExit):
    """A one-line error of a subcommand, exit status `status` (2: bad usage). A SystemExit, so
    that a subcommand's `run` called on its own still stops with the message, not a traceback."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def error_line(command: str, message: str) -> str:
    """The line an error of `kashgar COMMAND` prints, as argparse writes its own."""
    return f"kashgar {command}: error: {message}"


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= `minimum`."""

    def parse(text: str) -> int:
        try:
            value: int | None = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"want a whole number >= {minimum}, not {text!r}")
        return value

    parse.__name__ = f"int>={minimum}"
    return parse


positive_int = at_least(1)
nonneg_int = at_least(0)


def most_processes() -> int:
    """The most worker processes `-j` takes: 4 per core, and at least 64 (each is a whole Python
    process with the engine loaded: thousands of them only thrash the machine, or exhaust it)."""
    return max(64, 4 * (os.cpu_count() or 1))


def process_count(text: str) -> int:
    """An argparse type: a number of worker processes, 1..`most_processes()`."""
    value = positive_int(text)
    if value > most_processes():
        raise argparse.ArgumentTypeError(f"want at most {most_processes()} processes (4 per core of this machine, "
                                         f"at least 64), not {text!r}")
    return value


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1..65535."""
    try:
        value: int | None = int(text)
    except ValueError:
        value = None
    if value is None or not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"want a port 1..65535, not {text!r}")
    return value


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def check_redis_url(url: str, name: str) -> None:
    """A Redis URL as redis-py reads it (scheme redis://, rediss:// or unix://, a numeric port),
    else `CliError` naming where it came from (`name`: the option or the environment variable)."""
    from redis.connection import parse_url

    # The URL itself is not repeated: it may hold a password.
    if not url.startswith(REDIS_SCHEMES):
        scheme, sep, _ = url.partition("://")
        given = f"{scheme}://..." if sep else "one without a scheme"
        raise CliError(f"{name}: want a {', '.join(REDIS_SCHEMES[:-1])} or {REDIS_SCHEMES[-1]} URL, not {given}")
    try:
        parse_url(url)
    except ValueError as exc:  # a port or a query setting it cannot read
        raise CliError(f"{name}: {exc}") from None


def float_above(bound: float) -> Callable[[str], float]:
    """An argparse type: a finite number > `bound`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > bound):
            raise argparse.ArgumentTypeError(f"want a number > {bound:g}, not {text!r}")
        return value

    parse.__name__ = f"float>{bound:g}"
    return parse


def output_file(path: str) -> str:
    """An argparse type: a file that can be written: its directory exists and is writable, and it
    is not a directory itself."""
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"directory {folder!r} does not exist")
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{path!r} is a directory")
    if not os.access(path if os.path.exists(path) else folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {path!r}")
    return path


def output_file_or_stdout(path: str) -> str:
    """An argparse type: '-' (stdout) or an `output_file`."""
    return path if path == "-" else output_file(path)


def input_file(path: str) -> str:
    """An argparse type: a file that can be read."""
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"no such file: {path!r}")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"cannot read {path!r}")
    return path


def use_cards(given: str | None, environ: Mapping[str, str], option: str = "argument --cards") -> str | None:
    """The card file a server or worker is to play with: `given` (`--cards`), else KASHGAR_CARDS;
    checked before anything starts (`CliError` naming the card, the field and the line), and its
    absolute path returned (None: the package's), for KASHGAR_CARDS of every process it starts."""
    path = given or environ.get("KASHGAR_CARDS", "").strip()
    if not path:
        return None
    from engine_ext.carddata import CardDataError, load_file

    try:
        load_file(path)
    except CardDataError as exc:
        raise CliError(f"{option if given else 'KASHGAR_CARDS'}: {exc.message}") from None
    return os.path.abspath(path)


def service_settings(environ: Mapping[str, str]) -> Settings:
    """The service's settings from `environ` (`Settings.from_env`), or `CliError` naming the
    `KASHGAR_*` variable it cannot read, before a server or worker starts on them."""
    from service.config import Settings

    try:
        return Settings.from_env(environ)
    except ValueError as exc:  # its message names the variable: KASHGAR_NAME='raw': why
        raise CliError(str(exc)) from None


def check_seeds(seed: int, games: int, last: int) -> None:
    """Games seeded `seed`, `seed` + 1, ... `seed` + `games` - 1 must all be seeds 0..`last`."""
    if not 0 <= seed <= last - (games - 1):
        raise CliError(f"argument --seed: want 0..{last - (games - 1)} (game k plays seed + k), not {seed}")
