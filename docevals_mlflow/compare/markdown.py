"""The Markdown rendering of a :class:`~docevals_mlflow.compare.Comparison`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from docevals_mlflow.compare.changes_markdown import changes_markdown
from docevals_mlflow.compare.deltas import COUNT_STATISTICS
from docevals_mlflow.compare.non_inferiority import markdown_lines as non_inferiority_markdown
from docevals_mlflow.compare.text import (
    NOT_SIGNIFICANT_NOTE,
    RESULT_TEXT,
    effect_figures,
    headline_text,
    holm_tests,
    interval,
    metric_label,
    result_text,
)
from docevals_mlflow.core.formatting import (
    level_text,
    metric_text,
    p_value_text,
    setting_text,
    signed_text,
)
from docevals_mlflow.reports.markdown import table

if TYPE_CHECKING:
    from docevals_mlflow.compare.results import Comparison, PairComparison

MAX_ROWS = 50
"""Rows shown per table (flips, metrics); the CSV files hold all of them."""
FAMILY_TITLES = {
    "overall": "Overall",
    "field": "Fields",
    "class": "Classes",
    "stage": "Stages",
}


# ---------------------------------------------------------------------------- tables


def _effect_rows(frame: Any, *, tests: int, alpha: float) -> Iterable[Sequence[Any]]:
    for _, row in frame.iterrows():
        yield (
            row["unit"],
            metric_label(row["metric"]),
            row["n"],
            *effect_figures(row),
            result_text(row, tests=tests, alpha=alpha),
        )


def effects_markdown(pair: PairComparison, comparison: Comparison) -> list[str]:
    """The "is it real" section: one table per family."""
    lines: list[str] = []
    level = f"{level_text(comparison.settings.confidence)} CI"
    holm = holm_tests(comparison)
    for family, title in FAMILY_TITLES.items():
        frame = pair.effects[pair.effects["family"] == family]
        if not len(frame):
            continue
        tests = {"randomisation": "randomisation test", "mcnemar": "exact McNemar"}
        used = ", ".join(dict.fromkeys(tests[test] for test in frame["test"]))
        lines += [f"**{title}** ({used}; Holm within the family, {holm.get(family, 1)} tests):", ""]
        lines += table(
            ["unit", "metric", "n", "baseline", "candidate", "Δ", level, "p", "p (Holm)", "result"],
            _effect_rows(frame, tests=holm.get(family, 1), alpha=comparison.settings.alpha),
        )
        details = [
            f"{row['unit']}: {row['detail']}, κ between runs {metric_text(row['kappa'])}"
            for _, row in frame.iterrows()
            if row["detail"]
        ]
        if details:
            lines += ["", *(f"- {detail}" for detail in details)]
        lines.append("")
    return lines


def flips_markdown(pair: PairComparison) -> list[str]:
    """Flipped documents or cases, worst (broken) first."""
    flips = pair.flips
    if not len(flips):
        return [f"No {pair.unit} changed its verdict.", ""]
    order = {"broken": 0, "fixed": 1, "changed": 2}
    ranked = flips.assign(_order=flips["change"].map(order)).sort_values("_order", kind="stable")
    shown = ranked.head(MAX_ROWS)
    if pair.unit == "document":
        headers = ["document", "class", "baseline", "candidate", "change", "fields that moved"]
        rows = (
            (row["id"], row["group"], row["baseline"], row["candidate"], row["change"], row["why"])
            for _, row in shown.iterrows()
        )
    else:
        headers = ["case", "stage", "baseline", "candidate", "change", "votes that changed"]
        rows = (
            (row["id"], row["stage"], row["baseline"], row["candidate"], row["change"], row["why"])
            for _, row in shown.iterrows()
        )
    lines = table(headers, rows)
    if len(flips) > len(shown):
        lines.append(f"\n{len(flips) - len(shown)} more in flips.csv.")
    return [*lines, ""]


def judges_markdown(pair: PairComparison) -> list[str]:
    """Per-member pass rates, vote changes and the panels' agreement figures."""
    lines: list[str] = []
    judges = pair.judges
    if len(judges):
        lines += table(
            [
                "metric",
                "member",
                "model",
                "baseline pass",
                "candidate pass",
                "Δ",
                "votes",
                "changed",
                "κ",
            ],
            (
                (
                    row["metric"] or "",
                    row["member"],
                    row["candidate_model"] or row["baseline_model"] or "",
                    metric_text(row["baseline_pass_rate"]),
                    metric_text(row["candidate_pass_rate"]),
                    signed_text(row["delta"]),
                    row["votes_matched"],
                    row["votes_changed"],
                    metric_text(row["kappa"]),
                )
                for _, row in judges.iterrows()
            ),
        )
        lines.append("")
    panels = pair.metrics[pair.metrics["scope"] == "panel"]
    if len(panels):
        lines += table(
            ["panel", "figure", "baseline", "candidate", "Δ"],
            (
                (
                    row["subject"],
                    row["statistic"],
                    metric_text(row["baseline"]),
                    metric_text(row["candidate"]),
                    signed_text(row["delta"]),
                )
                for _, row in panels.iterrows()
            ),
        )
        lines.append("")
    return lines


def _figure(value: Any, statistic: str, *, delta: bool = False) -> str:
    if statistic.split("/")[-1] in COUNT_STATISTICS:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        return f"{float(value):+,.0f}" if delta else f"{float(value):,.0f}"
    return signed_text(value) if delta else metric_text(value)


def moved_metrics_markdown(pair: PairComparison) -> list[str]:
    """Logged metrics that moved: rates first, largest moves first; counts after."""
    metrics = pair.metrics
    moved = metrics[(metrics["delta"].abs() > 0) | metrics["delta"].isna()]
    moved = moved[~(moved["baseline"].isna() & moved["candidate"].isna())]
    if not len(moved):
        return ["No logged metric moved.", ""]
    is_count = moved["statistic"].map(lambda name: name.split("/")[-1] in COUNT_STATISTICS)
    ranked = moved.assign(_count=is_count, _size=-moved["delta"].abs()).sort_values(
        ["_count", "_size"], na_position="last", kind="stable"
    )
    shown = ranked.head(MAX_ROWS)
    lines = table(
        ["key", "subject", "baseline", "candidate", "Δ"],
        (
            (
                row["key"],
                row["subject"],
                _figure(row["baseline"], row["statistic"]),
                _figure(row["candidate"], row["statistic"]),
                _figure(row["delta"], row["statistic"], delta=True),
            )
            for _, row in shown.iterrows()
        ),
    )
    if len(moved) > len(shown):
        lines.append(f"\n{len(moved) - len(shown)} more in metrics.csv.")
    return [*lines, ""]


def _unmatched_lines(pair: PairComparison) -> list[str]:
    unmatched = pair.unmatched
    if not len(unmatched):
        return []
    lines = [f"### {pair.unit.capitalize()}s in one run only", ""]
    for side in ("baseline", "candidate"):
        ids = unmatched[unmatched["only_in"] == side]
        if len(ids):
            names = [
                f"{row['id']}/{row['stage']}" if row["stage"] else str(row["id"])
                for _, row in ids.head(MAX_ROWS).iterrows()
            ]
            more = len(ids) - len(names)
            lines.append(
                f"- only in the {side} ({len(ids)}): "
                + ", ".join(names)
                + (f" and {more} more" if more > 0 else "")
            )
    return [*lines, ""]


def _leaderboard_lines(comparison: Comparison) -> list[str]:
    board = comparison.leaderboard
    if board is None:
        return []
    level = f"{level_text(comparison.settings.confidence)} CI"
    lines = [
        "## Leaderboard",
        "",
        f"{metric_label(comparison.settings.metric)} over the {int(board['n'].iloc[0])} "
        f"{comparison.pairs[0].unit}s every run holds; Δ and its test against the baseline.",
        "",
    ]
    lines += table(
        ["#", "run", "value", level, "Δ", f"Δ {level}", "p (Holm)", "result"],
        (
            (
                row["rank"],
                f"{row['run']} (baseline)" if row["role"] == "baseline" else row["run"],
                metric_text(row["value"]),
                interval(row["ci_low"], row["ci_high"]).replace("+", ""),
                signed_text(row["delta"]),
                interval(row["delta_ci_low"], row["delta_ci_high"]),
                p_value_text(row["p_adjusted"]),
                RESULT_TEXT.get(row["direction"], ""),
            )
            for _, row in board.iterrows()
        ),
    )
    return [*lines, ""]


def pair_markdown(pair: PairComparison, comparison: Comparison) -> list[str]:
    """All sections of one candidate against the baseline."""
    settings = comparison.settings
    lines = [
        f"## {pair.candidate.label} vs {pair.baseline.label}",
        "",
        f"Candidate run `{pair.candidate.run_id}`, {pair.matched} matched {pair.unit}s.",
        "",
        f"**Headline:** {headline_text(pair, settings.confidence, comparison=comparison)}",
        "",
        f"Significant at α = {setting_text(settings.alpha)}: "
        f"{len(pair.improvements)} improvement(s), {len(pair.regressions)} regression(s).",
        "",
    ]
    for note in pair.notes:
        lines += [f"> {note}", ""]
    lines += ["### What changed", "", *changes_markdown(pair.changes)]
    lines += ["### Is it real", "", *effects_markdown(pair, comparison)]
    lines += ["### Flips", "", *flips_markdown(pair)]
    judges = judges_markdown(pair)
    if judges:
        lines += ["### Judges", "", *judges]
    lines += ["### Logged metrics that moved", "", *moved_metrics_markdown(pair)]
    lines += _unmatched_lines(pair)
    return lines


def render_comparison_markdown(comparison: Comparison) -> str:
    """The whole comparison as a Markdown document."""
    settings = comparison.settings
    baseline = comparison.baseline
    regressed = comparison.has_regression
    lines = [
        "# docevals run comparison",
        "",
        f"Baseline **{baseline.label}** (`{baseline.run_id}`); "
        f"{len(comparison.pairs)} candidate(s). Metric {metric_label(settings.metric)}, "
        f"α = {setting_text(settings.alpha)} with Holm's correction per family, "
        f"{settings.resamples} resamples, seed {settings.seed}.",
        "",
        ("❌ **Significant regression found.**" if regressed else "✅ No significant regression."),
        "",
    ]
    for note in comparison.notes:
        lines += [f"> {note}", ""]
    lines += _leaderboard_lines(comparison)
    lines += non_inferiority_markdown(comparison.non_inferiority)
    for pair in comparison.pairs:
        lines += pair_markdown(pair, comparison)
    lines += [
        "---",
        "",
        "Intervals: paired percentile bootstrap over matched "
        f"{comparison.pairs[0].unit}s. Tests: paired randomisation (sign-flip) for metrics, "
        "exact McNemar for pass/fail flips; a change counts only when significant after "
        f"Holm's correction. {NOT_SIGNIFICANT_NOTE} See docs/comparison.md.",
        "",
    ]
    return "\n".join(lines)


def note_markdown(comparison: Comparison) -> str:
    """A short Markdown summary for the MLflow run description."""
    lines = [
        f"**docevals comparison**: baseline **{comparison.baseline.label}**, "
        + (
            "❌ significant regression"
            if comparison.has_regression
            else "✅ no significant regression"
        ),
        "",
    ]
    for pair in comparison.pairs:
        lines.append(
            f"- **{pair.candidate.label}**: "
            f"{headline_text(pair, comparison.settings.confidence, comparison=comparison)}; "
            f"{len(pair.improvements)} improvement(s), {len(pair.regressions)} regression(s)"
        )
    return "\n".join(lines) + "\n"
