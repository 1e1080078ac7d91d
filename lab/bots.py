"""Bots from a spec, the lab's own included: `bots.levels.make_bot`'s specs (random, greedy,
ismcts, level:NAME, NAME) and the baselines the lab measures the search against:
`det:...` (the determinized baseline, `lab.determinized`) and `openspiel:...` (OpenSpiel's ISMCTS,
`lab.openspiel_adapter`); and `served:LEVEL`, a level as the service answers it (`lab.served`)."""

from __future__ import annotations

from typing import Any

from bots.base import Bot
from bots.levels import make_bot as make_product_bot
from bots.levels import parse_settings, time_alone


def make_bot(spec: str, **overrides: Any) -> Bot:
    """A bot from its spec; ValueError naming a spec or a setting that is wrong."""
    kind, _, rest = spec.partition(":")
    if kind == "served":
        from lab.served import ServedBot

        level, _, settings = rest.partition(":")
        kw = {**parse_settings(settings), **overrides}
        unknown = sorted(set(kw) - {"iterations", "parts"})
        if unknown:
            raise ValueError(f"bot {spec!r}: a served level takes only iterations and parts (got {', '.join(unknown)})")
        if any(not isinstance(v, int) or isinstance(v, bool) for v in kw.values()):
            raise ValueError(f"bot {spec!r}: iterations and parts are whole numbers")
        try:
            return ServedBot(level, **kw)
        except KeyError:
            raise ValueError(f"bot {spec!r}: unknown level {level!r}") from None

    if kind not in ("det", "determinized", "openspiel"):
        return make_product_bot(spec, **overrides)
    kw = time_alone({**parse_settings(rest), **overrides})
    try:
        if kind == "openspiel":
            from lab.openspiel_adapter import OpenSpielISMCTS

            return OpenSpielISMCTS(name=spec, **kw)
        from lab.determinized import DeterminizedBot

        return DeterminizedBot(name=spec, **kw)
    except TypeError as exc:  # a setting the bot's constructor does not take
        raise ValueError(f"bot {spec!r}: {exc}") from None
