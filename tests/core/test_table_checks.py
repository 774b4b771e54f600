"""Ground-truth tables (CSV/TSV) that would have been read wrongly are refused as they
are read, naming the file and line, instead of failing later inside a metric (where
the run ended "uncertain" with exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docevals_mlflow.core.artifacts import artifact_from_path, check_path_table, load_table_file
from docevals_mlflow.errors import InputError
from tests.helpers import assert_one_line_error, run, write_json


def table(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        artifact_from_path(path, authority="ground_truth")
    return caught.value


def test_the_same_path_twice_names_both_lines(tmp_path: Path) -> None:
    path = table(tmp_path, "gt.csv", "path,expected\n$.total,12\n$.vendor,ACME\n$.total,13\n")
    error = load_error(path)
    assert str(error) == (
        f"{path}, record line 4, at $.total: duplicate path $.total (first given in line 2) "
        "(expected each path once per table)"
    )


def test_two_spellings_of_one_path_are_the_same_path(tmp_path: Path) -> None:
    path = table(tmp_path, "gt.tsv", "field_path\tvalue\n$.items[0].code\tA\nitems[0].code\tB\n")
    assert "duplicate path $.items[0].code (first given in line 2)" in str(load_error(path))


def test_line_numbers_count_quoted_cells_over_several_lines(tmp_path: Path) -> None:
    path = table(tmp_path, "gt.csv", 'path,expected\n$.note,"one\ntwo"\n$.note,x\n')
    error = load_error(path)
    assert error.record == "line 4"
    assert "first given in line 2" in str(error)


def test_an_invalid_path_names_its_line(tmp_path: Path) -> None:
    path = table(tmp_path, "gt.csv", "path,expected\n$.a,1\n$[oops,2\n")
    error = load_error(path)
    assert error.record == "line 3"
    assert "invalid field path" in str(error)


def test_a_tsv_separated_by_commas(tmp_path: Path) -> None:
    path = table(tmp_path, "gt.tsv", "path,expected\n$.total,12\n")
    assert str(load_error(path)) == (
        f"{path}, record line 1: the header is one column 'path,expected', separated by "
        "commas (expected columns separated by tabs in a .tsv file)"
    )


@pytest.mark.parametrize(
    ("header", "name"), [("path\texpected", "tabs"), ("path;expected", "semicolons")]
)
def test_a_csv_separated_by_something_else(tmp_path: Path, header: str, name: str) -> None:
    path = table(tmp_path, "gt.csv", f"{header}\n$.total\t12\n")
    error = load_error(path)
    assert f"separated by {name} (expected columns separated by commas in a .csv file)" in str(
        error
    )


def test_a_header_without_rows(tmp_path: Path) -> None:
    path = table(tmp_path, "gt.csv", "path,expected\n\n")
    assert str(load_error(path)) == (
        f"{path}: the table has a header but no rows (expected one row per value)"
    )
    with pytest.raises(InputError, match="a header but no rows"):
        load_table_file(path)


def test_a_one_column_table_without_other_separators_is_fine(tmp_path: Path) -> None:
    path = table(tmp_path, "notes.csv", "note\nfirst\nsecond\n")
    assert artifact_from_path(path, authority="evidence").content == [
        {"note": "first"},
        {"note": "second"},
    ]


def test_check_path_table_on_rows() -> None:
    rows = [{"path": "$.a", "expected": 1}, {"path": "a", "expected": 2}]
    with pytest.raises(
        InputError, match=r"duplicate path \$\.a \(first given in row 1\)"
    ) as caught:
        check_path_table(rows, source="inline://gt")
    assert caught.value.record == "row 2"
    check_path_table(rows[:1], source="inline://gt")


@pytest.mark.parametrize(
    ("name", "text", "fragments"),
    [
        ("gt.csv", "path,expected\n$.total,12\n$.total,13\n", ("record line 3", "duplicate path")),
        ("gt.tsv", "path,expected\n$.total,12\n", ("record line 1", "separated by commas")),
        ("gt.csv", "path,expected\n", ("a header but no rows",)),
        ("gt.json", "", ("the file is empty",)),
        ("gt.json", '{"total": 12, "total": 13}', ("at $.total", "duplicate key 'total'")),
    ],
)
def test_evaluate_case_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    name: str,
    text: str,
    fragments: tuple[str, ...],
) -> None:
    truth = table(tmp_path, name, text)
    prediction = write_json(tmp_path / "prediction.json", {"total": 12})
    code, _, err = run(
        capsys,
        "evaluate-case",
        "--prediction",
        prediction,
        "--ground-truth",
        truth,
        "--output",
        tmp_path / "report.json",
        "--judge",
        "none",
        "--no-mlflow",
    )
    assert code == 2
    assert_one_line_error(err, str(truth), *fragments)
    assert not (tmp_path / "report.json").exists()
