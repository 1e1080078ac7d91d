"""`kashgar train`: self-play games, a value network trained on their outcomes, its model file."""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any

from kashgar_cli.errors import OUT_HELP, CliError, at_least, output_file, positive_int, process_count


def _players(text: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"want player counts such as 2 or 2,3,4, not {text!r}") from None
    if not out or any(n not in (2, 3, 4) for n in out):
        raise argparse.ArgumentTypeError(f"player counts are 2, 3 or 4, not {text!r}")
    return out


def _hidden(text: str) -> tuple[int, ...]:
    try:
        out = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"want hidden layer sizes such as 64 or 64,32, not {text!r}") from None
    if not out or len(out) > 3 or any(not 1 <= n <= 256 for n in out):
        raise argparse.ArgumentTypeError(f"one to three hidden layers of 1 to 256 units, not {text!r}")
    return out


def _lam(text: str) -> float:
    try:
        lam = float(text)
    except ValueError:
        lam = math.nan
    if not 0.0 <= lam <= 1.0:
        raise argparse.ArgumentTypeError(f"lambda is a number from 0 to 1, not {text!r}")
    return lam


def command_line(args: argparse.Namespace) -> str:
    """The command that trains this model again (every setting spelled out; the paths as given)."""
    parts = ["kashgar train"]
    if not args.no_play:
        parts += [f"--policy {args.policy}", f"-n {args.games}", f"-p {','.join(map(str, args.players))}",
                  f"--every {args.every}"]
    parts += [f"--data {d}" for d in args.data] + (["--no-play"] if args.no_play else [])
    parts += [f"--seed {args.seed}", f"--hidden {','.join(map(str, args.hidden))}", f"--alpha {args.alpha}",
              f"--max-iter {args.max_iter}"]
    if args.td_lambda is not None:
        parts += [f"--td-lambda {args.td_lambda}", f"--td-model {args.td_model}"]
    return " ".join(parts)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "train", help="train the learned evaluation on self-play games",
        description="Play seeded self-play games with a policy (any bot or level) in parallel, record every "
                    "seat's model input at each turn start with whether that seat won, train a value network "
                    "(scikit-learn MLP; pip install -e '.[train]'), report its held-out log-loss and "
                    "calibration, and write the model file the search evaluates with.")
    p.add_argument("--policy", default="expert", help="bot spec that plays the games (default: expert)")
    p.add_argument("-n", "--games", type=at_least(2), default=1000, help="games to play (some are held out)")
    p.add_argument("-p", "--players", type=_players, default=[2, 3, 4],
                   help="player counts, cycled over the games (default: 2,3,4)")
    p.add_argument("-j", "--workers", type=process_count, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=0, help="game g is dealt from seed + g; seeds the training too")
    p.add_argument("--every", type=positive_int, default=1, help="keep every k-th turn start of a game")
    p.add_argument("--hidden", type=_hidden, default=(32,), help="hidden layer sizes (default: 32)")
    p.add_argument("--alpha", type=float, default=10.0, help="L2 penalty of the MLP (default: 10)")
    p.add_argument("--max-iter", type=positive_int, default=30, help="training epochs at most (default: 30)")
    p.add_argument("--td-lambda", type=_lam, default=None, metavar="LAMBDA",
                   help="learn TD(lambda) targets under --td-model instead of the outcomes (1: the outcomes, "
                        "0: the model's value one kept position on)")
    p.add_argument("--td-model", default="bots/data/value_model.json",
                   help="the model whose values the TD(lambda) targets read (default: the shipped one)")
    p.add_argument("--save-data", type=output_file, default=None,
                   help="write the recorded positions here (.npz), to train again without playing")
    p.add_argument("--data", action="append", default=[],
                   help="also train on positions saved by --save-data (repeatable)")
    p.add_argument("--no-play", action="store_true", help="play no games: train on --data alone")
    p.add_argument("--out", type=output_file, default="bots/data/value_model.json",
                   help="model file to write" + OUT_HELP)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise CliError("kashgar train needs scikit-learn: pip install -e '.[train]'") from None
    from bots.learned import model_feature_names
    from lab.arena import cached_bot
    from lab.train import Positions, collect, model_document, td_targets, train, write_model

    if args.no_play and not args.data:
        raise CliError("argument --no-play: give the positions to train on with --data")
    parts = []
    for path in args.data:
        try:
            parts.append(Positions.load(path))
        except (OSError, KeyError, ValueError) as exc:
            raise CliError(f"argument --data: {path}: {exc}") from None
    if not args.no_play:
        try:
            cached_bot(args.policy)  # a bad spec is refused here, before any game
        except ValueError as exc:
            raise CliError(f"argument --policy: {exc}") from None
        played = collect(args.policy, args.games, args.players, args.seed, args.workers, args.every,
                         progress=not args.quiet)
        if args.save_data:
            played.save(args.save_data)
            print(f"wrote {args.save_data} ({len(played)} rows)")
        parts.append(played)
    pos = Positions.concat(parts)
    if pos.x.shape[1] != len(model_feature_names()):
        raise CliError(f"the positions have {pos.x.shape[1]} inputs, this engine's model reads another "
                       "number: record them again")
    if args.td_lambda is not None:
        pos.target = td_targets(pos, _td_layers(args.td_model), args.td_lambda)
    pipe, report = train(pos, args.hidden, args.alpha, args.seed, max_iter=args.max_iter)
    doc = model_document(pipe, pos, report, command=command_line(args), policy=None if args.no_play else args.policy,
                         players=args.players, seed=args.seed, every=args.every, hidden=list(args.hidden),
                         alpha=args.alpha, data=args.data, td_lambda=args.td_lambda,
                         td_model=None if args.td_lambda is None else args.td_model)
    write_model(doc, args.out)
    print(json.dumps(report, indent=1))
    print(f"wrote {args.out} ({os.path.getsize(args.out)} bytes)")
    return 0


def _td_layers(path: str) -> list[dict[str, Any]]:
    """The layers of the model file at `path` (`bots.learned.load_model`: its shape and its inputs
    checked against this engine), or CliError naming --td-model."""
    from bots.learned import load_model

    try:
        return list(load_model(path).doc["layers"])
    except (OSError, ValueError) as exc:
        raise CliError(f"argument --td-model: {path}: not a model file ({exc})") from None
