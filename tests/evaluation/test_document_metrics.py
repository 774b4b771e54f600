"""Reading-stage metrics in pipelines: ``text``, ``table`` and ``anls`` (TextMetric,
TableMetric, AnlsMetric) from Python and from a pipeline configuration file."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow import (
    AnlsMetric,
    CheckpointWarning,
    ConfigurationError,
    EvaluationCase,
    InputError,
    PipelineEvaluationReport,
    ReferenceArtifact,
    TableMetric,
    TextMetric,
    TextNormalization,
    artifact_from_value,
    load_report,
)
from docevals_mlflow.evaluation.exact import GENERATED_BASIS
from docevals_mlflow.evaluation.metric_config import MetricConfig, MetricsConfig
from docevals_mlflow.evaluation.metrics import metric_config, run_metric
from tests.helpers import run

WIDGETS = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Widget</td><td>2</td></tr></table>"
WIDGETS_PREDICTED = "<table><tr><td>Item</td><td>Qty</td></tr><tr><td>Widgets</td></tr></table>"


def case(prediction: Any, *truths: Any, authority: str = "ground_truth") -> EvaluationCase:
    references = [
        artifact_from_value(truth, authority=authority, artifact_id=f"truth-{i}")  # type: ignore[arg-type]
        for i, truth in enumerate(truths)
    ]
    return EvaluationCase(
        case_id="doc-1", stage_id="ocr", prediction=prediction, references=references
    )


# ------------------------------------------------------------------------------- text


def test_text_metric_reports_every_figure_and_judges_the_measure() -> None:
    result = TextMetric(max_error=0.5).evaluate(case("sitting", "kitten"))
    assert (result.name, result.verdict, result.basis) == ("text", "pass", "ground_truth")
    assert result.scores == pytest.approx({"cer": 0.5, "wer": 1.0, "ned": 3 / 7, "token_f1": 0.0})
    assert result.counts == {
        "reference_characters": 6,
        "reference_words": 1,
        "predicted_characters": 7,
        "predicted_words": 1,
        "character_edits": 3,
        "word_edits": 1,
    }
    assert result.details["reference_id"] == "truth-0"
    assert TextMetric(max_error=0.4).evaluate(case("sitting", "kitten")).verdict == "fail"
    assert TextMetric(measure="ned", max_error=0.43).evaluate(
        case("sitting", "kitten")
    ).verdict == ("pass")


def test_text_metric_without_threshold_passes_only_a_perfect_text() -> None:
    assert TextMetric().evaluate(case("the cat", "the cat")).verdict == "pass"
    assert TextMetric().evaluate(case("the cat", "the cab")).verdict == "fail"
    assert TextMetric(measure="token_f1").evaluate(case("cat the", "the cat")).verdict == "pass"


def test_token_f1_reads_min_score() -> None:
    metric = TextMetric(measure="token_f1", min_score=0.7)
    result = metric.evaluate(case("cat sat on the mat", "the cat sat"))
    assert result.scores["token_f1"] == pytest.approx(0.75)
    assert result.verdict == "pass"
    assert (
        TextMetric(measure="token_f1", min_score=0.8)
        .evaluate(case("cat sat on the mat", "the cat sat"))
        .verdict
        == "fail"
    )


def test_normalization_options_apply() -> None:
    loud = case("HELLO, World", "hello world")
    assert TextMetric().evaluate(loud).verdict == "fail"
    folded = TextNormalization(casefold=True, remove_punctuation=True)
    result = TextMetric(normalization=folded).evaluate(loud)
    assert (result.verdict, result.scores["cer"]) == ("pass", 0.0)


def test_text_at_a_path_in_json() -> None:
    prediction = {"pages": [{"text": "abd"}, {"text": "x"}]}
    truth = {"pages": [{"text": "abc"}]}
    result = TextMetric(path="pages.0.text", max_error=0.5).evaluate(case(prediction, truth))
    assert result.scores["cer"] == pytest.approx(1 / 3)
    assert result.verdict == "pass"
    bracketed = TextMetric(path="$.pages[0].text").evaluate(case(prediction, truth))
    assert bracketed.scores["cer"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("prediction", "path", "reason"),
    [
        ({"text": "abc"}, None, "the prediction: expected text (str), got dict"),
        (42, None, "got int"),
        (b"abc", None, "got bytes"),
        ({"pages": []}, "pages.0.text", "the prediction has no value at path 'pages.0.text'"),
        ({"pages": [{"text": None}]}, "pages.0.text", "got NoneType"),
    ],
)
def test_a_prediction_that_is_not_text_fails_with_error_1(
    prediction: Any, path: str | None, reason: str
) -> None:
    truth = {"pages": [{"text": "abc"}]} if path else "abc"
    result = TextMetric(path=path, max_error=1.0).evaluate(case(prediction, truth))
    assert result.verdict == "fail"
    assert result.scores == {"cer": 1.0, "wer": 1.0, "ned": 1.0, "token_f1": 0.0}
    assert result.counts == {"reference_characters": 3, "reference_words": 1}
    assert reason in result.details["prediction_problem"]
    assert any(reason in note for note in result.notes)


def test_a_reference_without_the_path_or_text_is_an_input_error() -> None:
    metric = TextMetric(path="pages.1.text")
    with pytest.raises(InputError) as missing:
        metric.evaluate(case({"pages": []}, {"pages": [{"text": "a"}]}))
    assert str(missing.value) == (
        "case 'doc-1', reference 'truth-0': no value at path 'pages.1.text' "
        "(expected the path to exist in the reference)"
    )
    with pytest.raises(InputError, match=r"case 'doc-1', reference 'truth-0', path 'n': .*got int"):
        TextMetric(path="n").evaluate(case({"n": "1"}, {"n": 1}))
    # In a pipeline the error stays with its metric: an uncertain result that keeps it.
    isolated = run_metric(metric, case({"pages": []}, {"pages": [{"text": "a"}]}))
    assert (isolated.verdict, isolated.basis) == ("uncertain", "error")
    assert isolated.error is not None
    assert "truth-0" in isolated.error.message


def test_no_usable_reference_is_not_applicable() -> None:
    metric = TextMetric()
    nothing = metric.evaluate(EvaluationCase(case_id="d", prediction="abc", input_data="scan"))
    assert (nothing.verdict, nothing.basis) == ("not_applicable", "none")
    evidence = metric.evaluate(case("abc", "abc", authority="evidence"))
    assert evidence.verdict == "not_applicable"
    json_only = metric.evaluate(case("abc", {"text": "abc"}))
    assert json_only.verdict == "not_applicable"
    assert json_only.notes == ["no reference holds text (references: 'truth-0')"]
    semantic = ReferenceArtifact(
        id="s",
        path="inline://s",
        kind="text",
        authority="ground_truth",
        comparison_mode="semantic",
        content="abc",
    )
    judged = EvaluationCase(case_id="d", prediction="abc", references=[semantic])
    assert metric.evaluate(judged).verdict == "not_applicable"


def test_generated_reference_is_provisional_and_ground_truth_wins() -> None:
    assert TextMetric().evaluate(case("abc", "abc", authority="generated")).basis == GENERATED_BASIS
    both = EvaluationCase(
        case_id="d",
        prediction="abc",
        references=[
            artifact_from_value("xyz", authority="generated", artifact_id="gen"),
            artifact_from_value("abc", authority="ground_truth", artifact_id="gt"),
            artifact_from_value("abd", authority="ground_truth", artifact_id="gt2"),
        ],
    )
    result = TextMetric().evaluate(both)
    assert (result.verdict, result.details["reference_id"]) == ("pass", "gt")
    assert result.notes == ["2 usable references; compared with 'gt' only"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"measure": "token_f1", "max_error": 0.1}, "'token_f1' is a score (higher is better)"),
        ({"measure": "cer", "min_score": 0.9}, "'cer' is an error rate (lower is better)"),
        ({"max_error": 0.1, "min_score": 0.9}, "not both"),
        ({"max_error": -0.1}, "max_error must be >= 0"),
        ({"measure": "bleu"}, "measure 'bleu' is not one of cer, wer, ned, token_f1"),
        ({"name": ""}, "non-empty name"),
        ({"path": "pages[x]"}, "invalid field path"),
    ],
)
def test_text_metric_refuses_bad_settings(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        TextMetric(**options)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80))
def test_identical_text_passes_with_no_error(text: str) -> None:
    cleaned = text.encode("utf-8", "ignore").decode("utf-8")
    result = TextMetric().evaluate(case(cleaned, cleaned))
    assert result.verdict == "pass"
    assert (result.scores["cer"], result.scores["wer"], result.scores["ned"]) == (0.0, 0.0, 0.0)
    assert result.scores["token_f1"] == 1.0


# ------------------------------------------------------------------------------ table


def test_table_metric_worked_example() -> None:
    result = TableMetric(min_score=0.8).evaluate(case(WIDGETS_PREDICTED, WIDGETS))
    assert result.scores == pytest.approx({"teds": 1 - 8 / 49, "teds_s": 1 - 1 / 7})
    assert result.verdict == "pass"
    assert result.counts == {
        "reference_rows": 2,
        "reference_cells": 4,
        "predicted_rows": 2,
        "predicted_cells": 3,
        "reference_nodes": 7,
        "predicted_nodes": 6,
    }
    assert TableMetric(min_score=0.85).evaluate(case(WIDGETS_PREDICTED, WIDGETS)).verdict == "fail"
    structure = TableMetric(structure_only=True, min_score=0.85)
    assert structure.evaluate(case(WIDGETS_PREDICTED, WIDGETS)).verdict == "pass"
    assert TableMetric().evaluate(case(WIDGETS, WIDGETS)).verdict == "pass"


def test_tables_in_other_forms_compare_across_forms() -> None:
    markdown = "| Item | Qty |\n|---|---|\n| Widget | 2 |\n"
    grid = [["Item", "Qty"], ["Widget", 2]]
    csv_rows = [{"Item": "Widget", "Qty": "2"}]
    for prediction in (markdown, grid, WIDGETS):
        for truth in (markdown, grid, csv_rows, WIDGETS):
            result = TableMetric().evaluate(case(prediction, truth))
            assert result.scores == {"teds": 1.0, "teds_s": 1.0}, (prediction, truth)
    nested = TableMetric(path="tables.0", format="html")
    assert nested.evaluate(case({"tables": [WIDGETS]}, {"tables": [WIDGETS]})).verdict == "pass"


@pytest.mark.parametrize("prediction", ["", None, [], "no table here", "<p>none</p>"])
def test_an_empty_or_tableless_prediction_scores_0(prediction: Any) -> None:
    result = TableMetric().evaluate(case(prediction, WIDGETS))
    assert result.verdict == "fail"
    assert result.scores == {"teds": 0.0, "teds_s": 0.0}
    assert result.counts["predicted_cells"] == 0


@pytest.mark.parametrize(
    ("prediction", "reason"),
    [
        (
            {"html": WIDGETS},
            "expected a table (HTML or Markdown text, or a list of rows), got dict",
        ),
        ("<table><td>x</td></table>", "the prediction"),
        ("<table><tr><td colspan='x'>1</td></tr></table>", "colspan='x'"),
        ([["a", {"b": 1}]], "row 1, column 2 is dict"),
    ],
)
def test_a_malformed_prediction_fails_with_0(prediction: Any, reason: str) -> None:
    result = TableMetric().evaluate(case(prediction, WIDGETS))
    assert result.verdict == "fail"
    assert result.scores == {"teds": 0.0, "teds_s": 0.0}
    assert reason in result.details["prediction_problem"]


def test_a_truncated_prediction_is_scored_as_it_stands() -> None:
    result = TableMetric().evaluate(case(WIDGETS[: WIDGETS.index("<td>2")], WIDGETS))
    assert 0.0 < result.scores["teds"] < 1.0
    assert "prediction_problem" not in result.details


@pytest.mark.parametrize(
    ("truth", "message"),
    [
        ("<table><tr><td>a</td></tr>", "<table> is never closed"),
        ("<table><tr><td rowspan='3'>a</td></tr></table>", "rowspan=3 reaches past"),
        ("", "the reference table is empty"),
        ({"t": 1}, None),
    ],
)
def test_a_malformed_reference_table_is_an_input_error(truth: Any, message: str | None) -> None:
    metric = TableMetric(path="t") if message is None else TableMetric()
    prediction = {"t": WIDGETS} if message is None else WIDGETS
    with pytest.raises(InputError) as caught:
        metric.evaluate(case(prediction, truth))
    text = str(caught.value)
    assert "case 'doc-1', reference 'truth-0'" in text
    assert (message or "got int") in text


def test_table_metric_refuses_bad_settings() -> None:
    with pytest.raises(ConfigurationError, match="min_score must be between 0 and 1"):
        TableMetric(min_score=1.5)
    with pytest.raises(ConfigurationError, match="format 'latex'"):
        TableMetric(format="latex")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------- anls


def test_anls_metric_scores_structured_answers() -> None:
    truth = {"name": "ACME", "total": "12.50"}
    result = AnlsMetric().evaluate(case({"name": "ACME Inc", "date": "2024"}, truth))
    assert result.scores == {"anls_star": pytest.approx(1 / 6)}
    assert (result.name, result.verdict) == ("anls", "fail")
    close = AnlsMetric(min_score=0.6).evaluate(case({"name": "acme", "total": "12.5"}, truth))
    assert close.scores["anls_star"] == pytest.approx((1 + 0.8) / 2)
    assert close.verdict == "pass"
    assert AnlsMetric(path="items").evaluate(
        case({"items": ["c", "a"]}, {"items": ["a", "b", "c"]})
    ).scores["anls_star"] == pytest.approx(2 / 3)


def test_anls_bad_prediction_fails_and_bad_reference_raises() -> None:
    result = AnlsMetric().evaluate(case({"a": {1, 2}}, {"a": "x"}))
    assert (result.verdict, result.scores) == ("fail", {"anls_star": 0.0})
    assert "$ (predicted).a: set is not one of" in result.details["prediction_problem"]
    broken = ReferenceArtifact(
        id="odd",
        path="inline://odd",
        kind="structured",
        authority="ground_truth",
        content={"a": object()},
        content_format="json",
    )
    with pytest.raises(InputError, match=r"case 'd', reference 'odd': \$ \(expected\)\.a: object"):
        AnlsMetric().evaluate(EvaluationCase(case_id="d", prediction={}, references=[broken]))


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.text(max_size=12) | st.integers(),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.text(min_size=1, max_size=5), inner, max_size=4)
        ),
        max_leaves=12,
    ).filter(lambda value: value is not None)
)
def test_anls_of_a_value_against_itself_passes(value: Any) -> None:
    result = AnlsMetric().evaluate(case(value, value))
    assert (result.verdict, result.scores["anls_star"]) == ("pass", 1.0)


# ------------------------------------------------------------------- configuration


def built(**options: Any) -> Any:
    return MetricConfig.model_validate(options).build(Path("."))


def test_config_builds_the_metrics_with_their_defaults() -> None:
    text = built(type="text", max_error=0.02, normalization={"casefold": True}, path="text")
    assert isinstance(text, TextMetric)
    assert (text.name, text.measure, text.max_error, text.path) == ("text", "cer", 0.02, "text")
    assert text.normalization == TextNormalization(casefold=True)
    table = built(type="table", structure_only=True, min_score=0.9)
    assert isinstance(table, TableMetric)
    assert (table.name, table.structure_only, table.min_score) == ("table", True, 0.9)
    anls = built(type="anls", name="answers_anls", min_score=0.8)
    assert isinstance(anls, AnlsMetric)
    assert (anls.name, anls.min_score) == ("answers_anls", 0.8)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"type": "table", "max_error": 0.1}, "'max_error' applies to type 'text' only"),
        ({"type": "text", "structure_only": True}, "'structure_only' applies to type 'table' only"),
        ({"type": "exact", "measure": "wer"}, "'measure' applies to type 'text' only"),
        ({"type": "exact", "path": "a"}, "'path' applies to type 'text' and 'table' and 'anls'"),
        ({"type": "field", "min_score": 0.5}, "'min_score' applies to type 'text'"),
        ({"type": "text", "measure": "token_f1", "max_error": 0.1}, "use 'min_score'"),
        ({"type": "text", "min_score": 0.9}, "use 'max_error'"),
        ({"type": "anls", "min_score": 2}, "min_score must be between 0 and 1"),
        ({"type": "text", "measure": "bleu"}, "measure"),
        ({"type": "text", "normalization": {"case": False}}, "unknown option 'case'; the options"),
        ({"type": "texts"}, "'text', 'table' or 'anls' for reading-stage metrics"),
    ],
)
def test_config_refuses_misplaced_or_mismatched_options(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        MetricConfig.model_validate(options)


def test_fingerprint_follows_every_setting() -> None:
    base = metric_config(built(type="text", max_error=0.02))
    changed = [
        built(type="text", max_error=0.05),
        built(type="text", measure="wer", max_error=0.02),
        built(type="text", max_error=0.02, normalization={"casefold": True}),
        built(type="text", max_error=0.02, path="text"),
    ]
    fingerprints = [metric_config(metric) for metric in changed]
    assert all(fingerprint != base for fingerprint in fingerprints)
    assert metric_config(built(type="text", max_error=0.02)) == base
    assert metric_config(built(type="table")) != metric_config(
        built(type="table", structure_only=True)
    )
    assert metric_config(built(type="anls")) != metric_config(built(type="anls", min_score=0.5))


def test_the_documented_configuration_is_valid() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "document-metrics.md"
    section = page.read_text(encoding="utf-8").split("## In pipelines:")[1]
    block = section.split("```yaml\n")[1].split("```")[0]
    metrics = MetricsConfig.model_validate(yaml.safe_load(block)["metrics"])
    built_metrics = [m.build(Path(".")) for ms in metrics.stages.values() for m in ms]
    assert [type(m).__name__ for m in built_metrics] == [
        "TextMetric",
        "TextMetric",
        "TableMetric",
        "AnlsMetric",
    ]


# ------------------------------------------------------------------- end to end

PIPELINE = """\
pipeline_id: scan-7
metrics:
  stages:
    ocr:
      - type: text
        max_error: {max_error}
        normalization: {{casefold: true}}
    layout:
      - type: text
        name: page_text
        path: pages.0.text
    tables:
      - {{type: table, min_score: 0.8, path: table}}
    answers:
      - {{type: anls, min_score: 0.8}}
stages:
  - stage_id: ocr
    prediction: "Invoice 7  total 12.5O"
    references:
      - {{path: truth/page.txt, authority: ground_truth}}
  - stage_id: layout
    prediction_file: outputs/layout.json
    depends_on: [ocr]
    references:
      - {{path: truth/layout.json, authority: ground_truth}}
  - stage_id: tables
    prediction_file: outputs/tables.json
    depends_on: [ocr]
    references:
      - {{path: truth/table.md, authority: ground_truth}}
  - stage_id: answers
    prediction: {{total: "12.50", vendor: ACME}}
    depends_on: [tables]
    references:
      - {{id: answers-truth, value: {{total: "12.50", vendor: ACME}}, authority: ground_truth}}
"""


def write_document_pipeline(folder: Path, max_error: float) -> Path:
    (folder / "truth").mkdir(parents=True, exist_ok=True)
    (folder / "outputs").mkdir(exist_ok=True)
    (folder / "truth" / "page.txt").write_text("invoice 7 total 12.50\n", encoding="utf-8")
    (folder / "truth" / "table.md").write_text(
        "| Item | Qty |\n|---|---|\n| Widget | 2 |\n", encoding="utf-8"
    )
    layout = {"pages": [{"text": "Invoice 7"}]}
    (folder / "truth" / "layout.json").write_text(json.dumps(layout), encoding="utf-8")
    (folder / "outputs" / "layout.json").write_text(json.dumps(layout), encoding="utf-8")
    (folder / "outputs" / "tables.json").write_text(
        json.dumps({"table": WIDGETS_PREDICTED}), encoding="utf-8"
    )
    config = folder / "pipeline.yaml"
    config.write_text(textwrap.dedent(PIPELINE.format(max_error=max_error)), encoding="utf-8")
    return config


def test_a_pipeline_file_scores_text_tables_and_answers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write_document_pipeline(tmp_path, max_error=0.1)
    output = tmp_path / "report.json"
    checkpoints = ["--checkpoint-dir", tmp_path / "ckpt"]
    code, out, err = run(capsys, "evaluate-pipeline", config, "--output", output, *checkpoints)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("verdict: pass")
    report = load_report(output)
    assert isinstance(report, PipelineEvaluationReport)
    results = {
        stage.stage_id: {result.name: result for result in stage.metric_results}
        for stage in report.stage_reports
    }
    ocr = results["ocr"]["text"]
    # "12.5O" for "12.50": one substitution over 21 normalized characters.
    assert (ocr.verdict, ocr.counts["character_edits"]) == ("pass", 1)
    assert ocr.scores["cer"] == pytest.approx(1 / 21)
    assert results["layout"]["page_text"].verdict == "pass"
    table = results["tables"]["table"]
    assert table.verdict == "pass"
    assert table.scores["teds"] == pytest.approx(1 - 8 / 49)
    assert results["answers"]["anls"].scores == {"anls_star": 1.0}

    # A stricter max_error changes the metric's fingerprint: the OCR stage (and what
    # depends on it) is computed again and now fails; nothing stale is reused.
    write_document_pipeline(tmp_path, max_error=0.01)
    with pytest.warns(CheckpointWarning, match="recomputing the stage"):
        code, out, _ = run(capsys, "evaluate-pipeline", config, "--output", output, *checkpoints)
    assert code == 1
    again = load_report(output)
    assert isinstance(again, PipelineEvaluationReport)
    assert again.checkpoint is not None
    assert "ocr" in again.checkpoint.computed
    assert again.stage("ocr").verdict == "fail"


PAGE_FILES = """\
pipeline_id: scan-8
metrics:
  stages:
    ocr: [{type: text, max_error: 0.1}]
    table: [{type: table, min_score: 0.99}]
stages:
  - stage_id: ocr
    prediction_file: outputs/page.txt
    references: [{path: truth/page.md, authority: ground_truth}]
  - stage_id: table
    prediction_file: outputs/table.html
    depends_on: [ocr]
    references: [{path: truth/table.html, authority: ground_truth}]
"""


def test_text_and_html_files_are_stage_outputs_and_references(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A reading stage writes pages and tables as files: they are read as one string
    # each (never parsed as JSON), and an HTML reference carries its table.
    table = "<table><tr><td>Größe</td><td>€ 7,42</td></tr></table>"
    for side in ("outputs", "truth"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "table.html").write_text(table, encoding="utf-8")
    (tmp_path / "outputs" / "page.txt").write_text("Rechnung Nr. 7\nSumme € 7,42\n", "utf-8")
    (tmp_path / "truth" / "page.md").write_text("Rechnung Nr. 7\nSumme € 7,42\n", "utf-8")
    config = tmp_path / "pipeline.yaml"
    config.write_text(PAGE_FILES, encoding="utf-8")
    output = tmp_path / "report.json"
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", output)
    assert (code, err) == (0, "")
    report = load_report(output)
    assert isinstance(report, PipelineEvaluationReport)
    assert report.stage("ocr").metric_results[0].scores["cer"] == 0
    assert report.stage("table").metric_results[0].scores["teds"] == 1

    (tmp_path / "outputs" / "table.html").write_bytes(b"<table><tr><td>\xff</td></tr></table>")
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", output)
    assert code == 2
    assert "table.html" in err
    assert "UTF-8" in err
