"""Boundary precision, recall and F1, and where boundaries went wrong."""

from __future__ import annotations

from docevals_mlflow.split.evaluate import evaluate_split


def sections(*groups: list[int], cls: str = "A") -> list[dict[str, object]]:
    return [
        {"section_id": f"s{n}", "document_class": cls, "page_indices": pages}
        for n, pages in enumerate(groups)
    ]


def test_a_shifted_boundary_is_one_missed_and_one_spurious():
    scores = evaluate_split(sections([0, 1, 2], [3, 4]), sections([0, 1], [2, 3, 4])).boundaries
    assert (scores.tp, scores.fp, scores.fn) == (0, 1, 1)
    assert scores.missed == [3]
    assert scores.spurious == [2]
    assert (scores.precision, scores.recall, scores.f1) == (0.0, 0.0, 0.0)


def test_merged_and_split_documents():
    truth = sections([0, 1], [2, 3], [4, 5])
    merged = evaluate_split(truth, sections([0, 1, 2, 3], [4, 5])).boundaries
    assert (merged.tp, merged.fp, merged.fn, merged.missed) == (1, 0, 1, [2])
    assert merged.precision == 1.0
    assert merged.recall == 0.5
    split = evaluate_split(truth, sections([0], [1], [2, 3], [4, 5])).boundaries
    assert (split.tp, split.fp, split.fn, split.spurious) == (2, 1, 0, [1])


def test_classes_do_not_matter_for_boundaries():
    scores = evaluate_split(
        sections([0, 1], [2], cls="A"), sections([0, 1], [2], cls="B")
    ).boundaries
    assert scores.f1 == 1.0


def test_one_document_packet_has_no_boundaries_to_score():
    scores = evaluate_split(sections([0, 1, 2]), sections([0, 1, 2])).boundaries
    assert (scores.expected, scores.predicted) == (0, 0)
    assert scores.precision is None
    assert scores.recall is None
    assert scores.f1 is None


def test_a_dropped_page_breaks_the_document_around_it():
    scores = evaluate_split(sections([0, 1, 2]), sections([0, 2])).boundaries
    assert scores.spurious == [1, 2]
    assert scores.missed == []


def test_pages_out_of_order_inside_a_section_are_no_boundary():
    scores = evaluate_split(sections([0, 1, 2], [3]), sections([2, 0, 1], [3])).boundaries
    assert scores.f1 == 1.0


def test_interleaved_sections_follow_page_order():
    # Section s0 holds pages 0, 1, 4; s1 holds 2, 3: boundaries before 2 and before 4.
    scores = evaluate_split(sections([0, 1, 4], [2, 3]), sections([0, 1, 2, 3, 4])).boundaries
    assert scores.expected == 2
    assert scores.missed == [2, 4]
