"""Reading packets from folders, JSON Lines and JSON files, and pairing them by id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.split.inputs import pair_packets, read_packets

ONE = [{"section_id": "s", "document_class": "A", "page_indices": [0, 1]}]
TWO = [{"section_id": "t", "document_class": "B", "page_indices": [0]}]


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_folders_pair_by_file_stem(tmp_path):
    write(tmp_path / "gt" / "a.json", {"sections": ONE})
    write(tmp_path / "gt" / "b.json", {"sections": TWO})
    write(tmp_path / "gt" / "c.json", {"pages": ["A"]})
    write(tmp_path / "pred" / "b.json", {"id": "ignored", "sections": TWO})
    write(tmp_path / "pred" / "a.json", ONE)
    write(tmp_path / "pred" / "d.json", ONE)
    (tmp_path / "pred" / "._a.json").write_bytes(b"\x00\x01")  # macOS resource fork
    paired = pair_packets(tmp_path / "gt", tmp_path / "pred")
    assert [(left.id, right.id) for left, right in paired.pairs] == [("a", "a"), ("b", "b")]
    assert paired.expected_only == ["c"]
    assert paired.predicted_only == ["d"]


def test_json_lines_pair_by_id(tmp_path):
    expected = write_lines(
        tmp_path / "gt.jsonl",
        [{"id": "x", "sections": ONE}, {"id": 2, "pages": ["A", "B"]}],
    )
    (tmp_path / "pred.jsonl").write_text(
        "\n" + json.dumps({"id": "2", "sections": TWO}) + "\n\n", encoding="utf-8"
    )
    paired = pair_packets(expected, tmp_path / "pred.jsonl")
    assert [left.id for left, _ in paired.pairs] == ["2"]
    assert paired.expected_only == ["x"]


def test_two_single_packet_files_pair_whatever_their_names(tmp_path):
    paired = pair_packets(write(tmp_path / "gt.json", ONE), write(tmp_path / "pred.json", TWO))
    assert len(paired.pairs) == 1
    left, right = paired.pairs[0]
    assert left.id == right.id == "gt"


def test_a_json_list_of_packets(tmp_path):
    path = write(
        tmp_path / "many.json", [{"id": "a", "sections": ONE}, {"id": "b", "pages": ["A"]}]
    )
    assert [packet.id for packet in read_packets(path)] == ["a", "b"]
    # A list of packets is paired by id even against a single packet.
    paired = pair_packets(path, write(tmp_path / "a.json", {"id": "a", "sections": ONE}))
    assert [left.id for left, _ in paired.pairs] == ["a"]
    assert paired.expected_only == ["b"]


def test_duplicate_ids_name_both_places(tmp_path):
    path = write_lines(
        tmp_path / "gt.jsonl", [{"id": "x", "sections": ONE}, {"id": "x", "sections": TWO}]
    )
    with pytest.raises(InputError) as caught:
        read_packets(path)
    assert "duplicate packet id 'x' (line 1 and line 2)" in str(caught.value)


def test_invalid_packet_in_a_folder_names_the_file_and_place(tmp_path):
    write(
        tmp_path / "pred" / "p7.json",
        {"sections": [*ONE, {"section_id": "u", "document_class": "A", "page_indices": [1]}]},
    )
    with pytest.raises(InputError) as caught:
        read_packets(tmp_path / "pred", side="predicted")
    error = caught.value
    assert error.source == str(tmp_path / "pred" / "p7.json")
    assert error.record == "p7"
    assert error.path == "sections[1].page_indices[0]"
    assert "page 1 is in sections 's' and 'u'" in str(error)


def test_invalid_packet_in_json_lines_names_the_line(tmp_path):
    path = write_lines(
        tmp_path / "pred.jsonl",
        [
            {"id": "a", "sections": ONE},
            {
                "id": "b",
                "sections": [{"section_id": "s", "document_class": "A", "page_indices": [-3]}],
            },
        ],
    )
    with pytest.raises(InputError) as caught:
        read_packets(path, side="predicted")
    text = str(caught.value)
    assert text.startswith(
        f"{path}, record line 2 (b), at sections[0].page_indices[0]: negative page index -3"
    )


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"id": "a", "sections": [}\n', "malformed JSON at column 26"),
        ('["not", "a", "packet"]\n', "a line must be a packet object"),
        ('{"sections": []}\n', "invalid or missing packet id None"),
        ('{"id": "a", "sections": [], "x": NaN}\n', "NaN is not valid JSON"),
    ],
)
def test_bad_json_lines(tmp_path, content, fragment):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_packets(path)
    assert fragment in str(caught.value)
    assert caught.value.record == "line 1"


def test_json_lines_content_in_a_json_file_gets_a_hint(tmp_path):
    path = tmp_path / "packets.json"
    path.write_text('{"id": "a", "sections": []}\n{"id": "b", "sections": []}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"name the file \.jsonl"):
        read_packets(path)


def test_missing_inputs_and_empty_folders(tmp_path):
    with pytest.raises(InputFileNotFoundError, match="predicted input not found"):
        pair_packets(write(tmp_path / "gt.json", ONE), tmp_path / "nope.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"folder has no \.json files"):
        read_packets(tmp_path / "empty")
