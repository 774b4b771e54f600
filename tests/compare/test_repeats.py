"""Repeat runs: flip rate and pass^k per case, per document, per judge; the command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from docevals_mlflow.cli import main
from docevals_mlflow.compare.repeats import pass_hat_k, repeat_stability, repeats_markdown
from docevals_mlflow.errors import InputError
from tests.compare.synthetic import FIELDS, case_run, field_run

# Three repeats of four cases:  c1 pass/pass/pass, c2 pass/fail/pass,
# c3 fail/fail/fail, c4 pass/uncertain/pass (on stage "extract").
RUNS = [
    {"c1": "pass", "c2": "pass", "c3": "fail", "c4": "pass"},
    {"c1": "pass", "c2": "fail", "c3": "fail", "c4": "uncertain"},
    {"c1": "pass", "c2": "pass", "c3": "fail", "c4": "pass"},
]


def case_runs():
    runs = []
    for index, verdicts in enumerate(RUNS):
        votes = {
            ("c2", "extract"): {"a": verdicts["c2"], "b": "pass"},
            ("c1", "extract"): {"a": "pass", "b": "pass"},
        }
        keyed = {(case, "extract"): verdict for case, verdict in verdicts.items()}
        runs.append(case_run(f"run-{index}", keyed, votes=votes))
    return runs


def test_pass_hat_k_by_hand():
    assert pass_hat_k(2, 3, 1) == pytest.approx(2 / 3)
    assert pass_hat_k(2, 3, 2) == pytest.approx(1 / 3)
    assert pass_hat_k(2, 3, 3) == 0
    assert pass_hat_k(3, 3, 3) == 1


def test_case_flip_rate_and_pass_hat_k():
    report = repeat_stability(case_runs())
    assert report.unit_kind == "case"
    assert report.units == 4
    assert report.flip_rate == pytest.approx(2 / 4)
    # correct counts 3, 2, 0, 2 of 3
    assert report.pass_at_k[1] == pytest.approx((1 + 2 / 3 + 0 + 2 / 3) / 4)
    assert report.pass_at_k[2] == pytest.approx((1 + 1 / 3 + 0 + 1 / 3) / 4)
    assert report.pass_at_k[3] == pytest.approx(1 / 4)
    flipped = {unit.unit: unit.outcomes for unit in report.per_unit if unit.flipped}
    assert flipped == {
        "c2/extract": ["pass", "fail", "pass"],
        "c4/extract": ["pass", "uncertain", "pass"],
    }
    judges = {judge.member: judge for judge in report.judges}
    assert judges["a"].flip_rate == pytest.approx(1 / 2)
    assert judges["b"].flip_rate == 0
    assert report.summary_line() == "4 cases over 3 repeats: 50.0% flip, pass^3 25.0%, pass^1 58.3%"
    markdown = repeats_markdown(report)
    assert "| c2/extract | pass, fail, pass |" in markdown
    assert "| panel | a | 2 | 50.0% |" in markdown


def test_units_missing_from_a_run_are_left_out_and_counted():
    runs = case_runs()
    extra = case_run("run-x", {("c1", "extract"): "pass", ("c9", "extract"): "pass"})
    report = repeat_stability([runs[0], extra])
    assert report.units == 1
    assert report.partial_units == 4
    assert "4 case(s) are missing from some runs" in report.notes[0]


def test_field_runs_count_a_document_correct_when_no_field_errs():
    cells = [np.zeros((5, len(FIELDS), 5), dtype=np.int64) for _ in range(2)]
    for run in cells:
        run[..., 0] = 2
    cells[1][3, 0, 2] = 1  # one wrong leaf in document 3 of the second run
    report = repeat_stability([field_run("f0", cells[0]), field_run("f1", cells[1])])
    assert report.unit_kind == "document"
    assert report.flip_rate == pytest.approx(1 / 5)
    assert report.pass_at_k[2] == pytest.approx(4 / 5)


def test_bad_runs_are_refused():
    runs = case_runs()
    with pytest.raises(InputError, match="at least 2"):
        repeat_stability(runs[:1])
    with pytest.raises(InputError, match="more than once"):
        repeat_stability([runs[0], runs[0]])
    cells = np.zeros((2, len(FIELDS), 5), dtype=np.int64)
    with pytest.raises(InputError, match="not all case or all field runs"):
        repeat_stability([runs[0], field_run("f", cells)])


def _log(name: str, *, wrong: bool) -> str:
    from docevals_mlflow import compare_documents, log_field_comparison
    from tests.tracking.invoices import SCHEMA

    documents = [
        {
            "id": f"d{index}",
            "class": "Invoice",
            "expected": {"number": str(index), "total": "10.00"},
            "predicted": {"number": "0" if wrong and index % 2 else str(index), "total": 10},
        }
        for index in range(6)
    ]
    batch = compare_documents(documents, SCHEMA)
    return log_field_comparison(batch, run_name=name, experiment="repeats").run_id


def test_the_command_reads_runs_from_a_sqlite_store(mlflow_store, tmp_path, capsys):
    ids = [_log("r1", wrong=False), _log("r2", wrong=True), _log("r3", wrong=False)]
    output, markdown = tmp_path / "repeats.json", tmp_path / "repeats.md"
    args = ["repeats", *ids, "--output", str(output), "--markdown", str(markdown)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "6 documents over 3 repeats: 50.0% flip, pass^3 50.0%" in out
    assert "flipping documents: d1, d3, d5" in out
    data = json.loads(output.read_text(encoding="utf-8"))
    assert data["flip_rate"] == 0.5
    assert data["pass_at_k"]["3"] == 0.5
    assert "# Repeat runs" in markdown.read_text(encoding="utf-8")
    # By experiment/name too, and gated.
    assert main(["repeats", "repeats/r1", "repeats/r2", "--max-flip-rate", "0.4"]) == 1
    assert "FAIL: flip rate above 0.4" in capsys.readouterr().out
    assert main(["repeats", "repeats/r1", "repeats/r3", "--max-flip-rate", "0"]) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--max-flip-rate", "5"], "--max-flip-rate 5"), ([], "at least 2 repeat runs")],
)
def test_bad_options_exit_2(extra, message, capsys):
    runs = ["only-one"] if not extra else ["a", "b"]
    assert main(["repeats", *runs, *extra]) == 2
    assert message in capsys.readouterr().err


def test_an_output_cannot_replace_a_run_given_as_a_report_file(tmp_path, capsys):
    from docevals_mlflow.reports.files import write_report
    from tests.judges.test_calibration import judge_reports

    report = judge_reports()[0]
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    write_report(report, first)
    write_report(report, second)
    before = first.read_bytes()
    assert main(["repeats", str(first), str(second), "--output", str(first)]) == 2
    assert "--output" in capsys.readouterr().err
    assert first.read_bytes() == before
    # Two report files of the same case: nothing flips.
    assert main(["repeats", str(first), str(second)]) == 0
    assert "1 case over 2 repeats: 0.0% flip" in capsys.readouterr().out
