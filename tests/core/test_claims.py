import json

import pytest

from docevals_mlflow.core.artifacts import artifact_from_path, artifact_from_value
from docevals_mlflow.core.claims import ExpectedClaim, reference_claims
from docevals_mlflow.errors import InputError


def test_json_reference_gives_one_claim_per_leaf(tmp_path):
    path = tmp_path / "gt.json"
    document = {"total": 10, "items": [{"code": "A"}, {"code": "B"}], "tags": [], "a.b": None}
    path.write_text(json.dumps(document), encoding="utf-8")
    ref = artifact_from_path(path, authority="ground_truth")
    assert reference_claims(ref) == [
        ExpectedClaim(("total",), 10, "gt", None),
        ExpectedClaim(("items", 0, "code"), "A", "gt", None),
        ExpectedClaim(("items", 1, "code"), "B", "gt", None),
        ExpectedClaim(("tags",), [], "gt", None),
        ExpectedClaim(("a.b",), None, "gt", None),
    ]


def test_csv_path_table_gives_one_claim_per_row(tmp_path):
    path = tmp_path / "fields.csv"
    path.write_text(
        "path,expected\n$.total,12.50\n\nitems[0].code,A\n$['a.b'],x\n", encoding="utf-8"
    )
    ref = artifact_from_path(path, authority="ground_truth", artifact_id="fields")
    claims = reference_claims(ref)
    assert claims == [
        ExpectedClaim(("total",), "12.50", "fields", 1),
        ExpectedClaim(("items", 0, "code"), "A", "fields", 2),
        ExpectedClaim(("a.b",), "x", "fields", 3),
    ]
    assert claims[0].row == 1
    assert claims[0].path == ("total",)


def test_inline_path_table_uses_preferred_columns():
    rows = [
        {"field_path": "$.a", "expected_value": 1, "value": "ignored"},
        {"path": "$.b", "field_path": "$.ignored", "value": None},
    ]
    ref = artifact_from_value(rows, authority="ground_truth", artifact_id="gt")
    assert reference_claims(ref) == [
        ExpectedClaim(("a",), 1, "gt", 1),
        ExpectedClaim(("b",), None, "gt", 2),
    ]


def test_ordinary_table_in_exact_mode_is_flattened(tmp_path):
    path = tmp_path / "lines.csv"
    path.write_text("name,amount\nA,1\n", encoding="utf-8")
    ref = artifact_from_path(path, authority="ground_truth", comparison_mode="exact")
    assert reference_claims(ref) == [
        ExpectedClaim((0, "name"), "A", "lines", None),
        ExpectedClaim((0, "amount"), "1", "lines", None),
    ]


def test_invalid_path_in_a_row_names_row_and_source(tmp_path):
    path = tmp_path / "fields.csv"
    path.write_text("path,expected\n$.a,1\n$[x],2\n", encoding="utf-8")
    # Refused as the table is read, naming the line (not later, inside a metric).
    with pytest.raises(InputError, match=r"invalid field path '\$\[x\]' \(column 3\)") as info:
        artifact_from_path(path, authority="ground_truth")
    assert info.value.record == "line 3"
    assert info.value.source == str(path)
    assert str(info.value).startswith(f"{path}, record line 3: ")


def test_non_ascii_digit_index_in_a_row_names_the_row():
    rows = [{"path": "$.a", "expected": 1}, {"path": "$[²]", "expected": 2}]
    ref = artifact_from_value(rows, authority="ground_truth", artifact_id="gt")
    with pytest.raises(InputError) as info:
        reference_claims(ref)
    assert info.value.record == "row 2"
    assert info.value.source == "inline://gt"


def test_duplicate_path_in_rows_is_rejected():
    rows = [
        {"path": "$.a", "expected": 1},
        {"path": "$.b", "expected": 2},
        {"path": "a", "expected": 3},
    ]
    ref = artifact_from_value(rows, authority="ground_truth", artifact_id="gt")
    with pytest.raises(InputError, match=r"duplicate path \$\.a \(first given in row 1\)") as info:
        reference_claims(ref)
    assert info.value.record == "row 3"
    assert info.value.source == "inline://gt"


def test_bracketed_and_dotted_paths_are_not_duplicates():
    rows = [{"path": "$['a.b']", "expected": 1}, {"path": "$.a.b", "expected": 2}]
    ref = artifact_from_value(rows, authority="ground_truth", artifact_id="gt")
    assert [claim.path for claim in reference_claims(ref)] == [("a.b",), ("a", "b")]
