"""``docevals plan`` and ``docevals compare --non-inferiority`` from the command line."""

from __future__ import annotations

import json

import pytest

from tests.helpers import assert_one_line_error, run


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plan")
    import os

    from docevals_mlflow.cli import main

    here = os.getcwd()
    os.chdir(folder)
    try:
        assert main(["quickstart", "--documents", "30", "--no-mlflow"]) == 0
    finally:
        os.chdir(here)
    return folder / "docevals-quickstart" / "reports"


def test_plan_prints_a_table_with_its_assumptions(reports, capsys) -> None:
    code, out, err = run(
        capsys, "plan", "--report", reports / "prompt-v1.json", "--difference", "0.02"
    )
    assert code == 0, err
    header, overall = out.splitlines()[:2]
    assert header.split()[:3] == ["field", "f1", "docs"]
    assert "docs Δ0.02" in header
    assert overall.startswith("overall")
    assert " 30 " in overall
    assert "one report: both versions assumed to have this variance" in out
    assert "documents drawn like the report's" in out


def test_plan_json_pairs_two_reports_on_one_field(reports, capsys) -> None:
    code, out, err = run(
        capsys,
        "plan",
        "--report",
        reports / "prompt-v1.json",
        "--other-report",
        reports / "prompt-v2.json",
        "--field",
        "$.total",
        "--metric",
        "accuracy",
        "--half-width",
        "0.05",
        "--power",
        "0.9",
        "--alpha",
        "0.1",
        "--json",
    )
    assert code == 0, err
    plan = json.loads(out)
    assert (plan["metric"], plan["half_width"], plan["power"], plan["alpha"]) == (
        "accuracy",
        0.05,
        0.9,
        0.1,
    )
    (field,) = plan["fields"]
    assert field["field"] == "$.total"
    assert field["difference_source"] == "paired"
    assert field["required_documents"] >= 2


def test_plan_pair_correlation_is_stated(reports, capsys) -> None:
    code, out, _ = run(
        capsys, "plan", "--report", reports / "prompt-v1.json", "--pair-correlation", "0.8"
    )
    assert code == 0
    assert "correlation r=0.8 between them" in out


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--field", "$.nope"], "unknown field '$.nope'"),
        (["--half-width", "0"], "half-width 0"),
        (["--pair-correlation", "2"], "pair correlation 2"),
        (["--difference", "5"], "difference 5"),
    ],
)
def test_plan_bad_options_exit_2(reports, capsys, options, fragment) -> None:
    code, _, err = run(capsys, "plan", "--report", reports / "prompt-v1.json", *options)
    assert code == 2
    assert_one_line_error(err, fragment)


def test_plan_refuses_a_report_of_another_kind(tmp_path, capsys) -> None:
    path = tmp_path / "cases.json"
    path.write_text('{"kind": "case"}', encoding="utf-8")
    code, _, err = run(capsys, "plan", "--report", path)
    assert code == 2
    assert_one_line_error(err, "cases.json", "not a field comparison report")


def test_compare_non_inferiority_gates_the_exit_code(reports, capsys) -> None:
    better, worse = reports / "prompt-v2.json", reports / "prompt-v1.json"
    common = ["--resamples", "300", "--no-mlflow"]
    code, out, err = run(capsys, "compare", worse, better, *common, "--non-inferiority", "f1=0.02")
    assert code == 0, err
    assert "non-inferiority f1 (margin 0.02): non-inferior. one-sided paired bootstrap" in out
    code, out, err = run(
        capsys,
        "compare",
        better,
        worse,
        *common,
        "--non-inferiority",
        "f1=0.02",
        "--non-inferiority",
        "recall=0.5",
    )
    assert code == 1
    assert "docevals: not shown non-inferior: prompt-v1: non-inferiority f1 (margin 0.02)" in err
    assert "recall (margin 0.5): non-inferior" in out
    code, _, err = run(capsys, "compare", better, worse, *common, "--non-inferiority", "f1")
    assert code == 2
    assert_one_line_error(err, "--non-inferiority 'f1'", "METRIC=MARGIN")
