"""The layout is the architecture: data flows service -> bots -> engine, never back, and the lab
sits beside the product. The product's packages never import `lab`; the command line imports it
only inside the lab's own commands (never at module level), so what is served never loads it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: each package and the packages it may never import (at any depth in the file)
FORBIDDEN = {
    "engine_ext": {"bots", "service", "kashgar_cli", "kashgar_client", "lab"},
    "bots": {"service", "kashgar_cli", "kashgar_client", "lab"},
    "service": {"kashgar_cli", "kashgar_client", "lab"},
    "kashgar_client": {"engine_ext", "bots", "service", "kashgar_cli", "lab"},
}


def _run_on_import(tree: ast.AST) -> list[ast.AST]:
    """The nodes of `tree` that run when the module is imported: not function bodies, not
    `if TYPE_CHECKING:` blocks."""
    out: list[ast.AST] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out += [n for x in node.orelse for n in [x, *_run_on_import(x)]]
            continue
        out += [node, *_run_on_import(node)]
    return out


def _imports(path: Path, module_level_only: bool = False) -> set[str]:
    """Top-level package names `path` imports (only those imported as the module loads, with
    `module_level_only`)."""
    tree = ast.parse(path.read_text(), str(path))
    nodes = _run_on_import(tree) if module_level_only else list(ast.walk(tree))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_climbs_back_up(package: str) -> None:
    bad = {str(p.relative_to(ROOT)): sorted(_imports(p) & FORBIDDEN[package])
           for p in sorted((ROOT / package).rglob("*.py"))}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_command_line_imports_the_lab_only_when_a_lab_command_runs() -> None:
    bad = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "kashgar_cli").rglob("*.py"))
           if "lab" in _imports(p, module_level_only=True)]
    assert bad == []


def test_what_is_served_never_loads_the_lab() -> None:
    """`kashgar serve` and `kashgar worker` as they start: every command registered, the app made,
    gunicorn's settings and worker class and the RQ worker's job functions imported."""
    code = (
        "import sys\n"
        "from kashgar_cli.main import build_parser\n"
        "build_parser().parse_args(['serve'])\n"
        "from service import create_app\n"
        "create_app({'TESTING': True, 'log_level': 'WARNING'})\n"
        "import service.gunicorn_conf, service.gunicorn_worker, service.jobs.worker, service.jobs.runner\n"
        "import kashgar_cli.worker, kashgar_cli.engine\n"
        "print(sorted(m for m in sys.modules if m == 'lab' or m.startswith('lab.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
