"""A level as the service answers it: its budget split into the root-parallel parts a job of that
level gets (`service.search`), run one after the other in this process and merged. The lab plays
and calibrates long searches this way (the preset grandmaster: what it measured is what a client
asking master for its budget is served)."""

from __future__ import annotations

from typing import Any

from bots.answer import Answer
from bots.base import Alternative, Analysis, Bot, ProgressFn, StopFn, as_state


def served_answer(state: Any, level: str, seed: int, iterations: int | None = None,
                  parts: int | None = None) -> Answer:
    """The service's answer (the bots' `Answer` that `/suggest` gives, before its words) of `level`
    for the player to move in `state`: at the level's budget in the parts a job of it gets, or at
    `iterations` in `parts` (as a client asks `/suggest` with a level, `iterations` and `parallel`)."""
    import engine_ext
    from service import search
    from service.config import Settings

    level_iterations, time_ms = _budget(level)
    if iterations is not None:
        time_ms = None
    else:
        iterations = level_iterations
    if parts is None:
        parts = search.default_parallel(iterations, time_ms, Settings(), True, "redis")
    doc = engine_ext.Game(engine_ext.get_engine(), state.clone()).to_json()  # the full state
    spec = search.SearchSpec(state=doc, level=level, iterations=iterations, time_ms=time_ms, seed=seed,
                             parallel=parts)
    return search.answer(spec)


def _budget(level: str) -> tuple[int | None, int | None]:
    """(iterations, time_ms) of a level or of a preset off the ladder (KeyError: neither)."""
    from bots.levels import get_level

    config = get_level(level).config
    return (int(config.iterations) or None, int(config.time_ms) or None)


class ServedBot(Bot):
    """`served:LEVEL`: plays `level`'s served answers (the engine's states only)."""

    def __init__(self, level: str, iterations: int | None = None, parts: int | None = None) -> None:
        _budget(level)  # KeyError: neither a level nor a preset
        if iterations is not None and iterations < 1:
            raise ValueError(f"served:{level}: iterations must be at least 1")
        if parts is not None and not 1 <= parts <= 64:
            raise ValueError(f"served:{level}: parts must be 1 to 64")
        self.level = level
        self.iterations = iterations
        self.parts = parts
        self.name = f"served:{level}"

    def analyse(self, game: Any, *, iterations: int | None = None, time_ms: float | None = None,
                seed: int = 0, progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> Analysis:
        """The served answer as an analysis; the level's own budget (a budget given is refused)."""
        if iterations is not None or time_ms is not None:
            raise ValueError(f"{self.name} searches with its level's budget: no other can be given")
        st: Any = as_state(game)  # an engine state (this bot plays Kashgar only)
        answer = served_answer(st, self.level, seed, self.iterations, self.parts)  # its codes are st's

        def num(x: float | None) -> float:
            return float("nan") if x is None else x  # None: no statistic (an unvisited move)

        alternatives = [Alternative(a.code, a.visits, num(a.mean_reward), num(a.win_prob), num(a.expected_vp))
                        for a in answer.alternatives]
        return Analysis(answer.code, alternatives, iterations=answer.iterations, elapsed_ms=answer.elapsed_ms,
                        seed=seed, bot=self.name, player=int(st.current_player()))
