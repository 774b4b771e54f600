"""The ``docevals`` command: exit codes, reports written, one-line errors."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

import docevals_mlflow
from docevals_mlflow import (
    CheckpointWarning,
    EvaluationReport,
    PipelineEvaluationReport,
    SuiteReport,
    load_report,
)
from docevals_mlflow.cli import main
from tests.conftest import ModuleWriter
from tests.helpers import assert_one_line_error, run, write_json

STALE = "stale: the stage, its metrics, references or context changed"


# --------------------------------------------------------------------------- helpers


def write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_case(
    capsys: pytest.CaptureFixture[str], prediction: Path, output: Path, *options: str | Path
) -> tuple[int, str, str]:
    return run(capsys, "evaluate-case", "--prediction", prediction, *options, "--output", output)


def no_temp_files(folder: Path) -> bool:
    return list(folder.glob(".*.tmp")) == []


@pytest.fixture
def prediction(tmp_path: Path) -> Path:
    return write_json(tmp_path / "invoice.json", {"total": 3.0, "vendor": "Acme"})


@pytest.fixture
def truth_json(tmp_path: Path) -> Path:
    return write_json(tmp_path / "truth.json", {"total": 3, "vendor": "ACME"})


# --------------------------------------------------------------------- evaluate-case


def test_evaluate_case_pass_writes_json_and_markdown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path, truth_json: Path
) -> None:
    output = tmp_path / "reports" / "case.json"
    markdown = tmp_path / "reports" / "case.md"
    code, out, err = run_case(
        capsys, prediction, output, "--ground-truth", truth_json, "--markdown", markdown
    )
    assert code == 0
    assert err == ""
    assert out == (
        f"verdict: pass (failure context: none)\nreport: {output} (Markdown: {markdown})\n"
    )
    report = load_report(output)
    assert isinstance(report, EvaluationReport)
    assert report.case_id == "invoice"
    assert report.stage_id == "output"
    assert report.operation == "generic"
    assert report.verdict == "pass"
    assert report.failure_context == "none"
    result = report.metric("exact_structured")
    assert result.basis == "ground_truth"
    assert result.counts["expected_fields"] == 2
    assert result.counts["correct"] == 2
    assert [ref.id for ref in report.reference_summary] == ["truth"]
    assert markdown.is_file()
    assert markdown.read_text(encoding="utf-8").strip() != ""
    assert no_temp_files(output.parent)


def test_evaluate_case_without_markdown_writes_only_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path, truth_json: Path
) -> None:
    output = tmp_path / "out" / "case.json"
    code, out, _ = run_case(capsys, prediction, output, "--ground-truth", truth_json)
    assert code == 0
    assert out.splitlines()[-1] == f"report: {output}"
    assert sorted(path.name for path in output.parent.iterdir()) == ["case.json"]


def test_evaluate_case_options_are_recorded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path, truth_json: Path
) -> None:
    output = tmp_path / "case.json"
    code, _, _ = run_case(
        capsys,
        prediction,
        output,
        "--ground-truth",
        truth_json,
        "--case-id",
        "doc-17",
        "--stage-id",
        "extract",
        "--operation",
        "parse_invoice",
        "--rubric",
        "Every field must match.",
    )
    assert code == 0
    report = load_report(output)
    assert isinstance(report, EvaluationReport)
    assert (report.case_id, report.stage_id, report.operation) == (
        "doc-17",
        "extract",
        "parse_invoice",
    )
    assert report.rubric == "Every field must match."


def test_evaluate_case_failing_field_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path
) -> None:
    truth = write_json(tmp_path / "truth.json", {"total": 4, "vendor": "Acme"})
    output = tmp_path / "case.json"
    code, out, err = run_case(capsys, prediction, output, "--ground-truth", truth)
    assert code == 1
    assert err == ""
    assert out.splitlines()[0] == "verdict: fail (failure context: current_stage)"
    report = load_report(output)
    assert isinstance(report, EvaluationReport)
    assert report.verdict == "fail"
    result = report.metric("exact_structured")
    outcomes = {row["path"]: row["outcome"] for row in result.details["fields"]}
    assert outcomes == {"$.total": "FD", "$.vendor": "TP"}
    assert (result.counts["correct"], result.counts["incorrect"]) == (1, 1)


def test_evaluate_case_failing_field_with_fail_on_never_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path
) -> None:
    truth = write_json(tmp_path / "truth.json", {"total": 4})
    output = tmp_path / "case.json"
    code, out, _ = run_case(
        capsys, prediction, output, "--ground-truth", truth, "--fail-on", "never"
    )
    assert code == 0
    assert out.splitlines()[0] == "verdict: fail (failure context: current_stage)"
    report = load_report(output)
    assert isinstance(report, EvaluationReport)
    assert report.verdict == "fail"


def test_evaluate_case_case_sensitive_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path, truth_json: Path
) -> None:
    output = tmp_path / "case.json"
    code, out, _ = run_case(
        capsys, prediction, output, "--ground-truth", truth_json, "--case-sensitive"
    )
    assert code == 1
    assert out.splitlines()[0] == "verdict: fail (failure context: current_stage)"


def test_evaluate_case_absolute_tolerance_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pred = write_json(tmp_path / "pred.json", {"total": 3.05})
    truth = write_json(tmp_path / "truth.json", {"total": 3})
    output = tmp_path / "case.json"
    strict, _, _ = run_case(capsys, pred, output, "--ground-truth", truth)
    loose, _, _ = run_case(
        capsys, pred, output, "--ground-truth", truth, "--absolute-tolerance", "0.1"
    )
    assert (strict, loose) == (1, 0)


def test_evaluate_case_evidence_only_is_not_applicable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path
) -> None:
    scan = tmp_path / "scan.png"
    scan.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    output = tmp_path / "case.json"
    code, out, err = run_case(
        capsys, prediction, output, "--evidence", scan, "--fail-on", "uncertain"
    )
    assert code == 0
    assert err == ""
    assert out.splitlines()[0] == "verdict: not_applicable (failure context: indeterminate)"
    report = load_report(output)
    assert isinstance(report, EvaluationReport)
    assert report.verdict == "not_applicable"
    assert report.metric("exact_structured").verdict == "not_applicable"
    [summary] = report.reference_summary
    assert (summary.id, summary.kind, summary.authority) == ("scan", "image", "evidence")
    assert summary.exact_comparable is False


def test_evaluate_case_csv_path_table_compares_numbers_by_value(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pred = write_json(tmp_path / "pred.json", {"items": [{"quantity": 3.0, "code": "A-12"}]})
    truth = write_text(
        tmp_path / "truth.csv", "path,expected\n$.items[0].quantity,3\n$.items[0].code,A-12\n"
    )
    output = tmp_path / "case.json"
    code, out, _ = run_case(capsys, pred, output, "--ground-truth", truth)
    assert code == 0
    assert out.splitlines()[0] == "verdict: pass (failure context: none)"
    report = load_report(output)
    assert isinstance(report, EvaluationReport)
    [summary] = report.reference_summary
    assert summary.content_format == "path_table"
    fields = report.metric("exact_structured").details["fields"]
    assert [(row["path"], row["expected"], row["predicted"], row["outcome"]) for row in fields] == [
        ("$.items[0].quantity", "3", 3.0, "TP"),
        ("$.items[0].code", "A-12", "A-12", "TP"),
    ]


def test_evaluate_case_same_stem_in_two_folders_gets_distinct_ids(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path
) -> None:
    first = write_json(tmp_path / "annotator-a" / "truth.json", {"total": 3})
    second = write_json(tmp_path / "annotator-b" / "truth.json", {"vendor": "Acme"})
    output = tmp_path / "case.json"
    code, _, err = run_case(
        capsys, prediction, output, "--ground-truth", first, "--ground-truth", second
    )
    assert (code, err) == (0, "")
    report = load_report(output)
    assert isinstance(report, EvaluationReport)
    assert [(ref.id, ref.path) for ref in report.reference_summary] == [
        ("truth", str(first)),
        ("truth-2", str(second)),
    ]
    assert report.metric("exact_structured").details["references"] == ["truth", "truth-2"]


def test_evaluate_case_negative_tolerance_is_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path, truth_json: Path
) -> None:
    code, out, err = run_case(
        capsys,
        prediction,
        tmp_path / "case.json",
        "--ground-truth",
        truth_json,
        "--relative-tolerance",
        "-1",
    )
    assert code == 2
    assert out == ""
    assert_one_line_error(err, "tolerance")


# ------------------------------------------------------------- evaluate-case errors


def _missing_prediction(tmp_path: Path, truth: Path) -> tuple[list[str | Path], list[str]]:
    missing = tmp_path / "nowhere.json"
    return (
        ["--prediction", missing, "--ground-truth", truth],
        [str(missing), "prediction file not found"],
    )


def _malformed_prediction(tmp_path: Path, truth: Path) -> tuple[list[str | Path], list[str]]:
    bad = write_text(tmp_path / "broken.json", '{"total": 3,\n "vendor": }\n')
    return (
        ["--prediction", bad, "--ground-truth", truth],
        [str(bad), "malformed JSON at line 2, column 12"],
    )


def _malformed_csv(tmp_path: Path, truth: Path) -> tuple[list[str | Path], list[str]]:
    pred = write_json(tmp_path / "pred.json", {"total": 3})
    table = write_text(tmp_path / "table.csv", "path,expected\n$.total,3\n$.x,1,surplus\n")
    return (
        ["--prediction", pred, "--ground-truth", table],
        [str(table), "record line 3", "3 cells but the header has 2 columns"],
    )


def _missing_reference(tmp_path: Path, truth: Path) -> tuple[list[str | Path], list[str]]:
    pred = write_json(tmp_path / "pred.json", {"total": 3})
    missing = tmp_path / "gone.csv"
    return (
        ["--prediction", pred, "--ground-truth", truth, "--evidence", missing],
        [str(missing), "file not found"],
    )


def _no_references(tmp_path: Path, truth: Path) -> tuple[list[str | Path], list[str]]:
    pred = write_json(tmp_path / "pred.json", {"total": 3})
    return (
        ["--prediction", pred],
        [
            "nothing to evaluate against (expected at least one --evidence, "
            "--ground-truth or --generated file, or --ground-truth-dataset)"
        ],
    )


@pytest.mark.parametrize(
    "make",
    [
        _missing_prediction,
        _malformed_prediction,
        _malformed_csv,
        _missing_reference,
        _no_references,
    ],
    ids=["missing-prediction", "malformed-json", "malformed-csv", "missing-reference", "no-refs"],
)
def test_evaluate_case_bad_input_exits_2_and_keeps_old_output(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    make: Callable[[Path, Path], tuple[list[str | Path], list[str]]],
) -> None:
    truth = write_json(tmp_path / "truth.json", {"total": 3})
    args, fragments = make(tmp_path, truth)
    out_dir = tmp_path / "reports"
    out_dir.mkdir()
    output = out_dir / "case.json"
    markdown = out_dir / "case.md"
    old_json = b'{"old": "report"}\n'
    old_markdown = b"# old\r\nkept \xe2\x9c\x93\n"
    output.write_bytes(old_json)
    markdown.write_bytes(old_markdown)
    code, out, err = run(capsys, "evaluate-case", *args, "--output", output, "--markdown", markdown)
    assert code == 2
    assert out == ""
    assert_one_line_error(err, *fragments)
    assert output.read_bytes() == old_json
    assert markdown.read_bytes() == old_markdown
    assert sorted(path.name for path in out_dir.iterdir()) == ["case.json", "case.md"]


def test_unwritable_markdown_exits_2_without_temp_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, prediction: Path, truth_json: Path
) -> None:
    out_dir = tmp_path / "reports"
    markdown = out_dir / "case.md"
    markdown.mkdir(parents=True)  # a folder where the Markdown file should go
    code, _, err = run_case(
        capsys,
        prediction,
        out_dir / "case.json",
        "--ground-truth",
        truth_json,
        "--markdown",
        markdown,
    )
    assert code == 2
    # Refused before anything is evaluated, so the JSON report is not written either.
    assert_one_line_error(err, f"--markdown {markdown} is a folder")
    assert no_temp_files(out_dir)
    assert markdown.is_dir()
    assert not (out_dir / "case.json").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate-case", "--prediction", "p.json", "--output", "o.json", "--bogus"],
        ["evaluate-case", "--prediction", "p.json"],
        ["evaluate-pipeline", "pipeline.yaml"],
        ["suite", "--output", "o.json"],
        ["evaluate-case", "--prediction", "p.json", "--output", "o.json", "--fail-on", "maybe"],
        [],
    ],
    ids=[
        "unknown-option",
        "missing-output",
        "pipeline-no-output",
        "suite-no-reports",
        "bad-fail-on",
        "no-command",
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: docevals")
    assert "error: " in err.splitlines()[-1]
    assert "Traceback" not in err


def test_missing_output_message_names_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate-case", "--prediction", "p.json"])
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == "docevals evaluate-case: error: the following arguments are required: --output"


# ----------------------------------------------------------------- evaluate-pipeline

PIPELINE_YAML = """\
pipeline_id: invoice-7
metrics:
  operations:
    sum_total:
      - {{type: function, callable: "{module}:total_ok"}}
stages:
  - stage_id: extract
    operation: parse_items
    prediction_file: outputs/extract.json
    references:
      - {{path: truth/extract-truth.csv, authority: ground_truth}}
  - stage_id: total
    operation: sum_total
    input_from: extract
    prediction: {{total: 7}}
    depends_on: [extract]
  - stage_id: route
    operation: route_invoice
    input_data: {{total: 7}}
    prediction: {{queue: approval}}
    depends_on: [total]
    references:
      - {{id: route-truth, value: {{queue: auto-pay}}, authority: ground_truth}}
"""

CHECKS_SOURCE = """\
def total_ok(case):
    return case.prediction["total"] == sum(case.input_data["items"])


def boom(case):
    raise RuntimeError("metric exploded")
"""


def pipeline_dict(module: str) -> dict[str, object]:
    return {
        "pipeline_id": "invoice-7",
        "metrics": {
            "operations": {"sum_total": [{"type": "function", "callable": f"{module}:total_ok"}]}
        },
        "stages": [
            {
                "stage_id": "extract",
                "operation": "parse_items",
                "prediction_file": "outputs/extract.json",
                "references": [{"path": "truth/extract-truth.csv", "authority": "ground_truth"}],
            },
            {
                "stage_id": "total",
                "operation": "sum_total",
                "input_from": "extract",
                "prediction": {"total": 7},
                "depends_on": ["extract"],
            },
            {
                "stage_id": "route",
                "operation": "route_invoice",
                "input_data": {"total": 7},
                "prediction": {"queue": "approval"},
                "depends_on": ["total"],
                "references": [
                    {
                        "id": "route-truth",
                        "value": {"queue": "auto-pay"},
                        "authority": "ground_truth",
                    }
                ],
            },
        ],
    }


def write_pipeline(folder: Path, checks_module: ModuleWriter, fmt: str = "yaml") -> Path:
    """A three-stage pipeline: extract misreads 4 as 5, total is right on its input,
    routing is wrong. Files sit next to the config and are named relatively."""
    folder.mkdir(parents=True, exist_ok=True)
    module = checks_module(folder, CHECKS_SOURCE)
    write_json(folder / "outputs" / "extract.json", {"items": [2, 5]})
    write_text(
        folder / "truth" / "extract-truth.csv", "path,expected\n$.items[0],2\n$.items[1],4\n"
    )
    if fmt == "yaml":
        return write_text(folder / "pipeline.yaml", PIPELINE_YAML.format(module=module))
    return write_json(folder / "pipeline.json", pipeline_dict(module))


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_evaluate_pipeline_reports_stage_verdicts_and_contexts(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    checks_module: ModuleWriter,
    fmt: str,
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module, fmt)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # relative paths resolve against the config folder
    output = tmp_path / "reports" / "pipeline.json"
    markdown = tmp_path / "reports" / "pipeline.md"
    code, out, err = run(
        capsys, "evaluate-pipeline", config, "--output", output, "--markdown", markdown
    )
    assert code == 1
    assert err == ""
    assert out == (
        "verdict: fail (extract=fail/current_stage, total=pass/upstream, "
        "route=fail/upstream_or_combined)\n"
        f"report: {output} (Markdown: {markdown})\n"
    )
    report = load_report(output)
    assert isinstance(report, PipelineEvaluationReport)
    assert report.pipeline_id == "invoice-7"
    assert report.execution_order == ["extract", "total", "route"]
    assert report.waves == [["extract"], ["total"], ["route"]]
    assert report.verdict == "fail"
    assert report.checkpoint is None
    assert [(s.stage_id, s.verdict, s.failure_context) for s in report.stage_reports] == [
        ("extract", "fail", "current_stage"),
        ("total", "pass", "upstream"),
        ("route", "fail", "upstream_or_combined"),
    ]
    assert [r.name for r in report.stage("total").metric_results] == ["total_ok"]
    assert report.stage("total").upstream_verdicts == {"extract": "fail"}
    assert report.stage("route").upstream_verdicts == {"extract": "fail", "total": "pass"}
    [extract_ref] = report.stage("extract").reference_summary
    assert extract_ref.id == "extract-truth"
    assert extract_ref.path == str(tmp_path / "config" / "truth" / "extract-truth.csv")
    [route_ref] = report.stage("route").reference_summary
    assert (route_ref.id, route_ref.path) == ("route-truth", "inline://route-truth")
    assert markdown.is_file()


def test_evaluate_pipeline_fail_on_never_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    config = write_pipeline(tmp_path, checks_module)
    code, _, _ = run(
        capsys, "evaluate-pipeline", config, "--output", tmp_path / "p.json", "--fail-on", "never"
    )
    assert code == 0


def _uncertain_config(folder: Path, checks_module: ModuleWriter) -> Path:
    module = checks_module(folder, CHECKS_SOURCE)
    return write_text(
        folder / "uncertain.yaml",
        textwrap.dedent(
            f"""\
            pipeline_id: shaky
            metrics:
              default: [{{type: function, callable: "{module}:boom"}}]
            stages:
              - stage_id: only
                input_data: {{a: 1}}
                prediction: {{b: 2}}
            """
        ),
    )


@pytest.mark.parametrize(("fail_on", "expected_code"), [("uncertain", 1), ("fail", 0)])
def test_evaluate_pipeline_raising_metric_is_uncertain(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    checks_module: ModuleWriter,
    fail_on: str,
    expected_code: int,
) -> None:
    config = _uncertain_config(tmp_path, checks_module)
    output = tmp_path / "p.json"
    code, out, err = run(
        capsys, "evaluate-pipeline", config, "--output", output, "--fail-on", fail_on
    )
    assert code == expected_code
    assert err == ""
    assert out.splitlines()[0] == "verdict: uncertain (only=uncertain/indeterminate)"
    report = load_report(output)
    assert isinstance(report, PipelineEvaluationReport)
    assert report.verdict == "uncertain"
    assert report.requires_human_review is True
    [result] = report.stage("only").metric_results
    assert (result.name, result.verdict, result.basis) == ("boom", "uncertain", "error")
    assert result.error is not None
    assert (result.error.type, result.error.message) == ("RuntimeError", "metric exploded")


def test_evaluate_pipeline_reuses_checkpoints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module)
    checkpoints = tmp_path / "ckpt"
    first_out, second_out = tmp_path / "first.json", tmp_path / "second.json"
    common = ["--checkpoint-dir", checkpoints, "--checkpoint-context", "judge_model=none"]
    code1, out1, _ = run(capsys, "evaluate-pipeline", config, "--output", first_out, *common)
    code2, out2, _ = run(capsys, "evaluate-pipeline", config, "--output", second_out, *common)
    assert (code1, code2) == (1, 1)
    assert out1.splitlines()[0] == out2.splitlines()[0]
    first, second = load_report(first_out), load_report(second_out)
    assert isinstance(first, PipelineEvaluationReport)
    assert isinstance(second, PipelineEvaluationReport)
    assert first.checkpoint is not None
    assert second.checkpoint is not None
    assert first.checkpoint.directory == str(checkpoints)
    assert first.checkpoint.computed == ["extract", "total", "route"]
    assert first.checkpoint.reused == []
    assert second.checkpoint.reused == ["extract", "total", "route"]
    assert second.checkpoint.computed == []
    assert second.checkpoint.invalidated == {}
    assert [s.from_checkpoint for s in second.stage_reports] == [True, True, True]
    assert [(s.stage_id, s.verdict, s.failure_context) for s in second.stage_reports] == [
        (s.stage_id, s.verdict, s.failure_context) for s in first.stage_reports
    ]
    assert sorted(path.name for path in checkpoints.iterdir()) == [
        "01-extract.json",
        "02-total.json",
        "03-route.json",
    ]


def test_evaluate_pipeline_changed_context_invalidates_checkpoints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module)
    checkpoints = tmp_path / "ckpt"
    output = tmp_path / "p.json"
    base = ["evaluate-pipeline", config, "--output", output, "--checkpoint-dir", checkpoints]
    run(capsys, *base, "--checkpoint-context", "judge_model=a")
    with pytest.warns(CheckpointWarning) as caught:
        code, _, err = run(capsys, *base, "--checkpoint-context", "judge_model=b")
    assert code == 1
    assert err == ""
    assert len(caught) == 3
    assert all("recomputing the stage" in str(w.message) for w in caught)
    report = load_report(output)
    assert isinstance(report, PipelineEvaluationReport)
    assert report.checkpoint is not None
    assert report.checkpoint.reused == []
    assert report.checkpoint.computed == ["extract", "total", "route"]
    assert report.checkpoint.invalidated == {"extract": STALE, "total": STALE, "route": STALE}
    assert [s.from_checkpoint for s in report.stage_reports] == [False, False, False]


def test_bad_checkpoint_context_exits_2_before_writing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    config = write_pipeline(tmp_path, checks_module)
    output = tmp_path / "p.json"
    code, out, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        output,
        "--checkpoint-dir",
        tmp_path / "ckpt",
        "--checkpoint-context",
        "judge_model",
    )
    assert code == 2
    assert out == ""
    assert err == "docevals: error: --checkpoint-context 'judge_model' (expected KEY=VALUE)\n"
    assert not output.exists()
    assert not (tmp_path / "ckpt").exists()


# ----------------------------------------------------------- evaluate-pipeline errors

CONFIG_ERRORS = {
    "unknown-field": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}, colour: red}
        """,
        ["colour", "Extra inputs are not permitted"],
    ),
    "unknown-dependency": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
          - {stage_id: b, input_data: {x: 1}, prediction: {x: 1}, depends_on: [ghost]}
        """,
        ["stage 'b'", "unknown dependency 'ghost'"],
    ),
    "cycle": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}, depends_on: [b]}
          - {stage_id: b, input_data: {x: 1}, prediction: {x: 1}, depends_on: [a]}
        """,
        ["dependency cycle among stages 'a', 'b'"],
    ),
    "duplicate-stage": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 2}}
        """,
        ["stage 'a'", "duplicate stage id"],
    ),
    "prediction-twice": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}, prediction_file: p.json}
        """,
        ["stage 'a': give exactly one of prediction or prediction_file"],
    ),
    "unknown-metric-type": (
        """\
        pipeline_id: p
        metrics:
          default: [{type: fuzzy}]
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
        """,
        ["'exact' or 'function'", "'fuzzy'"],
    ),
    "unimportable-callable": (
        """\
        pipeline_id: p
        metrics:
          default: [{type: function, callable: "no_such_module_9f3c:check"}]
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
        """,
        ["cannot import 'no_such_module_9f3c'"],
    ),
    "input-from-unknown": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_from: nobody, prediction: {x: 1}}
        """,
        ["stage 'a'", "input_from names unknown stage 'nobody'"],
    ),
}


@pytest.mark.parametrize("name", list(CONFIG_ERRORS))
def test_evaluate_pipeline_config_errors_exit_2_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    text, fragments = CONFIG_ERRORS[name]
    config = write_text(tmp_path / "pipeline.yaml", textwrap.dedent(text))
    output = tmp_path / "p.json"
    output.write_bytes(b"previous\n")
    code, out, err = run(capsys, "evaluate-pipeline", config, "--output", output)
    assert code == 2
    assert out == ""
    assert_one_line_error(err, str(config), *fragments)
    assert output.read_bytes() == b"previous\n"
    assert no_temp_files(tmp_path)


def test_evaluate_pipeline_missing_attribute_names_the_callable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    module = checks_module(tmp_path, CHECKS_SOURCE)
    config = write_text(
        tmp_path / "pipeline.json",
        json.dumps(
            {
                "pipeline_id": "p",
                "metrics": {"default": [{"type": "function", "callable": f"{module}:absent"}]},
                "stages": [{"stage_id": "a", "input_data": {"x": 1}, "prediction": {"x": 1}}],
            }
        ),
    )
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "p.json")
    assert code == 2
    assert_one_line_error(
        err, f"{config}, at {module}:absent: module {module!r} has no attribute 'absent'"
    )


def test_evaluate_pipeline_callable_with_syntax_error_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    module = checks_module(tmp_path, "def check(case:\n    return True\n")
    config = write_text(
        tmp_path / "pipeline.yaml",
        "pipeline_id: p\n"
        f'metrics: {{default: [{{type: function, callable: "{module}:check"}}]}}\n'
        "stages:\n  - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}\n",
    )
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "p.json")
    assert code == 2
    assert_one_line_error(err, str(config), module)


MALFORMED_YAML = """\
pipeline_id: p
stages:
  - stage_id: a
    prediction: {x: 1}
    input_data: x: y
"""


def test_evaluate_pipeline_malformed_yaml_names_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write_text(tmp_path / "pipeline.yaml", MALFORMED_YAML)
    code, out, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "p.json")
    assert code == 2
    assert out == ""
    assert err.startswith(f"docevals: error: {config}: malformed YAML at line 5, column 18: ")
    assert "Traceback" not in err
    assert not (tmp_path / "p.json").exists()


def test_evaluate_pipeline_malformed_yaml_error_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = write_text(tmp_path / "pipeline.yaml", MALFORMED_YAML)
    _, _, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "p.json")
    assert_one_line_error(err, str(config), "line 5")


def test_evaluate_pipeline_missing_config_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "absent.yaml"
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "p.json")
    assert code == 2
    assert err == f"docevals: error: {config}: file not found\n"


# ----------------------------------------------------------------------------- suite


def _case_report(capsys: pytest.CaptureFixture[str], folder: Path, name: str, total: int) -> Path:
    pred = write_json(folder / f"{name}.json", {"total": 3})
    truth = write_json(folder / f"{name}-truth.json", {"total": total})
    output = folder / "reports" / f"{name}-report.json"
    run_case(capsys, pred, output, "--ground-truth", truth)
    return output


def test_suite_of_two_reports(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = _case_report(capsys, tmp_path, "good", 3)
    bad = _case_report(capsys, tmp_path, "bad", 4)
    output = tmp_path / "suite.json"
    markdown = tmp_path / "suite.md"
    code, out, err = run(
        capsys,
        "suite",
        good,
        bad,
        "--suite-id",
        "nightly",
        "--output",
        output,
        "--markdown",
        markdown,
    )
    assert code == 0  # by default a suite does not gate; --fail-on asks it to
    assert err == ""
    assert out == (
        "cases: 2 (pass=1, fail=1, uncertain=0, not_applicable=0)\n"
        f"report: {output} (Markdown: {markdown})\n"
    )
    suite = load_report(output)
    assert isinstance(suite, SuiteReport)
    assert suite.suite_id == "nightly"
    assert suite.case_count == 2
    assert suite.stage_count == 2
    assert suite.case_verdict_counts == {"pass": 1, "fail": 1, "uncertain": 0, "not_applicable": 0}
    assert markdown.is_file()
    gated = tmp_path / "gated.json"
    assert run(capsys, "suite", good, bad, "--output", gated, "--fail-on", "fail")[0] == 1
    assert run(capsys, "suite", good, "--output", gated, "--fail-on", "fail")[0] == 0


def test_suite_mixes_case_and_pipeline_reports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    case = _case_report(capsys, tmp_path, "good", 3)
    config = write_pipeline(tmp_path / "config", checks_module)
    pipeline = tmp_path / "pipeline-report.json"
    run(capsys, "evaluate-pipeline", config, "--output", pipeline)
    output = tmp_path / "suite.json"
    code, _, _ = run(capsys, "suite", case, pipeline, "--output", output)
    assert code == 0
    suite = load_report(output)
    assert isinstance(suite, SuiteReport)
    assert (suite.suite_id, suite.case_count, suite.stage_count) == ("suite", 2, 4)
    assert suite.case_verdict_counts["fail"] == 1


def test_suite_rejects_a_suite_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    case = _case_report(capsys, tmp_path, "good", 3)
    inner = tmp_path / "inner-suite.json"
    run(capsys, "suite", case, "--output", inner)
    output = tmp_path / "outer.json"
    code, out, err = run(capsys, "suite", case, inner, "--output", output)
    assert code == 2
    assert out == ""
    assert err == f"docevals: error: {inner}: a suite report cannot be part of a suite\n"
    assert not output.exists()


def test_suite_missing_report_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    case = _case_report(capsys, tmp_path, "good", 3)
    missing = tmp_path / "missing.json"
    code, _, err = run(capsys, "suite", case, missing, "--output", tmp_path / "s.json")
    assert code == 2
    assert err == f"docevals: error: {missing}: report not found\n"


def test_suite_invalid_report_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fake = write_json(tmp_path / "fake.json", {"kind": "case"})
    code, _, err = run(capsys, "suite", fake, "--output", tmp_path / "s.json")
    assert code == 2
    assert_one_line_error(err, str(fake), "invalid EvaluationReport", "case_id: Field required")


# ------------------------------------------------------------------------ processes


def test_python_dash_m_version() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "docevals_mlflow", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0
    assert completed.stdout == f"docevals-mlflow {docevals_mlflow.__version__}\n"
    assert completed.stderr == ""


def _console_script() -> str:
    beside = Path(sys.executable).parent / "docevals"
    if beside.is_file():
        return str(beside)
    found = shutil.which("docevals")
    assert found is not None, "the docevals console script is not installed"
    return found


def test_console_script_evaluates_and_gates(tmp_path: Path) -> None:
    pred = write_json(tmp_path / "pred.json", {"total": 3.0})
    truth = write_text(tmp_path / "truth.csv", "path,expected\n$.total,4\n")
    broken = write_text(tmp_path / "broken.json", "{\n")
    output = tmp_path / "case.json"

    def evaluate(prediction: Path) -> subprocess.CompletedProcess[str]:
        argv = ["evaluate-case", "--prediction", str(prediction), "--ground-truth", str(truth)]
        return subprocess.run(
            [_console_script(), *argv, "--output", str(output)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=tmp_path,
        )

    failing = evaluate(pred)
    assert failing.returncode == 1
    assert failing.stdout == (f"verdict: fail (failure context: current_stage)\nreport: {output}\n")
    assert failing.stderr == ""
    assert isinstance(load_report(output), EvaluationReport)
    bad = evaluate(broken)
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert_one_line_error(bad.stderr, str(broken), "malformed JSON at line 2")


@pytest.fixture(autouse=True)
def _no_sys_path_leaks(isolated_sys_path: None) -> None:
    """Every test here may import user modules from a config folder."""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_evaluate_pipeline_draws_a_progress_bar_on_a_terminal_only(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    checks_module: ModuleWriter,
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module)
    terminal = Terminal()
    captured = sys.stderr
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["evaluate-pipeline", str(config), "--output", str(tmp_path / "r.json")]) == 1
    drawn = terminal.getvalue()
    assert drawn.startswith("\revaluating stages")
    assert drawn.endswith("] 3/3\n")
    monkeypatch.setattr("sys.stderr", captured)
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "r2.json")
    assert (code, err) == (1, "")  # redirected: no bar, no milestone lines


MANY_PIPELINES_YAML = """\
metadata: {{batch: march}}
metrics:
  operations:
    sum_total:
      - {{type: function, callable: "{module}:total_ok"}}
pipelines:
  - pipeline_id: invoice-1
    stages:
      - {{stage_id: extract, prediction: {{items: [2, 4]}},
         references: [{{id: t, value: {{items: [2, 4]}}, authority: ground_truth}}]}}
      - {{stage_id: total, operation: sum_total, input_from: extract,
         prediction: {{total: 6}}, depends_on: [extract]}}
  - pipeline_id: invoice/2
    metadata: {{pages: 3}}
    stages:
      - {{stage_id: extract, prediction: {{items: [2, 5]}},
         references: [{{id: t, value: {{items: [2, 4]}}, authority: ground_truth}}]}}
      - {{stage_id: total, operation: sum_total, input_from: extract,
         prediction: {{total: 7}}, depends_on: [extract]}}
"""


def test_one_file_can_describe_many_pipelines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    module = checks_module(tmp_path, CHECKS_SOURCE)
    config = write_text(tmp_path / "batch.yaml", MANY_PIPELINES_YAML.format(module=module))
    output = tmp_path / "reports" / "batch.json"
    code, out, err = run(capsys, "evaluate-pipeline", config, "--output", output)
    assert (code, err) == (1, "")  # invoice/2 misread a price: fail
    assert out.splitlines()[0].startswith("cases: 2")
    suite = load_report(output)
    assert isinstance(suite, SuiteReport)
    assert suite.case_verdict_counts["fail"] == 1
    first = load_report(tmp_path / "reports" / "batch.pipelines" / "invoice-1.json")
    second = load_report(tmp_path / "reports" / "batch.pipelines" / "invoice_2.json")
    assert isinstance(first, PipelineEvaluationReport)
    assert isinstance(second, PipelineEvaluationReport)
    assert (first.verdict, second.verdict) == ("pass", "fail")
    assert second.metadata == {"batch": "march", "pages": 3}
    assert second.stage("total").failure_context == "upstream"


def test_many_pipelines_name_the_pipeline_in_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, checks_module: ModuleWriter
) -> None:
    module = checks_module(tmp_path, CHECKS_SOURCE)
    text = MANY_PIPELINES_YAML.format(module=module).replace(
        "input_from: extract,\n         prediction: {total: 7}",
        "input_from: nowhere,\n         prediction: {total: 7}",
    )
    config = write_text(tmp_path / "batch.yaml", text)
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "r.json")
    assert code == 2
    assert err == (
        "docevals: error: "
        f"{config}, record invoice/2, stage 'total': input_from names unknown stage 'nowhere'\n"
    )
