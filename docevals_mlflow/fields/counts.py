"""Confusion cells and the metrics derived from them.

One rule everywhere (DESIGN §3): every leaf comparison is exactly one of TP, FA, FD,
FN or TN; FP = FA + FD; a parent's cells are the sum of its leaves' cells, so no
aggregate can contradict its parts. A zero denominator gives ``None``, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["TP", "FA", "FD", "FN", "TN"]
OUTCOMES: tuple[Outcome, ...] = ("TP", "FA", "FD", "FN", "TN")
OUTCOME_INDEX: dict[str, int] = {outcome: index for index, outcome in enumerate(OUTCOMES)}
METRIC_NAMES = ("precision", "recall", "f1", "accuracy", "far", "fdr")
LOWER_IS_BETTER = frozenset({"far", "fdr"})


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def metrics_from_cells(tp: int, fa: int, fd: int, fn: int, tn: int) -> dict[str, float | None]:
    """precision, recall, F1, accuracy, false alarm rate, false discovery rate."""
    fp = fa + fd
    return {
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "accuracy": _ratio(tp + tn, tp + fp + fn + tn),
        "far": _ratio(fa, fa + tn),
        "fdr": _ratio(fd, fd + tp),
    }


@dataclass(slots=True)
class Counts:
    """TP / FA / FD / FN / TN cells."""

    tp: int = 0
    fa: int = 0
    fd: int = 0
    fn: int = 0
    tn: int = 0

    @classmethod
    def from_list(cls, cells: list[int]) -> Counts:
        """From ``[tp, fa, fd, fn, tn]``."""
        return cls(*cells)

    def add(self, other: Counts) -> None:
        """Add another set of cells into this one."""
        self.tp += other.tp
        self.fa += other.fa
        self.fd += other.fd
        self.fn += other.fn
        self.tn += other.tn

    def add_list(self, cells: list[int]) -> None:
        """Add ``[tp, fa, fd, fn, tn]``."""
        self.tp += cells[0]
        self.fa += cells[1]
        self.fd += cells[2]
        self.fn += cells[3]
        self.tn += cells[4]

    @property
    def total(self) -> int:
        """Number of leaf comparisons."""
        return self.tp + self.fa + self.fd + self.fn + self.tn

    def metrics(self) -> dict[str, float | None]:
        """The derived metrics (see :func:`metrics_from_cells`)."""
        return metrics_from_cells(self.tp, self.fa, self.fd, self.fn, self.tn)

    def as_dict(self) -> dict[str, int]:
        """``{"tp": .., "fa": .., "fd": .., "fn": .., "tn": ..}``."""
        return {"tp": self.tp, "fa": self.fa, "fd": self.fd, "fn": self.fn, "tn": self.tn}


@dataclass(slots=True)
class ItemCounts:
    """List items: paired, expected but unpaired (missed), predicted but unpaired (extra)."""

    matched: int = 0
    missed: int = 0
    extra: int = 0

    def add(self, other: ItemCounts) -> None:
        """Add another set of item counts into this one."""
        self.matched += other.matched
        self.missed += other.missed
        self.extra += other.extra

    def as_dict(self) -> dict[str, int]:
        """``{"matched": .., "missed": .., "extra": ..}``."""
        return {"matched": self.matched, "missed": self.missed, "extra": self.extra}
