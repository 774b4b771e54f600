"""``docevals calibrate``: intervals resample labelled cases (a case with all its
claim labels), printed, in both reports and in the run, with cases and labels beside."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from docevals_mlflow.cli import main
from docevals_mlflow.cli.calibrate import layout_calibration
from docevals_mlflow.core.statistics.rate_intervals import rate_interval, wilson_interval
from docevals_mlflow.judges.calibration import CalibrationReport, calibrate
from docevals_mlflow.tracking.bundle import BundleWriter
from tests.judges.test_calibration import judge_labels, judge_reports, write_labels
from tests.test_cli_calibrate import argv, write_reports


def run(tmp_path: Path, *extra: str) -> tuple[CalibrationReport, str, str]:
    reports = write_reports(tmp_path, judge_reports())
    labels = write_labels(tmp_path / "labels.jsonl", judge_labels(extra=False))
    output, markdown = tmp_path / f"calibration{'-'.join(extra)}.json", tmp_path / "c.md"
    assert main(argv(reports, labels, output, "--markdown", str(markdown), *extra)) == 0
    report = CalibrationReport.model_validate_json(output.read_text(encoding="utf-8"))
    return report, markdown.read_text(encoding="utf-8"), output.read_text(encoding="utf-8")


def test_case_figures_get_wilson_intervals_with_cases_and_labels(tmp_path, capsys):
    report, markdown, _ = run(tmp_path)
    out = capsys.readouterr().out
    cases = report.cases
    # Ten labelled cases, one label each: 7 agree, so the plain Wilson interval.
    assert cases.agreement_ci is not None
    assert (cases.agreement_ci.low, cases.agreement_ci.high) == wilson_interval(7, 10)
    assert (cases.agreement_ci.cases, cases.agreement_ci.observations) == (10, 10)
    assert cases.agreement_ci.method == "wilson"
    assert cases.kappa_ci is not None
    assert cases.kappa_ci.method == "percentile"
    # The judge passed 5 of the 10 labelled cases, the humans 6.
    assert (cases.judge_pass_rate, cases.human_pass_rate) == (0.5, 0.6)
    assert cases.judge_pass_rate_ci is not None
    assert (cases.judge_pass_rate_ci.low, cases.judge_pass_rate_ci.high) == wilson_interval(5, 10)
    line = report.interval_line("cases")
    assert line is not None
    assert line.startswith("cases, 95% intervals resampling cases: agreement 70.0% [39.7%, 89.2%]")
    assert line.endswith("; 10 cases, 10 labels")
    assert line in out
    assert line in markdown


def test_claims_of_one_case_are_resampled_together(tmp_path, capsys):
    report, _, _ = run(tmp_path)
    claims = report.claims
    per_case = Counter(pair.case_id for pair in claims.pairs)
    agreeing = Counter(pair.case_id for pair in claims.pairs if pair.agrees)
    expected = rate_interval(
        [agreeing[case] for case in per_case], [per_case[case] for case in per_case]
    )
    assert claims.agreement_ci is not None
    assert (claims.agreement_ci.low, claims.agreement_ci.high) == (expected.low, expected.high)
    assert (claims.agreement_ci.cases, claims.agreement_ci.observations) == (3, 6)
    assert claims.cases_resampled == 3
    assert not any("resampled one by one" in note for note in claims.notes)
    assert "claims, 95% intervals resampling cases" in capsys.readouterr().out


def test_the_seed_picks_the_kappa_resamples_and_the_run_logs_the_headline(tmp_path):
    first, _, text = run(tmp_path, "--seed", "1")
    _, _, same = run(tmp_path, "--seed", "1")
    other, _, _ = run(tmp_path, "--seed", "2")
    assert text == same
    assert other.cases.kappa_ci != first.cases.kappa_ci
    assert other.cases.agreement_ci == first.cases.agreement_ci  # Wilson draws nothing
    writer = BundleWriter(run_name="calibration")
    layout_calibration(writer, calibrate(judge_reports(), judge_labels()), markdown="")
    metrics = writer.bundle.metrics
    for name in ("agreement", "kappa", "judge_pass_rate", "human_pass_rate"):
        assert metrics[f"Summary/{name}_ci_low"] <= metrics[f"Summary/{name}"]
        assert metrics[f"Summary/{name}"] <= metrics[f"Summary/{name}_ci_high"]
    assert (metrics["calibration/cases/cases"], metrics["calibration/claims/cases"]) == (10, 3)


def test_reports_from_before_intervals_had_cases_still_load():
    data = calibrate(judge_reports(), judge_labels(), bootstrap=50).model_dump(mode="json")
    for level in ("cases", "claims"):
        for key in ("judge_pass_rate", "judge_pass_rate_ci", "human_pass_rate"):
            data[level].pop(key)
        data[level].pop("human_pass_rate_ci")
        data[level].pop("cases_resampled")
        for key in ("agreement_ci", "kappa_ci"):
            data[level][key] = {"low": data[level][key]["low"], "high": data[level][key]["high"]}
    old = CalibrationReport.model_validate(data)
    assert old.cases.agreement_ci is not None
    assert old.cases.agreement_ci.cases is None
    assert old.interval_line("cases") is not None
