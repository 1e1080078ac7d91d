"""`kashgar calibrate`: fit the map from the search's mean reward to a chance of winning
(`win_prob`) on self-play games of each level, and write it to the calibration file."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

import engine_ext
from kashgar_cli.errors import OUT_HELP, CliError, check_seeds, output_file, positive_int, process_count
from kashgar_cli.interrupt import INTERRUPTED, say_interrupted, workers_ignore_sigint
from kashgar_cli.provenance import provenance

DEFAULT_SEED = 30000


def _players(text: str) -> list[int]:
    try:
        values = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        values = []
    if not values or any(v not in (2, 3, 4) for v in values):
        raise argparse.ArgumentTypeError(f"want a comma-separated list of 2, 3 and 4, not {text!r}")
    return values


def _records_file(folder: str, level: str, players: int, saved: bool = False) -> str:
    """DIR/LEVEL-Pp.jsonl; for records `saved` before, DIR/LEVEL-Pp.jsonl.xz or .gz where only that
    is there (records kept compressed)."""
    path = os.path.join(folder, f"{level}-{players}p.jsonl")
    if saved and not os.path.exists(path):
        return next((f"{path}{z}" for z in (".xz", ".gz") if os.path.exists(f"{path}{z}")), path)
    return path


def _check_held_out(games: int, held_out: float, what: str) -> None:
    """At least one of `games` held out and one left to fit."""
    held = round(games * held_out)
    if not 1 <= held <= games - 1:
        raise CliError(f"argument --held-out: {what}{games} games x {held_out} holds out {held}: want at "
                       "least one game held out and one to fit (more games, or another share)")


def _records(args: argparse.Namespace, level: Any, players: int) -> tuple[list[Any], str, int]:
    """The cell's records, played (and saved under --records) or read (--from-records), the part of
    the command that says where they came from, and the seed that picks the held-out games (--seed;
    for saved records without --seed, the seed they were played with, so that the same games are
    held out as when they were played)."""
    from bots import win_prob
    from lab import calibrate

    preset = win_prob.preset_of(level)
    if args.from_records:
        path = _records_file(args.from_records, level.name, players, saved=True)
        try:
            header, records = calibrate.read_records(path)
        except (OSError, ValueError) as exc:
            raise CliError(f"argument --from-records: cannot read {path}: {exc}") from None
        if header.get("level") != level.name or header.get("players") != players \
                or not win_prob.same_preset(header.get("preset"), level) \
                or header.get("played_by") != args.played_by \
                or header.get("every", 1 if args.played_by is None else None) != args.every:
            raise CliError(f"argument --from-records: {path} holds games of another level, seat count or preset "
                           f"than {level.name} with {players} seats now (or games played by another level, "
                           "--played-by and --every)")
        bad = next((r for r in records if r.order is not None and r.order >= players), None)
        if bad is not None:
            raise CliError(f"argument --from-records: {path} holds a decision of place {bad.order} in turn order "
                           f"(game {bad.game}) in a {players}-seat game")
        _check_held_out(len({r.game for r in records}), args.held_out, f"{path} holds ")
        saved_seed = header.get("seed")
        seed = args.seed if args.seed is not None else saved_seed if isinstance(saved_seed, int) else DEFAULT_SEED
        return records, f"--from-records {args.from_records}", seed
    seed = args.seed  # set by `run` when games are played
    records = calibrate.collect(level.name, players, args.games, seed, args.workers,
                                log=lambda m: print(m, file=sys.stderr, flush=True), progress=True,
                                played_by=args.played_by, every=args.every)
    if args.records:
        path = _records_file(args.records, level.name, players)
        header = {"level": level.name, "players": players, "preset": preset, "games": args.games, "seed": seed}
        if args.played_by is not None:
            header |= {"played_by": args.played_by, "every": args.every}
        try:
            calibrate.write_records(path, header, records)
        except OSError as exc:
            raise CliError(f"argument --records: cannot write {path}: {exc}") from None
    return records, f"-n {args.games} -j {args.workers}" + (f" --records {args.records}" if args.records else ""), seed


def _fit(args: argparse.Namespace, level: Any, players: int) -> dict[str, Any]:
    """Play (or read), fit and measure one level with `players` seats; prints its line."""
    from bots import win_prob
    from lab import calibrate

    t0 = time.perf_counter()
    records, source, seed = _records(args, level, players)
    entry = calibrate.calibrate(records, held_out=args.held_out, seed=seed, players=players)
    entry["preset"] = win_prob.preset_of(level)
    entry["seconds"] = round(time.perf_counter() - t0, 1)
    entry["provenance"] = provenance(workers=1 if args.from_records else args.workers)
    played = f" --played-by {args.played_by} --every {args.every}" if args.played_by else ""
    if args.played_by:  # win_prob then reads: the mover's chance if the game went on at that level
        entry["played_by"] = args.played_by
    entry["command"] = (f"kashgar calibrate --levels {level.name} --players {players} {source}{played} "
                        f"--held-out {args.held_out} --seed {seed}")
    h = entry["held_out"]
    print(f"{level.name:<9} {players}p  games {entry['games']:>5}  held out {h['games']:>4}: brier raw "
          f"{h['raw']['brier']:.4f} -> {h['calibrated']['brier']:.4f}, log-loss "
          f"{h['raw']['log_loss']:.4f} -> {h['calibrated']['log_loss']:.4f}  ({entry['seconds']:.0f} s)",
          flush=True)
    return entry


def _write(path: str, doc: dict[str, Any]) -> None:
    """Write the calibration file whole or not at all (a new file, synced, moved over the old one):
    the service reads it, and an interrupted write would leave it damaged. A failed write leaves
    the old file as it was and no temporary file behind."""
    from bots.atomic import write_whole

    def dump(fh: TextIO) -> None:
        json.dump(doc, fh, indent=1)
        fh.write("\n")

    try:
        write_whole(path, dump)
    except OSError as exc:
        raise CliError(f"argument --out: cannot write {path}: {exc}") from None


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive lock on `path` + ".lock" (made if need be, and left there: removing it would let
    a run waiting on the old one and a run making a new one both in): the runs that write one
    calibration file take turns."""
    import fcntl  # POSIX only: imported here so that the other commands load anywhere

    try:
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise CliError(f"argument --out: cannot lock {path}: {exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and the lock with it


def _store(path: str, level: str, players: int, entry: dict[str, Any]) -> None:
    """Put `entry` (a fit of `level` with `players` seats) into the calibration file at `path`: under
    the file's lock, read it again and change only that entry, so that the fits another run wrote
    meanwhile stay."""
    from bots.win_prob import MODEL

    with _locked(path):
        doc = _read(path, missing_ok=True)
        doc.setdefault("levels", {}).setdefault(level, {})[str(players)] = entry
        doc["model"] = MODEL
        _write(path, doc)


def _read(path: str, missing_ok: bool) -> dict[str, Any]:
    """The calibration file at `path` ({} if it is missing and `missing_ok`), with its shape checked
    ({"levels": {level: {players: {...}}}}); a one-line error naming the file else."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise CliError(f"argument --out: no calibration file {path}") from None
    except (OSError, ValueError) as exc:
        raise CliError(f"argument --out: cannot read {path}: {exc}") from None
    except RecursionError:
        raise CliError(f"argument --out: cannot read {path}: JSON nested too deep") from None
    if not isinstance(doc, dict):
        raise CliError(f"argument --out: {path} is not a calibration file (a JSON object)")
    levels = doc.get("levels", {})
    if not isinstance(levels, dict):
        bad = ["levels"]
    else:
        bad = [f"levels.{name}" for name, by_players in levels.items() if not isinstance(by_players, dict)]
        bad += [f"levels.{name}.{players}" for name, by_players in levels.items() if isinstance(by_players, dict)
                for players, entry in by_players.items() if not isinstance(entry, dict)]
    if bad:
        raise CliError(f"argument --out: {path} is not a calibration file: {bad[0]} is not a JSON object "
                       '(want {"levels": {level: {players: {...}}}})')
    return doc


def _check_writable(path: str) -> None:
    """Refuse, before any game, an --out that cannot be written: its directory must exist and be
    writable (the new file and the lock are made there) and the file itself, if there, writable."""
    try:
        output_file(path)
    except argparse.ArgumentTypeError as exc:
        raise CliError(f"argument --out: {exc}") from None
    folder = os.path.dirname(path) or "."
    if not os.access(folder, os.W_OK):
        raise CliError(f"argument --out: cannot write in directory {folder!r} (the new file is made there)")


def register(sub: Any) -> None:
    from bots.win_prob import CALIBRATION_FILE

    p = sub.add_parser("calibrate", help="fit win_prob (a chance of winning) to self-play games of each level")
    p.add_argument("--levels", default="", help="comma-separated level names (default: every level)")
    p.add_argument("--players", type=_players, default=[2, 3, 4], help="seat counts, e.g. 2,3,4 (default)")
    p.add_argument("-n", "--games", type=positive_int, default=500, help="self-play games per level and seat count")
    p.add_argument("--held-out", type=float, default=0.3, help="share of the games held out of the fit to measure it")
    p.add_argument("-j", "--workers", type=process_count, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=None,
                   help=f"deal seed of the first game (default {DEFAULT_SEED}); it also picks the held-out games "
                        "(with --from-records, by default the seed the records were played with)")
    p.add_argument("--out", default=str(CALIBRATION_FILE),
                   help="the calibration file; levels and seat counts not played here are kept from it (only "
                        "read with --table)" + OUT_HELP)
    p.add_argument("--records", metavar="DIR",
                   help="also save each level's and seat count's records (one line per searched decision) as "
                        "DIR/LEVEL-Pp.jsonl (replacing one of that name), so that it can be fitted again without "
                        "playing (--from-records)")
    p.add_argument("--from-records", metavar="DIR",
                   help="play nothing: fit each level and seat count on DIR/LEVEL-Pp.jsonl (or, where only "
                        "that is there, DIR/LEVEL-Pp.jsonl.xz or .gz), saved by --records "
                        "with the level's preset as it is now (-n and -j do not apply; --seed picks the held-out "
                        "games)")
    p.add_argument("--merge", metavar="DIR,DIR,...",
                   help="play and fit nothing: join each level's and seat count's records saved by --records in "
                        "these directories (runs on consecutive deal seeds, in this order; .jsonl, .jsonl.xz or "
                        ".jsonl.gz) "
                        "into one file under --records, as one run of all their games writes it")
    p.add_argument("--played-by", metavar="LEVEL", default=None,
                   help="games played by this level instead, the level fitted asked (as the service asks it) "
                        "at every --every-th decision: for a level whose own games cost too much to play "
                        "(grandmaster); its win_prob then reads: the mover's chance if the game went on at LEVEL")
    p.add_argument("--every", type=positive_int, default=1,
                   help="with --played-by: ask the level fitted at every k-th searched decision (default: 1)")
    p.add_argument("--table", action="store_true",
                   help="play nothing: print the Markdown table of the held-out measures in --out")
    p.set_defaults(func=run)


def _merge(args: argparse.Namespace, levels: list[str]) -> int:
    """--merge: each cell's saved runs joined into one records file under --records; every cell
    read and checked before any file is written."""
    from lab import calibrate

    if not args.records:
        raise CliError("argument --merge: wants --records DIR (where the joined files go)")
    folders = [x.strip() for x in args.merge.split(",") if x.strip()]
    if len(folders) < 2:
        raise CliError("argument --merge: want at least two directories, comma-separated")
    for folder in folders:
        if not os.path.isdir(folder):
            raise CliError(f"argument --merge: no directory {folder!r}")
    cells = []
    for name in levels:
        for players in args.players:
            parts = []
            for folder in folders:
                path = _records_file(folder, name, players, saved=True)
                try:
                    parts.append(calibrate.read_records(path))
                except (OSError, ValueError) as exc:
                    raise CliError(f"argument --merge: cannot read {path}: {exc}") from None
            try:
                header, records = calibrate.merge_records(parts)
            except ValueError as exc:
                raise CliError(f"argument --merge: {name} with {players} seats: {exc}") from None
            cells.append((_records_file(args.records, name, players), header, records))
    for path, header, records in cells:
        try:
            calibrate.write_records(path, header, records)
        except OSError as exc:
            raise CliError(f"argument --records: cannot write {path}: {exc}") from None
        print(f"{path}: {header['games']} games from deal seed {header['seed']}, {len(records)} records")
    return 0


def run(args: argparse.Namespace) -> int:
    from bots.levels import load_levels
    from lab import calibrate

    by_name = {lv.name: lv for lv in load_levels()}
    names = list(by_name)
    if args.table:
        print(calibrate.markdown(_read(args.out, missing_ok=False)), end="")
        return 0
    chosen = [x.strip() for x in args.levels.split(",") if x.strip()] or names
    unknown = [x for x in chosen if x not in names]
    if unknown:
        raise CliError(f"argument --levels: unknown level {', '.join(unknown)}; levels: {', '.join(names)}")
    if args.played_by is not None and args.played_by not in names:
        raise CliError(f"argument --played-by: unknown level {args.played_by}; levels: {', '.join(names)}")
    if args.every != 1 and args.played_by is None:
        raise CliError("argument --every: only with --played-by")
    if not 0.0 < args.held_out < 1.0:
        raise CliError(f"argument --held-out: want a share between 0 and 1, not {args.held_out}")
    if not args.from_records:  # -n and --seed say which games are played; with saved records, none is
        args.seed = DEFAULT_SEED if args.seed is None else args.seed
        _check_held_out(args.games, args.held_out, "")
        check_seeds(args.seed, args.games, engine_ext.SEEDS - 1)
    if args.records and args.from_records:
        raise CliError("argument --records: not with --from-records (nothing is played)")
    for flag, folder in (("--records", args.records), ("--from-records", args.from_records)):
        if folder and not os.path.isdir(folder):
            raise CliError(f"argument {flag}: no directory {folder!r}")
    if args.records and not os.access(args.records, os.W_OK):
        raise CliError(f"argument --records: cannot write in directory {args.records!r}")
    if args.merge:  # --records (a directory it can write in) and not --from-records, checked above
        return _merge(args, chosen)
    _check_writable(args.out)
    _read(args.out, missing_ok=True)  # a file that is not a calibration file: refused before any game
    if args.from_records:  # every cell's records readable and of the level as it is now, before any fit
        # (read again by each fit below rather than all held at once: a cell is tens of thousands of
        # decisions, and the check costs a second a cell)
        for name in chosen:
            for players in args.players:
                _records(args, by_name[name], players)
    try:
        with workers_ignore_sigint():
            for name in chosen:
                for players in args.players:
                    # after every fit: a long run keeps its work, and another run's fits stay
                    _store(args.out, name, players, _fit(args, by_name[name], players))
    except KeyboardInterrupt:
        say_interrupted("calibrate", f": the fits finished before are in {args.out}", after_bar=False)
        return INTERRUPTED
    return 0
