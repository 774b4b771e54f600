"""Every judge's verdict per stage: ``judges/votes.parquet`` in an evaluation run, and
the same records read back from a case or pipeline report.

One row per (case, stage, metric, member): ``metric`` is the judge or panel metric
(the question judged), ``member`` the panel variant, or the metric itself for a single
LLM judge. A batch of pipelines is logged as a suite whose report holds no stages, so
the table is what lets ``docevals compare`` pair two batch runs' votes judge by judge.

Does not import mlflow; pandas only to write and read Parquet.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import Any

from docevals_mlflow.compare.snapshot import VoteTable
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.tracking.bundle import BundleWriter

VOTES = "judges/votes.parquet"
VOTE_COLUMNS = ("case_id", "stage_id", "metric", "member", "provider", "model", "group", "verdict")


def _result_votes(case_id: Any, stage_id: Any, result: Mapping[str, Any]) -> list[dict[str, Any]]:
    basis = str(result.get("basis") or "")
    found: Any = result.get("details")
    details: dict[str, Any] = found if isinstance(found, dict) else {}
    where = {"case_id": case_id, "stage_id": stage_id, "metric": result.get("name")}
    if basis == "judge_panel":
        return [
            {
                **where,
                "member": variant.get("name"),
                "provider": variant.get("provider"),
                "model": variant.get("model"),
                "group": variant.get("group"),
                "verdict": variant.get("verdict"),
            }
            for variant in details.get("variants") or ()
        ]
    if basis.startswith("llm_judge"):
        judge = details.get("judge")
        judge = judge if isinstance(judge, dict) else {}
        return [
            {
                **where,
                "member": result.get("name"),
                "provider": judge.get("provider"),
                "model": judge.get("model"),
                "group": None,
                "verdict": result.get("verdict"),
            }
        ]
    return []


def vote_records(stages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The votes of stage reports given as JSON (``case_id``, ``stage_id`` and
    ``metric_results``): panel members from a panel result's ``details.variants``, a
    single LLM judge as one member named after its metric."""
    records: list[dict[str, Any]] = []
    for stage in stages:
        for result in stage.get("metric_results") or ():
            records += _result_votes(stage.get("case_id"), stage.get("stage_id"), result)
    return records


def log_votes(writer: BundleWriter, stages: Iterable[EvaluationReport]) -> None:
    """Add ``judges/votes.parquet`` when any stage was judged."""
    import pandas as pd

    fields = {"case_id", "stage_id", "metric_results"}
    records = vote_records(stage.model_dump(mode="json", include=fields) for stage in stages)
    if records:
        writer.parquet(VOTES, pd.DataFrame.from_records(records, columns=list(VOTE_COLUMNS)))


def read_votes(data: bytes) -> VoteTable:
    """``judges/votes.parquet`` as a :class:`~docevals_mlflow.compare.snapshot.VoteTable`."""
    import pandas as pd

    frame = pd.read_parquet(io.BytesIO(data))
    records = [
        {
            str(name): (None if value is None or value != value else str(value))
            for name, value in row.items()
        }
        for row in frame.to_dict(orient="records")
    ]
    return VoteTable.from_records(records)
