"""Reading field-comparison inputs (JSON Lines files, folders) and pairing them by id."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.fields import inputs as inputs_module
from docevals_mlflow.fields.batch import DocumentPair, compare_documents
from docevals_mlflow.fields.inputs import (
    RECORD_KEYS,
    DocumentRecord,
    pair_records,
    read_records,
)

# --------------------------------------------------------------------------- helpers


def write_jsonl(path: Path, *lines: Any) -> Path:
    """One line per item: dicts as JSON, strings verbatim (for malformed lines)."""
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def write_folder(folder: Path, files: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        text = content if isinstance(content, str) else json.dumps(content)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def error_of(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        list(read_records(path))
    return caught.value


# --------------------------------------------------------------------------- JSON Lines


def test_jsonl_records_with_every_key(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "pred.jsonl",
        {
            "id": "inv-1",
            "class": "Invoice",
            "data": {"total": 3},
            "confidence": {"total": 0.9},
            "explainability_info": [{"total": {"confidence": 0.8}}],
        },
        {"id": "inv-2", "data": {"total": 4}},
    )
    first, second = read_records(path)
    assert first == DocumentRecord(
        id="inv-1",
        document_class="Invoice",
        data={"total": 3},
        confidence={"total": 0.9},
        explainability_info=[{"total": {"confidence": 0.8}}],
        source=str(path),
        line=1,
    )
    assert first.place == "line 1"
    assert (second.id, second.document_class, second.confidence, second.line) == (
        "inv-2",
        None,
        None,
        2,
    )


def test_jsonl_numeric_ids_become_strings_and_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "gt.jsonl"
    path.write_bytes(
        b'\xef\xbb\xbf{"id": 7, "data": {"a": 1}}\r\n'
        b"\n"
        b"   \n"
        b'{"id": "8", "data": null}\n'
        b'{"id": 9, "data": [1, 2]}'  # no final newline
    )
    records = list(read_records(path))
    assert [(r.id, r.data, r.line) for r in records] == [
        ("7", {"a": 1}, 1),
        ("8", None, 4),
        ("9", [1, 2], 5),
    ]


def test_read_records_streams_one_record_at_a_time(tmp_path: Path) -> None:
    # Line 3 is broken: the first two records still arrive before the error, so
    # nothing reads the whole file ahead of the consumer.
    path = write_jsonl(
        tmp_path / "big.jsonl",
        {"id": 1, "data": {}},
        {"id": 2, "data": {}},
        "{broken",
    )
    records = read_records(path)
    assert isinstance(records, Iterator)
    assert next(records).id == "1"
    assert next(records).id == "2"
    with pytest.raises(InputError, match="line 3"):
        next(records)


def test_malformed_json_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", {"id": 1, "data": {}}, '{"id": 2, "data": ')
    error = error_of(path)
    assert error.source == str(path)
    assert error.record == "line 2"
    assert str(error).startswith(f"{path}, record line 2: malformed JSON at column 19")
    assert "one JSON object per line" in str(error)
    assert error.__cause__ is None  # no JSONDecodeError chained into tracebacks


def test_non_finite_numbers_are_rejected(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", '{"id": 1, "data": {"a": NaN}}')
    assert "NaN is not valid JSON" in str(error_of(path))


def test_invalid_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"id": 1, "data": "\xff"}\n')
    error = error_of(path)
    assert error.record == "line 1"
    assert "not valid UTF-8" in str(error)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2]", "a record must be a JSON object, got an array"),
        ('"text"', "a record must be a JSON object, got a string"),
        ("null", "a record must be a JSON object, got null"),
    ],
)
def test_line_that_is_not_an_object(tmp_path: Path, line: str, message: str) -> None:
    error = error_of(write_jsonl(tmp_path / "p.jsonl", line))
    assert error.record == "line 1"
    assert message in str(error)


def test_missing_data(tmp_path: Path) -> None:
    error = error_of(write_jsonl(tmp_path / "p.jsonl", {"id": 1, "data": {}}, {"id": 2}))
    assert error.record == "line 2"
    assert "record has no 'data'" in str(error)


def test_missing_id(tmp_path: Path) -> None:
    error = error_of(write_jsonl(tmp_path / "p.jsonl", {"data": {}}))
    assert "record has no 'id'" in str(error)


def test_unknown_keys_list_the_allowed_ones(tmp_path: Path) -> None:
    # A bare document on a line (no "data" wrapper) is the usual way to get here.
    error = error_of(write_jsonl(tmp_path / "p.jsonl", {"id": 1, "vendor": "A", "total": 3}))
    assert error.record == "line 1"
    assert "unknown record key(s) 'total', 'vendor'" in str(error)
    assert "expected only id, class, data, confidence, explainability_info" in str(error)
    assert RECORD_KEYS == ("id", "class", "data", "confidence", "explainability_info")


@pytest.mark.parametrize("bad_id", [1.5, True, "", None, [1]])
def test_invalid_ids(tmp_path: Path, bad_id: Any) -> None:
    error = error_of(write_jsonl(tmp_path / "p.jsonl", {"id": bad_id, "data": {}}))
    assert f"invalid id {bad_id!r}" in str(error)
    assert "a non-empty string or an integer" in str(error)


def test_invalid_class_and_confidence(tmp_path: Path) -> None:
    error = error_of(write_jsonl(tmp_path / "p.jsonl", {"id": 1, "class": 3, "data": {}}))
    assert "invalid class 3" in str(error)
    error = error_of(write_jsonl(tmp_path / "q.jsonl", {"id": 1, "data": {}, "confidence": [1]}))
    assert "invalid confidence [1]" in str(error)


def test_confidence_values_are_checked_with_their_line(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "p.jsonl",
        {"id": 1, "data": {"a": "x"}},
        {"id": 2, "data": {"a": "x"}, "confidence": {"a": "high"}},
    )
    error = error_of(path)
    assert (error.source, error.record, error.path) == (str(path), "line 2", "$.a")
    assert "confidence must be a number, got 'high'" in str(error)


def test_duplicate_ids_in_jsonl_name_both_lines(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "p.jsonl",
        {"id": 1, "data": {}},
        {"id": "2", "data": {}},
        "",
        {"id": "1", "data": {}},  # the number 1 and the string "1" are the same id
    )
    error = error_of(path)
    assert error.record == "line 4"
    assert "duplicate id '1' (line 1 and line 4)" in str(error)


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(InputFileNotFoundError) as caught:
        read_records(tmp_path / "nope.jsonl")  # raised at once, before iterating
    assert isinstance(caught.value, FileNotFoundError)
    assert str(caught.value) == f"{tmp_path / 'nope.jsonl'}: input not found"


# --------------------------------------------------------------------------- folders


def test_folder_of_bare_data_and_records(tmp_path: Path) -> None:
    folder = write_folder(
        tmp_path / "gt",
        {
            "b.json": {"class": "Invoice", "data": {"total": 3}, "confidence": {"total": 1}},
            "a.json": {"vendor": "Acme"},
            # "data" next to a key that is no record key: this is a document's data.
            "c.json": {"data": "x", "vendor": "C"},
            "d.json": {"id": "d", "data": {"v": 1}},
            "e.json": "null",
            "notes.txt": "ignored",
            "._a.json": "\x00\x01 macOS resource fork",
        },
    )
    (folder / "nested").mkdir()
    (folder / "nested" / "z.json").write_text("{}", encoding="utf-8")
    records = list(read_records(folder))
    assert [(r.id, r.document_class, r.data) for r in records] == [
        ("a", None, {"vendor": "Acme"}),
        ("b", "Invoice", {"total": 3}),
        ("c", None, {"data": "x", "vendor": "C"}),
        ("d", None, {"v": 1}),
        ("e", None, None),
    ]
    assert records[1].confidence == {"total": 1}
    assert records[1].source == str(folder / "b.json")
    assert records[1].line is None
    assert records[1].place == "b.json"


def test_folder_numeric_file_names_pair_with_numeric_ids(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "gt", {"12.json": {"id": 12, "data": {}}})
    assert [r.id for r in read_records(folder)] == ["12"]


def test_folder_record_id_must_match_the_file_name(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "gt", {"a.json": {"id": "b", "data": {}}})
    error = error_of(folder)
    assert (error.source, error.record) == (str(folder), "a.json")
    assert "record id 'b' differs from the file name's id 'a'" in str(error)


def test_folder_malformed_file_names_line_and_column(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "gt", {"a.json": '{\n  "x": 1,\n}'})
    error = error_of(folder)
    assert str(error).startswith(f"{folder}, record a.json: malformed JSON at line 3, column 1")


def test_folder_without_json_files(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "gt", {"a.txt": "x"})
    error = error_of(folder)
    assert error.source == str(folder)
    assert "folder has no .json files" in str(error)


def test_folder_duplicate_ids_name_both_files(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "gt", {"a.json": {}, "a.JSON": {}})
    error = error_of(folder)
    assert "duplicate id 'a' (a.JSON and a.json)" in str(error)


# --------------------------------------------------------------------------- pairing


def test_pairing_jsonl_with_folder_reports_unpaired_ids_on_both_sides(
    tmp_path: Path, pairing_mode: str
) -> None:
    expected = write_jsonl(
        tmp_path / "gt.jsonl",
        {"id": "a", "class": "Invoice", "data": {"v": 1}, "confidence": {"v": 0.1}},
        {"id": "gone", "data": {"v": 2}},
        {"id": 3, "data": {"v": 3}},
        {"id": "b", "data": {"v": 4}},
    )
    predicted = write_folder(
        tmp_path / "pred",
        {
            "b.json": {"class": "Receipt", "data": {"v": 40}},
            "3.json": {"v": 30},
            "a.json": {"class": "Receipt", "data": {"v": 10}, "confidence": {"v": 0.7}},
            "extra.json": {"v": 0},
        },
    )
    pairs, expected_only, predicted_only = pair_records(expected, predicted)
    # Complete as soon as pair_records returns, before any pair is read.
    assert expected_only == ["gone"]
    assert predicted_only == ["extra"]
    assert isinstance(pairs, Iterator)
    assert list(pairs) == [
        # Class conflict: the expected record's class wins; confidence is the prediction's.
        DocumentPair("a", {"v": 1}, {"v": 10}, "Invoice", {"v": 0.7}, None),
        DocumentPair("3", {"v": 3}, {"v": 30}, None, None, None),
        # No expected class: the predicted one is used.
        DocumentPair("b", {"v": 4}, {"v": 40}, "Receipt", None, None),
    ]


def test_pairing_jsonl_reads_predictions_by_offset_in_any_order(
    tmp_path: Path, pairing_mode: str
) -> None:
    expected = write_folder(tmp_path / "gt", {f"{n}.json": {"n": n} for n in range(5)})
    predicted = tmp_path / "pred.jsonl"
    # Out of order, with a BOM, blank lines and a multi-byte character to shift offsets.
    predicted.write_bytes(
        b"\xef\xbb\xbf"
        + b"\n".join(
            json.dumps({"id": n, "data": {"n": n, "s": "é" * n}}).encode() for n in (4, 2, 0)
        )
        + b"\n\n"
        + json.dumps({"id": 99, "data": {}}).encode()
        + b"\n"
    )
    result = pair_records(expected, predicted)
    assert result.expected_only == ["1", "3"]
    assert result.predicted_only == ["99"]
    assert [(pair.id, pair.predicted) for pair in result.pairs] == [
        ("0", {"n": 0, "s": ""}),
        ("2", {"n": 2, "s": "éé"}),
        ("4", {"n": 4, "s": "éééé"}),
    ]


def test_pairing_reports_bad_input_before_any_pair(tmp_path: Path, pairing_mode: str) -> None:
    expected = write_jsonl(tmp_path / "gt.jsonl", {"id": 1, "data": {}}, {"id": 1, "data": {}})
    predicted = write_jsonl(tmp_path / "pred.jsonl", {"id": 1, "data": {}})
    with pytest.raises(InputError, match=r"duplicate id '1' \(line 1 and line 2\)"):
        pair_records(expected, predicted)
    bad_prediction = write_jsonl(tmp_path / "bad.jsonl", {"id": 1, "data": {}}, "[]")
    with pytest.raises(InputError, match=r"bad\.jsonl, record line 2"):
        pair_records(write_jsonl(tmp_path / "ok.jsonl", {"id": 1, "data": {}}), bad_prediction)


def test_pairing_names_the_missing_side(tmp_path: Path) -> None:
    present = write_jsonl(tmp_path / "x.jsonl", {"id": 1, "data": {}})
    with pytest.raises(InputFileNotFoundError, match="expected input not found"):
        pair_records(tmp_path / "none", present)
    with pytest.raises(InputFileNotFoundError, match="predicted input not found"):
        pair_records(present, tmp_path / "none")


def test_pairing_detects_a_prediction_file_changed_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs_module, "KEEP_PARSED_BYTES", 0)  # read again by offset
    expected = write_jsonl(tmp_path / "gt.jsonl", {"id": 1, "data": {}}, {"id": 2, "data": {}})
    predicted = write_jsonl(tmp_path / "pred.jsonl", {"id": 1, "data": {}}, {"id": 2, "data": {}})
    pairs, _, _ = pair_records(expected, predicted)
    write_jsonl(predicted, {"id": 2, "data": {}}, {"id": 1, "data": {}})
    with pytest.raises(InputError, match="changed while it was being read"):
        list(pairs)


def test_small_inputs_are_parsed_once_and_unaffected_by_later_changes(tmp_path: Path) -> None:
    expected = write_jsonl(tmp_path / "gt.jsonl", {"id": 1, "data": {"v": 1}})
    predicted = write_jsonl(tmp_path / "pred.jsonl", {"id": 1, "data": {"v": 2}})
    pairs, _, _ = pair_records(expected, predicted)
    # The records were kept when indexed: the pairs are what was indexed and checked.
    write_jsonl(predicted, {"id": 1, "data": {"v": 99}})
    assert [pair.predicted for pair in pairs] == [{"v": 2}]


def test_pairs_feed_compare_documents(tmp_path: Path) -> None:
    expected = write_jsonl(
        tmp_path / "gt.jsonl",
        {"id": 1, "data": {"vendor": "Acme", "total": 3}},
        {"id": 2, "data": {"vendor": "Beta"}},
    )
    predicted = write_jsonl(
        tmp_path / "pred.jsonl",
        {"id": 2, "data": {"vendor": "Beta"}},
        {"id": 1, "data": {"vendor": "Acme", "total": 4}, "confidence": {"vendor": 0.5}},
    )
    pairs, expected_only, predicted_only = pair_records(expected, predicted)
    batch = compare_documents(pairs, expected_only=expected_only, predicted_only=predicted_only)
    report = batch.to_report()
    assert report["overall"]["documents"] == 2
    assert report["overall"]["counts"] == {"tp": 2, "fa": 0, "fd": 1, "fn": 0, "tn": 0}
    confidences = {row["path"]: row["confidence"] for row in report["documents"][0]["rows"]}
    assert confidences == {"$.vendor": 0.5, "$.total": None}
