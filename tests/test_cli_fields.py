"""``docevals fields``: inputs, reports written, thresholds and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.cli import main
from docevals_mlflow.fields.report import FieldsReport
from tests.helpers import assert_one_line_error, run, write_json, write_jsonl

SCHEMA_YAML = """\
schema_id: invoices
version: "3"
classes:
  - name: Invoice
    fields:
      vendor: {method: FUZZY, threshold: 0.8}
      total: {method: NUMERIC_EXACT, threshold: 0.01}
      lines:
        items:
          fields:
            code: {method: EXACT}
"""

# --------------------------------------------------------------------------- helpers


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    path = tmp_path / "schema.yaml"
    path.write_text(SCHEMA_YAML, encoding="utf-8")
    return path


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """Expected and predicted folders: inv-1 perfect, inv-2 one wrong total, one
    unpaired id on each side."""
    expected, predicted = tmp_path / "expected", tmp_path / "predicted"
    write_json(
        expected / "inv-1.json",
        {"vendor": "Acme", "total": "12.50", "lines": [{"code": "A"}, {"code": "B"}]},
    )
    write_json(
        expected / "inv-2.json",
        {"class": "Invoice", "data": {"vendor": "Beta", "total": 3}},
    )
    write_json(expected / "only-gt.json", {"vendor": "Gamma"})
    write_json(
        predicted / "inv-1.json",
        {
            "data": {"vendor": "ACME", "total": "$12.50", "lines": [{"code": "B"}, {"code": "A"}]},
            "confidence": {"vendor": 0.4},
        },
    )
    write_json(predicted / "inv-2.json", {"vendor": "Beta", "total": 4})
    write_json(predicted / "only-pred.json", {"vendor": "Delta"})
    return expected, predicted


def read_report(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return report


# --------------------------------------------------------------------------- success


def test_folder_inputs_with_yaml_schema(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    schema: Path,
    folders: tuple[Path, Path],
) -> None:
    expected, predicted = folders
    output, markdown = tmp_path / "out" / "report.json", tmp_path / "out" / "report.md"
    code, out, err = run(
        capsys,
        "fields",
        "--schema",
        schema,
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
    report = read_report(output)
    FieldsReport.model_validate(report)  # the written JSON matches the report model
    assert report["schema"]["id"] == "invoices"
    assert report["schema"]["version"] == "3"
    assert report["overall"]["documents"] == 2
    # inv-1: vendor, total, two line codes all TP; inv-2: vendor TP, total FD.
    assert report["overall"]["counts"] == {"tp": 5, "fa": 0, "fd": 1, "fn": 0, "tn": 0}
    assert report["unpaired"] == {"expected_only": ["only-gt"], "predicted_only": ["only-pred"]}
    rows = {row["path"]: row for row in report["documents"][0]["rows"]}
    assert rows["$.vendor"]["confidence"] == 0.4
    assert out.splitlines() == [
        "documents: 2; micro precision 0.8333, recall 1.0000, F1 0.9091; "
        "macro F1 0.8333; unpaired: 1 expected only, 1 predicted only",
        # The one field with a confidence was right: calibration without AUROC.
        "confidence: AUROC n/a, Brier 0.3600, ECE 0.6000 over 1 field",
        f"report: {output} (Markdown: {markdown})",
    ]
    text = markdown.read_text(encoding="utf-8")
    assert text.startswith("# Field evaluation report\n")
    assert "- **Expected only** (ground truth, no prediction; not compared): 1: `only-gt`" in text
    assert "| ❌ | $.total | 3 | 4 | N/A | 0.00 | NUMERIC_EXACT (tolerance: 0.01) |" in text


def test_jsonl_inputs_without_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    expected = write_jsonl(
        tmp_path / "gt.jsonl",
        [
            {"id": 1, "data": {"name": "Ann", "age": 30}},
            {"id": 2, "data": {"name": "Bob"}},
            {"id": 3, "data": {"name": "Cy"}},
        ],
    )
    predicted = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"id": "2", "data": {"name": "Bob"}},
            {"id": "1", "data": {"name": "Ann", "age": 31}},
        ],
    )
    output = tmp_path / "report.json"
    code, out, err = run(
        capsys, "fields", "--expected", expected, "--predicted", predicted, "--output", output
    )
    assert (code, err) == (0, "")
    report = read_report(output)
    assert report["schema"]["id"] == "inferred"
    assert [document["id"] for document in report["documents"]] == ["1", "2"]
    assert report["unpaired"] == {"expected_only": ["3"], "predicted_only": []}
    # No schema: the class is unconfigured and every rule is inferred.
    assert report["classes"]["unclassified"]["configured"] is False
    assert {entry["template"]: entry["method"] for entry in report["fields"]} == {
        "$.name": "FUZZY (threshold: 0.85)",
        "$.age": "NUMERIC_EXACT (tolerance: 0.01)",
    }
    assert "unpaired: 1 expected only, 0 predicted only" in out


def test_no_rows_and_no_mlflow(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    expected, predicted = folders
    output, markdown = tmp_path / "r.json", tmp_path / "r.md"
    code, _, err = run(
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
        "--no-rows",
        "--no-mlflow",
    )
    assert (code, err) == (0, "")
    assert all("rows" not in document for document in read_report(output)["documents"])
    assert "(`--no-rows`)" in markdown.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- thresholds


def fields_args(folders: tuple[Path, Path], output: Path, *extra: str) -> list[str | Path]:
    expected, predicted = folders
    return [
        "fields",
        "--expected",
        expected,
        "--predicted",
        predicted,
        "--output",
        output,
        *extra,
    ]


def test_fail_under_breached_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    output = tmp_path / "r.json"
    code, out, err = run(capsys, *fields_args(folders, output, "--fail-under", "f1=0.99"))
    assert code == 1
    assert err == "docevals: threshold: f1 0.9091 is below 0.99\n"
    assert output.is_file()  # the report is written even when the gate fails
    assert out.startswith("documents: 2;")


def test_thresholds_met_exit_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    code, _, err = run(
        capsys,
        *fields_args(
            folders,
            tmp_path / "r.json",
            "--fail-under",
            "f1=0.9",
            "--fail-under",
            "RECALL=1",
            "--fail-under",
            "macro_f1=0.8",
            "--fail-over",
            "fdr=0.2",
        ),
    )
    assert (code, err) == (0, "")


def test_each_breach_and_undefined_metric_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    code, _, err = run(
        capsys,
        *fields_args(
            folders,
            tmp_path / "r.json",
            "--fail-under",
            "precision=0.9",
            "--fail-over",
            "fdr=0.1",
            "--fail-over",
            "far=0.5",  # no FA and no TN: FAR is undefined, which fails the gate
        ),
    )
    assert code == 1
    assert err.splitlines() == [
        "docevals: threshold: precision 0.8333 is below 0.9",
        "docevals: threshold: fdr 0.1667 is above 0.1",
        "docevals: threshold: far is undefined (required at most 0.5)",
    ]


@pytest.mark.parametrize(
    ("option", "value", "fragment"),
    [
        ("--fail-under", "f2=0.5", "METRIC one of precision, recall, f1, accuracy, macro_f1"),
        ("--fail-under", "f1", "expected METRIC=VALUE"),
        ("--fail-under", "far=0.1", "METRIC one of precision, recall, f1, accuracy, macro_f1"),
        ("--fail-over", "f1=0.1", "METRIC one of far, fdr"),
        ("--fail-under", "f1=high", "a VALUE between 0 and 1"),
        ("--fail-under", "f1=90", "a VALUE between 0 and 1"),
        ("--fail-over", "far=nan", "a VALUE between 0 and 1"),
    ],
)
def test_bad_threshold_exits_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    folders: tuple[Path, Path],
    option: str,
    value: str,
    fragment: str,
) -> None:
    output = tmp_path / "r.json"
    code, out, err = run(capsys, *fields_args(folders, output, option, value))
    assert (code, out) == (2, "")
    assert_one_line_error(err, f"{option} {value!r}", fragment)
    assert not output.exists()  # checked before any comparison work


def test_repeated_threshold_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    code, _, err = run(
        capsys,
        *fields_args(
            folders, tmp_path / "r.json", "--fail-under", "f1=0.5", "--fail-under", "f1=0.6"
        ),
    )
    assert code == 2
    assert_one_line_error(err, "--fail-under f1 given twice")


# --------------------------------------------------------------------------- bad input


def test_bad_input_exits_2_and_leaves_old_reports_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    expected = write_jsonl(tmp_path / "gt.jsonl", [{"id": 1, "data": {"a": 1}}])
    predicted = tmp_path / "pred.jsonl"
    predicted.write_text('{"id": 1, "data": {"a": 1}}\n{"id": 2, "data": \n', encoding="utf-8")
    output, markdown = tmp_path / "r.json", tmp_path / "r.md"
    output.write_text("old json", encoding="utf-8")
    markdown.write_text("old markdown", encoding="utf-8")
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
    assert (code, out) == (2, "")
    assert_one_line_error(err, str(predicted), "record line 2", "malformed JSON at column 19")
    assert output.read_text(encoding="utf-8") == "old json"
    assert markdown.read_text(encoding="utf-8") == "old markdown"
    assert list(tmp_path.glob(".*.tmp")) == []


@pytest.mark.parametrize(
    ("case", "fragments"),
    [
        ("missing-expected", ("expected input not found",)),
        ("duplicate", ("duplicate id '1' (line 1 and line 2)",)),
        ("unknown-key", ("unknown record key(s) 'vendor'", "expected only id, class, data")),
        ("empty-folder", ("folder has no .json files",)),
        ("missing-schema", ("schema.json: file not found",)),
        ("bad-schema", ("invalid DocumentSchema", "method")),
    ],
)
def test_bad_inputs_are_one_line_errors(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    case: str,
    fragments: tuple[str, ...],
) -> None:
    expected = write_jsonl(tmp_path / "gt.jsonl", [{"id": 1, "data": {"a": 1}}])
    predicted = write_jsonl(tmp_path / "pred.jsonl", [{"id": 1, "data": {"a": 1}}])
    extra: list[str | Path] = []
    if case == "missing-expected":
        expected = tmp_path / "nowhere.jsonl"
    elif case == "duplicate":
        write_jsonl(predicted, [{"id": 1, "data": {}}, {"id": "1", "data": {}}])
    elif case == "unknown-key":
        write_jsonl(predicted, [{"id": 1, "vendor": "A"}])
    elif case == "empty-folder":
        predicted = tmp_path / "empty"
        predicted.mkdir()
    elif case == "missing-schema":
        extra = ["--schema", tmp_path / "schema.json"]
    elif case == "bad-schema":
        bad = tmp_path / "bad.yaml"
        bad.write_text("classes:\n  - name: X\n    fields:\n      a: {method: GUESS}\n")
        extra = ["--schema", bad]
    output = tmp_path / "r.json"
    code, out, err = run(
        capsys,
        "fields",
        "--expected",
        expected,
        "--predicted",
        predicted,
        "--output",
        output,
        *extra,
    )
    assert (code, out) == (2, "")
    assert_one_line_error(err, *fragments)
    assert not output.exists()


def test_missing_required_option_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["fields", "--expected", str(tmp_path), "--output", str(tmp_path / "r.json")])
    assert exited.value.code == 2
    assert "--predicted" in capsys.readouterr().err
