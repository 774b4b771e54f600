"""A run's figures under one naming, whichever version logged it: for comparisons.

Runs logged since the headline scheme (docs/mlflow-runs.md, "Keys") hold their
headline as ``Summary/<figure>`` metrics and the figures better read as a table
(confusion cells, FAR/FDR and list item counts per field and class, calibration per
field, review budgets, cascades, split class counts) in figure tables
(``tables/*.json``, each row's ``key`` the metric prefix of its figures). Older runs
logged all of them as metrics, with the headline under ``overall/`` (``split/`` for
split runs).

:func:`all_figures` gives both the same keys: table figures become
``<key>/<column>`` again and old headline keys are renamed to ``Summary/…``, so
``docevals compare`` pairs an old run with a new one figure by figure. Logged metrics
always win over a table's copy. Does not import mlflow.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from docevals_mlflow.tracking.layout_shared import HEADLINE

TABLES = (
    "tables/fields.json",
    "tables/lists.json",
    "tables/calibration.json",
    "tables/review_budget.json",
    "tables/review_threshold.json",
    "tables/disagreement_budget.json",
    "tables/disagreement_threshold.json",
    "tables/cascades.json",
    "tables/split_classes.json",
)
"""Every figure table a layout writes."""
DESCRIPTORS = frozenset(
    {"key", "name", "method", "field", "class", "stage", "upstream", "downstream"}
    | {"budget", "target"}
)
"""Table columns that say what a row is about, not figures."""
_NAMED = {"name", "field", "class", "stage"}
"""Descriptor columns naming the subject of a row's key segment."""
OLD_HEADLINE = {
    **{
        f"overall/{name}": f"{HEADLINE}/{name}"
        for name in ("f1", "precision", "recall", "accuracy", "documents", "cases")
    },
    **{
        f"overall/case_{verdict}_rate": f"{HEADLINE}/case_{verdict}_rate"
        for verdict in ("pass", "fail", "uncertain", "not_applicable")
    },
    "overall/human_review_rate": f"{HEADLINE}/human_review_rate",
    **{
        f"split/{name}": f"{HEADLINE}/{name}"
        for name in ("page_accuracy", "accuracy_without_order", "accuracy_with_order")
    },
    "split/packets": f"{HEADLINE}/packets",
    "split/pages": f"{HEADLINE}/pages",
}
"""Headline keys of runs logged before the ``Summary/`` namespace, and their new names."""

Reader = Callable[[str], bytes | None]


def _figure(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def table_figures(
    data: bytes, source: str = "table"
) -> tuple[dict[str, float], dict[str, dict[str, str]]]:
    """The figures of one figure table as ``{key: value}``, and the subjects its rows
    name as ``{namespace: {segment: source}}`` (what ``metrics_index.json`` would say).

    Raises:
        ValueError: the bytes are not a figure table.
    """
    try:
        table = json.loads(data.decode("utf-8"))
        columns, rows = list(table["columns"]), list(table["data"])
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{source} is not a figure table ({exc})") from None
    figures: dict[str, float] = {}
    index: dict[str, dict[str, str]] = {}
    for values in rows:
        row = dict(zip(columns, values, strict=False))
        key = row.get("key")
        if not isinstance(key, str) or not key:
            continue
        for column, value in row.items():
            figure = None if column in DESCRIPTORS else _figure(value)
            if figure is not None:
                figures[f"{key}/{column}"] = figure
        parts = key.split("/")
        named = [row[column] for column in _NAMED if isinstance(row.get(column), str)]
        if len(parts) == 2 and named:
            index.setdefault(parts[0], {}).setdefault(parts[1], named[0])
    return figures, index


def all_figures(
    metrics: Mapping[str, float], index: Mapping[str, Mapping[str, str]], read: Reader
) -> tuple[dict[str, float], dict[str, dict[str, str]]]:
    """A run's metrics with its table figures added and old headline keys renamed, and
    its metrics index with the table rows' subjects added (the logged index wins)."""
    figures: dict[str, float] = {}
    subjects: dict[str, dict[str, str]] = {}
    for path in TABLES:
        data = read(path)
        if data is None:
            continue
        found, named = table_figures(data, path)
        figures.update(found)
        for namespace, rows in named.items():
            subjects.setdefault(namespace, {}).update(rows)
    figures.update(metrics)
    merged = {OLD_HEADLINE.get(key, key): value for key, value in figures.items()}
    # A key logged under its new name keeps its logged value.
    merged.update({key: value for key, value in figures.items() if key.startswith(HEADLINE)})
    for namespace, logged in index.items():
        subjects.setdefault(namespace, {}).update(logged)
    return merged, subjects
