"""Defects of the search bots found by an audit, each pinned: the temperature draw, the merge of
search parts, budgets split over workers and worlds, the tree's allocation, mixed engine builds,
a stale compiled search, a dead root-parallel worker, and the level file's validation."""

from __future__ import annotations

import copy
import os
import random
import subprocess
import sys
import time
from typing import Any

import pytest

import bots
import bots.parallel as parallel
import engine_ext
from bots import ismcts_bot, suggest
from bots.base import expected_line, position_key
from bots.ismcts_bot import ISMCTSBot, ISMCTSConfig
from bots.levels import get_level, parse_levels
from lab.bots import make_bot
from tests.engine_helpers import require_compiled_search

needs_fork = pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                                reason="the dying worker is patched in by fork")


def _compiled_or_skip() -> None:
    require_compiled_search()


def _positions(n: int, players: int = 2) -> list[engine_ext.Game]:
    """`n` positions with at least two legal decisions, from seeded random games."""
    out = []
    seed = 0
    while len(out) < n:
        g = engine_ext.new_game(players, seed=seed)
        rng = random.Random(seed)
        for _ in range(rng.randrange(40)):
            if g.is_terminal:
                break
            g.state.apply_unchecked(rng.choice(g.legal_codes()))
        if not g.is_terminal and len(g.legal_codes()) > 1:
            out.append(g)
        seed += 1
    return out


def _key(an: Any) -> tuple[Any, ...]:
    return an.code, tuple((a.code, a.visits, round(a.mean_reward, 9)) for a in an.alternatives), an.iterations


# 1. the temperature draw depends on the position, not on the seed alone

def test_with_one_seed_a_temperature_level_does_not_always_draw_the_same_quantile() -> None:
    """The draw came from the seed alone: with the service's default seed 0 novice took the most
    visited move at 0 of 40 positions (the same draw, 0.857, every time)."""
    novice = make_bot("novice")
    top = 0
    games = _positions(30)
    for g in games:
        an = novice.analyse(g, seed=0)
        top += an.code == an.alternatives[0].code
        assert _key(novice.analyse(g, seed=0)) == _key(an)  # same state and seed, same answer
    assert 3 <= top <= 27


def test_the_position_key_is_what_the_player_knows(engine: Any) -> None:
    """Equal for the full state, the player's view and another hidden order, in both builds (so a
    temperature draw cannot peek); different for different positions."""
    keys = set()
    for g in _positions(8, players=3):
        doc = g.to_json()
        other = copy.deepcopy(doc)
        random.Random(1).shuffle(other["decks"]["standard"])
        view = g.to_json(observer=g.current_player)
        same = {position_key(e.from_json(d).state) for d in (doc, other, view)
                for e in (engine, engine_ext.get_engine(False))}
        assert len(same) == 1
        keys |= same
    assert len(keys) == 8


# 2. search parts are merged with the level's temperature

def _part(seed: int, visits: list[int], level: str = "novice") -> dict[str, Any]:
    alts = [{"decision": {"code": k}, "decision_text": f"move {k}", "visits": v, "mean_reward": 0.5,
             "win_prob": 0.5, "expected_vp": 10.0} for k, v in enumerate(visits)]
    return {"alternatives": alts, "line": ["move 0", "move 1"], "iterations": sum(visits),
            "elapsed_ms": 1.0, "seed": seed, "level": level, "player": 0}


def test_merge_parts_chooses_with_the_level_temperature() -> None:
    """merge_parts always took the most visited move: a level with a temperature searched in parts
    (parallel, long budgets, async time parts) played at temperature 0."""
    chosen = {suggest.merge_parts([_part(s, [5, 4, 3]), _part(s + 1, [4, 4, 2])])["decision_text"]
              for s in range(40)}
    assert len(chosen) > 1
    parts = [_part(3, [5, 4, 3]), _part(4, [4, 4, 2])]
    assert suggest.merge_parts(parts) == suggest.merge_parts(parts)
    assert {suggest.merge_parts([_part(s, [5, 4, 3])], temperature=0.0)["decision_text"]
            for s in range(20)} == {"move 0"}
    assert {suggest.merge_parts([_part(s, [5, 4, 3], level="expert")])["decision_text"]
            for s in range(20)} == {"move 0"}  # expert: temperature 0


def test_expected_line_follows_the_chosen_move() -> None:
    lines = [(["a", "x"], 9), (["b", "y", "z"], 3), (["b", "w"], 2)]
    assert expected_line("b", lines) == ["b", "y", "z"]
    assert expected_line("c", lines) == ["c"]


# 3. root-parallel: no worker without a share

def test_root_parallel_never_starts_a_worker_without_iterations() -> None:
    """A share of 0 fell back to the level's own budget: expert, 2 iterations over 4 workers,
    searched 602."""
    g = engine_ext.new_game(2, seed=5)
    an = parallel.root_parallel(g, get_level("expert").config, workers=4, iterations=2, seed=1)
    assert an.iterations == 2
    assert sum(a.visits for a in an.alternatives) == 2


def test_root_parallel_reports_iterations_and_does_not_search_a_forced_decision() -> None:
    g = engine_ext.new_game(2, seed=5)
    seen: list[dict[str, Any]] = []
    parallel.root_parallel(g, ISMCTSConfig(iterations=0), workers=2, time_ms=300, seed=1,
                           progress=seen.append)
    assert seen and all(isinstance(r["iterations"], int) for r in seen)
    rng = random.Random(0)
    while len(g.legal_codes()) != 1:
        assert not g.is_terminal
        g.state.apply_unchecked(rng.choice(g.legal_codes()))
    an = parallel.root_parallel(g, get_level("expert").config, workers=2, seed=1)
    assert an.iterations == 0 and an.code == g.legal_codes()[0]
    assert [(a.code, a.visits) for a in an.alternatives] == [(an.code, 0)]  # as analyse answers


# 4. the determinized bot stops; greedy refuses samples=0

def test_determinized_budgets_smaller_than_the_worlds_stop() -> None:
    """A world with a share of 0 and no time budget searched forever (`det:iterations=3,worlds=4`,
    `det:iterations=0`); iterations=0 means one iteration, as for ISMCTSBot. (A subprocess: the
    old code hung.)"""
    code = ("import engine_ext\nfrom lab.bots import make_bot\ng = engine_ext.new_game(2, seed=5)\n"
            "for spec in ('det:iterations=3,worlds=4', 'det:iterations=0', 'ismcts:iterations=0'):\n"
            "    print(make_bot(spec).analyse(g, seed=1).iterations)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         check=True)
    assert out.stdout.split() == ["3", "1", "1"]


def test_greedy_refuses_a_sample_count_of_zero() -> None:
    with pytest.raises(ValueError, match="samples"):
        make_bot("greedy:samples=0")
    with pytest.raises(ValueError, match="worlds"):
        make_bot("det:worlds=1.5")


# 5. the tree is not allocated for a budget a time limit cuts short

def test_a_huge_iteration_budget_with_a_tiny_time_budget_allocates_little() -> None:
    """The tree was allocated for the whole budget before the clock started (20,000,000
    iterations and 5 ms: 916 MiB, 737 ms)."""
    st = engine_ext.new_game(2, seed=5).state
    s, n, _ = ISMCTSBot().search(st, iterations=2_000_000, time_ms=5, seed=1)
    assert 0 < n < 2_000_000
    assert s.tree.cap <= ismcts_bot.TREE_PREALLOC


@pytest.mark.parametrize("compiled", [False, True])
def test_a_tree_that_outgrows_its_allocation_gives_the_same_answer(monkeypatch: pytest.MonkeyPatch,
                                                                   compiled: bool) -> None:
    if compiled:
        _compiled_or_skip()
    g = engine_ext.get_engine(compiled).new_game(2, seed=5)
    bot = ISMCTSBot(iterations=300, compiled=compiled)
    whole = bot.analyse(g, seed=2)
    monkeypatch.setattr(ismcts_bot, "TREE_PREALLOC", 32)
    grown = bot.analyse(g, seed=2)
    assert bot.last_search.tree.cap > 32
    assert _key(grown) == _key(whole)


# 6. a search core and a state of different engine builds

@pytest.mark.parametrize("settings", [{"rollout": "turn", "macro": 1, "evaluator": "tuned"},
                                      {"observe": 1, "rollout": "greedy", "depth": 4}])
def test_every_combination_of_builds_gives_the_same_answer(settings: dict[str, Any]) -> None:
    """The core came from the config, not the state: the compiled core on an interpreted state ran
    a generic loop without macro, turn or greedy rollouts and observe."""
    _compiled_or_skip()
    doc = engine_ext.new_game(2, seed=5).to_json()
    answers = {_key(ISMCTSBot(iterations=60, compiled=core, **settings)
                    .analyse(engine_ext.get_engine(state).from_json(doc), seed=3))
               for state in (True, False) for core in (None, True, False)}
    assert len(answers) == 1


# 7. a compiled search older than its source is not used

def test_a_stale_compiled_search_warns_and_runs_interpreted(monkeypatch: pytest.MonkeyPatch) -> None:
    _compiled_or_skip()
    real = os.path.getmtime

    def newer_source(path: Any) -> float:
        # an hour after now: later than any build of the compiled search, whenever it was made
        return time.time() + 3600 if str(path).endswith("ismcts.py") else real(path)

    monkeypatch.setattr(os.path, "getmtime", newer_source)
    monkeypatch.setattr(bots, "_CHECKED", {})  # checked once per process: check again here
    with pytest.warns(UserWarning, match="older than its source"):
        assert bots.load_search().__name__ == "bots.ismcts"
    with pytest.raises(ImportError, match="older than its source"):
        bots.load_search(True)
    doc = engine_ext.new_game(2, seed=5).to_json()
    with pytest.warns(UserWarning):
        mod, st = bots.matched_search(engine_ext.get_engine(True).from_json(doc).state)
    assert mod.__name__ == "bots.ismcts" and type(st).__module__ == "engine_ext.core"


# 8. one dead root-parallel worker

_REAL_WORKER = parallel._worker
_DYING: set[int] = set()


def _dying_worker(payload: Any, compiled: bool | None, config: ISMCTSConfig, iterations: int,
                  time_ms: float, seed: int) -> dict[str, Any]:
    if seed in _DYING:
        os._exit(3)  # an OOM kill or a crash of this worker
    return _REAL_WORKER(payload, compiled, config, iterations, time_ms, seed)


@needs_fork
def test_root_parallel_merges_the_workers_that_survive(monkeypatch: pytest.MonkeyPatch) -> None:
    """One dead worker raised BrokenProcessPool and the others' parts were thrown away."""
    g = engine_ext.new_game(2, seed=5)
    seeds = parallel.worker_seeds(1, 3)
    monkeypatch.setattr(parallel, "_worker", _dying_worker)
    monkeypatch.setattr(sys.modules[__name__], "_DYING", {seeds[1]})
    an = parallel.root_parallel(g, ISMCTSConfig(), workers=3, iterations=90, seed=1)
    assert an.iterations == 60 and sum(a.visits for a in an.alternatives) == 60
    monkeypatch.setattr(sys.modules[__name__], "_DYING", set(seeds))
    with pytest.raises(RuntimeError, match="all 3 workers failed"):
        parallel.root_parallel(g, ISMCTSConfig(), workers=3, iterations=90, seed=1)


# 9. the level file

@pytest.mark.parametrize(("row", "field"), [
    ({"elo": "high"}, "elo"),
    ({"elo_ci": True}, "elo_ci"),
    ({"temperature": 5.0}, "temperature"),
    ({"evaluator": "nope"}, "evaluator"),
    ({"description": 3}, "description"),
])
def test_a_bad_level_is_refused_naming_the_level_and_the_field(row: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"level 'x': {field} must be"):
        parse_levels({"level": [{"name": "x", "iterations": 10, **row}]})


def test_a_repeated_level_name_is_refused() -> None:
    with pytest.raises(ValueError, match="level 'x': name repeated"):
        parse_levels({"level": [{"name": "x", "iterations": 10}, {"name": "x", "iterations": 300}]})


def test_an_unknown_evaluator_is_refused_in_the_spec() -> None:
    with pytest.raises(ValueError, match="evaluator must be one of"):
        make_bot("ismcts:evaluator=nope")


def test_level_to_dict_has_every_setting() -> None:
    d = parse_levels({"level": [{"name": "x", "eps": 0.2, "observe": 1, "tree_depth": 3,
                                 "weights": "w.json"}]})[0].to_dict()
    assert (d["eps"], d["observe"], d["tree_depth"], d["weights"]) == (0.2, 1, 3, "w.json")
    assert set(ISMCTSConfig().to_dict()) - {"compiled"} <= set(d)
