"""Asking a judge the same question again: repeats that bypass the answer cache.

``--repeats N`` asks every judge N times per case to measure how often its verdict
flips. The first repeat is an ordinary call (the ``--judge-cache`` may answer it, and
it is the answer a run without repeats gives); repeats 2..N run inside
:func:`fresh_answers`, where :class:`~docevals_mlflow.judges.judge.ModelJudge` neither
reads nor writes the cache, so each is a real call and never replaces the first
repeat's stored answer. A context variable carries the setting, so concurrent
repeats of other cases are not affected.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_FRESH: ContextVar[bool] = ContextVar("docevals_fresh_judge_answers", default=False)


def cache_bypassed() -> bool:
    """Whether judges called now must skip their answer cache (a repeat after the first)."""
    return _FRESH.get()


@contextmanager
def fresh_answers() -> Iterator[None]:
    """Judge calls made inside (tasks started inside too) skip the answer cache."""
    token = _FRESH.set(True)
    try:
        yield
    finally:
        _FRESH.reset(token)
