"""`kashgar`: the console entry point. Each subcommand lives in its own module.

A subcommand module defines `register(subparsers) -> None`, which adds its parser and sets
`func` (a callable taking the parsed args and returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from kashgar_cli.errors import CliError, error_line
from kashgar_cli.interrupt import INTERRUPTED, say_interrupted

# Modules that provide subcommands; each is imported only if present.
SUBCOMMAND_MODULES = [
    "kashgar_cli.bench",
    "kashgar_cli.selfplay",
    "kashgar_cli.fuzz",
    "kashgar_cli.arena",
    "kashgar_cli.blunders",
    "kashgar_cli.tune",
    "kashgar_cli.calibrate",
    "kashgar_cli.fit_eval",
    "kashgar_cli.tune_eval",
    "kashgar_cli.train",
    "kashgar_cli.serve",
    "kashgar_cli.worker",
    "kashgar_cli.play",
    "kashgar_cli.replay",
    "kashgar_cli.suggest",
    "kashgar_cli.engine",
    "kashgar_cli.review",
    "kashgar_cli.rating",
]


def installed_version() -> str:
    """The installed package's version (its metadata); "unknown" when run from sources not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kashgar-ai")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kashgar", description="Kashgar AI: engine, bots and service")
    parser.add_argument("--version", action="version", version=f"kashgar {installed_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in SUBCOMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a subcommand; its `CliError` is one line on stderr and its exit status. Ctrl-C is one
    line and exit status 130 in every command (those with worker processes say more themselves)."""
    args = argparse.Namespace(command="")
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except CliError as exc:
        print(error_line(args.command, exc.message), file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        say_interrupted(args.command, after_bar=False)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
