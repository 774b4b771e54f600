"""Colour ratings and 20-character progress bars of the Markdown reports.

Ratings: 🟢 Excellent ≥ 0.9, 🟡 Good ≥ 0.7, 🟠 Fair ≥ 0.5, 🔴 Poor below. For the
false alarm and false discovery rates lower is better, so the scale is mirrored:
🟢 ≤ 0.1, 🟡 ≤ 0.3, 🟠 ≤ 0.5, 🔴 above. An undefined metric (zero denominator) is
shown as ``n/a`` with a neutral mark (``NOT_AVAILABLE``), never a colour or a "Poor".
Shared by the fields and split reports, so a rating means the same in both.

FAR and FDR are shown (as a card, a gauge or a rating) only where they can tell
something (:func:`rate_shown`): FAR = FA / (FA + TN) needs a leaf that was expected
empty and stayed empty (TN > 0), since without one it is n/a or 1.0 by construction
(the attributes of an extra list item, for instance, can only be FA); FDR = FD /
(FD + TP) needs a prediction where a value was due (TP + FD > 0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.formatting import defined_number, metric_text
from docevals_mlflow.fields.counts import LOWER_IS_BETTER

BAR_WIDTH = 20
FILLED = "█"
EMPTY = "░"
NOT_AVAILABLE = "➖ n/a"

_RATINGS = ((0.9, "🟢", "Excellent"), (0.7, "🟡", "Good"), (0.5, "🟠", "Fair"))
_POOR = ("🔴", "Poor")
# Lower-is-better metrics mirror the scale; compared on the value itself (not on
# 1 - value) so that 0.1, 0.3 and 0.5 land exactly on their boundaries.
_LOW_RATINGS = ((0.1, "🟢", "Excellent"), (0.3, "🟡", "Good"), (0.5, "🟠", "Fair"))


def rate_shown(metric: str, counts: Mapping[str, Any]) -> bool:
    """Whether ``far`` or ``fdr`` is worth showing for these cells (lower-case keys,
    ``tp`` .. ``tn``); any other metric is always shown."""

    def cell(name: str) -> int:
        return int(counts.get(name) or 0)

    if metric == "far":
        return cell("tn") > 0
    if metric == "fdr":
        return cell("tp") + cell("fd") > 0
    return True


def far_hidden_text(counts: Mapping[str, Any]) -> str:
    """Why FAR is not shown, with the false alarms counted (see :func:`rate_shown`)."""
    fa = int(counts.get("fa") or 0)
    if not fa:
        return "n/a: no leaf was expected empty"
    return (
        f"not rated: no leaf expected empty stayed empty (TN 0), so FAR is 1.0 by "
        f"construction; {fa} false alarm(s)"
    )


def rating(metric: str, value: float | None) -> str:
    """``🟢 Excellent`` .. ``🔴 Poor`` for a metric value (mirrored for FAR/FDR)."""
    number = defined_number(value)
    if number is None:
        return NOT_AVAILABLE
    if metric in LOWER_IS_BETTER:
        for limit, mark, word in _LOW_RATINGS:
            if number <= limit:
                return f"{mark} {word}"
        return " ".join(_POOR)
    for limit, mark, word in _RATINGS:
        if number >= limit:
            return f"{mark} {word}"
    return " ".join(_POOR)


def icon(metric: str, value: float | None) -> str:
    """The rating's mark alone (``🟢``), for tight cells."""
    return rating(metric, value).split(" ", 1)[0]


def progress_bar(value: float | None) -> str:
    """A 20-character bar, e.g. ``[████████████████░░░░]`` for 0.8.

    Filled blocks are rounded *down* so that a full bar always means exactly 1.0
    (0.99 shows 19 blocks); the small epsilon keeps a value that float arithmetic
    left a hair below a block boundary (say, a mean of document scores) from losing
    a block.
    """
    number = defined_number(value)
    if number is None:
        return "[" + EMPTY * BAR_WIDTH + "]"
    filled = min(BAR_WIDTH, max(0, math.floor(number * BAR_WIDTH + 1e-9)))
    return "[" + FILLED * filled + EMPTY * (BAR_WIDTH - filled) + "]"


def rated(metric: str, value: Any) -> str:
    """A metric with its mark (``🟢 0.9500``); plain ``n/a`` when undefined."""
    # An undefined metric gets no mark at all: neither a colour nor a "Poor".
    number = defined_number(value)
    return "n/a" if number is None else f"{icon(metric, number)} {metric_text(number)}"
