"""Queue order, progress and the estimate of documents left (hand-computed)."""

from __future__ import annotations

import pytest

from docevals_mlflow.reviewapp.model import AnswerRow, DocumentView, FieldRow
from docevals_mlflow.reviewapp.queue import build_queue, documents_left


def field(
    path: str,
    *,
    confidence: float | None = None,
    disputed: bool = False,
    answer: str | None = None,
    differ: bool = False,
    failed: bool = False,
) -> FieldRow:
    answers = (AnswerRow("ann", "reviewer", answer),) if answer else ()
    return FieldRow(
        path=path,
        disputed=disputed,
        proposed="v",
        has_proposal=not disputed,
        reason="conflict" if disputed else None,
        agreement=None,
        confidence=confidence,
        answers=answers,
        reviewers_disagree=differ,
        failed_upstream=failed,
    )


def doc(name: str, *fields: FieldRow) -> DocumentView:
    return DocumentView(id=name, case_id=name, fields=fields)


def test_fields_and_documents_go_worst_first():
    calm = doc("calm", field("$.a", confidence=0.99))
    unsure = doc("unsure", field("$.a", confidence=0.2))
    disputed = doc("disputed", field("$.a", disputed=True), field("$.b", confidence=0.9))
    split = doc("split", field("$.a", differ=True))
    failed = doc("failed", field("$.a", failed=True))
    finished = doc("finished", field("$.a", disputed=True, answer="absent"))
    queue = build_queue([calm, unsure, disputed, split, failed, finished], "ann")
    assert [e.id for e in queue.entries] == [
        "split",
        "failed",
        "disputed",
        "unsure",
        "calm",
        "finished",
    ]
    assert [row.path for row in disputed.ordered_fields()] == ["$.a", "$.b"]
    assert (queue.documents_done, queue.fields_answered, queue.fields_total) == (1, 1, 7)
    assert queue.next_after("split") == "failed"
    assert queue.next_after("calm") == "split"  # wraps, skipping the finished one


def test_a_correction_counts_as_an_error_found_an_accept_does_not():
    accepted = doc("a", field("$.a", answer="accept"))
    corrected = doc("b", field("$.a", answer="set"))
    assert not accepted.corrected_by("ann")
    assert corrected.corrected_by("ann")
    assert not corrected.corrected_by("bob")


def test_no_estimate_before_enough_documents():
    estimate = documents_left([1.0] * 4, [True] * 4, [1.0] * 10)
    assert estimate.left is None
    assert estimate.note == "after 5 finished documents"


def test_documents_left_for_a_target_residual_error():
    # Six reviewed (risk, corrected?): errors at risk 5 and 4, so 2/6 found.
    done = [5.0, 4.0, 3.0, 2.0, 1.0, 0.5]
    errors = [True, True, False, False, False, False]
    waiting = [4.5, 3.5, 1.5, 0.2]
    # 10 documents, 5% may keep an error: 0.5; expected among the 4 waiting: 4 * 2/6 = 4/3;
    # the review must catch 1 - 0.5 / (4/3) = 62.5% of errors: ceil(0.625 * 2) = 2 of 2,
    # reached at risk 4 → the waiting documents with risk >= 4: one.
    estimate = documents_left(done, errors, waiting, residual=0.05)
    assert estimate.left == 1
    assert estimate.error_rate == pytest.approx(2 / 6)
    assert estimate.note == "risk ≥ 4.00"
    # A looser target needs only the first error caught (risk 5): nothing waiting is that bad.
    assert documents_left(done, errors, waiting, residual=0.1).left == 0
    assert documents_left(done, errors, waiting, residual=0.2).note.startswith("the errors")
    # No error found: nothing is left to review.
    assert documents_left(done, [False] * 6, waiting).left == 0
