"""A stand-in for `import cython` where Cython is not installed (it is a build requirement only).

The compiled modules are built from pure-Python-mode sources (`engine_ext/core.py`,
`bots/ismcts.py`); run interpreted, those sources need just these names of Cython's own
`Cython.Shadow`: the C types they annotate with (plain Python numbers here), `cast`, and
`compiled` (False).
"""

from __future__ import annotations

from typing import Any

compiled = False
int = int  # the C types, as Python numbers
bint = bool
ulonglong = int
p_int = list  # a pointer to C ints: a list of them


def cast(t: Any, value: Any) -> Any:
    """`cython.cast(type, value)` run interpreted: the value converted to the type."""
    return t(value)
