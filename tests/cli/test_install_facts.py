"""What an install promises: the Python it needs (the stdlib modules the code imports exist there),
the license it says, and `kashgar --version`."""

from __future__ import annotations

import ast
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from kashgar_cli import main

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("engine_ext", "bots", "service", "kashgar_cli", "kashgar_client", "lab")
#: standard library modules newer than some Python the project could claim, and the first that has them
NEWER_STDLIB = {"tomllib": (3, 11), "wsgiref.types": (3, 11)}


def _project() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _floor() -> tuple[int, int]:
    spec = str(_project()["project"]["requires-python"])  # type: ignore[index]
    assert spec.startswith(">="), spec
    major, minor = spec[2:].split(".")[:2]
    return int(major), int(minor)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_the_declared_python_has_every_stdlib_module_the_code_imports() -> None:
    floor = _floor()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for module in _imports(path) & set(NEWER_STDLIB):
                assert NEWER_STDLIB[module] <= floor, f"{path} imports {module} (Python {NEWER_STDLIB[module]}), " \
                                                      f"but requires-python says {floor}"


def test_the_linters_target_the_declared_python() -> None:
    floor = _floor()
    tools = _project()["tool"]
    assert tools["ruff"]["target-version"] == f"py{floor[0]}{floor[1]}"  # type: ignore[index]
    assert tools["mypy"]["python_version"] == f"{floor[0]}.{floor[1]}"  # type: ignore[index]


def test_the_license_the_metadata_names_is_shipped() -> None:
    assert _project()["project"]["license"] == {"text": "MIT"}  # type: ignore[index]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Permission is hereby granted, free of charge" in text


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"kashgar {version('kashgar-ai')}"
