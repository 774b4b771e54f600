"""``docevals fields``: the comparison rules on the command line: list pairing,
discovered fields, wrong-shaped ground truth and unreadable numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.fields.report import FieldsReport
from tests.helpers import assert_one_line_error, run, write_jsonl

SCHEMA_YAML = """\
schema_id: contracts
classes:
  - name: Contract
    fields:
      jurisdiction: {method: EXACT}
      total: {method: NUMERIC_EXACT, threshold: 0.01}
      parties:
        items: {method: FUZZY, threshold: 0.8}
"""


@pytest.fixture
def schema(tmp_path: Path) -> Path:
    path = tmp_path / "schema.yaml"
    path.write_text(SCHEMA_YAML, encoding="utf-8")
    return path


def contracts(tmp_path: Path, expected: list[dict[str, Any]]) -> tuple[Path, Path]:
    predicted = [
        {"id": "c1", "data": {"jurisdiction": "Delaware", "total": "RM7.42", "parties": ["Acme"]}},
        {"id": "c2", "data": {"jurisdiction": "Texas", "total": "N/A", "parties": ["Georgia"]}},
        {"id": "c3", "data": {"jurisdiction": "Ohio", "total": 3, "parties": [], "notes": "x"}},
    ]
    return (
        write_jsonl(tmp_path / "gt.jsonl", expected),
        write_jsonl(tmp_path / "pred.jsonl", predicted),
    )


GOOD_EXPECTED = [
    {"id": "c1", "data": {"jurisdiction": "Delaware", "total": "RM7.42", "parties": ["Acme"]}},
    {"id": "c2", "data": {"jurisdiction": "Texas", "total": "n/a", "parties": ["New York"]}},
    {"id": "c3", "data": {"jurisdiction": "Ohio", "total": 3, "parties": [], "notes": "y"}},
]


def fields(schema: Path, expected: Path, predicted: Path, output: Path, *extra: str) -> list[Any]:
    return [
        "fields",
        "--schema",
        schema,
        "--expected",
        expected,
        "--predicted",
        predicted,
        "--output",
        output,
        "--no-mlflow",
        *extra,
    ]


def read(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    FieldsReport.model_validate(report)
    return report


def test_defaults_pair_lists_as_stickler_and_keep_discovered_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, schema: Path
) -> None:
    expected, predicted = contracts(tmp_path, GOOD_EXPECTED)
    output = tmp_path / "r.json"
    code, _, err = run(capsys, *fields(schema, expected, predicted, output))
    assert code == 0
    report = read(output)
    assert report["settings"] == {
        "list_pairing": "schema",
        "discovered": "exclude",
        "shape_mismatch": "error",
    }
    parties = report["lists"][0]
    # New York against Georgia: a weak pair, one FD (Stickler 1.0), and c3's empty
    # lists are one TN.
    assert (parties["matched"], parties["weak"], parties["empty"]) == (1, 1, 1)
    by_template = {entry["template"]: entry for entry in report["fields"]}
    assert by_template["$.parties[]"]["counts"] == {"tp": 1, "fa": 0, "fd": 1, "fn": 0, "tn": 1}
    # RM7.42 is a number; N/A against n/a is identical text, matched and counted.
    assert by_template["$.total"]["counts"]["tp"] == 3
    assert by_template["$.total"]["unparsed"] == 2
    assert "$.notes" not in by_template
    assert report["discovered"]["fields"][0]["template"] == "$.notes"
    assert report["overall"]["counts"] == {"tp": 7, "fa": 0, "fd": 1, "fn": 0, "tn": 1}
    assert err == (
        "docevals: warning: 2 values of numeric fields do not read as numbers ($.total (2)); "
        "such values match only a value of identical text\n"
    )


def test_strict_pairing_and_included_discovered_fields(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, schema: Path
) -> None:
    expected, predicted = contracts(tmp_path, GOOD_EXPECTED)
    output = tmp_path / "r.json"
    extra = ("--list-pairing", "strict", "--discovered", "include")
    code, _, _ = run(capsys, *fields(schema, expected, predicted, output, *extra))
    assert code == 0
    report = read(output)
    assert report["settings"]["list_pairing"] == "strict"
    by_template = {entry["template"]: entry for entry in report["fields"]}
    assert by_template["$.parties[]"]["counts"] == {"tp": 1, "fa": 1, "fd": 0, "fn": 1, "tn": 1}
    assert by_template["$.notes"]["discovered"] is True
    assert report["discovered"]["included"] is True
    # notes: "y" against "x" is one FD, now in the headline figures.
    assert report["overall"]["counts"] == {"tp": 7, "fa": 1, "fd": 1, "fn": 1, "tn": 1}


WRONG_SHAPED = [
    GOOD_EXPECTED[0],
    {"id": "c2", "data": {"jurisdiction": ["Texas"], "total": "n/a", "parties": ["New York"]}},
    {"id": "c3", "data": {"jurisdiction": "Ohio", "total": 3, "parties": "Acme"}},
]


def test_wrong_shaped_ground_truth_exits_2_naming_where_and_how_many(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, schema: Path
) -> None:
    expected, predicted = contracts(tmp_path, WRONG_SHAPED)
    output, markdown = tmp_path / "r.json", tmp_path / "r.md"
    output.write_text("old report", encoding="utf-8")
    code, out, err = run(
        capsys, *fields(schema, expected, predicted, output, "--markdown", str(markdown))
    )
    assert (code, out) == (2, "")
    assert_one_line_error(
        err,
        str(expected),
        "line 2",
        "at $.jurisdiction",
        "document 'c2'",
        "the ground truth holds a list where the schema declares a single value",
        "2 affected in all",
        "--allow-shape-mismatch",
    )
    assert output.read_text(encoding="utf-8") == "old report"
    assert not markdown.exists()
    assert list(tmp_path.glob(".*.tmp")) == []


def test_allow_shape_mismatch_counts_them_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, schema: Path
) -> None:
    expected, predicted = contracts(tmp_path, WRONG_SHAPED)
    output, markdown = tmp_path / "r.json", tmp_path / "r.md"
    extra = ("--allow-shape-mismatch", "--markdown", str(markdown))
    code, out, err = run(capsys, *fields(schema, expected, predicted, output, *extra))
    assert code == 0
    report = read(output)
    assert report["overall"]["documents"] == 1
    assert [document["id"] for document in report["documents"]] == ["c1"]
    invalid = report["invalid_expected"]
    assert invalid["documents"] == 2
    assert [
        (e["id"], e["line"], e["path"], e["schema"], e["found"]) for e in invalid["examples"]
    ] == [
        ("c2", "line 2", "$.jurisdiction", "a single value", "a list"),
        ("c3", "line 3", "$.parties", "a list", "a single value (str)"),
    ]
    assert "documents: 1;" in out
    assert (
        "docevals: warning: 2 documents left out of the figures: ground truth of the wrong "
        f"shape (first: {expected}, line 2, document 'c2' at $.jurisdiction"
    ) in err
    text = markdown.read_text(encoding="utf-8")
    assert "Ground truth that contradicts the schema" in text
    assert "| c3 |" in text


def test_a_prediction_of_the_wrong_shape_stays_a_model_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, schema: Path
) -> None:
    expected = write_jsonl(tmp_path / "gt.jsonl", GOOD_EXPECTED[:1])
    predicted = write_jsonl(
        tmp_path / "pred.jsonl",
        [{"id": "c1", "data": {"jurisdiction": ["Delaware"], "total": "RM7.42"}}],
    )
    output = tmp_path / "r.json"
    code, _, _ = run(capsys, *fields(schema, expected, predicted, output))
    assert code == 0
    rows = {row["path"]: row for row in read(output)["documents"][0]["rows"]}
    assert rows["$.jurisdiction"]["outcome"] == "FD"
    assert rows["$.jurisdiction"]["reason"].startswith("Wrong type")


@pytest.mark.parametrize(
    ("option", "value"), [("--list-pairing", "loose"), ("--discovered", "maybe")]
)
def test_unknown_rule_values_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, schema: Path, option: str, value: str
) -> None:
    expected, predicted = contracts(tmp_path, GOOD_EXPECTED)
    with pytest.raises(SystemExit) as raised:
        run(capsys, *fields(schema, expected, predicted, tmp_path / "r.json", option, value))
    assert raised.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
