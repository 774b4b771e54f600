"""Which page classes are confused: a confusion matrix and per-class scores.

Every page found on either side is one cell of the matrix: row = expected class,
column = predicted class. A page that one side lacks sits in that side's ``None``
row or column (shown as "(missing)"), so a dropped page counts against recall and an
invented one against precision. Per class C:

* TP: pages of C predicted as C; FP: pages predicted C that are not C (or not in
  the expected packet); FN: pages of C predicted otherwise (or not predicted);
* precision, recall and F1 from those (``None`` for a zero denominator);
* ``support``: expected pages of C; ``predicted``: pages predicted as C.

Macro figures average the classes whose figure is defined; micro figures pool the
pages (micro precision = correct pages / predicted pages, micro recall = correct
pages / expected pages). The classes of a packet are those of its sections, on
either side.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from docevals_mlflow.split.alignment import ABSENT, Alignment
from docevals_mlflow.split.scores import ReportPart, mean, ratio

MISSING_LABEL_TEXT = "(missing)"
"""How the ``None`` label (a page one side lacks) is shown in tables and charts."""

Cells = Mapping[tuple[str | None, str | None], int]
"""Non-zero cells of a confusion matrix: (expected, predicted) class → pages."""


class ClassScore(ReportPart):
    """Page-level detection figures of one class."""

    support: int
    predicted: int
    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None


class ConfusionMatrix(ReportPart):
    """Pages by expected class (rows) and predicted class (columns).

    ``labels`` name both axes in the same order; ``None`` (last, present only when
    some page is on one side only) stands for "the side does not have the page".
    """

    labels: list[str | None]
    counts: list[list[int]]

    def cells(self) -> Counter[tuple[str | None, str | None]]:
        """The non-zero cells."""
        out: Counter[tuple[str | None, str | None]] = Counter()
        for row_label, row in zip(self.labels, self.counts, strict=True):
            for col_label, count in zip(self.labels, row, strict=True):
                if count:
                    out[row_label, col_label] += count
        return out

    def most_frequent(self, limit: int) -> list[int]:
        """Indices of the ``limit`` labels with the most pages on either side (all of
        them when there are no more), in label order: what a table or chart shows."""
        keep = list(range(len(self.labels)))
        if len(keep) <= limit:
            return keep
        weight = [sum(self.counts[i]) + sum(row[i] for row in self.counts) for i in keep]
        return sorted(sorted(keep, key=lambda i: -weight[i])[:limit])


class ClassReport(ReportPart):
    """Per-class scores, the confusion matrix, and micro/macro averages over classes."""

    classes: dict[str, ClassScore]
    confusion: ConfusionMatrix
    micro_precision: float | None
    micro_recall: float | None
    micro_f1: float | None
    macro_precision: float | None
    macro_recall: float | None
    macro_f1: float | None


def class_report(labels: Sequence[str], cells: Cells) -> dict[str, Any]:
    """The :class:`ClassReport` dict of the cells of a matrix over ``labels``."""
    support: dict[str | None, int] = dict.fromkeys(labels, 0)
    guessed: dict[str | None, int] = dict.fromkeys(labels, 0)
    hits: dict[str | None, int] = dict.fromkeys(labels, 0)
    one_sided = False
    for (expected, predicted), count in cells.items():
        support[expected] = support.get(expected, 0) + count
        guessed[predicted] = guessed.get(predicted, 0) + count
        if expected == predicted:
            hits[expected] += count
        elif expected is None or predicted is None:
            one_sided = one_sided or count > 0
    classes: dict[str, Any] = {}
    for label in labels:
        tp, expected_pages, predicted_pages = hits[label], support[label], guessed[label]
        classes[label] = {
            "support": expected_pages,
            "predicted": predicted_pages,
            "tp": tp,
            "fp": predicted_pages - tp,
            "fn": expected_pages - tp,
            "precision": ratio(tp, predicted_pages),
            "recall": ratio(tp, expected_pages),
            "f1": ratio(2 * tp, expected_pages + predicted_pages),
        }
    axis: list[str | None] = [*labels, None] if one_sided else list(labels)
    place = {label: index for index, label in enumerate(axis)}
    counts = [[0] * len(axis) for _ in axis]
    for (expected, predicted), count in cells.items():
        counts[place[expected]][place[predicted]] += count
    correct = sum(hits[label] for label in labels)
    all_expected = sum(support[label] for label in labels)
    all_predicted = sum(guessed[label] for label in labels)
    return {
        "classes": classes,
        "confusion": {"labels": axis, "counts": counts},
        "micro_precision": ratio(correct, all_predicted),
        "micro_recall": ratio(correct, all_expected),
        "micro_f1": ratio(2 * correct, all_expected + all_predicted),
        "macro_precision": mean(entry["precision"] for entry in classes.values()),
        "macro_recall": mean(entry["recall"] for entry in classes.values()),
        "macro_f1": mean(entry["f1"] for entry in classes.values()),
    }


def merged_cells(matrices: Iterable[ConfusionMatrix]) -> Counter[tuple[str | None, str | None]]:
    """The cells of several matrices added up (labels may differ)."""
    total: Counter[tuple[str | None, str | None]] = Counter()
    for matrix in matrices:
        total.update(matrix.cells())
    return total


def packet_classes(alignment: Alignment) -> list[dict[str, Any]]:
    """Per-class scores and confusion matrix of every packet of a batch."""
    size = len(alignment.labels) + 1
    names: list[str | None] = [*alignment.labels, None]  # index -1 (ABSENT) is None
    expected = np.where(alignment.expected_class == ABSENT, size - 1, alignment.expected_class)
    predicted = np.where(alignment.predicted_class == ABSENT, size - 1, alignment.predicted_class)
    keys, counts = np.unique(
        (alignment.packet * size + expected) * size + predicted, return_counts=True
    )
    owners = (keys // (size * size)).tolist()
    rows = (keys // size % size).tolist()
    cols = (keys % size).tolist()
    cells: list[dict[tuple[str | None, str | None], int]] = [{} for _ in range(alignment.packets)]
    for owner, row, col, count in zip(owners, rows, cols, counts.tolist(), strict=True):
        cells[owner][names[row], names[col]] = count
    left, right = alignment.expected, alignment.predicted
    left_start, right_start = left.section_start.tolist(), right.section_start.tolist()
    out = []
    for packet in range(alignment.packets):
        labels = sorted(
            set(left.classes[left_start[packet] : left_start[packet + 1]])
            | set(right.classes[right_start[packet] : right_start[packet + 1]])
        )
        out.append(class_report(labels, cells[packet]))
    return out


__all__ = [
    "MISSING_LABEL_TEXT",
    "Cells",
    "ClassReport",
    "ClassScore",
    "ConfusionMatrix",
    "class_report",
    "merged_cells",
    "packet_classes",
]
