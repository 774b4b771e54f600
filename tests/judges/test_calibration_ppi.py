"""The judge-bias-corrected pass rate in a calibration: report, Markdown, CLI and run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docevals_mlflow.cli import main
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.core.statistics.ppi import ppi_mean
from docevals_mlflow.evaluation.evaluator import Evaluator
from docevals_mlflow.judges.calibration import CalibrationReport, HumanLabel, calibrate
from docevals_mlflow.reports.calibration_markdown import render_calibration_markdown
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.calibration_runs import layout_calibration
from tests.judges.test_calibration import (
    FAIL,
    PANEL_HUMANS,
    PASS,
    case_labels,
    judge_labels,
    judge_reports,
    make_case,
    panel_reports,
    scripted_judge,
    write_labels,
)
from tests.test_cli_calibrate import write_reports

# 30 cases: the judge passes 24 (every true pass and 4 of the 8 true failures);
# humans label the first 20 (15 pass, 5 fail).
TRUTH = ["pass"] * 22 + ["fail"] * 8
TRUTH = [TRUTH[(7 * index) % 30] for index in range(30)]  # interleave, deterministically
IDS = [f"d{index:02d}" for index in range(30)]


def _judge_verdicts() -> list[str]:
    failures = [index for index, truth in enumerate(TRUTH) if truth == "fail"]
    lenient = set(failures[::2])
    return ["pass" if truth == "pass" or i in lenient else "fail" for i, truth in enumerate(TRUTH)]


def lenient_reports() -> list[EvaluationReport]:
    script = {
        case_id: PASS if v == "pass" else FAIL
        for case_id, v in zip(IDS, _judge_verdicts(), strict=True)
    }
    cases = [make_case(case_id) for case_id in IDS]
    return Evaluator([scripted_judge(script)]).evaluate_batch(cases)


def lenient_labels() -> list[HumanLabel]:
    return [HumanLabel(case_id=IDS[index], label=TRUTH[index]) for index in range(20)]


def test_the_corrected_pass_rate_is_ppi_over_every_judged_case():
    report = calibrate(lenient_reports(), lenient_labels(), bootstrap=0)
    correction = report.pass_rate
    assert correction is not None
    verdicts = _judge_verdicts()
    expected = ppi_mean(
        [float(TRUTH[i] == "pass") for i in range(20)],
        [float(verdicts[i] == "pass") for i in range(20)],
        [float(verdicts[i] == "pass") for i in range(20, 30)],
        bounds=(0.0, 1.0),
        kappa=report.cases.kappa,
    )
    assert correction.method == "ppi++"
    assert correction.prediction == "verdict"
    assert correction.fallback is None
    assert correction.corrected.estimate == pytest.approx(expected.corrected.estimate)
    assert correction.corrected.low == pytest.approx(expected.corrected.low)
    assert correction.judge_only.estimate == pytest.approx(sum(v == "pass" for v in verdicts) / 30)
    assert (correction.labelled, correction.unlabelled) == (20, 10)
    # The lenient judge overstates the pass rate; the correction moves towards humans.
    assert correction.corrected.estimate < correction.judge_only.estimate
    markdown = render_calibration_markdown(report)
    assert "## Pass rate corrected for judge bias (PPI++)" in markdown
    assert "pass rate, PPI++ (λ" in markdown


def test_a_panel_uses_its_pass_vote_share_as_the_prediction():
    # Votes (see PANEL_VOTES): p1 3/3 pass, p2 0/3, p3 2/3, p4 0/3 (unsure is no pass),
    # p5 2/3; humans label p1-p3, so p4 and p5 are judged only.
    humans = {case_id: PANEL_HUMANS[case_id] for case_id in ("p1", "p2", "p3")}
    report = calibrate(panel_reports(), case_labels(humans), bootstrap=0)
    correction = report.pass_rate
    assert correction is not None
    expected = ppi_mean(
        [1.0, 0.0, 0.0],
        [1.0, 0.0, 2 / 3],
        [0.0, 2 / 3],
        bounds=(0.0, 1.0),
        kappa=report.cases.kappa,
    )
    assert correction.prediction == "panel_vote_share"
    assert correction.method == "ppi++"
    assert correction.lam == pytest.approx(expected.lam)
    assert correction.corrected.estimate == pytest.approx(expected.corrected.estimate)
    assert correction.corrected.high == pytest.approx(expected.corrected.high)
    # The judge-only figure stays the panel's share of pass verdicts (p1, p3, p5).
    assert correction.judge_only.estimate == pytest.approx(3 / 5)
    markdown = render_calibration_markdown(report)
    assert "pass rate, PPI++ on the panel's pass-vote share (λ" in markdown


def test_an_uninformative_judge_falls_back_to_the_human_labels():
    # Judge: pass on every labelled case but one; humans disagree exactly where it fails.
    reports = judge_reports()
    labels = [label for label in judge_labels(extra=False) if label.claim_id is None]
    anti = [
        HumanLabel(case_id=label.case_id, label="fail" if label.label == "pass" else "pass")
        for label in labels
    ]
    report = calibrate(reports, anti, bootstrap=0)
    correction = report.pass_rate
    assert correction is not None
    assert correction.method == "human_only"
    assert correction.corrected == correction.human_only
    assert correction.fallback is not None
    assert any(
        "human-only used" in line for line in render_calibration_markdown(report).split("\n")
    )


def test_the_run_logs_the_three_estimates_and_the_headline():
    report = calibrate(lenient_reports(), lenient_labels(), bootstrap=0)
    writer = BundleWriter(run_name="calibration")
    layout_calibration(writer, report, markdown="# md\n")
    metrics = writer.bundle.metrics
    correction = report.pass_rate
    assert correction is not None
    assert metrics["Summary/corrected_pass_rate"] == correction.corrected.estimate
    assert metrics["ppi/corrected/ci_low"] == correction.corrected.low
    assert metrics["ppi/judge_only/estimate"] == correction.judge_only.estimate
    assert metrics["ppi/human_only/ci_high"] == correction.human_only.high
    assert metrics["ppi/lambda"] == correction.lam
    assert (metrics["ppi/labelled"], metrics["ppi/unlabelled"], metrics["ppi/fallback"]) == (
        20,
        10,
        0,
    )


def test_cli_prints_all_three_and_logs_them(mlflow_store, tmp_path: Path, capsys):
    from mlflow.tracking import MlflowClient

    paths = write_reports(tmp_path, lenient_reports())
    labels = write_labels(tmp_path / "labels.jsonl", lenient_labels())
    output = tmp_path / "calibration.json"
    args = ["calibrate", *paths, "--labels", str(labels), "--output", str(output)]
    assert main([*args, "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "pass rate, judge only:" in out
    assert "pass rate, humans only:" in out
    assert "pass rate, PPI++ (λ" in out
    report = CalibrationReport.model_validate_json(output.read_text(encoding="utf-8"))
    assert report.pass_rate is not None
    match = re.search(r"MLflow run ([0-9a-f]{32})", out)
    assert match
    run = MlflowClient(mlflow_store).get_run(match.group(1))
    assert run.data.metrics["Summary/corrected_pass_rate"] == pytest.approx(
        report.pass_rate.corrected.estimate
    )
    assert "ppi/human_only/ci_low" in run.data.metrics
