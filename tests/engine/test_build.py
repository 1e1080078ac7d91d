"""The build: one source, two builds, and the switch between them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import engine_ext

ROOT = Path(__file__).resolve().parents[2]


def _compiled_flag(env_extra: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "KASHGAR_NO_EXTENSIONS"} | env_extra
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", "import engine_ext; print(engine_ext.COMPILED)"],
                         env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


def test_no_extensions_forces_the_interpreted_engine() -> None:
    assert _compiled_flag({"KASHGAR_NO_EXTENSIONS": "1"}) == "False"


def test_the_default_is_the_compiled_engine_when_built() -> None:
    assert _compiled_flag({}) == str(engine_ext.compiled_available())


def test_both_builds_come_from_one_source() -> None:
    core_c = ROOT / "engine_ext" / "core_c.py"
    assert core_c.is_symlink() and core_c.resolve() == (ROOT / "engine_ext" / "core.py").resolve()
    assert engine_ext.get_engine(False).core.__file__.endswith("core.py")


def test_skipped_build_says_so_in_one_line() -> None:
    env = dict(os.environ, KASHGAR_NO_EXTENSIONS="1")
    out = subprocess.run([sys.executable, "setup.py", "--name"], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True)
    warnings = [line for line in out.stderr.splitlines() if line.startswith("WARNING: KASHGAR_NO_EXTENSIONS")]
    assert len(warnings) == 1 and "interpreted" in warnings[0]
