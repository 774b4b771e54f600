"""Packet forms and validation: every accepted form reads the same, and every invalid
packet is refused with an error that says which section and where."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from docevals_mlflow.errors import InputError
from docevals_mlflow.split.models import UNKNOWN_CLASS, SplitPacket, SplitSection
from docevals_mlflow.split.packet_forms import packet_from_data

SECTIONS = [
    {"section_id": "s1", "document_class": "Invoice", "page_indices": [0, 1]},
    {"section_id": "s2", "document_class": "W2", "page_indices": [2]},
]


def shape(packet: SplitPacket) -> list[tuple[str, str, tuple[int, ...]]]:
    return [(s.section_id, s.document_class, s.page_indices) for s in packet.sections]


def error_of(data: Any, **options: Any) -> InputError:
    with pytest.raises(InputError) as caught:
        packet_from_data(data, **options)
    return caught.value


# --------------------------------------------------------------------------- forms


def test_sections_object_and_bare_list_read_the_same():
    assert shape(packet_from_data({"sections": SECTIONS})) == shape(packet_from_data(SECTIONS))
    assert shape(packet_from_data(SECTIONS)) == [
        ("s1", "Invoice", (0, 1)),
        ("s2", "W2", (2,)),
    ]


def test_accelerator_nested_form():
    nested = [
        {
            "section_id": "1",
            "document_class": {"type": "Invoice"},
            "split_document": {"page_indices": [0, 1]},
            "attributes": {"ignored": True},
        }
    ]
    assert shape(packet_from_data(nested)) == [("1", "Invoice", (0, 1))]


def test_missing_ids_get_the_seed_defaults_per_side():
    sections = [
        {"document_class": "A", "page_indices": [0]},
        {"document_class": "B", "page_indices": [1]},
    ]
    assert [s.section_id for s in packet_from_data(sections).sections] == ["gt_0", "gt_1"]
    predicted = packet_from_data(sections, side="predicted")
    assert [s.section_id for s in predicted.sections] == ["pred_0", "pred_1"]


def test_integer_ids_become_text_and_null_class_is_unknown():
    packet = packet_from_data([{"section_id": 7, "document_class": None, "page_indices": [0]}])
    assert shape(packet) == [("7", UNKNOWN_CLASS, (0,))]
    packet = packet_from_data([{"section_id": "a", "document_class": "", "page_indices": [0]}])
    assert packet.sections[0].document_class == UNKNOWN_CLASS


def test_per_page_class_names_make_runs_of_sections():
    packet = packet_from_data({"pages": ["Invoice", "Invoice", "W2", None, None, "Invoice"]})
    assert shape(packet) == [
        ("gt_0", "Invoice", (0, 1)),
        ("gt_1", "W2", (2,)),
        ("gt_2", UNKNOWN_CLASS, (3, 4)),
        ("gt_3", "Invoice", (5,)),
    ]


def test_per_page_objects_with_section_ids_keep_list_order():
    pages = [
        {"page_index": 4, "document_class": "W2", "section_id": "b"},
        {"page_index": 1, "document_class": "Invoice", "section_id": "a"},
        {"page_index": 3, "document_class": "W2", "section_id": "b"},
        {"page_index": 0, "document_class": "Invoice", "section_id": "a"},
    ]
    assert shape(packet_from_data(pages)) == [("b", "W2", (4, 3)), ("a", "Invoice", (1, 0))]


def test_per_page_objects_without_indices_use_positions():
    pages = [{"document_class": "A"}, {"document_class": "A"}, {"document_class": {"type": "B"}}]
    assert shape(packet_from_data({"pages": pages}, side="predicted")) == [
        ("pred_0", "A", (0, 1)),
        ("pred_1", "B", (2,)),
    ]


def test_numpy_integers_are_page_indices():
    packet = packet_from_data(
        [{"section_id": "a", "document_class": "A", "page_indices": np.arange(3)}]
    )
    assert packet.sections[0].page_indices == (0, 1, 2)
    assert all(type(page) is int for page in packet.sections[0].page_indices)


def test_packet_id_comes_from_argument_then_data_then_default():
    assert packet_from_data({"id": "p9", "sections": []}).id == "p9"
    assert packet_from_data({"id": 3, "sections": []}).id == "3"
    assert packet_from_data({"sections": []}).id == "packet"
    assert packet_from_data({"id": "p9", "sections": []}, packet_id="x").id == "x"


def test_empty_sections_are_legal_with_a_warning():
    packet = packet_from_data([{"section_id": "a", "document_class": "A", "page_indices": []}])
    assert packet.warnings() == ["section 'a' has no pages"]


def test_models_validate_when_built_directly():
    with pytest.raises(InputError, match="negative page index -1 in section 'a'"):
        SplitSection(section_id="a", document_class="A", page_indices=(0, -1))
    section = SplitSection(section_id="a", document_class="A", page_indices=(0, 1))
    other = SplitSection(section_id="b", document_class="A", page_indices=(1,))
    with pytest.raises(InputError) as caught:
        SplitPacket(id="p", sections=(section, other))
    assert "page 1 is in sections 'a' and 'b'" in str(caught.value)
    assert caught.value.path == "sections[1].page_indices[0]"


# --------------------------------------------------------------------------- errors


def test_negative_page_names_section_and_place():
    error = error_of(
        {
            "id": "p1",
            "sections": [{"section_id": "s1", "document_class": "A", "page_indices": [0, -2]}],
        },
        side="predicted",
    )
    assert error.path == "sections[0].page_indices[1]"
    assert error.record == "p1"
    assert error.source == "predicted input"
    assert "negative page index -2" in str(error)


def test_duplicate_page_in_a_section():
    error = error_of([{"section_id": "s1", "document_class": "A", "page_indices": [3, 4, 3]}])
    assert "page 3 appears twice in section 's1' (positions 0 and 2)" in error.message
    assert error.path == "[0].page_indices[2]"


def test_overlapping_sections_name_both():
    error = error_of(
        {
            "sections": [
                *SECTIONS,
                {"section_id": "s3", "document_class": "A", "page_indices": [5, 2]},
            ]
        }
    )
    assert error.message == "page 2 is in sections 's2' and 's3'"
    assert error.path == "sections[2].page_indices[1]"
    assert error.expected == "each page in one section only"


def test_repeated_section_id():
    error = error_of({"sections": [SECTIONS[0], {**SECTIONS[1], "section_id": "s1"}]})
    assert "section id 's1' is used twice (sections[0] and sections[1])" in error.message
    assert error.path == "sections[1].section_id"


@pytest.mark.parametrize(
    ("section", "path", "fragment"),
    [
        (
            {"section_id": "a", "document_class": "A", "page_indices": ["1"]},
            "page_indices[0]",
            "not an integer",
        ),
        (
            {"section_id": "a", "document_class": "A", "page_indices": [1.0]},
            "page_indices[0]",
            "not an integer",
        ),
        (
            {"section_id": "a", "document_class": "A", "page_indices": [True]},
            "page_indices[0]",
            "not an integer",
        ),
        (
            {"section_id": "a", "document_class": "A", "page_indices": "0,1"},
            "page_indices",
            "must be a list",
        ),
        ({"section_id": "a", "page_indices": [0]}, "", "no 'document_class'"),
        (
            {"section_id": "a", "document_class": 3, "page_indices": [0]},
            "document_class",
            "invalid document_class",
        ),
        (
            {"section_id": "a", "document_class": {"type": 1}, "page_indices": [0]},
            "document_class.type",
            "invalid",
        ),
        (
            {"section_id": "", "document_class": "A", "page_indices": [0]},
            "section_id",
            "invalid section_id",
        ),
        (
            {"section_id": "a", "document_class": "A", "split_document": {"page_indices": [-1]}},
            "split_document.page_indices[0]",
            "negative",
        ),
    ],
)
def test_invalid_section_fields(section, path, fragment):
    error = error_of({"sections": [section]})
    assert error.path == "sections[0]" + (f".{path}" if path else "")
    assert fragment in error.message


def test_section_without_pages_key():
    error = error_of({"sections": [{"section_id": "a", "document_class": "A"}]})
    assert "no 'page_indices'" in error.message
    assert error.path == "sections[0]"
    # In a bare list the same object is a page of the per-page form.
    assert shape(packet_from_data([{"section_id": "a", "document_class": "A"}])) == [
        ("a", "A", (0,))
    ]


def test_packet_object_needs_one_list():
    assert (
        "exactly one of 'sections' and 'pages'" in error_of({"sections": [], "pages": []}).message
    )
    assert "exactly one" in error_of({"id": "x"}).message
    assert "must be a list" in error_of({"sections": {"a": 1}}).message
    assert "must be an object or a list" in error_of("Invoice").message
    assert "a section must be an object" in error_of({"sections": [SECTIONS[0], 5]}).message


def test_per_page_errors():
    assert error_of({"pages": ["A", {"document_class": "A"}]}).path == "pages[1]"
    assert error_of({"pages": ["A", 3]}).path == "pages[1]"
    error = error_of(
        {
            "pages": [
                {"page_index": 0, "document_class": "A"},
                {"page_index": 0, "document_class": "A"},
            ]
        }
    )
    assert "page 0 is listed twice (pages[0] and pages[1])" in error.message
    error = error_of({"pages": [{"page_index": 0, "document_class": "A"}, {"document_class": "A"}]})
    assert "page_index is given for some pages" in error.message
    error = error_of(
        {
            "pages": [
                {"document_class": "A", "section_id": "s"},
                {"document_class": "B", "section_id": "s"},
            ]
        }
    )
    assert "section 's' has pages of class 'A' (pages[0]) and 'B'" in error.message
    assert error.path == "pages[1].document_class"
    assert "negative" in error_of({"pages": [{"page_index": -1, "document_class": "A"}]}).message


def test_error_text_is_one_line_with_all_context():
    error = error_of(
        {"sections": [{"section_id": "s1", "document_class": "A", "page_indices": [1, 1]}]},
        side="expected",
        packet_id="doc-7",
        source="gt/doc-7.json",
    )
    text = str(error)
    assert "\n" not in text
    assert text.startswith(
        "gt/doc-7.json, record doc-7, at sections[0].page_indices[1]: page 1 appears twice"
    )
