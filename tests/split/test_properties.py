"""Hypothesis properties: figures stay in their ranges, a perfect prediction scores 1,
and neither section order nor section ids change any figure."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.split.evaluate import evaluate_split
from docevals_mlflow.split.report import PacketSplitReport
from tests.split.strategies import packet_pairs, random_sections


def figures(report: PacketSplitReport) -> dict[str, Any]:
    """Every score and count of a packet report, without the per-item details."""
    graded = report.graded.model_dump(exclude={"section_tau"})
    return {
        "pages": report.page_level_accuracy.model_dump(exclude={"page_details"}),
        "unordered": report.split_accuracy_without_order.model_dump(exclude={"section_details"}),
        "ordered": report.split_accuracy_with_order.model_dump(exclude={"section_details"}),
        "unmatched": len(report.unmatched_predicted_sections),
        "classes": report.classes.model_dump(),
        "boundaries": report.boundaries.model_dump(),
        "matching": report.matching.model_dump(exclude={"section_details", "unpaired_predicted"}),
        "graded": graded,
    }


def close(left: Any, right: Any) -> bool:
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(close(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(
            close(a, b) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, float) and isinstance(right, float):
        return abs(left - right) <= 1e-9
    return bool(left == right)


def in_unit(value: float | None) -> bool:
    return value is None or -1e-12 <= value <= 1 + 1e-12


@settings(max_examples=300, deadline=None)
@given(packet_pairs(allow_empty=True))
def test_figures_stay_in_range(pair):
    report = evaluate_split(*pair)
    values = [
        report.page_level_accuracy.accuracy,
        report.split_accuracy_without_order.accuracy,
        report.split_accuracy_with_order.accuracy,
        report.boundaries.precision,
        report.boundaries.recall,
        report.boundaries.f1,
        report.matching.exact.f1,
        report.matching.ordered.f1,
        report.matching.mean_iou,
        report.classes.macro_f1,
        report.classes.micro_f1,
        report.graded.homogeneity,
        report.graded.completeness,
        report.graded.v_measure,
        report.graded.rand_index,
        report.graded.clustering_score,
    ]
    assert all(in_unit(value) for value in values)
    assert (
        report.graded.adjusted_rand_index is None or report.graded.adjusted_rand_index <= 1 + 1e-12
    )
    assert all(
        tau is None or -1 - 1e-12 <= tau <= 1 + 1e-12 for tau in report.graded.section_tau.values()
    )
    # Ordered matches are a subset of unordered ones, at every level.
    assert (
        report.split_accuracy_with_order.correct_sections
        <= report.split_accuracy_without_order.correct_sections
    )
    assert report.matching.ordered.tp <= report.matching.exact.tp
    # The confusion matrix holds every page once.
    assert sum(map(sum, report.classes.confusion.counts)) == report.page_level_accuracy.total_pages
    assert (
        sum(score.tp for score in report.classes.classes.values())
        == report.page_level_accuracy.correct_pages
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: random_sections(list(range(n)), "g")), st.randoms())
def test_a_perfect_prediction_scores_one(truth, rng):
    predicted = [dict(section, section_id=f"other-{i}") for i, section in enumerate(truth)]
    rng.shuffle(predicted)
    report = evaluate_split(truth, predicted)
    assert report.page_level_accuracy.accuracy == 1.0
    assert report.split_accuracy_without_order.accuracy == 1.0
    assert report.split_accuracy_with_order.accuracy == 1.0
    assert report.unmatched_predicted_sections == []
    assert report.matching.exact.f1 == 1.0
    assert report.matching.mean_iou == 1.0
    assert report.classes.macro_f1 == 1.0
    assert report.boundaries.f1 in (1.0, None)  # None: a one-document packet
    assert report.boundaries.missed == []
    assert report.boundaries.spurious == []
    assert report.graded.v_measure == 1.0
    assert report.graded.adjusted_rand_index == 1.0
    assert report.graded.packet_score == 1.0
    assert report.perfect


@settings(max_examples=200, deadline=None)
@given(packet_pairs(allow_empty=True), st.randoms())
def test_section_order_and_ids_change_no_figure(pair, rng: random.Random):
    expected, predicted = pair
    base = figures(evaluate_split(expected, predicted))
    shuffled = list(predicted)
    rng.shuffle(shuffled)
    assert close(figures(evaluate_split(expected, shuffled)), base)
    renamed = [dict(section, section_id=f"renamed-{i}") for i, section in enumerate(predicted)]
    assert close(figures(evaluate_split(expected, renamed)), base)
    reordered = list(expected)
    rng.shuffle(reordered)
    assert close(figures(evaluate_split(reordered, predicted)), base)


@settings(max_examples=100, deadline=None)
@given(packet_pairs().filter(lambda pair: all(s["page_indices"] for side in pair for s in side)))
def test_per_page_form_reads_like_the_sections(pair):
    # (A per-page list cannot hold a section without pages.)
    expected, predicted = pair

    def pages(sections: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "pages": [
                {
                    "page_index": page,
                    "document_class": s["document_class"],
                    "section_id": s["section_id"],
                }
                for s in sections
                for page in s["page_indices"]
            ]
        }

    assert close(
        figures(evaluate_split(pages(expected), pages(predicted))),
        figures(evaluate_split(expected, predicted)),
    )
