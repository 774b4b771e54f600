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


ITEM_FIELDS = ("matched", "weak", "missed", "extra", "empty", "invented")
"""Item-level counts of a list, in the order the engine keeps them."""


@dataclass(slots=True)
class ItemCounts:
    """List items, counted as Stickler 1.0 counts a list field's ``overall``.

    ``matched`` pairs reach the list's match threshold (TP); ``weak`` pairs were
    paired by the assignment but fall below it (FD; only with ``pairing: stickler``);
    ``missed`` expected and ``extra`` predicted items were left unpaired (FN, FA);
    ``empty`` counts list instances empty on both sides (one TN each). ``invented``
    counts list instances expected empty where the prediction has items: with
    ``empty`` it gives the list's false alarm rate.
    """

    matched: int = 0
    weak: int = 0
    missed: int = 0
    extra: int = 0
    empty: int = 0
    invented: int = 0

    @classmethod
    def from_list(cls, cells: list[int]) -> ItemCounts:
        """From ``[matched, weak, missed, extra, empty, invented]``."""
        return cls(*cells)

    def add(self, other: ItemCounts) -> None:
        """Add another set of item counts into this one."""
        self.matched += other.matched
        self.weak += other.weak
        self.missed += other.missed
        self.extra += other.extra
        self.empty += other.empty
        self.invented += other.invented

    def add_list(self, cells: list[int]) -> None:
        """Add ``[matched, weak, missed, extra, empty, invented]``."""
        self.matched += cells[0]
        self.weak += cells[1]
        self.missed += cells[2]
        self.extra += cells[3]
        self.empty += cells[4]
        self.invented += cells[5]

    @property
    def cells(self) -> Counts:
        """Item-level cells: TP matched, FA extra, FD weak, FN missed, TN empty."""
        return Counts(self.matched, self.extra, self.weak, self.missed, self.empty)

    def metrics(self) -> dict[str, float | None]:
        """Item-level metrics. ``far`` is the share of list instances expected empty
        in which the prediction invented items (not extra items over empty lists,
        which would divide items by lists)."""
        metrics = self.cells.metrics()
        metrics["far"] = _ratio(self.invented, self.invented + self.empty)
        return metrics

    def as_dict(self) -> dict[str, int]:
        """The six counts by name (see :data:`ITEM_FIELDS`)."""
        return {
            "matched": self.matched,
            "weak": self.weak,
            "missed": self.missed,
            "extra": self.extra,
            "empty": self.empty,
            "invented": self.invented,
        }
