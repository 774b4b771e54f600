"""Which documents (or pipeline cases) of a run become MLflow traces: ``--traces``.

``all``: every one. ``errors``: only the wrong ones (a field outcome other than TP/TN,
a case whose verdict is not ``pass``). ``N`` (a whole number): at most N. ``none``: no
traces. The default is :data:`DEFAULT_TRACE_LIMIT`: every document of a batch up to
that many.

When a limit leaves some out, the ones traced are chosen in this order: wrong and
changed, changed, wrong, then the rest (each group in report order; the traces keep
report order). *Changed* means that the item's outcomes differ from those of a
baseline run (:mod:`~docevals_mlflow.tracking.trace_baseline` finds it and binds the
predicate with :meth:`TracePolicy.with_changed`); without one it is wrong first.

This module does not import mlflow.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from docevals_mlflow.errors import InputError

DEFAULT_TRACE_LIMIT = 1000
"""Traces a run gets when no policy is given."""

_WORDS = ("all", "errors", "none")
T = TypeVar("T")


@dataclass(frozen=True)
class TracePolicy:
    """``mode`` (``all``, ``errors``, ``limit``, ``none``) and, for ``limit``, the
    number of traces at most.

    ``baseline`` names the run whose outcomes define *changed* (a run id,
    ``experiment/run-name`` or run name, resolved as ``docevals compare`` resolves
    them); ``None``: the latest comparable run (see
    :mod:`~docevals_mlflow.tracking.trace_baseline`). ``changed`` is the predicate
    bound once the baseline was read; it takes no part in equality.
    """

    mode: str
    limit: int | None = None
    baseline: str | None = None
    changed: Callable[[Any], bool] | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return str(self.limit) if self.mode == "limit" else self.mode

    def leaves_out(self, count: int) -> bool:
        """Whether this policy, given ``count`` items, traces only some chosen by
        rank (the only case in which *changed* matters)."""
        return self.mode == "limit" and count > (self.limit or 0)

    def with_baseline(self, baseline: str | None) -> TracePolicy:
        """This policy with ``baseline`` as the run that defines *changed*."""
        return dataclasses.replace(self, baseline=baseline)

    def with_changed(self, changed: Callable[[Any], bool] | None) -> TracePolicy:
        """This policy with ``changed`` telling the items that moved since the
        baseline (ranked first when a limit leaves some out)."""
        return dataclasses.replace(self, changed=changed)

    def select(self, items: Sequence[T], wrong: Callable[[T], bool]) -> list[T]:
        """The items to trace, in report order; when a limit leaves some out, those
        chosen rank wrong-and-changed, changed, wrong, then the rest."""
        if self.mode == "none":
            return []
        if self.mode == "all":
            return list(items)
        if self.mode == "errors":
            return [item for item in items if wrong(item)]
        limit = self.limit or 0
        if len(items) <= limit:
            return list(items)
        changed = self.changed or _never
        # Rank 0 is traced first; a stable sort keeps report order within a rank.
        ranks = []
        for index, item in enumerate(items):
            moved, bad = changed(item), wrong(item)
            ranks.append((0 if moved and bad else 1 if moved else 2 if bad else 3, index))
        chosen = sorted(index for _, index in sorted(ranks)[:limit])
        return [items[index] for index in chosen]


def _never(item: Any) -> bool:
    return False


DEFAULT_POLICY = TracePolicy("limit", DEFAULT_TRACE_LIMIT)


def parse_trace_policy(value: TracePolicy | str | int | None) -> TracePolicy:
    """``all``, ``errors``, ``none`` or a whole number ≥ 0 (``None``: the default).

    Raises:
        InputError: any other value, named.
    """
    if value is None:
        return DEFAULT_POLICY
    if isinstance(value, TracePolicy):
        return value
    if isinstance(value, bool):
        raise InputError(f"invalid traces policy {value!r}", expected=_EXPECTED)
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip().lower()
        if text in _WORDS:
            return TracePolicy(text)
        if not text.isascii() or not text.isdigit():
            raise InputError(f"invalid traces policy {str(value)!r}", expected=_EXPECTED)
        number = int(text)
    if number < 0:
        raise InputError(f"invalid traces policy {value!r}", expected=_EXPECTED)
    return TracePolicy("none") if number == 0 else TracePolicy("limit", number)


_EXPECTED = "all, errors, none, or a whole number of traces (e.g. 1000)"

__all__ = ["DEFAULT_POLICY", "DEFAULT_TRACE_LIMIT", "TracePolicy", "parse_trace_policy"]
