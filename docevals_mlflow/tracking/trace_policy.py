"""Which documents (or pipeline cases) of a run become MLflow traces: ``--traces``.

``all``: every one. ``errors``: only the wrong ones (a field outcome other than TP/TN,
a case whose verdict is not ``pass``). ``N`` (a whole number): at most N, the wrong
ones first, then the others in report order. ``none``: no traces. The default is
:data:`DEFAULT_TRACE_LIMIT`: every document of a batch up to that many, and in a
larger batch the wrong ones first.

This module does not import mlflow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from docevals_mlflow.errors import InputError

DEFAULT_TRACE_LIMIT = 1000
"""Traces a run gets when no policy is given."""

_WORDS = ("all", "errors", "none")
T = TypeVar("T")


@dataclass(frozen=True)
class TracePolicy:
    """``mode`` (``all``, ``errors``, ``limit``, ``none``) and, for ``limit``, the
    number of traces at most."""

    mode: str
    limit: int | None = None

    def __str__(self) -> str:
        return str(self.limit) if self.mode == "limit" else self.mode

    def select(self, items: Sequence[T], wrong: Callable[[T], bool]) -> list[T]:
        """The items to trace, in report order (the wrong ones kept first when a limit
        leaves some out)."""
        if self.mode == "none":
            return []
        if self.mode == "all":
            return list(items)
        if self.mode == "errors":
            return [item for item in items if wrong(item)]
        limit = self.limit or 0
        if len(items) <= limit:
            return list(items)
        chosen = [index for index, item in enumerate(items) if wrong(item)][:limit]
        if len(chosen) < limit:
            taken = set(chosen)
            rest = (index for index in range(len(items)) if index not in taken)
            chosen += [index for index, _ in zip(rest, range(limit - len(chosen)), strict=False)]
        return [items[index] for index in sorted(chosen)]


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
