"""What every run layout shares: the headline namespace, the confusion-cell figures,
figure tables and the evaluation tags.

Does not import mlflow; :mod:`docevals_mlflow.tracking.runs` logs what the layouts build.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from docevals_mlflow.fields.counts import METRIC_NAMES
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.keys import legal_key

CELL_NAMES = ("tp", "fa", "fd", "fn", "tn")
HEADLINE = "Summary"
"""The first segment of a run's headline metrics (``Summary/f1``...). Capitalised, it
sorts before every other key (all lowercase), so MLflow's compare-runs table, its
metric charts (a section per key prefix, in code-point order) and the runs lists
(metrics in key order) show the headline first."""
SCORE_NAMES = ("precision", "recall", "f1", "accuracy")
"""The figures logged as metrics per field, discovered field and class; the confusion
cells and FAR/FDR go to a figure table."""
LOGGED_TABLES = "mlflow.loggedArtifacts"
"""The tag with which MLflow's ``log_table`` marks a table artifact for its UI."""
HEADLINE_VIEW = "docevals-headline"
"""The saved view of the runs list that shows the headline columns (see
:func:`headline_view_tags`)."""
HEADLINE_COLUMNS = (
    *("f1", "precision", "recall", "accuracy", "documents"),
    *("case_pass_rate", "case_fail_rate", "cases", "human_review_rate"),
    *("page_accuracy", "accuracy_without_order", "accuracy_with_order", "packets"),
    *("agreement", "kappa", "judge_pass_rate", "human_pass_rate", "corrected_pass_rate"),
    "fields_to_review",
    *("cer", "wer", "token_f1", "teds"),
)
"""The ``Summary/…`` figures the saved view shows, of every run kind (a column no run
of the experiment has is not shown)."""


def headline(writer: BundleWriter, figures: Iterable[tuple[str, float | int | None]]) -> None:
    """``Summary/<name>`` for each headline figure (undefined ones are not logged)."""
    for name, value in figures:
        writer.metric(f"{HEADLINE}/{name}", value)


def cell_figures(counts: Mapping[str, int], metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Every headline metric and confusion cell of one scope (``None`` where absent)."""
    return {
        **{name: metrics.get(name) for name in METRIC_NAMES},
        **{name: counts.get(name) for name in CELL_NAMES},
    }


def cell_metrics(
    writer: BundleWriter,
    prefix: str,
    counts: Mapping[str, int],
    metrics: Mapping[str, Any],
    names: Sequence[str] | None = None,
) -> None:
    """``<prefix>/<name>`` for each figure of :func:`cell_figures` in ``names`` (all of
    them by default)."""
    for name, value in cell_figures(counts, metrics).items():
        if names is None or name in names:
            writer.metric(legal_key(f"{prefix}/{name}"), value)


def figure_table(writer: BundleWriter, path: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """A table of figures as MLflow's ``log_table`` writes it (JSON, ``split`` orient),
    marked in the ``mlflow.loggedArtifacts`` tag so the UI shows it as a table.

    Each row's ``key`` is the metric key prefix its figures would have: ``<key>/<column>``
    is what :mod:`~docevals_mlflow.tracking.figure_tables` reads back for comparisons.
    """
    if not rows:
        return
    columns = list(dict.fromkeys(column for row in rows for column in row))
    writer.json(
        path,
        {"columns": columns, "data": [[row.get(column) for column in columns] for row in rows]},
    )
    listed = json.loads(writer.bundle.tags.get(LOGGED_TABLES, "[]"))
    entry = {"path": path, "type": "table"}
    if entry not in listed:
        listed.append(entry)
    writer.tag(LOGGED_TABLES, json.dumps(listed))


def headline_view_tags(created_ms: int) -> dict[str, str]:
    """The experiment tag of a saved view "docevals headline" of MLflow's runs list: its
    dataset and headline metric columns. MLflow's classic runs list shows no metric
    until columns are picked; this view is one click in its "Views" menu, or the link
    ``#/experiments/<id>/runs?viewStateShareKey=docevals-headline``. MLflow's format:
    ``mlflow.sharedViewState.<id>`` holding the view's name, times and state."""
    state = {
        "selectedColumns": [
            "attributes.`Dataset`",
            *(f"metrics.`{HEADLINE}/{name}`" for name in HEADLINE_COLUMNS),
        ]
    }
    view = {
        "name": "docevals headline",
        "createdAt": created_ms,
        "updatedAt": created_ms,
        "state": json.dumps(state),
    }
    return {f"mlflow.sharedViewState.{HEADLINE_VIEW}": json.dumps(view)}


def tag_evaluation(
    writer: BundleWriter, report_kind: str, *, verdict: str | None, note: str
) -> None:
    """The tags every evaluation run carries: kind, report kind, verdict (when there is
    one) and the Markdown run description."""
    writer.tag("docevals.kind", "evaluation")
    writer.tag("docevals.report_kind", report_kind)
    if verdict is not None:
        writer.tag("docevals.verdict", verdict)
    writer.tag("mlflow.note.content", note)
