"""Batches: micro figures pool counts, macro figures average packets; reports round-trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.errors import InputError
from docevals_mlflow.split.batch import evaluate_split_batch, summarize
from docevals_mlflow.split.evaluate import evaluate_packet, evaluate_packets, evaluate_split
from docevals_mlflow.split.packet_forms import packet_from_data
from docevals_mlflow.split.report import SplitReport
from tests.split.strategies import packet_pairs
from tests.split.test_boundaries import sections
from tests.split.test_properties import close
from tests.split.test_seed_metrics import EXPECTED, PREDICTED


def test_micro_and_macro_by_hand():
    # Packet 1: 6/8 pages, 2/3 and 1/3 sections. Packet 2 (perfect): 7/7, 3/3, 3/3.
    report = evaluate_split_batch([(EXPECTED, PREDICTED), (EXPECTED, EXPECTED)])
    pages = report.page_level_accuracy
    assert (pages.correct_pages, pages.total_pages) == (13, 15)
    assert pages.accuracy == pytest.approx(13 / 15)
    assert pages.macro_accuracy == pytest.approx((0.75 + 1.0) / 2)
    ordered = report.split_accuracy_with_order
    assert (ordered.correct_sections, ordered.total_sections) == (4, 6)
    assert ordered.macro_accuracy == pytest.approx((1 / 3 + 1) / 2)
    assert report.predicted_sections == 7
    assert report.unmatched_predicted_sections == 2
    assert report.matching.exact.tp == 5
    assert report.matching.macro_f1 == pytest.approx((4 / 7 + 1.0) / 2)
    assert report.boundaries.tp == 4
    assert report.graded.packets == 2
    assert report.graded.packet_score == pytest.approx(
        (report.packets[0].graded.packet_score + 1.0) / 2
    )
    assert [packet.id for packet in report.packets] == ["packet-1", "packet-2"]


def test_packet_ids_come_from_the_data_and_must_be_unique():
    report = evaluate_split_batch([({"id": "a", "sections": EXPECTED}, PREDICTED)])
    assert report.packets[0].id == "a"
    with pytest.raises(InputError, match="packet id 'a' is used by pairs 1 and 2"):
        evaluate_split_batch([({"id": "a", "sections": []}, []), ({"id": "a", "sections": []}, [])])


def test_unpaired_ids_are_listed_not_scored():
    report = evaluate_split_batch(
        [(EXPECTED, EXPECTED)], expected_only=["x"], predicted_only=["y", "z"]
    )
    assert report.unpaired.expected_only == ["x"]
    assert report.unpaired.predicted_only == ["y", "z"]
    assert report.packet_count == 1


def test_an_empty_batch_has_no_figures():
    report = summarize([])
    assert report.packet_count == 0
    assert report.page_level_accuracy.accuracy is None
    assert report.page_level_accuracy.macro_accuracy is None
    assert report.boundaries.f1 is None
    assert report.graded.v_measure is None
    assert report.classes.classes == {}


def test_macro_skips_undefined_packets():
    # The second packet has no expected sections: its split accuracy is undefined.
    report = evaluate_split_batch([(sections([0]), sections([0])), ([], sections([0]))])
    assert report.split_accuracy_without_order.macro_accuracy == 1.0
    assert report.page_level_accuracy.macro_accuracy == 0.5


def test_warnings_name_the_packet():
    report = evaluate_split_batch(
        [
            (
                {
                    "id": "p",
                    "sections": [{"section_id": "e", "document_class": "A", "page_indices": []}],
                },
                [],
            )
        ]
    )
    assert report.warnings == ["packet 'p': expected: section 'e' has no pages"]


@settings(max_examples=40, deadline=None)
@given(st.lists(packet_pairs(max_pages=12, allow_empty=True), max_size=6))
def test_micro_counts_are_sums_and_the_report_round_trips(pairs):
    report = evaluate_split_batch(pairs)
    packets = [evaluate_split(*pair) for pair in pairs]
    assert report.page_level_accuracy.total_pages == sum(
        p.page_level_accuracy.total_pages for p in packets
    )
    assert report.boundaries.fn == sum(p.boundaries.fn for p in packets)
    assert sum(map(sum, report.classes.confusion.counts)) == report.page_level_accuracy.total_pages
    assert SplitReport.model_validate_json(report.to_json()) == report


def test_write_and_load(tmp_path):
    report = evaluate_split_batch([(EXPECTED, PREDICTED)])
    path = report.write(tmp_path / "out" / "split.json")
    assert SplitReport.load(path) == report
    assert report.packet("packet-1").id == "packet-1"
    with pytest.raises(KeyError):
        report.packet("nope")
    (tmp_path / "bad.json").write_text('{"kind": "split"}', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        SplitReport.load(tmp_path / "bad.json")
    assert caught.value.source == str(tmp_path / "bad.json")


@settings(max_examples=80, deadline=None)
@given(st.lists(packet_pairs(max_pages=16, allow_empty=True), max_size=8))
def test_packets_evaluated_together_equal_packets_evaluated_alone(pairs):
    # The batch is aligned and scored as one set of arrays: nothing may leak between
    # packets (sections, classes, boundaries, clusters or page orders).
    parsed = [
        (
            packet_from_data(expected, side="expected", packet_id=f"p{number}"),
            packet_from_data(predicted, side="predicted", packet_id=f"p{number}"),
        )
        for number, (expected, predicted) in enumerate(pairs)
    ]
    together = evaluate_packets(parsed)
    alone = [evaluate_packet(*pair) for pair in parsed]
    assert len(together) == len(alone)
    for left, right in zip(together, alone, strict=True):
        assert close(left.model_dump(), right.model_dump())
