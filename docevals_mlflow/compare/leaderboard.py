"""With two or more candidates: every run ranked on the chosen metric, with intervals,
over the documents (or decided cases) all runs share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docevals_mlflow.compare.align import common_documents, document_cells
from docevals_mlflow.compare.deltas import passed
from docevals_mlflow.compare.results import LEADERBOARD_COLUMNS, PairComparison, Settings
from docevals_mlflow.compare.snapshot import RunSnapshot
from docevals_mlflow.compare.statistics import metric_interval, proportion_interval

if TYPE_CHECKING:
    import pandas as pd


def _case_passes(snapshot: RunSnapshot, keys: Sequence[tuple[str, str]]) -> np.ndarray[Any, Any]:
    table = snapshot.cases
    assert table is not None
    verdict_of = dict(
        zip(zip(table.case_id, table.stage_id, strict=True), table.verdict, strict=True)
    )
    return np.array([passed(verdict_of[key]) for key in keys], dtype=bool)


def _common_cases(snapshots: Sequence[RunSnapshot]) -> list[tuple[str, str]]:
    verdicts = []
    for snapshot in snapshots:
        table = snapshot.cases
        assert table is not None
        verdicts.append(
            dict(zip(zip(table.case_id, table.stage_id, strict=True), table.verdict, strict=True))
        )
    first, *others = verdicts
    return [
        key
        for key, verdict in first.items()
        if verdict != "not_applicable"
        and all(key in other and other[key] != "not_applicable" for other in others)
    ]


def leaderboard(
    baseline: RunSnapshot, pairs: Sequence[PairComparison], settings: Settings
) -> pd.DataFrame:
    import pandas as pd

    runs = [baseline, *(pair.candidate for pair in pairs)]
    options: dict[str, Any] = {
        "resamples": settings.resamples,
        "seed": settings.seed,
        "confidence": settings.confidence,
    }
    values = []
    if pairs[0].unit == "document":
        ids = common_documents(runs)
        for run in runs:
            point, lows, highs = metric_interval(
                document_cells(run, ids), metric=settings.metric, **options
            )
            values.append((len(ids), float(point[0]), float(lows[0]), float(highs[0])))
    else:
        keys = _common_cases(runs)
        for run in runs:
            values.append((len(keys), *proportion_interval(_case_passes(run, keys), **options)))
    rows = []
    for index, run in enumerate(runs):
        n, value, low, high = values[index]
        if index == 0:
            effect: dict[str, Any] = {}
        else:
            effect = pairs[index - 1].headline
        rows.append(
            (
                0,
                run.label,
                run.run_id,
                "baseline" if index == 0 else "candidate",
                n,
                value,
                low,
                high,
                effect.get("delta", np.nan),
                effect.get("ci_low", np.nan),
                effect.get("ci_high", np.nan),
                effect.get("p_adjusted", np.nan),
                effect.get("direction", ""),
            )
        )
    frame = pd.DataFrame.from_records(rows, columns=LEADERBOARD_COLUMNS)
    frame = frame.sort_values(
        "value", ascending=settings.lower_is_better, na_position="last", kind="stable"
    ).reset_index(drop=True)
    frame["rank"] = np.arange(1, len(frame) + 1)
    return frame
