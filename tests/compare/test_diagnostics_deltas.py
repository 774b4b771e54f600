"""The comparison reads diagnostics metrics like any other: deltas, subjects, order."""

from __future__ import annotations

from docevals_mlflow.compare import RunSnapshot
from docevals_mlflow.compare.deltas import metric_deltas


def snapshot(run_id: str, auroc: float, capture: float, caused: float) -> RunSnapshot:
    return RunSnapshot(
        run_id=run_id,
        metrics={
            "overall/f1": 0.9,
            "calibration/overall/auroc": auroc,
            "calibration/total/auroc": auroc,
            "calibration/overall/fields": 100,
            "review_budget/10pct/error_capture": capture,
            "stage/calculate/caused_by_upstream_rate": caused,
            "cascade/extract-to-calculate/co_failure_rate": 0.5,
        },
        metrics_index={
            "calibration": {"overall": "(all fields)", "total": "$.total"},
            "stage": {"calculate": "calculate"},
            "cascade": {"extract-to-calculate": "extract → calculate"},
        },
    )


def test_diagnostics_metrics_have_deltas_and_subjects():
    frame = metric_deltas(snapshot("a", 0.7, 0.4, 1.0), snapshot("b", 0.8, 0.6, 0.5))
    rows = frame.set_index("key")
    assert rows.loc["calibration/overall/auroc", "delta"] == 0.8 - 0.7
    assert rows.loc["calibration/total/auroc", "subject"] == "$.total"
    assert rows.loc["review_budget/10pct/error_capture", "statistic"] == "error_capture"
    assert rows.loc["stage/calculate/caused_by_upstream_rate", "delta"] == -0.5
    assert rows.loc["cascade/extract-to-calculate/co_failure_rate", "subject"] == (
        "extract → calculate"
    )
    # Scopes in display order: overall, stage, cascade, then calibration and budgets.
    scopes = list(dict.fromkeys(frame["scope"]))
    assert scopes == ["overall", "stage", "cascade", "calibration", "review_budget"]
