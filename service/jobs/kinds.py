"""The kinds of work a job holds, each as the functions the queue's runner needs: what a part does,
what it reports while it runs, how the parts' results merge and what the progress is. The queue,
the store, retries and admission are the same for every kind.

- `search`: a long `/suggest`, its root-parallel parts merged (`service.search`);
- `review`: a game review, its decisions split into parts (`service.review`).

A job cancelled, or with a part failed for good, keeps the merge of what its parts did: the
finished parts' results, and what a kind salvages of a part that did not finish (`salvage`: a
review's decisions reviewed before it stopped; a search's reports hold no tree to merge).

A job record's spec names its kind (`spec["kind"]`; a spec without one is a search)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import review, search

Progress = Callable[[dict[str, Any]], None]
Stop = Callable[[], bool]


@dataclass(frozen=True)
class JobKind:
    name: str
    run_part: Callable[[dict[str, Any], int, Progress, Stop], dict[str, Any]]
    summary: Callable[[dict[str, Any]], dict[str, Any]]  # what a running part keeps of its reports
    combine: Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, Any]]
    progress: Callable[[dict[str, Any]], dict[str, Any]]  # the progress of a job record
    #: what `combine` can take of a part of the record that did not finish (None: nothing)
    salvage: Callable[[dict[str, Any]], dict[str, Any] | None]


def _search_part(spec: dict[str, Any], index: int, progress: Progress, should_stop: Stop) -> dict[str, Any]:
    s = search.SearchSpec.from_dict(spec)
    return search.run_part(s, search.plan(s)[index], progress=progress, should_stop=should_stop)


def _search_combine(spec: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    answer = search.combine(search.SearchSpec.from_dict(spec), results)
    return answer if spec.get("elo") is None else {**answer, "elo": spec["elo"]}


def _search_progress(rec: dict[str, Any]) -> dict[str, Any]:
    from .model import progress

    return progress(rec)


def _nothing(part: dict[str, Any]) -> dict[str, Any] | None:
    return None


SEARCH = JobKind("search", _search_part, search.progress_summary, _search_combine, _search_progress, _nothing)
REVIEW = JobKind(review.KIND, review.run_part, review.progress_summary, review.combine, review.progress,
                 review.salvage)
KINDS = {k.name: k for k in (SEARCH, REVIEW)}


def kind_of(spec: dict[str, Any]) -> JobKind:
    """The kind of a job's spec (ValueError for a kind this process does not know)."""
    name = str(spec.get("kind") or SEARCH.name)
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"a job of kind {name!r}: this process knows {', '.join(KINDS)}") from None
