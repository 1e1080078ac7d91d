"""Which build searches: a compiled engine state the compiled search, an interpreted one the
interpreted search, other games' states this process's build (KASHGAR_NO_EXTENSIONS=1: the
interpreted one); both builds give the same answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bots
import engine_ext
from bots.ismcts_bot import ISMCTSBot
from lab.toygame import ToyState
from tests.engine_helpers import require_compiled_search

ROOT = Path(__file__).resolve().parents[2]


def _key(an: Any) -> tuple[Any, ...]:
    return an.code, tuple((a.code, a.visits, round(a.mean_reward, 9)) for a in an.alternatives), an.iterations


def test_an_engine_state_is_searched_by_its_own_build(engine: Any) -> None:
    st = engine.new_game(2, seed=5).state
    build = bots.build_for(st)
    assert build.compiled == engine.COMPILED
    assert build.search.__name__ == ("bots.ismcts_c" if engine.COMPILED else "bots.ismcts")
    assert build.kashgar.__name__ == ("bots.kashgar_eval_c" if engine.COMPILED else "bots.kashgar_eval")
    bot = ISMCTSBot(iterations=20)
    bot.analyse(st, seed=1)
    assert type(bot.last_search).__module__ == build.search.__name__
    assert type(bot.last_search.game).__module__ == build.kashgar.__name__


def test_other_games_are_searched_by_the_process_build() -> None:
    assert bots.build_for(ToyState(2, seed=1)).compiled == bots.COMPILED
    assert bots.build_for(None).compiled == bots.COMPILED


@pytest.mark.parametrize("settings", [{}, {"rollout": "turn", "macro": 1, "evaluator": "tuned"},
                                      {"rollout": "turn", "macro": 2, "evaluator": "tuned"},
                                      {"evaluator": "vp", "depth": 1}])
def test_both_builds_give_the_same_answer(settings: dict[str, Any]) -> None:
    require_compiled_search()
    doc = engine_ext.new_game(2, seed=5).to_json()
    states = [engine_ext.get_engine(compiled).from_json(doc) for compiled in (True, False)]
    answers = {_key(ISMCTSBot(iterations=60, **settings).analyse(st, seed=3)) for st in states}
    assert len(answers) == 1


def _process_build(env_extra: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "KASHGAR_NO_EXTENSIONS"} | env_extra
    code = ("import bots, engine_ext\n"
            "print(bots.COMPILED, bots.build_for(engine_ext.new_game(2, 1).state).search.__name__)")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout.strip()


def test_no_extensions_forces_the_interpreted_search() -> None:
    assert _process_build({"KASHGAR_NO_EXTENSIONS": "1"}) == "False bots.ismcts"


def test_the_default_is_the_compiled_search_when_built() -> None:
    try:
        bots.load_build(True)
    except ImportError:
        assert _process_build({}) == "False bots.ismcts"
    else:
        assert _process_build({}) == "True bots.ismcts_c"


def test_the_sources_run_without_cython_installed() -> None:
    """Cython is a build requirement only: the interpreted search imports with `cython` missing."""
    code = ("import sys\nsys.modules['cython'] = None\n"  # `import cython` raises ImportError
            "import engine_ext\nfrom bots.ismcts_bot import ISMCTSBot\n"
            "g = engine_ext.new_game(2, 1)\n"
            "print(ISMCTSBot(iterations=5, rollout='turn', macro=1).analyse(g).iterations)")
    env = dict(os.environ, KASHGAR_NO_EXTENSIONS="1")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True)
    assert out.stdout.strip() == "5"


def test_each_compiled_module_is_its_source_compiled() -> None:
    for name in ("ismcts", "kashgar_eval"):
        link = ROOT / "bots" / f"{name}_c.py"
        assert link.is_symlink() and link.resolve() == (ROOT / "bots" / f"{name}.py").resolve()
