"""Build the compiled engine (and search, and its Kashgar search game) from the same pure-Python sources.

Each compiled module `X_c` is `X.py` compiled with `X_c.pxd` (the `X_c.py` symlink points to
`X.py`), as aiohttp does for its websocket reader. Without a compiler, or with
KASHGAR_NO_EXTENSIONS=1, the package installs without extensions and runs interpreted.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

COMPILED_MODULES = [
    ("engine_ext.core_c", "engine_ext/core_c.py"),
    ("bots.ismcts_c", "bots/ismcts_c.py"),
    ("bots.kashgar_eval_c", "bots/kashgar_eval_c.py"),  # after bots.ismcts_c: it cimports its SearchGame
]


class OptionalBuildExt(build_ext):
    """A build_ext that warns in one line and goes on when the compiler fails, and compiles the
    modules side by side (one per core) unless told otherwise (`--parallel`)."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = min(len(COMPILED_MODULES), os.cpu_count() or 1)

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any build failure means "interpreted"
            print(f"WARNING: kashgar extensions not built ({exc}); the engine runs interpreted", file=sys.stderr)

    def build_extension(self, ext):  # type: ignore[no-untyped-def]
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            print(f"WARNING: {ext.name} not built ({exc}); it runs interpreted", file=sys.stderr)


def extensions() -> list:
    if os.environ.get("KASHGAR_NO_EXTENSIONS"):
        print("WARNING: KASHGAR_NO_EXTENSIONS set: extensions not built; the engine runs interpreted",
              file=sys.stderr)
        return []
    try:
        from Cython.Build import cythonize
        from setuptools import Extension
    except ImportError:
        print("WARNING: Cython missing: extensions not built; the engine runs interpreted", file=sys.stderr)
        return []
    exts = [
        Extension(name, [src], extra_compile_args=["-O3"])
        for name, src in COMPILED_MODULES
        if os.path.exists(src)
    ]
    return cythonize(
        exts,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
        quiet=True,
        nthreads=min(len(exts), os.cpu_count() or 1),  # Cython translates the modules side by side too
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
