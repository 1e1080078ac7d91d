"""Difficulty levels (presets in bots/data/levels.toml) and the bot factory `make_bot(spec)`.

A spec names a bot and optional settings, e.g. `random`, `greedy`, `greedy:samples=5`,
`ismcts:iterations=500,c=0.5`, `det:iterations=1000,worlds=10` (`det:oracle=1`: the diagnostic
that reads the hidden order), `level:expert` (or just `expert`), `openspiel:iterations=500`,
`elo:530` (any Elo of the ladder, the two levels around it mixed: bots/strength.py).
Settings of a level can be overridden the same way: `expert:iterations=100`. A spec that names
`time_ms` and not `iterations` searches by time alone (`ismcts:time_ms=100`, `expert:time_ms=50`).
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from bots.base import Bot
from bots.ismcts_bot import ISMCTSBot, ISMCTSConfig

LEVELS_FILE = Path(__file__).parent / "data" / "levels.toml"
DEFAULT_LEVEL = "expert"
_CONFIG_FIELDS = {f.name for f in fields(ISMCTSConfig)}
_LEVEL_FIELDS = {"name", "description", "elo", "elo_ci", "elo_lower_bound", "core_seconds", "mix"}
MAX_TEMPERATURE = 1.0  # weak the human way: never choosing more evenly than the search's visits


@dataclass(frozen=True)
class Level:
    """One named preset of the search (frozen: the parsed levels are shared by every caller of
    `load_levels`; `dataclasses.replace` makes a changed copy)."""

    name: str
    description: str
    config: ISMCTSConfig
    elo: float | None = None
    elo_ci: float | None = None
    core_seconds: float | None = None  # measured CPU seconds of one searched decision (all its parts)
    extra: dict[str, Any] = field(default_factory=dict)
    #: where a step to this level (or one below it) lost no game: no Elo, only this lower bound of it
    elo_lower_bound: float | None = None

    def bot(self, **overrides: Any) -> ISMCTSBot:
        return ISMCTSBot(self.config.with_(**overrides) if overrides else self.config, name=self.name)

    def to_dict(self) -> dict[str, Any]:
        """Name, description, every setting of the search (`ISMCTSConfig`) and the measured Elo (or,
        where a step lost no game, `elo_lower_bound`)."""
        out = {"name": self.name, "description": self.description, **self.config.to_dict(),
               "elo": self.elo, "elo_ci": self.elo_ci, "core_seconds": self.core_seconds}
        if self.elo_lower_bound is not None:
            out["elo_lower_bound"] = self.elo_lower_bound
        return out


def levels_path() -> Path:
    """The level file in use: $KASHGAR_LEVELS if set, else bots/data/levels.toml."""
    return Path(os.environ.get("KASHGAR_LEVELS") or LEVELS_FILE)


def parse_levels(doc: dict[str, Any], table: str = "level") -> list[Level]:
    """The levels of a level file's document (`table` "preset": its named presets off the ladder);
    ValueError naming the level and the field for a missing or repeated name, an unknown field, or
    a value of the wrong type or out of range."""
    out: list[Level] = []
    rows = doc.get(table, [])
    if table != "level" and rows == []:
        return out
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"the level file needs [[{table}]] tables")
    for i, row in enumerate(rows):
        name = row.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"level {i}: name must be a non-empty string, not {name!r}")
        if any(lv.name == name for lv in out):
            raise ValueError(f"level {name!r}: name repeated (level {i})")
        unknown = set(row) - _CONFIG_FIELDS - _LEVEL_FIELDS
        if unknown:
            raise ValueError(f"level {name!r}: unknown fields {sorted(unknown)}")
        try:
            config = ISMCTSConfig(**{k: row[k] for k in _CONFIG_FIELDS if k in row})
        except ValueError as exc:
            raise ValueError(f"level {name!r}: {exc}") from None
        for key, ok, want in (
            ("description", isinstance(row.get("description", ""), str), "a string"),
            ("elo", _number_or_none(row.get("elo")), "a number"),
            ("elo_ci", _number_or_none(row.get("elo_ci")), "a number"),
            ("elo_lower_bound", _number_or_none(row.get("elo_lower_bound")), "a number"),
            ("core_seconds", _number_or_none(row.get("core_seconds")), "a number"),
            ("temperature", config.temperature <= MAX_TEMPERATURE, f"a number from 0 to {MAX_TEMPERATURE}"),
        ):
            if not ok:
                raise ValueError(f"level {name!r}: {key} must be {want}, not {row[key]!r}")
        extra: dict[str, Any] = {}
        if "mix" in row:
            extra["mix"] = _mix_points(name, row["mix"])
        out.append(Level(name, row.get("description", ""), config, row.get("elo"), row.get("elo_ci"),
                         row.get("core_seconds"), extra, row.get("elo_lower_bound")))
    return out


def _mix_points(name: str, rows: Any) -> list[tuple[float, float]]:
    """A level's `mix`: the measured points [p, elo] of its mix with the level below (p: this
    level's share of the decisions, strictly between 0 and 1; elo: the mix's measured Elo)."""
    ok = isinstance(rows, list) and all(
        isinstance(r, list) and len(r) == 2 and all(_number_or_none(x) and x is not None for x in r)
        and 0.0 < r[0] < 1.0 for r in rows)
    if not ok:
        raise ValueError(f"level {name!r}: mix must be a list of [p, elo] pairs with p between 0 and 1, "
                         f"not {rows!r}")
    return [(float(p), float(e)) for p, e in rows]


def _number_or_none(v: Any) -> bool:
    return v is None or isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def file_default(doc: dict[str, Any], levels: list[Level]) -> str | None:
    """The level a level file names as its default (`default = "NAME"` at its top; None: it names
    none); ValueError when that is not one of its levels."""
    name = doc.get("default")
    if name is None:
        return None
    if not isinstance(name, str) or name not in {lv.name for lv in levels}:
        raise ValueError(f"default must name one of the file's levels ({', '.join(lv.name for lv in levels)}), "
                         f"not {name!r}")
    return name


#: Levels parsed, by file and the file's (mtime, size): a request reads them twice, and parsing
#: the TOML cost more than a cheap level's search. A file changed in place is read again.
_PARSED: dict[Path, tuple[tuple[int, int], list[Level], str | None]] = {}


def _parsed(path: str | Path | None) -> tuple[tuple[int, int], list[Level], str | None]:
    p = Path(path) if path else levels_path()
    stat = p.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _PARSED.get(p)
    if cached is None or cached[0] != stamp:
        with open(p, "rb") as fh:
            doc = tomllib.load(fh)
        levels = parse_levels(doc)
        cached = (stamp, levels, file_default(doc, levels))
        _PARSED[p] = cached
    return cached


def load_levels(path: str | Path | None = None) -> list[Level]:
    """The levels, weakest first (shared: callers read them, `Level.bot` copies what it changes)."""
    return list(_parsed(path)[1])


def own_default(path: str | Path | None = None) -> str:
    """The level file's own default level (`default = "NAME"`), else DEFAULT_LEVEL (unchecked:
    `default_level` checks that it is one of the file's levels)."""
    return _parsed(path)[2] or DEFAULT_LEVEL


def default_level(configured: str | None = None, path: str | Path | None = None) -> str:
    """The level a request without a level (or a search without one) is answered by: `configured`
    (the service's KASHGAR_DEFAULT_LEVEL) when given, else the level file's own `default`, else
    DEFAULT_LEVEL. ValueError, naming the file and what to do, when that is not one of the file's
    levels (a server refuses to start with it, rather than answer with another level silently)."""
    p = Path(path) if path else levels_path()
    _, levels, own = _parsed(p)
    names = [lv.name for lv in levels]
    name = configured or own or DEFAULT_LEVEL
    if name in names:
        return name
    if configured:
        raise ValueError(f"KASHGAR_DEFAULT_LEVEL={configured!r} is not a level of {p} "
                         f"(its levels: {', '.join(names)})")
    raise ValueError(f"the level file {p} names no default level and has no {DEFAULT_LEVEL!r} level: "
                     f"add `default = \"NAME\"` at its top (one of {', '.join(names)}), "
                     f"or set KASHGAR_DEFAULT_LEVEL")


def load_presets(path: str | Path | None = None) -> list[Level]:
    """The named presets off the ladder (`[[preset]]` tables: not served as levels, not placed by
    `kashgar tune`; a bot spec names them as it names a level, e.g. `master-linear`)."""
    p = Path(path) if path else levels_path()
    with open(p, "rb") as fh:
        doc = tomllib.load(fh)
    presets = parse_levels(doc, "preset")
    clash = {lv.name for lv in parse_levels(doc)} & {lv.name for lv in presets}
    if clash:
        raise ValueError(f"preset {sorted(clash)[0]!r}: also a level's name")
    return presets


def get_level(name: str, path: str | Path | None = None) -> Level:
    """The level `name`, else the preset off the ladder of that name (KeyError: neither)."""
    for lv in load_levels(path):
        if lv.name == name:
            return lv
    for lv in load_presets(path):
        if lv.name == name:
            return lv
    raise KeyError(f"unknown level {name!r}")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def dump_levels(levels: list[Level], header: str = "", presets: list[Level] | None = None,
                default: str | None = None) -> str:
    """The level file text for `levels` (`default`: the level it names as its default), then the
    named `presets` off the ladder (what `kashgar tune` writes)."""
    lines = [f"# {ln}" if ln else "#" for ln in header.splitlines()] if header else []
    if default is not None:
        lines += ["", f"default = {_toml_value(default)}"]
    defaults = ISMCTSConfig()
    for table, lv in [("level", lv) for lv in levels] + [("preset", lv) for lv in presets or []]:
        lines += ["", f"[[{table}]]", f"name = {_toml_value(lv.name)}",
                  f"description = {_toml_value(lv.description)}"]
        for f in fields(ISMCTSConfig):
            v = getattr(lv.config, f.name)
            if f.name in ("iterations", "temperature") or v != getattr(defaults, f.name):
                lines.append(f"{f.name} = {_toml_value(v)}")
        if lv.elo is not None:
            lines.append(f"elo = {round(lv.elo, 1)!r}")
        if lv.elo_ci is not None:
            lines.append(f"elo_ci = {round(lv.elo_ci, 1)!r}")
        if lv.elo_lower_bound is not None:
            lines.append(f"elo_lower_bound = {round(lv.elo_lower_bound, 1)!r}")
        if lv.core_seconds is not None:
            lines.append(f"core_seconds = {lv.core_seconds!r}")
        if lv.extra.get("mix"):
            lines.append("mix = [" + ", ".join(f"[{p!r}, {e!r}]" for p, e in lv.extra["mix"]) + "]")
    return "\n".join(lines) + "\n"


def parse_settings(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not text:
        return out
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ValueError(f"bad setting {part!r} (want key=value)")
        k, v = (x.strip() for x in part.split("=", 1))
        val: Any = v
        for conv in (int, float):
            try:
                val = conv(v)
                break
            except ValueError:
                continue
        if v in ("true", "false"):
            val = v == "true"
        out[k] = val
    return out


def make_bot(spec: str, **overrides: Any) -> Bot:
    """A bot from its spec (see the module docstring). A spec that names no bot, or a setting the
    bot does not have, raises ValueError naming it."""
    try:
        return _make_bot(spec, **overrides)
    except TypeError as exc:  # a setting the bot's constructor does not take
        raise ValueError(f"bot {spec!r}: {exc}") from None


def time_alone(kw: dict[str, Any]) -> dict[str, Any]:
    """A spec that names a time budget and no iteration budget searches by time alone: without
    this, `ismcts:time_ms=100` would also stop at the default 2,000 iterations (about 35 ms)."""
    if kw.get("time_ms") and "iterations" not in kw:
        kw["iterations"] = 0
    return kw


def _make_bot(spec: str, **overrides: Any) -> Bot:
    kind, _, rest = spec.partition(":")
    if kind == "elo":  # elo:ELO or elo:ELO:p=P, a strength between two levels (bots/strength.py)
        from bots.strength import make_mixed_bot

        return make_mixed_bot(spec, rest, **overrides)
    if kind == "level":  # level:NAME or level:NAME:settings
        name, _, rest = rest.partition(":")
        try:
            level = get_level(name)
        except KeyError:
            raise ValueError(f"unknown level {name!r} in {spec!r}: "
                             f"{', '.join(x.name for x in load_levels())}") from None
        bot = level.bot(**time_alone({**parse_settings(rest), **overrides}))
        bot.name = spec
        return bot
    kw = time_alone({**parse_settings(rest), **overrides})
    if kind == "random":
        from bots.random_bot import RandomBot

        if kw:
            raise ValueError(f"bot {spec!r}: the random bot takes no settings "
                             f"(got {', '.join(sorted(kw))})")
        return RandomBot()
    if kind == "greedy":
        from bots.greedy import GreedyBot

        g = GreedyBot(**kw)
        g.name = spec
        return g
    if kind == "ismcts":
        return ISMCTSBot(ISMCTSConfig(**kw), name=spec)
    try:
        lv = get_level(kind)
    except KeyError:
        raise ValueError(f"unknown bot {spec!r}: random, greedy, ismcts, "
                         f"or a level ({', '.join(x.name for x in load_levels())})") from None
    bot = lv.bot(**kw)
    bot.name = spec
    return bot
