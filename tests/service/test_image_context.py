"""The container image's build context, as Docker makes it from `.dockerignore` (the docker SDK's
matcher, which follows Docker's rules): every file the package needs at run time is in it (the
package data pyproject.toml names: the web table's page and scripts, card and level data, the
calibration records), and nothing built on the host is."""

from __future__ import annotations

import tomllib
from pathlib import Path

from docker.utils.build import exclude_paths

ROOT = Path(__file__).resolve().parents[2]


def _context() -> set[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [x.strip() for x in lines if x.strip() and not x.lstrip().startswith("#")]
    return set(exclude_paths(str(ROOT), patterns, dockerfile="deploy/Dockerfile"))


def test_every_file_the_package_needs_at_run_time_is_in_the_image_context() -> None:
    context = _context()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    needed = []
    for package, globs in data.items():
        for pattern in globs:
            needed += [str(p.relative_to(ROOT)) for p in (ROOT / package).glob(pattern) if p.is_file()]
    assert "service/table/templates/table.html" in needed and "service/table/static/table.js" in needed
    missing = sorted(p for p in needed if p not in context and not p.endswith((".so", ".c")))
    assert not missing, f"left out of the image: {missing}"
    for source in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "engine_ext/core.py", "deploy/Dockerfile"):
        assert source in context, source


def test_nothing_built_on_the_host_goes_into_the_image() -> None:
    built = [p for p in _context() if p.endswith((".so", ".pyc", ".c")) or p.startswith(("build/", ".git/"))]
    assert not built, built


def test_the_image_checks_its_own_health() -> None:
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "HEALTHCHECK" in dockerfile and "/healthz" in dockerfile.split("HEALTHCHECK", 1)[1]


def test_the_image_installs_its_dependencies_at_pinned_versions() -> None:
    """deploy/requirements.lock pins the run-time dependencies (the package's, within pyproject's
    ranges, and theirs) at one version each, and the image installs the wheel with it as
    constraints: an image built later installs the same versions (`scripts/lock_image_deps.py`
    writes it from an environment where the tests pass)."""
    from packaging.requirements import Requirement

    lock = ROOT / "deploy" / "requirements.lock"
    assert "deploy/requirements.lock" in _context()
    pins = {}
    for line in lock.read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, line
            pins[name] = version
    assert {"werkzeug", "pydantic-core", "jinja2"} <= set(pins)  # theirs too, not only the package's own
    for raw in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        req = Requirement(raw)
        assert req.specifier.contains(pins[req.name.lower()]), (raw, pins[req.name.lower()])
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "COPY deploy/requirements.lock" in dockerfile and "-c /tmp/requirements.lock /wheels/*.whl" in dockerfile
