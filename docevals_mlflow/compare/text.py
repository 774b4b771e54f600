"""Plain-text pieces shared by the Markdown, HTML and terminal renderings of a
comparison: intervals, the headline of a candidate, the summary lines (figures are
formatted by :mod:`docevals_mlflow.core.formatting`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docevals_mlflow.compare.changes import Changes
from docevals_mlflow.core.formatting import (
    METRIC_DIGITS,
    defined_number,
    level_text,
    metric_text,
    p_value_text,
    setting_text,
    signed_text,
)

if TYPE_CHECKING:
    from docevals_mlflow.compare.results import Comparison, PairComparison

MAX_VALUE_CHARS = 80
RESULT_TEXT = {"improvement": "▲ improvement", "regression": "▼ regression", "none": "–"}


def interval(low: Any, high: Any, digits: int = METRIC_DIGITS) -> str:
    """``[low, high]`` with signs, or ``n/a``."""
    if defined_number(low) is None or defined_number(high) is None:
        return "n/a"
    return f"[{signed_text(low, digits)}, {signed_text(high, digits)}]"


def effect_figures(row: Any) -> list[str]:
    """An effect row's baseline, candidate, delta, interval, p and Holm p, as text."""
    return [
        metric_text(row["baseline"]),
        metric_text(row["candidate"]),
        signed_text(row["delta"]),
        interval(row["ci_low"], row["ci_high"]),
        p_value_text(row["p_value"]),
        p_value_text(row["p_adjusted"]),
    ]


TEST_NAMES = {"randomisation": "randomisation test", "mcnemar": "exact McNemar test"}


def holm_tests(comparison: Comparison) -> dict[str, int]:
    """Tests per Holm family (its units across every candidate): the N that a
    family's adjusted p-values were corrected over."""
    tests: dict[str, int] = {}
    for pair in comparison.pairs:
        for family, p_value in zip(pair.effects["family"], pair.effects["p_value"], strict=True):
            if defined_number(p_value) is not None:
                tests[family] = tests.get(family, 0) + 1
    return tests


def why_not_significant(row: Any, *, tests: int, alpha: float, brief: bool = False) -> str:
    """Why a change whose interval excludes 0 is still not significant, in one phrase;
    empty when the change is significant or its interval includes 0.

    Significance is the test's p after Holm's correction below alpha; the interval is
    a paired bootstrap percentile interval, adjusted for nothing. So an interval can
    exclude 0 while the change is not significant: through multiplicity (p < alpha
    before Holm's correction over the family's ``tests``, not after) or, with p not
    below alpha even before it, through the sample size (a percentile interval is too
    narrow with few paired units). ``brief``: the few words of a table cell.
    """
    if row["direction"] != "none":
        return ""
    low, high = defined_number(row["ci_low"]), defined_number(row["ci_high"])
    p_value, adjusted = defined_number(row["p_value"]), defined_number(row["p_adjusted"])
    if low is None or high is None or p_value is None or adjusted is None or low <= 0 <= high:
        return ""
    if p_value < alpha:
        if brief:
            return f"Holm over {tests} tests"
        return (
            f"not significant: p {p_value_text(p_value)} becomes {p_value_text(adjusted)} "
            f"after Holm's correction over {tests} tests; the interval is a bootstrap "
            "percentile interval, not adjusted for multiplicity"
        )
    if brief:
        return f"p ≥ α at n = {row['n']}"
    test = TEST_NAMES.get(str(row["test"]), str(row["test"]))
    return (
        f"not significant: {test} p {p_value_text(p_value)} ≥ α {setting_text(alpha)} "
        f"at n = {row['n']} even before Holm's correction; the bootstrap percentile "
        "interval is unadjusted and too narrow at this sample size"
    )


def result_text(row: Any, *, tests: int, alpha: float) -> str:
    """The result cell of an effect: ``RESULT_TEXT`` of its direction, followed for a
    non-significant one whose interval excludes 0 by a brief reason, as in
    ``(Holm over 12 tests)`` (see :func:`why_not_significant`)."""
    reason = why_not_significant(row, tests=tests, alpha=alpha, brief=True)
    return RESULT_TEXT[row["direction"]] + (f" ({reason})" if reason else "")


NOT_SIGNIFICANT_NOTE = (
    'A result "–" with a reason marks an interval that excludes 0 without a significant '
    'change. "Holm over N tests": p was below alpha before Holm\'s correction over the '
    'family\'s N tests, not after. "p ≥ α at n = …": p was not below alpha even before '
    "it, with few paired units. Intervals are bootstrap percentile intervals, not "
    "adjusted for multiplicity."
)


def short(value: Any) -> str:
    if value is None:
        return "(absent)"
    text = str(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def metric_label(metric: str) -> str:
    return {
        "f1": "micro F1",
        "macro_f1": "macro F1",
        "correct_rate": "share of documents fully correct",
        "pass_rate": "pass rate",
        "far": "false alarm rate",
        "fdr": "false discovery rate",
    }.get(metric, metric)


# --------------------------------------------------------------------------- summary


def headline_text(
    pair: PairComparison, confidence: float = 0.95, *, comparison: Comparison | None = None
) -> str:
    """``micro F1 0.9422 → 0.9938 (+0.0516, 95% CI [...], Holm p 0.0005): ▲ improvement``.

    With the ``comparison`` (for alpha and the number of tests), a non-significant
    result whose interval excludes 0 is followed by why (:func:`why_not_significant`).
    """
    effect = pair.headline
    if not effect:
        return "no overall figure"
    reason = ""
    if comparison is not None:
        reason = why_not_significant(
            effect,
            tests=holm_tests(comparison).get(str(effect["family"]), 1),
            alpha=comparison.settings.alpha,
        )
    return (
        f"{metric_label(effect['metric'])} {metric_text(effect['baseline'])} → "
        f"{metric_text(effect['candidate'])} ({signed_text(effect['delta'])}, "
        f"{level_text(confidence)} CI {interval(effect['ci_low'], effect['ci_high'])}, "
        f"Holm p {p_value_text(effect['p_adjusted'])})"
        f": {RESULT_TEXT[effect['direction']]}" + (f" ({reason})" if reason else "")
    )


def _listing(frame: Any, limit: int = 5) -> str:
    items = [
        f"{row['family']} {row['unit']} {signed_text(row['delta'])}"
        for _, row in frame.head(limit).iterrows()
    ]
    more = len(frame) - limit
    return ", ".join(items) + (f" and {more} more" if more > 0 else "")


def summary_lines(comparison: Comparison) -> list[str]:
    """Plain lines for a terminal: per candidate the headline and the significant changes."""
    settings = comparison.settings
    lines = [
        f"baseline {comparison.baseline.label} ({comparison.baseline.run_id}); metric "
        f"{settings.metric}, alpha {setting_text(settings.alpha)} (Holm), "
        f"{settings.resamples} resamples, seed {settings.seed}"
    ]
    for pair in comparison.pairs:
        lines.append(
            f"{pair.candidate.label} ({pair.candidate.run_id}): {pair.matched} matched "
            f"{pair.unit}s; {headline_text(pair, settings.confidence, comparison=comparison)}"
        )
        improvements, regressions = pair.improvements, pair.regressions
        lines.append(
            f"  significant: {len(improvements)} improvement(s)"
            + (f" ({_listing(improvements)})" if len(improvements) else "")
            + f", {len(regressions)} regression(s)"
            + (f" ({_listing(regressions)})" if len(regressions) else "")
        )
        flips = pair.flips
        if len(flips):
            fixed = int((flips["change"] == "fixed").sum())
            broken = int((flips["change"] == "broken").sum())
            lines.append(
                f"  flips: {fixed} fixed, {broken} broken, {len(flips) - fixed - broken} other"
            )
        if pair.changes.any:
            lines.append(f"  changed: {changed_summary(pair.changes)}")
    lines += [test.text() for test in comparison.non_inferiority]
    if comparison.leaderboard is not None:
        lines.append(
            "leaderboard: "
            + ", ".join(
                f"{row['rank']}. {row['run']} {metric_text(row['value'])}"
                for _, row in comparison.leaderboard.iterrows()
            )
        )
    return lines


def changed_summary(changes: Changes) -> str:
    """One line naming what changed (operations, panels, texts, params)."""
    parts = []
    operations = [entry for entry in changes.operations if entry.status != "unchanged"]
    if operations:
        parts.append(
            "operations " + ", ".join(f"{entry.operation} ({entry.status})" for entry in operations)
        )
    panels = [entry for entry in changes.panels if entry.status != "unchanged"]
    if panels:
        parts.append("panels " + ", ".join(f"{entry.panel} ({entry.status})" for entry in panels))
    texts = [entry for entry in changes.texts if entry.status != "unchanged"]
    if texts:
        parts.append("texts " + ", ".join(entry.name for entry in texts))
    if changes.datasets:
        parts.append("ground truth " + ", ".join(entry.name for entry in changes.datasets))
    if changes.params:
        names = [entry.name for entry in changes.params]
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        parts.append(f"params {shown}")
    return "; ".join(parts) or "nothing"
