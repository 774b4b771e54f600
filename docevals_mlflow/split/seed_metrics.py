"""The seed's three split metrics, computed exactly as the seed (and Stickler) define them.

* **page-level accuracy**: over every page index found on either side, is the
  predicted class the expected one? A page present on one side only is wrong.
* **split accuracy without order**: the share of expected sections for which some
  predicted section has the same *set* of pages and the same class.
* **split accuracy with order**: the same, but the page *list* must be equal too.

Each comes with the seed's per-page or per-section details, and predicted sections
that no expected section matched (as a set, with its class) are listed as
*unmatched* (over-segmentation or wrong classes).

Two seed behaviours are bugs, fixed in ``accuracy``; the seed's own figure is kept
in ``seed_accuracy`` for comparability (:func:`seed_view` rebuilds the seed's whole
output, equal to ``stickler.doc_split``):

* with nothing to count (no pages, no expected sections) the seed reports 0.0; the
  accuracy is undefined, so ``accuracy`` is ``None``;
* the seed marks an absent page with the class name ``"Missing"``, so a page that
  only one side has, in a class literally named ``Missing``, counts as correct;
  here a page is correct only when both sides have it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docevals_mlflow.split.alignment import ABSENT, Alignment, align, per_packet
from docevals_mlflow.split.models import SplitPacket
from docevals_mlflow.split.packet_forms import packet_from_data
from docevals_mlflow.split.scores import ReportPart

MISSING_CLASS = "Missing"
"""The seed's class for a page that one side does not have."""
NO_MATCH_CLASS = "No Match"
"""The seed's predicted class for an expected section without a match."""


class PageDetail(ReportPart):
    """One page: its class on each side (``Missing`` where absent) and the verdict."""

    page_index: int
    ground_truth_class: str
    predicted_class: str
    correct: bool


class PageLevelAccuracy(ReportPart):
    """Page-level classification accuracy over the pages of either side."""

    accuracy: float | None
    """correct_pages / total_pages; ``None`` when there are no pages."""
    seed_accuracy: float
    """The seed's figure (0.0 without pages; a ``Missing`` class quirk, see module)."""
    total_pages: int
    correct_pages: int
    page_details: list[PageDetail]


class SectionDetail(ReportPart):
    """One expected section and the predicted section that matched it, if any.

    Without order the page lists are sorted (as the seed shows them); with order
    they are as given.
    """

    section_id: str
    ground_truth_class: str
    ground_truth_pages: list[int]
    matched: bool
    matched_section_id: str | None
    predicted_class: str
    """The matched section's class, or ``"No Match"``."""
    predicted_pages: list[int]


class OrderedSectionDetail(SectionDetail):
    """With order, ``matched_section_id`` may name a section with the right pages and
    class but another order: then ``matched`` and ``order_matched`` are false."""

    order_matched: bool


class SplitAccuracy(ReportPart):
    """Split accuracy: the share of expected sections matched by a predicted one."""

    accuracy: float | None
    """correct_sections / total_sections; ``None`` without expected sections."""
    seed_accuracy: float
    """The seed's figure (0.0 without expected sections)."""
    total_sections: int
    correct_sections: int
    section_details: list[SectionDetail]


class OrderedSplitAccuracy(SplitAccuracy):
    """Split accuracy with page order."""

    section_details: list[OrderedSectionDetail]  # type: ignore[assignment]


class UnmatchedSection(ReportPart):
    """A predicted section that matched no expected section (seed: over-segmentation)."""

    section_id: str
    document_class: str
    page_indices: list[int]


# --------------------------------------------------------------------------- building


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def page_level_details(alignment: Alignment) -> list[dict[str, Any]]:
    """The page-level accuracy of every packet of a batch, as :class:`PageLevelAccuracy`
    dicts."""
    names = [*alignment.labels, MISSING_CLASS]  # index -1 (ABSENT) reads "Missing"
    expected = [names[code] for code in alignment.expected_class.tolist()]
    predicted = [names[code] for code in alignment.predicted_class.tolist()]
    correct_mask = alignment.in_both & (alignment.expected_class == alignment.predicted_class)
    correct = per_packet(correct_mask, alignment.packet, alignment.packets).tolist()
    seed_correct = correct
    if MISSING_CLASS in alignment.labels:
        # The seed compares the "Missing" placeholder like any class name.
        code = alignment.labels.index(MISSING_CLASS)
        one_sided = ((alignment.expected_class == ABSENT) & (alignment.predicted_class == code)) | (
            (alignment.predicted_class == ABSENT) & (alignment.expected_class == code)
        )
        extra = per_packet(one_sided, alignment.packet, alignment.packets).tolist()
        seed_correct = [a + b for a, b in zip(correct, extra, strict=True)]
    pages = alignment.pages.tolist()
    verdicts = correct_mask.tolist()
    out = []
    for packet in range(alignment.packets):
        rows = alignment.rows(packet)
        total = rows.stop - rows.start
        out.append(
            {
                "accuracy": _ratio(correct[packet], total),
                "seed_accuracy": seed_correct[packet] / total if total else 0.0,
                "total_pages": total,
                "correct_pages": correct[packet],
                "page_details": [
                    {
                        "page_index": page,
                        "ground_truth_class": left,
                        "predicted_class": right,
                        "correct": ok,
                    }
                    for page, left, right, ok in zip(
                        pages[rows], expected[rows], predicted[rows], verdicts[rows], strict=True
                    )
                ],
            }
        )
    return out


def split_details(
    expected: SplitPacket, predicted: SplitPacket
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """Split accuracy without and with order, and the unmatched predicted sections.

    A predicted section *matches* an expected one with the same class and page set;
    the seed takes the first such section without order, and with order the first
    one whose page list is also equal, else the last one found (then ``matched`` is
    false). Unmatched predicted sections are those that no expected section chose
    with order, as the seed's report lists them.
    """
    candidates: dict[tuple[str, frozenset[int]], list[int]] = {}
    for index, section in enumerate(predicted.sections):
        key = (section.document_class, frozenset(section.page_indices))
        candidates.setdefault(key, []).append(index)
    unordered: list[dict[str, Any]] = []
    ordered: list[dict[str, Any]] = []
    chosen: set[int] = set()
    for section in expected.sections:
        pages = section.page_indices
        found = candidates.get((section.document_class, frozenset(pages)), [])
        first = found[0] if found else None
        in_order = next((i for i in found if predicted.sections[i].page_indices == pages), None)
        pick = in_order if in_order is not None else (found[-1] if found else None)
        unordered.append(
            _detail(section.section_id, section.document_class, pages, predicted, first, True)
        )
        row = _detail(section.section_id, section.document_class, pages, predicted, pick, False)
        row["matched"] = in_order is not None
        row["order_matched"] = in_order is not None
        ordered.append(row)
        if pick is not None:
            chosen.add(pick)
    unmatched = [
        {
            "section_id": section.section_id,
            "document_class": section.document_class,
            "page_indices": list(section.page_indices),
        }
        for index, section in enumerate(predicted.sections)
        if index not in chosen
    ]
    return _summary(unordered), _summary(ordered), unmatched


def _detail(
    section_id: str,
    document_class: str,
    pages: Sequence[int],
    predicted: SplitPacket,
    match: int | None,
    sort: bool,
) -> dict[str, Any]:
    partner = predicted.sections[match] if match is not None else None
    shown = sorted if sort else list
    return {
        "section_id": section_id,
        "ground_truth_class": document_class,
        "ground_truth_pages": shown(pages),
        "matched": partner is not None,
        "matched_section_id": partner.section_id if partner else None,
        "predicted_class": partner.document_class if partner else NO_MATCH_CLASS,
        "predicted_pages": shown(partner.page_indices) if partner else [],
    }


def _summary(details: list[dict[str, Any]]) -> dict[str, Any]:
    total = len(details)
    correct = sum(1 for row in details if row["matched"])
    return {
        "accuracy": _ratio(correct, total),
        "seed_accuracy": correct / total if total else 0.0,
        "total_sections": total,
        "correct_sections": correct,
        "section_details": details,
    }


# --------------------------------------------------------------------------- public


def page_level_accuracy(expected: Any, predicted: Any) -> PageLevelAccuracy:
    """Page-level classification accuracy of one packet (any accepted form per side)."""
    left = packet_from_data(expected, side="expected")
    right = packet_from_data(predicted, side="predicted")
    return PageLevelAccuracy.model_validate(page_level_details(align([(left, right)]))[0])


def split_accuracy_without_order(expected: Any, predicted: Any) -> SplitAccuracy:
    """Split accuracy, pages compared as sets (any accepted form per side)."""
    left = packet_from_data(expected, side="expected")
    right = packet_from_data(predicted, side="predicted")
    return SplitAccuracy.model_validate(split_details(left, right)[0])


def split_accuracy_with_order(expected: Any, predicted: Any) -> OrderedSplitAccuracy:
    """Split accuracy, page lists compared in order (any accepted form per side)."""
    left = packet_from_data(expected, side="expected")
    right = packet_from_data(predicted, side="predicted")
    return OrderedSplitAccuracy.model_validate(split_details(left, right)[1])


def seed_view(
    page_level: PageLevelAccuracy,
    without_order: SplitAccuracy,
    with_order: OrderedSplitAccuracy,
) -> dict[str, Any]:
    """The seed's ``calculate_all_metrics()`` output, figure for figure.

    Accuracies are the seed's (``seed_accuracy``), page verdicts compare the class
    texts as the seed does, and ``errors`` is empty (problems raise instead).
    """
    pages = [
        {
            "page_index": row.page_index,
            "ground_truth_class": row.ground_truth_class,
            "predicted_class": row.predicted_class,
            "correct": row.ground_truth_class == row.predicted_class,
        }
        for row in page_level.page_details
    ]
    return {
        "page_level_accuracy": {
            "accuracy": page_level.seed_accuracy,
            "total_pages": page_level.total_pages,
            "correct_pages": sum(1 for row in pages if row["correct"]),
            "page_details": pages,
        },
        "split_accuracy_without_order": _seed_split(without_order),
        "split_accuracy_with_order": _seed_split(with_order),
        "errors": [],
    }


def _seed_split(result: SplitAccuracy) -> dict[str, Any]:
    return {
        "accuracy": result.seed_accuracy,
        "total_sections": result.total_sections,
        "correct_sections": result.correct_sections,
        "section_details": [row.model_dump() for row in result.section_details],
    }


__all__ = [
    "MISSING_CLASS",
    "NO_MATCH_CLASS",
    "OrderedSectionDetail",
    "OrderedSplitAccuracy",
    "PageDetail",
    "PageLevelAccuracy",
    "SectionDetail",
    "SplitAccuracy",
    "UnmatchedSection",
    "page_level_accuracy",
    "seed_view",
    "split_accuracy_with_order",
    "split_accuracy_without_order",
]
