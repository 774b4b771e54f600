"""A metric decided by one LLM judge."""

from __future__ import annotations

from typing import Any, Literal

from docevals_mlflow.core.cases import EvaluationCase, Producer
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.judges.judge import JudgeResult, ModelJudge, run_sync
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.scoring import score_judgement

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


def judge_metric_result(
    name: str,
    request: JudgeRequest,
    result: JudgeResult,
    producer: Producer | None,
) -> MetricResult:
    """A metric result from one judgement (shared by single judges and panels)."""
    relationship = producer_relationship(producer, result.judge)
    details: dict[str, Any] = {
        "judge": {**result.judge, "producer_relationship": relationship},
        "status": result.status,
        "attempts": result.attempts,
        "cached": result.cached,
        "instructions": request.instructions,
        "instructions_sha256": request.instructions_sha256,
        "request_fingerprint": request.fingerprint,
        "latency_seconds": round(result.latency_seconds, 4),
    }
    usage = result.usage.as_metrics()
    if result.output is None:
        details["raw_text"] = result.raw_text
        return MetricResult(
            name=name,
            basis="llm_judge",
            verdict="uncertain",
            notes=[f"judge {result.status}: {result.error}"],
            details=details,
            requires_human_review=True,
            usage=usage,
        )
    judged = score_judgement(request, result.output)
    details["output"] = result.output.model_dump(mode="json")
    details["inventory"] = {
        "prediction": judged.prediction_inventory.as_dict(),
        "reference": judged.reference_inventory.as_dict(),
    }
    notes = list(judged.notes)
    if result.status == "repaired":
        notes.append("the judge's first answer was malformed; its repaired answer was used")
    review = judged.verdict == "uncertain" or relationship == "same_model"
    if relationship == "same_model":
        notes.append("the judge is the model that produced the prediction: review by a human")
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
        requires_human_review=review,
        usage=usage,
    )


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
