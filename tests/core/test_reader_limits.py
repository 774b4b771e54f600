"""The shared limits hold in every reader of user files, not only for documents:
schemas, pipelines, review and approved files, packets and cases."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.core.values import values_equal
from docevals_mlflow.errors import InputError
from docevals_mlflow.evaluation.config import load_pipeline_config
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.groundtruth.approval import load_approved_ground_truth
from docevals_mlflow.groundtruth.review import load_review
from docevals_mlflow.split.inputs import read_packets
from tests.helpers import assert_one_line_error, needs_fifo, run


def error_of(call: Callable[[], object]) -> InputError:
    with pytest.raises(InputError) as caught:
        call()
    return caught.value


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


ALIAS_BOMB = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))


# ----------------------------------------------------------------- schemas


def test_schema_with_a_repeated_field_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path / "schema.json",
        '{"classes": [{"name": "Doc", "fields": {\n'
        '  "total": {"method": "EXACT"},\n'
        '  "total": {"method": "FUZZY"}}}]}',
    )
    error = error_of(lambda: DocumentSchema.load(path))
    assert error.path == "$.classes[0].fields.total"
    assert "duplicate key 'total' at line 3, column 3" in str(error)


def test_yaml_schema_with_a_repeated_field_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path / "schema.yaml",
        "classes:\n- name: Doc\n  fields:\n"
        "    total: {method: EXACT}\n    total: {method: FUZZY}\n",
    )
    assert "duplicate key 'total' at line 5, column 5" in str(
        error_of(lambda: DocumentSchema.load(path))
    )


def test_yaml_schema_alias_bomb(tmp_path: Path, deadline: None) -> None:
    path = write(tmp_path / "schema.yaml", "l0: &l0 [a, b, c]\n" + ALIAS_BOMB)
    assert "aliases repeat more than 10,000 nodes" in str(
        error_of(lambda: DocumentSchema.load(path))
    )


# ----------------------------------------------------------------- pipelines


def test_pipeline_alias_bomb(tmp_path: Path, deadline: None) -> None:
    path = write(tmp_path / "pipeline.yaml", "pipeline_id: p\nl0: &l0 [a, b, c]\n" + ALIAS_BOMB)
    error = error_of(lambda: load_pipeline_config(path))
    assert error.source == str(path)
    assert "aliases repeat more than 10,000 nodes" in error.message


def test_pipeline_deep_nesting(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pipeline.json", '{"pipeline_id": "p", "x": ' + "[" * 5000 + "]" * 5000 + "}"
    )
    error = error_of(lambda: load_pipeline_config(path))
    assert "nesting deeper than 1,000 levels at line 1, column" in error.message


def test_pipeline_repeated_key(tmp_path: Path) -> None:
    path = write(tmp_path / "pipeline.yaml", "pipeline_id: p\nstages: []\nstages: []\n")
    error = error_of(lambda: load_pipeline_config(path))
    assert "duplicate key 'stages' at line 3, column 1" in error.message


def test_evaluate_pipeline_exits_2_on_an_alias_bomb(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, deadline: None
) -> None:
    path = write(tmp_path / "pipeline.yaml", "pipeline_id: p\nl0: &l0 [a, b, c]\n" + ALIAS_BOMB)
    code, _, err = run(
        capsys, "evaluate-pipeline", path, "--output", tmp_path / "r.json",
        "--judge", "none", "--no-mlflow",
    )  # fmt: skip
    assert code == 2
    assert_one_line_error(err, str(path), "aliases repeat more than 10,000 nodes", "line ")


# ----------------------------------------------------------------- review and approved files


def test_review_file_with_a_repeated_key(tmp_path: Path) -> None:
    path = write(tmp_path / "review.json", '{"case_id": "c", "case_id": "d"}')
    error = error_of(lambda: load_review(path))
    assert error.path == "$.case_id"
    assert "duplicate key 'case_id' at line 1, column 18" in str(error)


@needs_fifo
def test_review_and_approved_files_that_are_named_pipes(tmp_path: Path, deadline: None) -> None:
    pipe = tmp_path / "review.json"
    os.mkfifo(pipe)
    assert str(error_of(lambda: load_review(pipe))) == f"{pipe}: this is a named pipe, not a file"
    error = error_of(lambda: load_approved_ground_truth(pipe, None, require_signature=False))
    assert str(error) == f"{pipe}: this is a named pipe, not a file"


# ----------------------------------------------------------------- packets (docevals split)


def test_packets_file_of_blank_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "packets.jsonl", "\n \n")
    error = error_of(lambda: read_packets(path))
    assert str(error) == (
        f"{path}: no packets: the input is empty or holds only blank lines "
        "(expected at least one packet)"
    )


def test_packets_with_a_repeated_key(tmp_path: Path) -> None:
    path = write(
        tmp_path / "packets.jsonl", '{"id": "p", "pages": [], "pages": [{"class": "x"}]}\n'
    )
    error = error_of(lambda: read_packets(path))
    assert error.record == "line 1"
    assert error.path == "$.pages"


@needs_fifo
def test_packets_input_that_is_a_named_pipe(tmp_path: Path, deadline: None) -> None:
    pipe = tmp_path / "packets.jsonl"
    os.mkfifo(pipe)
    error = error_of(lambda: read_packets(pipe))
    assert str(error) == f"{pipe}: this is a named pipe, not a file or folder"


# ----------------------------------------------------------------- cases


def test_evaluate_case_refuses_a_prediction_with_repeated_keys(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    prediction = write(tmp_path / "prediction.json", '{"total": 12,\n "total": 13}')
    truth = write(tmp_path / "truth.json", '{"total": 12}')
    code, _, err = run(
        capsys, "evaluate-case", "--prediction", prediction, "--ground-truth", truth,
        "--output", tmp_path / "r.json", "--judge", "none", "--no-mlflow",
    )  # fmt: skip
    assert code == 2
    assert_one_line_error(
        err, f"{prediction}, at $.total: duplicate key 'total' at line 2, column 2"
    )


# ----------------------------------------------------------------- long integers


LONG = int("9" * 400)


@pytest.mark.parametrize(
    ("expected", "predicted", "equal"),
    [
        (LONG, LONG, True),
        (LONG, LONG - 1, False),
        (str(LONG), LONG, True),
        (LONG, 1.5, False),
        (LONG, "n/a", False),
    ],
)
def test_integers_no_float_holds_compare_exactly(
    expected: Any, predicted: Any, equal: bool
) -> None:
    # JSON keeps them exact; a float would have been inf (or an OverflowError).
    assert values_equal(expected, predicted) is equal


def test_evaluate_case_compares_a_400_digit_integer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    prediction = write(tmp_path / "prediction.json", f'{{"total": {LONG}}}')
    truth = write(tmp_path / "truth.csv", f"path,expected\n$.total,{LONG}\n")
    report = tmp_path / "r.json"
    code, _, err = run(
        capsys, "evaluate-case", "--prediction", prediction, "--ground-truth", truth,
        "--output", report, "--judge", "none", "--no-mlflow",
    )  # fmt: skip
    assert code == 0, err
    (metric,) = json.loads(report.read_text(encoding="utf-8"))["metric_results"]
    assert metric["verdict"] == "pass"
    assert metric["error"] is None
