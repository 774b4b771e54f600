from __future__ import annotations

import json

import pytest

from docevals_mlflow import (
    EvaluationCase,
    Evaluator,
    ExactStructuredMetric,
    InputError,
    InputFileNotFoundError,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
    build_suite_report,
    load_report,
    render_case_markdown,
    render_pipeline_markdown,
    render_suite_markdown,
    write_report,
)
from docevals_mlflow.reports.case_markdown import MAX_FIELD_ROWS
from docevals_mlflow.reports.markdown import MAX_CELL_CHARS, cell, value_cell
from tests.evaluation.conftest import VerdictMetric, stage


def failing_case_report():
    case = EvaluationCase(
        case_id="inv|1",
        prediction={"total": "10", "name": "a|b"},
        references=[
            artifact_from_value(
                {"total": 12, "name": "a|b"}, authority="ground_truth", artifact_id="gt"
            )
        ],
    )
    return Evaluator([ExactStructuredMetric()]).evaluate(case)


def test_case_markdown_shows_verdict_wrong_fields_and_fingerprints():
    report = failing_case_report()
    text = render_case_markdown(report)
    assert "**Verdict:** ❌ fail" in text
    assert "| incorrect | FD | $.total | 12 | 10 | gt |" in text
    assert "$.name" not in text  # correct rows are left to the JSON report
    assert f"`{report.fingerprints.rubric_sha256[:12]}`" in text
    assert "case `inv|1`" in text


def test_table_cells_escape_pipes_and_newlines():
    assert cell("a|b\nc") == "a\\|b<br>c"
    assert cell("a\\b\r\nc") == "a\\\\b<br>c"
    assert cell(None) == "n/a"
    # Not rounded: a cell echoes what it is given; metrics are formatted before.
    assert cell(0.123456) == "0.123456"
    assert cell({"b": 1, "a": 2}) == '{"b": 1, "a": 2}'


def test_long_text_is_cut_visibly_with_the_length_left_out():
    assert cell("x" * MAX_CELL_CHARS) == "x" * MAX_CELL_CHARS
    assert cell("x" * (MAX_CELL_CHARS + 312)) == "x" * MAX_CELL_CHARS + "… (+312 chars)"
    # A reason well past the old 120 characters is kept whole.
    reason = "Weak pair (item similarity 0.42 < 0.50): " + "description differs " * 10
    assert cell(reason) == reason


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (673.95, "673.95"),
        (613.95, "613.95"),
        (123456.78, "123456.78"),
        (123457.78, "123457.78"),
        (1e-7, "1e-07"),
        (12.0, "12.0"),
        (10**20 + 1, "100000000000000000001"),
        (True, "true"),
        (None, "n/a"),
        ("RM7.42", "RM7.42"),
        ("1.234,56 €", "1.234,56 €"),
        ([1, 2.5, "a"], '[1, 2.5, "a"]'),
        ({"b": None, "a": [True]}, '{"b": null, "a": [true]}'),
    ],
)
def test_value_cells_print_values_exactly(value, text):
    assert value_cell(value) == text


def test_value_cells_escape_markdown_without_losing_characters():
    assert value_cell("a|b\\c") == "a\\|b\\\\c"
    assert value_cell("*net* `x` <b> [l](u) ~s~ _y_") == (
        "\\*net\\* \\`x\\` \\<b> [l\\](u) \\~s\\~ \\_y\\_"
    )
    # What would not render differently stays as it is, for the raw text's sake.
    assert value_cell("INV_2024_001 [1, 2] 1 < 2") == "INV_2024_001 [1, 2] 1 < 2"
    # An entity would render as its character; a lone ampersand is safe as is.
    assert value_cell("AT&T &amp; &#38;") == "AT&T \\&amp; \\&#38;"
    assert value_cell("12 Main St\nSpringfield") == "12 Main St<br>Springfield"
    # cell() passes an escaped value through instead of escaping it twice.
    assert cell(value_cell("a|b")) == "a\\|b"


def test_long_values_are_cut_visibly_but_numbers_never():
    text = "d" * (MAX_CELL_CHARS + 5)
    assert value_cell(text) == "d" * MAX_CELL_CHARS + "… (+5 chars)"
    digits = 10 ** (MAX_CELL_CHARS + 5)
    assert value_cell(digits) == str(digits)


def test_case_markdown_prints_compared_values_exactly():
    case = EvaluationCase(
        case_id="amounts",
        prediction={"total": 673.95, "big": 123456.78},
        references=[
            artifact_from_value(
                {"total": 613.95, "big": 123457.78}, authority="ground_truth", artifact_id="gt"
            )
        ],
    )
    text = render_case_markdown(Evaluator([ExactStructuredMetric()]).evaluate(case))
    assert "| $.total | 613.95 | 673.95 | gt |" in text
    assert "| $.big | 123457.78 | 123456.78 | gt |" in text


def test_many_wrong_fields_are_capped_in_markdown():
    n = MAX_FIELD_ROWS + 7
    case = EvaluationCase(
        case_id="big",
        prediction={f"f{i}": 0 for i in range(n)},
        references=[
            artifact_from_value(
                {f"f{i}": 1 for i in range(n)}, authority="ground_truth", artifact_id="gt"
            )
        ],
    )
    text = render_case_markdown(Evaluator([ExactStructuredMetric()]).evaluate(case))
    assert "... and 7 more (see the JSON report)" in text


def test_pipeline_markdown_explains_attribution():
    report = PipelineEvaluator(
        default_metrics=[VerdictMetric({"extract": "fail", "calc": "fail", "route": "pass"})]
    ).evaluate(
        PipelineCase(
            pipeline_id="p",
            stages=[stage("extract"), stage("calc", ["extract"]), stage("route", ["calc"])],
        )
    )
    text = render_pipeline_markdown(report)
    assert "| extract | generic | ❌ fail | current_stage | none | no |" in text
    assert "| calc | generic | ❌ fail | upstream_or_combined | extract | no |" in text
    assert "`calc` failed and so did extract: do not blame this stage alone" in text
    assert "`route` passed, but upstream extract, calc failed." in text
    assert "## Stage: route" in text


def test_suite_markdown_has_stage_rates():
    report = PipelineEvaluator(
        default_metrics=[VerdictMetric({"a": "pass", "b": "fail"})]
    ).evaluate(PipelineCase(pipeline_id="p", stages=[stage("a"), stage("b", ["a"])]))
    text = render_suite_markdown(build_suite_report([report], suite_id="s"))
    assert "| b | 1 | 0.0% | 100.0% | 0.0% | 0.0% | current_stage: 1 | 0.0% |" in text


@pytest.mark.parametrize("kind", ["case", "pipeline", "suite"])
def test_reports_round_trip_through_json(tmp_path, kind):
    case_report = failing_case_report()
    pipeline_report = PipelineEvaluator(default_metrics=[ExactStructuredMetric()]).evaluate(
        PipelineCase(pipeline_id="p", stages=[stage("a", truth={"x": 1}, prediction={"x": 1})])
    )
    report = {
        "case": case_report,
        "pipeline": pipeline_report,
        "suite": build_suite_report([case_report, pipeline_report]),
    }[kind]
    write_report(report, tmp_path / "r.json", tmp_path / "r.md")
    assert load_report(tmp_path / "r.json") == report
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("# ")
    assert json.loads((tmp_path / "r.json").read_text())["kind"] == kind


def test_load_report_errors(tmp_path):
    with pytest.raises(InputFileNotFoundError):
        load_report(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "case", "case_id": 3}', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.json"):
        load_report(bad)


def test_write_report_keeps_old_file_when_rendering_fails(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    target.write_text("old", encoding="utf-8")

    def explode(report):
        raise RuntimeError("render failed")

    monkeypatch.setattr("docevals_mlflow.reports.files.render_markdown", explode)
    with pytest.raises(RuntimeError):
        write_report(failing_case_report(), target, tmp_path / "r.md")
    assert target.read_text(encoding="utf-8") == "old"
    assert not (tmp_path / "r.md").exists()


def test_case_markdown_shows_the_effective_judge_prompt_hash():
    from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
    from docevals_mlflow.judges.request import BASE_INSTRUCTIONS
    from tests.judges.fakes import ScriptedAdapter, answer

    case = EvaluationCase(
        case_id="c1",
        prediction={"total": 12},
        references=[artifact_from_value({"total": 12}, authority="ground_truth", artifact_id="gt")],
    )
    judge = LLMJudgeMetric(ScriptedAdapter(lambda request, repair: answer(request)), name="judge")
    report = Evaluator([ExactStructuredMetric(), judge]).evaluate(case)
    digest = report.metric("judge").details["instructions_sha256"]
    from docevals_mlflow import sha256_json

    assert digest == sha256_json(BASE_INSTRUCTIONS)
    text = render_case_markdown(report)
    assert f"| Effective judge prompt (judge) | `{digest[:12]}` |" in text
    assert "Effective judge prompt" not in render_case_markdown(failing_case_report())
