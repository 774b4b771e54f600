"""A metric decided by one LLM judge."""

from __future__ import annotations

from typing import Any, Literal

from docevals_mlflow.core.cases import EvaluationCase, Producer
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.judges.judge import JudgeResult, ModelJudge, run_sync
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.scoring import JudgementScores, score_judgement

Relationship = Literal["unknown", "independent", "same_provider", "same_model"]


def producer_relationship(producer: Producer | None, judge: dict[str, Any]) -> Relationship:
    """How the judge relates to whoever produced the prediction.

    A model judging its own output tends to approve it, so ``same_model`` needs human
    review; ``unknown`` makes no assumption.
    """
    if producer is None:
        return "unknown"
    provider = str(judge.get("provider", "")).casefold()
    model = str(judge.get("model", "")).casefold()
    if producer.provider.casefold() != provider:
        return "independent"
    if producer.model is not None and producer.model.casefold() == model:
        return "same_model"
    return "same_provider"


_NO_VERDICT = frozenset({"refused", "truncated"})
"""Statuses whose error text already says what the model did."""


def failure_note(result: JudgeResult) -> str:
    """The note of a judgement that gave no usable answer."""
    if result.status in _NO_VERDICT:
        return f"no verdict: {result.error}"
    return f"judge {result.status}: {result.error}"


def judge_metric_result(
    name: str,
    request: JudgeRequest,
    result: JudgeResult,
    producer: Producer | None,
    *,
    identity: dict[str, Any] | None = None,
) -> MetricResult:
    """A metric result from one judgement (shared by single judges and panels).

    ``identity`` (provider and model) is who the judge is declared to be, such as a
    panel variant's ``provider``/``model``; it decides the producer relationship in
    place of the identity the judge reports.

    ``details["review_items"]`` lists why the result needs human review (``judge
    failed``, ``uncertain verdict``, ``incomplete answer``, ``self-judging``), one
    ``{reason, detail}`` each, as a panel's review queue does.
    """
    relationship = producer_relationship(producer, identity or result.judge)
    details: dict[str, Any] = {
        "judge": {**result.judge, "producer_relationship": relationship},
        "status": result.status,
        "attempts": result.attempts,
        "cached": result.cached,
        "instructions": request.instructions,
        "instructions_sha256": result.instructions_sha256 or request.instructions_sha256,
        "request_fingerprint": result.request_fingerprint or request.fingerprint,
        "latency_seconds": round(result.latency_seconds, 4),
    }
    usage = result.usage.as_metrics()
    review: list[dict[str, str]] = []
    if relationship == "same_model":
        review.append({"reason": "self-judging", "detail": _judge_label(identity or result.judge)})
    if result.output is None:
        return _failed_result(name, result, details, review, usage)
    judged = score_judgement(request, result.output)
    details["output"] = result.output.model_dump(mode="json")
    details["inventory"] = {
        "prediction": judged.prediction_inventory.as_dict(),
        "reference": judged.reference_inventory.as_dict(),
    }
    notes = _answer_notes(judged, result.status, relationship)
    review = [*_answer_review(judged), *review]
    details["review_items"] = review
    basis = "llm_judge"
    if request.task.get("reference_claims_authority") == "generated":
        basis = "llm_judge (provisional: claims from an AI-generated reference)"
    return MetricResult(
        name=name,
        basis=basis,
        verdict=judged.verdict,
        scores=judged.scores,
        counts=judged.counts,
        details=details,
        notes=notes,
        requires_human_review=bool(review),
        usage=usage,
    )


def _failed_result(
    name: str,
    result: JudgeResult,
    details: dict[str, Any],
    review: list[dict[str, str]],
    usage: dict[str, float],
) -> MetricResult:
    """The ``uncertain`` result of a judge that gave no usable answer."""
    details["raw_text"] = result.raw_text
    note = failure_note(result)
    details["review_items"] = [{"reason": "judge failed", "detail": note}, *review]
    return MetricResult(
        name=name,
        basis="llm_judge",
        verdict="uncertain",
        notes=[note],
        details=details,
        requires_human_review=True,
        usage=usage,
    )


def _answer_notes(judged: JudgementScores, status: str, relationship: str) -> list[str]:
    """The scoring notes, and what a reader of the verdict should know about the answer."""
    notes = list(judged.notes)
    if status == "repaired":
        notes.append("the judge's first answer was malformed; its repaired answer was used")
    if relationship == "same_model":
        notes.append("the judge is the model that produced the prediction: review by a human")
    return notes


def _answer_review(judged: JudgementScores) -> list[dict[str, str]]:
    """Why an answer needs a human: an uncertain verdict, then an incomplete answer."""
    review: list[dict[str, str]] = []
    if judged.verdict == "uncertain":
        review.append({"reason": "uncertain verdict", "detail": _unsure_detail(judged.counts)})
    if not (judged.prediction_inventory.clean and judged.reference_inventory.clean):
        # A verdict built on an answer that skipped or invented claims (even a fail)
        # rests on claims nobody checked: a human should look.
        # (The scoring notes are exactly the skipped, invented and repeated ids.)
        review.append({"reason": "incomplete answer", "detail": "; ".join(judged.notes)})
    return review


def _unsure_detail(counts: dict[str, int]) -> str:
    parts = [
        f"{counts.get(key, 0)} {label}"
        for key, label in (
            ("not_verifiable", "prediction claim(s) not verifiable"),
            ("ambiguous", "prediction claim(s) ambiguous"),
            ("reference_ambiguous", "reference claim(s) ambiguous"),
            ("rubric_uncertain", "rubric criteria uncertain"),
            ("skipped_ids", "claim id(s) skipped"),
            ("invented_ids", "claim id(s) invented"),
            ("repeated_ids", "claim id(s) repeated"),
        )
        if counts.get(key, 0)
    ]
    return ", ".join(parts) or "no item decided the case"


def _judge_label(judge: dict[str, Any]) -> str:
    return f"{judge.get('provider', 'custom')}:{judge.get('model', 'model')}"


class LLMJudgeMetric:
    """A metric whose verdict an LLM judge gives.

    The request (:func:`build_judge_request`) lists every reference and numbers every
    claim; the judge's answer is scored against that inventory
    (:func:`~docevals_mlflow.judges.scoring.score_judgement`). A judge that fails,
    refuses or answers garbage yields an ``uncertain`` result with the reason and
    the raw text, never an exception.
    """

    def __init__(self, judge: Any, *, name: str = "llm_judge") -> None:
        self.judge = judge if hasattr(judge, "ajudge") else ModelJudge(judge)
        self.name = name

    def config(self) -> dict[str, Any]:
        """The judge's identity (provider, model, sampling): changes invalidate checkpoints."""
        describe = getattr(self.judge, "describe", None)
        return {"judge": describe() if callable(describe) else {"name": self.judge.name}}

    async def aevaluate(self, case: EvaluationCase) -> MetricResult:
        """Judge the case."""
        request = build_judge_request(case)
        result = await self.judge.ajudge(request)
        return judge_metric_result(self.name, request, result, case.producer)

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Synchronous :meth:`aevaluate`."""
        return run_sync(self.aevaluate(case))
