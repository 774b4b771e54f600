"""``docevals calibrate``: reports written, --min-kappa gating, one-line errors, the run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.cli import build_parser, main
from docevals_mlflow.cli.calibrate import layout_calibration
from docevals_mlflow.judges.calibration import CalibrationReport, HumanLabel, calibrate
from docevals_mlflow.reports.files import write_report
from docevals_mlflow.tracking.bundle import BundleWriter
from tests.judges.test_calibration import (
    PANEL_HUMANS,
    case_labels,
    judge_labels,
    judge_reports,
    panel_reports,
    write_labels,
)


def write_reports(folder: Path, reports: list[Any]) -> list[str]:
    """Each case report as ``reports/<case id>.json``; the paths."""
    paths = []
    for report in reports:
        path = folder / "reports" / f"{report.case_id}.json"
        path.parent.mkdir(exist_ok=True)
        write_report(report, path)
        paths.append(str(path))
    return paths


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[list[str], Path]:
    """Scenario A (case kappa 4/9, claim kappa 1/7) as report files and a labels file,
    with one label for a claim the judge never answered (a label for a case the
    reports do not hold is an error, see test_cli_references.py)."""
    paths = write_reports(tmp_path, judge_reports())
    unanswered = HumanLabel(case_id="c01", claim_id="p00009", label="correct")
    return paths, write_labels(tmp_path / "labels.jsonl", [*judge_labels(extra=False), unanswered])


def argv(reports: list[str], labels: Path, output: Path, *extra: str) -> list[str]:
    return ["calibrate", *reports, "--labels", str(labels), "--output", str(output), *extra]


def test_calibrate_is_a_registered_command():
    assert "calibrate" in build_parser().format_help()


def test_success_writes_both_reports(inputs, tmp_path, capsys):
    reports, labels = inputs
    output, markdown = tmp_path / "out" / "calibration.json", tmp_path / "calibration.md"
    code = main(argv(reports, labels, output, "--markdown", str(markdown), "--bootstrap", "300"))
    out = capsys.readouterr().out
    assert code == 0
    report = CalibrationReport.model_validate_json(output.read_text(encoding="utf-8"))
    assert report.cases.kappa == pytest.approx(4 / 9)
    assert report.claims.kappa == pytest.approx(1 / 7)
    assert (report.bootstrap, report.seed) == (300, 0)
    assert report.verdict_line() in out
    assert report.verdict_line() in markdown.read_text(encoding="utf-8")
    assert "1 label(s) matched no judged case or claim (listed in the report)" in out
    # The same inputs and seed give the same file.
    again = tmp_path / "again.json"
    assert main(argv(reports, labels, again, "--bootstrap", "300")) == 0
    assert again.read_text(encoding="utf-8") == output.read_text(encoding="utf-8")


@pytest.mark.parametrize(("threshold", "code"), [("0.5", 1), ("0.44", 0), ("-1", 0)])
def test_min_kappa_gates_on_the_case_kappa(inputs, tmp_path, capsys, threshold, code):
    reports, labels = inputs
    output = tmp_path / "r.json"
    assert main(argv(reports, labels, output, "--min-kappa", threshold, "--bootstrap", "0")) == code
    err = capsys.readouterr().err
    if code:
        assert err == "docevals: threshold: case κ 0.4444 is below 0.5\n"
    else:
        assert err == ""
    assert output.is_file()  # the report is written either way


def test_min_kappa_fails_when_kappa_is_undefined(inputs, tmp_path, capsys):
    reports, _ = inputs
    labels = write_labels(tmp_path / "same.jsonl", case_labels({"c01": "pass", "c02": "pass"}))
    code = main(argv(reports, labels, tmp_path / "r.json", "--min-kappa", "0"))
    assert code == 1
    assert "case κ is undefined (required at least 0)" in capsys.readouterr().err


def test_bad_labels_exit_2_with_one_line(inputs, tmp_path, capsys):
    reports, _ = inputs
    labels = tmp_path / "bad.jsonl"
    labels.write_text('{"case_id": "c01", "label": "pass"}\n{"case_id": "c02", "label": "ok"}\n')
    output = tmp_path / "r.json"
    assert main(argv(reports, labels, output)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"docevals: error: {labels}, record line 2, at label:")
    assert not output.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--min-kappa", "7"], "--min-kappa 7 (expected a value between -1 and 1)"),
        (["--metric", "nope"], "no report has a metric 'nope' (expected one of judge)"),
        (["--bootstrap", "-1"], "bootstrap must be 0 or more, not -1"),
        (["--confidence", "95"], "confidence 95.0 is outside (0, 1)"),
    ],
)
def test_bad_options_exit_2(inputs, tmp_path, capsys, extra, message):
    reports, labels = inputs
    assert main(argv(reports, labels, tmp_path / "r.json", *extra)) == 2
    assert capsys.readouterr().err == f"docevals: error: {message}\n"


def test_bad_reports_exit_2(inputs, tmp_path, capsys):
    reports, labels = inputs
    assert main(argv([str(tmp_path / "missing.json")], labels, tmp_path / "r.json")) == 2
    assert "report not found" in capsys.readouterr().err
    assert main(argv([*reports, reports[0]], labels, tmp_path / "r.json")) == 2
    assert "is in more than one report" in capsys.readouterr().err


def test_layout_logs_the_calibration_figures():
    report = calibrate(panel_reports(), case_labels(PANEL_HUMANS), bootstrap=100)
    writer = BundleWriter(run_name="calibration")
    layout_calibration(writer, report, markdown="# md\n", labels_sha256="abc", verdict="pass")
    bundle = writer.bundle
    metrics = bundle.metrics
    assert metrics["calibration/cases/n"] == 5
    assert metrics["calibration/cases/agreement"] == 0.8
    assert metrics["calibration/cases/kappa"] == pytest.approx(8 / 13)
    assert report.cases.kappa_ci is not None
    assert metrics["calibration/cases/kappa_ci_low"] == report.cases.kappa_ci.low
    assert metrics["calibration/cases/kappa_ci_high"] == report.cases.kappa_ci.high
    assert metrics["calibration/fleiss_kappa"] == pytest.approx(2 / 7)
    assert metrics["calibration/variant/b/kappa"] == pytest.approx(1 / 6)
    assert metrics["calibration/claims/n"] == 0
    # Undefined figures (no labelled claims) are left out, not logged as 0.
    assert "calibration/claims/kappa" not in metrics
    # The headline: the case figures, and how often the judge and the humans said pass.
    assert metrics["Summary/agreement"] == 0.8
    assert metrics["Summary/kappa"] == pytest.approx(8 / 13)
    assert metrics["Summary/labelled_cases"] == 5
    assert metrics["Summary/labelled_claims"] == 0
    assert metrics["Summary/judge_pass_rate"] == 0.6
    assert metrics["Summary/human_pass_rate"] == 0.4
    assert bundle.tags["docevals.kind"] == "evaluation"
    assert bundle.tags["docevals.report_kind"] == "calibration"
    assert bundle.tags["docevals.verdict"] == "pass"
    assert bundle.params["calibration.labels_sha256"] == "abc"
    assert json.loads(writer.files["report/report.json"]) == report.model_dump(mode="json")
    assert writer.files["report/report.md"] == b"# md\n"


def test_the_run_is_logged_to_mlflow(inputs, mlflow_store, tmp_path, capsys):
    from mlflow.tracking import MlflowClient

    reports, labels = inputs
    output = tmp_path / "calibration.json"
    assert main(argv(reports, labels, output, "--bootstrap", "200", "--min-kappa", "0.4")) == 0
    match = re.search(r"MLflow run ([0-9a-f]{32})", capsys.readouterr().out)
    assert match
    client = MlflowClient(mlflow_store)
    run = client.get_run(match.group(1))
    assert run.info.run_name == "calibration"
    assert run.data.tags["docevals.kind"] == "evaluation"
    assert run.data.tags["docevals.report_kind"] == "calibration"
    assert run.data.tags["docevals.verdict"] == "pass"
    assert run.data.metrics["calibration/cases/kappa"] == pytest.approx(4 / 9)
    assert run.data.metrics["calibration/claims/agreement"] == 0.5
    assert run.data.metrics["calibration/cases/n"] == 10
    assert {"calibration/cases/kappa_ci_low", "calibration/cases/kappa_ci_high"} <= set(
        run.data.metrics
    )
    artifacts = {item.path for item in client.list_artifacts(run.info.run_id, "report")}
    assert artifacts == {"report/report.json", "report/report.md"}


def test_labels_from_csv_work_end_to_end(inputs, tmp_path):
    reports, _ = inputs
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,label,labeler\nc06,fail,ann\nc07,fail,ann\nc01,pass,bo\n")
    output = tmp_path / "r.json"
    assert main(argv(reports, labels, output, "--bootstrap", "0")) == 0
    report = CalibrationReport.model_validate_json(output.read_text(encoding="utf-8"))
    # Human fail, fail, pass; judge pass, fail, pass: n=3, a=2; human fail 2, pass 1;
    # judge pass 2, fail 1: S = 2*1 + 1*2 = 4; kappa = (6 - 4) / (9 - 4) = 0.4.
    assert report.cases.kappa == pytest.approx(0.4)
    assert [pair.labeler for pair in report.cases.pairs] == ["ann", "ann", "bo"]


def test_panel_calibration_ranks_verdicts_by_disagreement(mlflow_store, tmp_path, capsys):
    # Panel scenario: humans say p3 fails, the panel passed it with one dissent, so
    # the one panel error is among the most disputed verdicts.
    paths = write_reports(tmp_path, panel_reports())
    labels = write_labels(tmp_path / "labels.jsonl", case_labels(PANEL_HUMANS))
    output = tmp_path / "calibration.json"
    markdown = tmp_path / "calibration.md"
    code = main([*argv(paths, labels, output, "--markdown", str(markdown), "--bootstrap", "50")])
    out = capsys.readouterr().out
    assert code == 0
    (line,) = [line for line in out.splitlines() if line.startswith("panel disagreement:")]
    assert "catches 33.3% of the panel's errors (0.33 of 1; ties share credit)" in line
    report = CalibrationReport.model_validate_json(output.read_text(encoding="utf-8"))
    assert report.disagreement is not None
    assert report.disagreement.truth == "human_labels"
    assert report.disagreement.review.errors == 1
    first = report.disagreement.order[0]
    assert (first.case_id, first.panel_verdict, first.truth) == ("p3", "pass", "fail")
    assert "## Panel disagreement as a review signal" in markdown.read_text(encoding="utf-8")
    run_id = re.search(r"MLflow run ([0-9a-f]{32})", out).group(1)
    from mlflow.tracking import MlflowClient

    client = MlflowClient(mlflow_store)
    budget = json.loads(
        Path(client.download_artifacts(run_id, "tables/disagreement_budget.json")).read_text()
    )
    rows = {row[0]: dict(zip(budget["columns"], row, strict=True)) for row in budget["data"]}
    assert rows["disagreement_budget/5pct"]["error_capture"] == pytest.approx(1 / 3)


def test_single_judge_calibration_has_no_disagreement_budget(inputs, tmp_path, capsys):
    reports, labels = inputs
    output = tmp_path / "calibration.json"
    assert main([*argv(reports, labels, output, "--no-mlflow")]) in (0, 1)
    assert "panel disagreement" not in capsys.readouterr().out
    report = CalibrationReport.model_validate_json(output.read_text(encoding="utf-8"))
    assert report.disagreement is None
