"""A self-contained, offline HTML page of a comparison: a forest plot of the deltas with
their intervals, the leaderboard, the tested effects, the flips and the diffs.

Built like the run dashboards (:mod:`docevals_mlflow.reports.html`): plotly.js is
inlined once, nothing is loaded from the network (the MLflow UI shows HTML artifacts
in a sandbox that allows scripts but no other origin), user text is escaped, and
equal comparisons give equal pages.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go

from docevals_mlflow._version import __version__
from docevals_mlflow.compare.changes import Changes, TextDiff
from docevals_mlflow.compare.non_inferiority import TABLE_HEADER, table_rows
from docevals_mlflow.compare.text import (
    NOT_SIGNIFICANT_NOTE,
    RESULT_TEXT,
    changed_summary,
    effect_figures,
    headline_text,
    holm_tests,
    interval,
    result_text,
)
from docevals_mlflow.core.formatting import (
    level_text,
    metric_text,
    p_value_text,
    setting_text,
    signed_text,
)
from docevals_mlflow.reports.html import (
    Page,
    axis_labels,
    category_axis,
    figure_layout,
    html_cards,
    html_note,
    html_table,
)

if TYPE_CHECKING:
    from docevals_mlflow.compare.results import Comparison, PairComparison

MAX_FOREST_ROWS = 60
"""Effects per forest plot: the overall ones, then the largest moves."""
MAX_TABLE_ROWS = 200
DIRECTION_COLOURS = {"improvement": "#2ca02c", "regression": "#d62728", "none": "#7f7f7f"}
_DIFF_STYLE = (
    "<style>pre.diff { background: #f8f8f8; border: 1px solid #ddd; padding: 8px; "
    "overflow-x: auto; font-size: 0.85em; } pre.diff .add { color: #1a7f37; } "
    "pre.diff .del { color: #cf222e; } pre.diff .hunk { color: #6f42c1; }</style>"
)


def _forest_rows(pair: PairComparison) -> Any:
    effects = pair.effects
    overall = effects[effects["family"] == "overall"]
    others = effects[effects["family"] != "overall"]
    others = others.assign(_size=others["delta"].abs()).sort_values(
        "_size", ascending=False, na_position="last", kind="stable"
    )
    room = max(0, MAX_FOREST_ROWS - len(overall))
    import pandas as pd

    return pd.concat([overall, others.head(room).drop(columns="_size")], ignore_index=True)


def forest_figure(pair: PairComparison, confidence: float) -> go.Figure:
    """Each tested effect as a point (the delta) with its bootstrap interval."""
    rows = _forest_rows(pair)
    labels = axis_labels(f"{row['family']}: {row['unit']}" for _, row in rows.iterrows())
    figure = go.Figure()
    for result, colour in DIRECTION_COLOURS.items():
        chosen = [index for index in range(len(rows)) if rows.iloc[index]["direction"] == result]
        if not chosen:
            continue
        part = rows.iloc[chosen]
        figure.add_trace(
            go.Scatter(
                x=part["delta"].tolist(),
                y=[labels[index] for index in chosen],
                mode="markers",
                name=html.escape(RESULT_TEXT[result] if result != "none" else "not significant"),
                marker={"color": colour, "size": 9},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - part["delta"]).tolist(),
                    "arrayminus": (part["delta"] - part["ci_low"]).tolist(),
                    "color": colour,
                },
                hovertext=[
                    html.escape(
                        f"{row['unit']} ({row['metric']}): {metric_text(row['baseline'])} → "
                        f"{metric_text(row['candidate'])}, Δ {signed_text(row['delta'])} "
                        f"{interval(row['ci_low'], row['ci_high'])}, "
                        f"p {p_value_text(row['p_value'])}, "
                        f"Holm p {p_value_text(row['p_adjusted'])}"
                    )
                    for _, row in part.iterrows()
                ],
                hoverinfo="text",
            )
        )
    figure.add_vline(x=0, line_width=1, line_color="#444")
    return figure_layout(
        figure,
        title=f"Δ {pair.candidate.label} − {pair.baseline.label} "
        f"({level_text(confidence)} intervals)",
        height=max(280, 24 * len(rows) + 150),
        xaxis={"title": {"text": "candidate − baseline"}, "zeroline": False},
        yaxis=category_axis(labels),
    )


def leaderboard_figure(comparison: Comparison) -> go.Figure:
    """Every run's value with its bootstrap interval, best first."""
    board = comparison.leaderboard
    assert board is not None
    labels = axis_labels(str(run) for run in board["run"])
    figure = go.Figure(
        go.Scatter(
            x=board["value"].tolist(),
            y=labels,
            mode="markers",
            marker={
                "size": 10,
                "color": [
                    "#1f77b4" if role == "baseline" else DIRECTION_COLOURS.get(result, "#7f7f7f")
                    for role, result in zip(board["role"], board["direction"], strict=True)
                ],
            },
            error_x={
                "type": "data",
                "symmetric": False,
                "array": (board["ci_high"] - board["value"]).tolist(),
                "arrayminus": (board["value"] - board["ci_low"]).tolist(),
            },
            hoverinfo="x+y",
        )
    )
    return figure_layout(
        figure,
        title=f"Leaderboard: {comparison.settings.metric}",
        height=max(240, 30 * len(board) + 140),
        yaxis=category_axis(labels),
    )


def _diff_html(diff: TextDiff) -> str:
    lines = []
    for line in diff.diff.splitlines():
        css = ""
        if line.startswith("+") and not line.startswith("+++"):
            css = "add"
        elif line.startswith("-") and not line.startswith("---"):
            css = "del"
        elif line.startswith("@@"):
            css = "hunk"
        text = html.escape(line)
        lines.append(f'<span class="{css}">{text}</span>' if css else text)
    return f'<p><code>{html.escape(diff.name)}</code> ({diff.status})</p><pre class="diff">' + (
        "\n".join(lines) + "</pre>"
    )


def _changes_html(changes: Changes) -> str:
    if not changes.any:
        return html_note("Nothing changed: same params, prompts, specs and judge panels.")
    parts = [html_note(changed_summary(changes))]
    for headers, entries in (
        (["Ground truth", "Baseline digest", "Candidate digest"], changes.datasets),
        (["Param", "Baseline", "Candidate"], changes.params),
    ):
        if entries:
            values = ([item.name, str(item.baseline), str(item.candidate)] for item in entries)
            parts.append(html_table(headers, values, numeric=0))
    for change in changes.operations:
        if change.status == "unchanged":
            continue
        facts = [f"{change.operation}: {change.status}"]
        if change.criteria_added:
            facts.append("criteria added: " + "; ".join(change.criteria_added))
        if change.criteria_removed:
            facts.append("criteria removed: " + "; ".join(change.criteria_removed))
        if change.spec_status is not None:
            facts.append(
                f"spec status {change.spec_status.baseline} → {change.spec_status.candidate}"
            )
        parts.append(f"<p><b>{html.escape(facts[0])}</b> {html.escape(' · '.join(facts[1:]))}</p>")
        parts += [_diff_html(diff) for diff in change.diffs if diff.diff]
    for panel in changes.panels:
        if panel.status == "unchanged":
            continue
        rows = [
            [
                member.name,
                member.status,
                ", ".join(member.changed),
                str((member.baseline or {}).get("model", "")),
                str((member.candidate or {}).get("model", "")),
            ]
            for member in panel.members
            if member.status != "unchanged"
        ]
        rows += [
            [rule.name, "rule changed", "", str(rule.baseline), str(rule.candidate)]
            for rule in panel.rules
        ]
        parts.append(f"<p><b>panel {html.escape(panel.panel)}: {html.escape(panel.status)}</b></p>")
        parts.append(
            html_table(["Member / rule", "Status", "Changed", "Baseline", "Candidate"], rows, 0)
        )
    parts += [_diff_html(diff) for diff in changes.texts if diff.diff]
    return "\n".join(parts)


def _effects_html(pair: PairComparison, comparison: Comparison) -> str:
    effects = pair.effects
    tests = holm_tests(comparison)
    alpha = comparison.settings.alpha
    return html_table(
        [
            "Family",
            "Unit",
            "Metric",
            "Result",
            "N",
            "Baseline",
            "Candidate",
            "Δ",
            "CI",
            "p",
            "Holm p",
        ],
        (
            [
                str(row["family"]),
                str(row["unit"]),
                str(row["metric"]),
                result_text(row, tests=tests.get(str(row["family"]), 1), alpha=alpha),
                str(row["n"]),
                *effect_figures(row),
            ]
            for _, row in effects.iterrows()
        ),
        numeric=7,
    )


def _flips_html(pair: PairComparison) -> str:
    flips = pair.flips
    if not len(flips):
        return html_note(f"No {pair.unit} changed its verdict.")
    order = {"broken": 0, "fixed": 1, "changed": 2}
    ranked = flips.assign(_order=flips["change"].map(order)).sort_values("_order", kind="stable")
    shown = ranked.head(MAX_TABLE_ROWS)
    second = "Class" if pair.unit == "document" else "Stage"
    table = html_table(
        [pair.unit.capitalize(), second, "Baseline", "Candidate", "Change", "Why"],
        (
            [
                str(row["id"]),
                str(row["group"] if pair.unit == "document" else row["stage"]),
                str(row["baseline"]),
                str(row["candidate"]),
                str(row["change"]),
                str(row["why"]),
            ]
            for _, row in shown.iterrows()
        ),
        numeric=0,
    )
    more = len(flips) - len(shown)
    return table + (html_note(f"{more} more flips in flips.csv.") if more > 0 else "")


def _judges_html(pair: PairComparison) -> str:
    judges = pair.judges
    if not len(judges):
        return ""
    return html_table(
        ["Metric", "Member", "Baseline pass", "Candidate pass", "Δ", "Votes", "Changed", "κ"],
        (
            [
                str(row["metric"] or ""),
                str(row["member"]),
                metric_text(row["baseline_pass_rate"]),
                metric_text(row["candidate_pass_rate"]),
                signed_text(row["delta"]),
                str(row["votes_matched"]),
                str(row["votes_changed"]),
                metric_text(row["kappa"]),
            ]
            for _, row in judges.iterrows()
        ),
        numeric=6,
    )


def render_comparison_html(comparison: Comparison) -> str:
    """The comparison as one self-contained HTML page."""
    settings = comparison.settings
    page = Page("docevals run comparison")
    page.add(_DIFF_STYLE)
    page.add(
        html_cards(
            [
                ("baseline", comparison.baseline.label),
                ("candidates", str(len(comparison.pairs))),
                ("metric", settings.metric),
                ("alpha (Holm)", setting_text(settings.alpha)),
                ("resamples", str(settings.resamples)),
                ("verdict", "regression" if comparison.has_regression else "no regression"),
            ]
        )
    )
    for note in comparison.notes:
        page.add(html_note(note))
    if comparison.leaderboard is not None:
        page.section("Leaderboard")
        page.figure(leaderboard_figure(comparison), "fig-leaderboard")
    if comparison.non_inferiority:
        page.section("Non-inferiority")
        page.add(
            html_table(list(TABLE_HEADER), table_rows(comparison.non_inferiority), numeric=0)
            + html_note("Only non-inferior passes the gate; inconclusive fails it.")
        )
    for number_, pair in enumerate(comparison.pairs, start=1):
        page.section(f"{pair.candidate.label} vs {pair.baseline.label}")
        page.add(
            html_note(
                f"{pair.matched} matched {pair.unit}s. "
                f"{headline_text(pair, settings.confidence, comparison=comparison)}"
            )
        )
        for note in pair.notes:
            page.add(html_note(note))
        page.figure(forest_figure(pair, settings.confidence), f"fig-forest-{number_}")
        page.add(
            "<h3>Tested effects</h3>"
            + _effects_html(pair, comparison)
            + html_note(NOT_SIGNIFICANT_NOTE)
        )
        page.add("<h3>Flips</h3>" + _flips_html(pair))
        judges = _judges_html(pair)
        if judges:
            page.add("<h3>Judges</h3>" + judges)
        page.add("<h3>What changed</h3>" + _changes_html(pair.changes))
    return page.render(
        f"docevals-mlflow {__version__}; paired bootstrap intervals, randomisation and "
        "exact McNemar tests, Holm's correction per family"
    )
