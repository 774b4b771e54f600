"""The diagnostics on the command line: counterfactual reruns in ``evaluate-pipeline``
and the calibration of extraction confidence in ``docevals fields``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docevals_mlflow import PipelineEvaluationReport, load_report
from tests.conftest import ModuleWriter
from tests.helpers import assert_one_line_error, run, write_json, write_jsonl
from tests.test_cli import write_pipeline

ACTIONS = """\
def route(data):
    # The same rule as the recorded run: everything above 5 needs approval.
    return {"queue": "approval" if data["total"] > 5 else "auto-pay"}


def fixed_route(data):
    return {"queue": "auto-pay"}
"""


def pipeline_report(path: Path) -> PipelineEvaluationReport:
    report = load_report(path)
    assert isinstance(report, PipelineEvaluationReport)
    return report


def test_action_reruns_the_combined_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module)
    actions = checks_module(tmp_path / "config", ACTIONS)
    output = tmp_path / "p.json"
    markdown = tmp_path / "p.md"
    code, out, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        output,
        "--markdown",
        markdown,
        "--action",
        f"route_invoice={actions}:route",
    )
    assert (code, err) == (1, "")
    assert "route=fail/independent_failure" in out
    rerun = pipeline_report(output).stage("route").counterfactual
    assert rerun is not None
    # total passed without ground truth of its own: its output is kept.
    assert rerun.corrected_upstream == {"total": "own prediction (passed)"}
    assert rerun.input_data == {"total": 7}
    assert rerun.prediction == {"queue": "approval"}
    assert "## Counterfactual reruns" in markdown.read_text(encoding="utf-8")


def test_recorded_reruns_and_stage_id_actions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module)
    reruns = write_json(
        tmp_path / "reruns.json",
        [{"pipeline_id": "invoice-7", "stage_id": "route", "prediction": {"queue": "auto-pay"}}],
    )
    output = tmp_path / "p.json"
    code, out, _ = run(capsys, "evaluate-pipeline", config, "--output", output, "--reruns", reruns)
    assert code == 1
    assert "route=fail/caused_by_upstream" in out
    assert pipeline_report(output).stage("route").counterfactual.source == "recorded"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["--action", "route_invoice"], ["--action 'route_invoice'", "NAME=module:function"]),
        (["--action", "x=no_such_module_here:f"], ["cannot import 'no_such_module_here'"]),
        (["--reruns", "missing.json"], ["reruns file not found", "missing.json"]),
    ],
)
def test_bad_counterfactual_options_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    checks_module: ModuleWriter,
    argv: list[str],
    fragments: list[str],
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module)
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "p.json", *argv)
    assert code == 2
    assert_one_line_error(err, *fragments)
    assert not (tmp_path / "p.json").exists()


def test_bad_recorded_rerun_names_the_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module)
    reruns = write_json(tmp_path / "reruns.json", [{"pipeline_id": "invoice-7"}])
    code, _, err = run(
        capsys, "evaluate-pipeline", config, "--output", tmp_path / "p.json", "--reruns", reruns
    )
    assert code == 2
    assert_one_line_error(err, "reruns.json", "rerun 1", "stage_id")


def test_fields_prints_and_writes_calibration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    expected = write_jsonl(
        tmp_path / "gt.jsonl",
        [{"id": index, "data": {"total": 10, "name": "Ann"}} for index in range(10)],
    )
    predicted = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {
                "id": index,
                "data": {"total": 11 if index == 0 else 10, "name": "Ann"},
                "confidence": {"total": 0.3 if index == 0 else 0.9, "name": 0.8},
            }
            for index in range(10)
        ],
    )
    output = tmp_path / "report.json"
    markdown = tmp_path / "report.md"
    code, out, err = run(
        capsys,
        "fields",
        "--expected",
        expected,
        "--predicted",
        predicted,
        "--output",
        output,
        "--markdown",
        markdown,
    )
    assert (code, err) == (0, "")
    assert "confidence: AUROC 1.0000" in out
    assert (
        "reviewing the least confident 5%, 10%, 20% of fields catches 100.0%, 100.0%, 100.0% "
        "of errors"
    ) in out
    report = json.loads(output.read_text(encoding="utf-8"))
    assert report["calibration"]["overall"]["n"] == 20
    assert "Confidence calibration" in markdown.read_text(encoding="utf-8")


def test_fields_without_confidence_has_no_calibration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    expected = write_jsonl(tmp_path / "gt.jsonl", [{"id": 1, "data": {"total": 10}}])
    predicted = write_jsonl(tmp_path / "pred.jsonl", [{"id": 1, "data": {"total": 11}}])
    output = tmp_path / "report.json"
    code, out, _ = run(
        capsys, "fields", "--expected", expected, "--predicted", predicted, "--output", output
    )
    assert code == 0
    assert "confidence:" not in out
    assert "calibration" not in json.loads(output.read_text(encoding="utf-8"))
