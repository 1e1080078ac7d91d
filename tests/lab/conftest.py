"""Fixtures of the lab's tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def served_small(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The service's searches asked for here, recorded as asked (their split into parts) and run at
    1/100 of their iterations, so that a grandmaster answer takes a test a moment."""
    from service import search

    specs: list[Any] = []
    real = search.answer

    def smaller(spec: search.SearchSpec, *a: Any, **kw: Any) -> Any:
        specs.append(spec)
        return real(search.SearchSpec(**{**spec.to_dict(), "iterations": (spec.iterations or 0) // 100}), *a, **kw)

    monkeypatch.setattr(search, "answer", smaller)
    return specs
