"""Error cascades across a batch of pipelines: per dependency edge, how often an
upstream failure comes with a downstream one and, where counterfactual reruns ran,
how often it causes it; and a Sankey figure of failure propagation.

A rerun replaces every upstream output of a stage at once, so when two upstream
stages failed together, a downstream failure the rerun attributes upstream is
credited to both edges.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from docevals_mlflow.core.diagnostics import CascadeEdge, CounterfactualSummary
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport

if TYPE_CHECKING:
    import plotly.graph_objects as go

_DECIDED = ("pass", "fail")
CAUSED_COLOUR = "rgba(214, 39, 40, 0.55)"
INDEPENDENT_COLOUR = "rgba(148, 103, 189, 0.55)"
UNDECIDED_COLOUR = "rgba(127, 127, 127, 0.35)"


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def counterfactual_summary(reports: Iterable[EvaluationReport]) -> CounterfactualSummary | None:
    """Rerun outcomes of one stage's reports; ``None`` when none carries a rerun."""
    outcomes = [report.counterfactual.outcome for report in reports if report.counterfactual]
    if not outcomes:
        return None
    caused = outcomes.count("caused_by_upstream")
    independent = outcomes.count("independent_failure")
    return CounterfactualSummary(
        combined_failures=len(outcomes),
        caused_by_upstream=caused,
        independent_failure=independent,
        inconclusive=outcomes.count("inconclusive"),
        not_rerun=outcomes.count("not_rerun"),
        caused_by_upstream_rate=_ratio(caused, caused + independent),
        coverage=_ratio(caused + independent, len(outcomes)),
    )


class _Tally:
    __slots__ = ("caused", "co", "down", "independent", "pairs", "up", "up_passed_down_failed")

    def __init__(self) -> None:
        self.pairs = self.up = self.down = self.co = 0
        self.caused = self.independent = self.up_passed_down_failed = 0


def failure_cascades(
    reports: Iterable[PipelineEvaluationReport | EvaluationReport],
) -> list[CascadeEdge] | None:
    """Per dependency edge of the pipelines in ``reports``: failure co-occurrence and,
    with counterfactual reruns, causation. ``None`` when no pipeline has an edge.

    Single-case reports carry no pipeline and are skipped. Edges come in the order
    they are first met (execution order within a pipeline).
    """
    tallies: dict[tuple[str, str], _Tally] = {}
    for report in reports:
        if not isinstance(report, PipelineEvaluationReport):
            continue
        by_id = {stage.stage_id: stage for stage in report.stage_reports}
        for downstream in report.stage_reports:
            for upstream_id in downstream.depends_on:
                upstream = by_id.get(upstream_id)
                tally = tallies.setdefault((upstream_id, downstream.stage_id), _Tally())
                if upstream is None or not (
                    upstream.verdict in _DECIDED and downstream.verdict in _DECIDED
                ):
                    continue
                tally.pairs += 1
                up_failed = upstream.verdict == "fail"
                down_failed = downstream.verdict == "fail"
                tally.up += up_failed
                tally.down += down_failed
                tally.up_passed_down_failed += down_failed and not up_failed
                if up_failed and down_failed:
                    tally.co += 1
                    rerun = downstream.counterfactual
                    outcome = rerun.outcome if rerun is not None else None
                    tally.caused += outcome == "caused_by_upstream"
                    tally.independent += outcome == "independent_failure"
    if not tallies:
        return None
    return [
        CascadeEdge(
            upstream=upstream,
            downstream=downstream,
            pipelines=tally.pairs,
            upstream_failures=tally.up,
            downstream_failures=tally.down,
            co_failures=tally.co,
            co_failure_rate=_ratio(tally.co, tally.up),
            baseline_failure_rate=_ratio(tally.up_passed_down_failed, tally.pairs - tally.up),
            caused=tally.caused,
            independent=tally.independent,
            undecided=tally.co - tally.caused - tally.independent,
            caused_rate=_ratio(tally.caused, tally.caused + tally.independent),
        )
        for (upstream, downstream), tally in tallies.items()
    ]


def cascade_sankey(
    edges: Sequence[CascadeEdge], *, title: str = "Failure propagation"
) -> go.Figure:
    """A Sankey figure: one node per stage, links carrying co-occurring failures from
    upstream to downstream, split into caused upstream (red), independent (purple)
    and not decided by a rerun (grey). Node hover gives each stage's failures."""
    import plotly.graph_objects as go

    names: dict[str, int] = {}
    failures: dict[str, int] = {}
    for edge in edges:
        for name in (edge.upstream, edge.downstream):
            names.setdefault(name, len(names))
        failures[edge.upstream] = max(failures.get(edge.upstream, 0), edge.upstream_failures)
        failures[edge.downstream] = max(failures.get(edge.downstream, 0), edge.downstream_failures)
    sources: list[int] = []
    targets: list[int] = []
    values: list[int] = []
    colours: list[str] = []
    labels: list[str] = []
    for edge in edges:
        for value, colour, what in (
            (edge.caused, CAUSED_COLOUR, "caused upstream"),
            (edge.independent, INDEPENDENT_COLOUR, "independent failure"),
            (edge.undecided, UNDECIDED_COLOUR, "not decided by a rerun"),
        ):
            if value:
                sources.append(names[edge.upstream])
                targets.append(names[edge.downstream])
                values.append(value)
                colours.append(colour)
                labels.append(f"{edge.upstream} → {edge.downstream}: {value} {what}")
    figure = go.Figure(
        go.Sankey(
            arrangement="snap",
            node={
                "label": [html.escape(name) for name in names],
                "customdata": [failures.get(name, 0) for name in names],
                "hovertemplate": "%{label}: %{customdata} failures<extra></extra>",
                "pad": 18,
                "thickness": 16,
            },
            link={
                "source": sources,
                "target": targets,
                "value": values,
                "color": colours,
                "customdata": [html.escape(label) for label in labels],
                "hovertemplate": "%{customdata}<extra></extra>",
            },
        )
    )
    figure.update_layout(
        template="none",
        title={"text": html.escape(title)},
        height=max(320, 60 * len(names) + 120),
        margin={"l": 10, "r": 20, "t": 60, "b": 30},
        font={"size": 12},
    )
    return figure
