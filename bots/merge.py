"""Root statistics of several searches of one position, added up decision by decision.

Root-parallel workers (`bots.parallel`), the worlds of the determinized baseline
(`lab.determinized`) and the parts of a long search that the service runs one after another
(`bots.answer.merge`) each search the same position; their answers are merged by adding,
for every decision, its visits, reward sums and VP sums (Chaslot et al.'s root parallelisation).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any


def merge_root_stats(parts: Iterable[Iterable[Sequence[Any]]]) -> list[tuple[Any, ...]]:
    """The rows of `parts` added up by decision: each row is a decision (any hashable key) followed
    by numbers, for example (code, visits, reward sum, VP sum), and every number after the decision
    is summed over the parts' rows for it. Decisions come in the order they are first seen."""
    acc: dict[Hashable, list[Any]] = {}
    for part in parts:
        for key, *numbers in part:
            row = acc.get(key)
            if row is None:
                acc[key] = list(numbers)
            else:
                for i, x in enumerate(numbers):
                    row[i] += x
    return [(key, *numbers) for key, numbers in acc.items()]
