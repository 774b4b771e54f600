"""The documented differences from Stickler 1.0, as narrow predicates.

Each row of ``docs/differences.md`` that the differential test may meet is one
named predicate here. A predicate looks at the concrete values of one place in the
document (and at our outcome there) and, when its row applies, returns the cells
Stickler is expected to count there, derived from ours; otherwise ``None``. The
harness (:mod:`tests.fields.stickler_diff.harness`) accepts a difference between
our cells and Stickler's only when the cells predicted this way are Stickler's.

Rows:

``whitespace``
    Whitespace-only text is empty here; Stickler's null is ``None`` / ``""`` only, so
    ``"  "`` is a value to its comparator (outside list-item leaves, which strip).
``empty_list_items``
    Empty items (``""``, ``None``) of a list of scalars are dropped here; Stickler
    counts them as items (``["a", ""]`` against ``["a"]`` is TP 1, FN 1).
``group_absent_one_side``
    A group absent (missing / ``null``) on one side: Stickler counts one FN (FA) for
    the group whatever the other side's object holds (``{}`` too), we one FN (FA)
    per non-empty leaf (and TN for its empty leaves).
``group_absent_both``
    A group absent on both sides: Stickler one TN for the group, we one TN per
    configured leaf.
``weak_leftover_leaves``
    Leaves of weak pairs and of leftover items of a list of objects: counted here
    (FD / FN / FA), not by Stickler (its issue #94). Applied by restricting our
    leaf rows to matched pairs.
``numbers``
    ``NUMERIC_EXACT`` where our reading of a value differs from Stickler's "delete
    everything but digits, ``.`` and ``-``" reading (decimal commas, thousands dots,
    currency letters, trailing minus, exponents, Unicode minus): the decision is
    Stickler's, computed from both readings.
``identical_text``
    ``NUMERIC_EXACT`` and ``DATE``: two values that read as no number (no date) but
    whose text is identical once trimmed, spaces collapsed and case folded match
    here (``"N/A"`` against ``"n/a"``); Stickler scores such text 0 (FD).
``dates``
    ``DATE`` where our reading of a value differs from Stickler's ``DateComparator``
    (which tries both day/month orders, reads ``20241009`` day first too, reads
    two-digit years in the current century, drops the year of ``April 14,2019`` and
    accepts ``4//3/18`` or three-digit years): the decision is Stickler's, computed
    from both readings.
``ties``
    Two optimal assignments of the same list with the same total similarity (we use
    scipy, Stickler munkres): both are verified optimal by brute force (small lists)
    or against scipy's optimum, and Stickler's cells are ours recounted under its
    assignment.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from docevals_mlflow.fields.dates import parse_date
from docevals_mlflow.fields.numbers import parse_number
from tests.fields.stickler_diff import stickler_side
from tests.fields.stickler_diff.corpus import Scalar
from tests.fields.stickler_diff.our_side import present

ROWS: dict[str, str] = {
    "whitespace": "whitespace-only text is empty here, a value to Stickler",
    "empty_list_items": "empty items of a list of scalars are dropped here, items to Stickler",
    "group_absent_one_side": "a group absent on one side: Stickler one FN/FA, we one per leaf",
    "group_absent_both": "a group absent on both sides: Stickler one TN, we one per leaf",
    "weak_leftover_leaves": "leaves of weak pairs and leftover items: not counted by Stickler",
    "numbers": "a number read differently (decimal comma, grouping, currency letters, ...)",
    "identical_text": "identical text that is no number (no date) matches here, not there",
    "dates": "a date read differently (both orders tried, YYYYDDMM, century, ...)",
    "ties": "two optimal assignments (scipy vs munkres) give different cells",
}

TOLERANCE = 1e-9


def is_blank(value: Any) -> bool:
    """Whitespace-only, non-empty text (empty here, a value to Stickler)."""
    return isinstance(value, str) and value != "" and not value.strip()


# --- whitespace ---------------------------------------------------------------------


def whitespace(
    comparator: Any, threshold: float, expected: Any, predicted: Any, ours: str
) -> str | None:
    """Row ``whitespace`` for a scalar outside list-item leaves: Stickler's cell when
    a whitespace-only value is involved and Stickler counts it otherwise than we do
    (ours reads the blank side as empty: TN / FA / FN)."""
    if not (is_blank(expected) or is_blank(predicted)):
        return None
    theirs = stickler_side.scalar_outcome(comparator, threshold, expected, predicted)
    return theirs if theirs != ours else None


# --- numbers ------------------------------------------------------------------------


def readings_differ(value: Any) -> bool:
    """Whether our number parser and Stickler's reading disagree on ``value``."""
    ours = parse_number(value)
    theirs = stickler_side.stickler_number(value)
    if ours is None or theirs is None:
        return (ours is None) != (theirs is None)
    if not theirs.is_finite():
        return True
    return not math.isclose(ours, float(theirs), rel_tol=1e-12, abs_tol=1e-12)


def stickler_numeric_score(node: Scalar, expected: Any, predicted: Any) -> float:
    """``NumericComparator`` with the field's absolute tolerance."""
    from stickler.comparators.numeric import NumericComparator

    with stickler_side.quiet():
        return float(
            NumericComparator(absolute_tolerance=node.threshold).compare(expected, predicted)
        )


def numbers(node: Scalar, expected: Any, predicted: Any, ours: str) -> str | None:
    """Row ``numbers`` for one leaf we scored (TP / FD): Stickler's decision when the
    two readings of either value differ and the decision changes."""
    if node.method != "NUMERIC_EXACT" or ours not in ("TP", "FD"):
        return None
    if not (readings_differ(expected) or readings_differ(predicted)):
        return None
    theirs = "TP" if stickler_numeric_score(node, expected, predicted) >= 1.0 else "FD"
    return theirs if theirs != ours else None


def numbers_score(node: Scalar, expected: Any, predicted: Any, ours: float) -> float | None:
    """Row ``numbers`` for a score that takes part in pairing (0 / 1)."""
    if node.method != "NUMERIC_EXACT":
        return None
    if not (readings_differ(expected) or readings_differ(predicted)):
        return None
    theirs = stickler_numeric_score(node, expected, predicted)
    return theirs if abs(theirs - ours) > TOLERANCE else None


# --- identical text and dates ------------------------------------------------------------

_SPACE_RUNS = re.compile(r"\s+")


def _normalized(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return _SPACE_RUNS.sub(" ", value.strip()).casefold()


def identical_text(node: Scalar, expected: Any, predicted: Any) -> bool:
    """Whether row ``identical_text`` applies: a NUMERIC_EXACT or DATE pair of the same
    text that our method cannot read (so it matched on the text alone)."""
    if node.method not in ("NUMERIC_EXACT", "DATE"):
        return False
    left, right = _normalized(expected), _normalized(predicted)
    if left is None or left != right:
        return False
    if node.method == "NUMERIC_EXACT":
        return parse_number(expected) is None
    return parse_date(expected) is None


def _stickler_days(value: Any) -> set[Any]:
    from stickler.comparators.date import DateComparator

    comparator = DateComparator()
    days = set()
    with stickler_side.quiet():
        for dayfirst in (False, True):
            try:
                parsed = comparator._parse(value, dayfirst=dayfirst)
            except Exception:  # Stickler's parser raising is one more reading to it
                continue
            moment = getattr(parsed, "dt", None)
            if moment is not None:
                days.add(
                    (
                        moment.date() if getattr(parsed, "has_year", True) else None,
                        moment.month,
                        moment.day if getattr(parsed, "has_day", True) else None,
                    )
                )
    return days


def date_readings_differ(value: Any) -> bool:
    """Whether our DATE reading of ``value`` and Stickler's (either order) differ."""
    if not present(value):
        return False
    ours = parse_date(value)
    theirs = _stickler_days(value)
    if ours is None:
        return bool(theirs)
    return theirs != {(ours, ours.month, ours.day)}


def dates_or_text(node: Scalar, expected: Any, predicted: Any) -> str | None:
    """Row ``identical_text`` or ``dates`` for one pair of present values, when one
    applies (the caller then takes Stickler's own decision as the expected one)."""
    if identical_text(node, expected, predicted):
        return "identical_text"
    if node.method == "DATE" and (
        date_readings_differ(expected) or date_readings_differ(predicted)
    ):
        return "dates"
    return None


# --- list entries -------------------------------------------------------------------


def list_item_entry(
    node: Scalar, comparator: Any, expected: Any, predicted: Any, ours: float | None
) -> tuple[float, str | None]:
    """The score Stickler pairs two items of a list of scalars with, derived from
    ``ours`` (None where we dropped an item), and the row that explains a change."""
    if ours is not None:
        row = dates_or_text(node, expected, predicted)
        if row is not None:
            return stickler_side.item_score(comparator, expected, predicted), row
        adjusted = numbers_score(node, expected, predicted, ours)
        return (ours, None) if adjusted is None else (adjusted, "numbers")
    theirs = stickler_side.item_score(comparator, expected, predicted)
    if is_blank(expected) or is_blank(predicted):
        return theirs, "whitespace"
    return theirs, "empty_list_items"


def attribute_entry(
    node: Scalar, comparator: Any, expected: Any, predicted: Any, ours: float | None
) -> tuple[float | None, str | None]:
    """One attribute's part in Stickler's item similarity, derived from ours (``None``:
    left out of the mean, absent on both sides), and the row that explains a change."""
    if is_blank(expected) or is_blank(predicted):
        theirs = stickler_side.raw_score(comparator, expected, predicted)
        changed = (theirs is None) != (ours is None) or (
            theirs is not None and ours is not None and abs(theirs - ours) > TOLERANCE
        )
        return (theirs, "whitespace") if changed else (ours, None)
    if ours is not None and present(expected) and present(predicted):
        row = dates_or_text(node, expected, predicted)
        if row is not None:
            return stickler_side.raw_score(comparator, expected, predicted), row
        adjusted = numbers_score(node, expected, predicted, ours)
        if adjusted is not None:
            return adjusted, "numbers"
    return ours, None


# --- groups -------------------------------------------------------------------------


def group_absent(
    expected: Any, predicted: Any, our_leaves: Sequence[int], blank_leaves: int
) -> tuple[list[int], set[str]] | None:
    """Rows ``group_absent_both`` / ``group_absent_one_side`` for a group that is not
    an object on at least one side (``our_leaves``: our cells summed over the
    group's leaves; ``blank_leaves``: whitespace-only leaves on the present side).

    Returns Stickler's cells for the group itself (nothing is counted below it) and
    the rows applied, or ``None`` when the group is an object on both sides.
    """
    expected_object, predicted_object = isinstance(expected, dict), isinstance(predicted, dict)
    if expected_object and predicted_object:
        return None
    if not expected_object and not predicted_object:
        return [0, 0, 0, 0, 1], {"group_absent_both"}
    cells = [0, 0, 0, 1, 0] if expected_object else [0, 1, 0, 0, 0]
    if blank_leaves:
        return cells, {"group_absent_one_side", "whitespace"}
    # An object on one side is present to Stickler whatever it holds ({} and
    # {"city": null} too), and counted as one unit; here its leaves are counted, so
    # an object holding no value gives TN leaves where Stickler has one FN (FA).
    return cells, {"group_absent_one_side"}


# --- assignments --------------------------------------------------------------------

Pairs = Sequence[tuple[int, int]]


def total(similarity: np.ndarray, pairs: Pairs) -> float:
    """The total similarity of an assignment."""
    return float(sum(similarity[i, j] for i, j in pairs))


def best_total(similarity: np.ndarray) -> float:
    """The optimum of the assignment problem (brute force on small matrices, checked
    against scipy; scipy alone on larger ones)."""
    rows, cols = similarity.shape
    if rows == 0 or cols == 0:
        return 0.0
    chosen_rows, chosen_cols = linear_sum_assignment(similarity, maximize=True)
    optimum = float(similarity[chosen_rows, chosen_cols].sum())
    if min(rows, cols) <= 5 and max(rows, cols) <= 7:
        if rows <= cols:
            brute = max(
                sum(similarity[i, j] for i, j in enumerate(perm))
                for perm in itertools.permutations(range(cols), rows)
            )
        else:
            brute = max(
                sum(similarity[i, j] for j, i in enumerate(perm))
                for perm in itertools.permutations(range(rows), cols)
            )
        assert abs(brute - optimum) <= TOLERANCE, (brute, optimum)
    return optimum


def best_pairs(similarity: np.ndarray) -> list[tuple[int, int]]:
    """One optimal assignment."""
    if similarity.size == 0:
        return []
    rows, cols = linear_sum_assignment(similarity, maximize=True)
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def is_optimal(similarity: np.ndarray, pairs: Pairs) -> bool:
    """A complete assignment (min(m, n) pairs, one per row and column) of optimal total."""
    rows, cols = similarity.shape
    if len(pairs) != min(rows, cols):
        return False
    if len({i for i, _ in pairs}) != len(pairs) or len({j for _, j in pairs}) != len(pairs):
        return False
    if any(not (0 <= i < rows and 0 <= j < cols) for i, j in pairs):
        return False
    return total(similarity, pairs) >= best_total(similarity) - TOLERANCE


def ties(similarity: np.ndarray, ours: Pairs, theirs: Pairs) -> bool:
    """Row ``ties``: the two assignments differ and both are optimal under our
    similarity."""
    return (
        set(ours) != set(theirs) and is_optimal(similarity, ours) and is_optimal(similarity, theirs)
    )


def above(score: float, threshold: float) -> bool:
    """Stickler's tolerant threshold test for list items (``ThresholdHelper``)."""
    return score >= threshold or abs(score - threshold) < 1e-10
