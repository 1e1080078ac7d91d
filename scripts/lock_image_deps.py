"""Write deploy/requirements.lock: the run-time dependencies of the package (pyproject's
`dependencies`, and theirs, without extras), each pinned at the version installed here, so that the
image installs what CI tested instead of whatever the index has on the day it is built.

    python3 scripts/lock_image_deps.py      # after `pip install -e .`, in the environment CI tests
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "deploy" / "requirements.lock"


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def run_time_closure() -> dict[str, str]:
    """Every distribution the package needs at run time (no extras, no markers that do not hold
    here), with its installed version."""
    wanted = [_name(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    seen: dict[str, str] = {}
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        dist = metadata.distribution(name)
        seen[name] = dist.version
        for req in dist.requires or []:
            if "extra ==" in req:
                continue
            marker = req.split(";", 1)[1].strip() if ";" in req else ""
            if marker and not _marker_holds(marker):
                continue
            wanted.append(_name(req))
    return dict(sorted(seen.items()))


def _marker_holds(marker: str) -> bool:
    from packaging.markers import Marker

    return bool(Marker(marker).evaluate())


def main() -> int:
    pins = run_time_closure()
    lines = ["# The image's run-time dependencies, pinned (scripts/lock_image_deps.py writes it from the",
             "# environment CI tests; deploy/Dockerfile installs the wheel with it as constraints).",
             *(f"{name}=={version}" for name, version in pins.items())]
    LOCK.write_text("\n".join(lines) + "\n")
    print(f"{len(pins)} pins written to {LOCK.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
