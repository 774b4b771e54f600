"""Scoring a judge's answer against the claim inventory that was sent.

Claims the judge skipped are not ignored: coverage and recall are computed against
every claim id in the request, and skipped, invented and repeated ids are reported
(and make the verdict at best ``uncertain``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.judges.output import JudgeOutput
from docevals_mlflow.judges.request import JudgeRequest


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass
class InventoryCheck:
    """How the ids in an answer relate to the ids that were sent."""

    skipped: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """Every id answered exactly once, none invented."""
        return not (self.skipped or self.invented or self.repeated)

    def as_dict(self) -> dict[str, list[str]]:
        """For report details."""
        return {"skipped": self.skipped, "invented": self.invented, "repeated": self.repeated}


def check_inventory(sent: list[str], answered: list[str]) -> InventoryCheck:
    """Compare the ids sent with the ids answered."""
    counts = Counter(answered)
    known = set(sent)
    return InventoryCheck(
        skipped=[claim_id for claim_id in sent if claim_id not in counts],
        invented=sorted(claim_id for claim_id in counts if claim_id not in known),
        repeated=sorted(claim_id for claim_id, count in counts.items() if count > 1),
    )


@dataclass
class JudgementScores:
    """Counts, ratios and the verdict of one judgement."""

    verdict: Verdict
    scores: dict[str, float | None]
    counts: dict[str, int]
    prediction_inventory: InventoryCheck
    reference_inventory: InventoryCheck
    notes: list[str]


def score_judgement(request: JudgeRequest, output: JudgeOutput) -> JudgementScores:
    """The seed's scores, computed against the inventory that was sent.

    * ``claim_precision`` = correct / (correct + incorrect);
    * ``reference_recall`` = matched / reference claims sent (a skipped claim is not
      matched);
    * ``f1`` of the two;
    * ``claim_verification_coverage`` = decided prediction claims / prediction claims
      sent (decided: correct or incorrect);
    * ``reference_coverage`` = decided reference claims / reference claims sent;
    * ``rubric_pass_rate`` = passed / rubric results.

    Verdict: ``fail`` on any incorrect or missing claim or failed criterion; else
    ``uncertain`` on any unsure item, skipped, invented or repeated id; else ``pass``
    (``not_applicable`` when there was nothing to judge).
    """
    sent_predictions = request.prediction_claim_ids()
    sent_references = request.reference_claim_ids()
    prediction_check = check_inventory(
        sent_predictions, [claim.claim_id for claim in output.prediction_claims]
    )
    reference_check = check_inventory(
        sent_references, [claim.claim_id for claim in output.reference_claims]
    )
    # One verdict per sent id: the first answer counts, repeats and inventions do not.
    first_prediction: dict[str, str] = {}
    for claim in output.prediction_claims:
        if claim.claim_id in set(sent_predictions):
            first_prediction.setdefault(claim.claim_id, claim.verdict)
    first_reference: dict[str, str] = {}
    for reference_claim in output.reference_claims:
        if reference_claim.claim_id in set(sent_references):
            first_reference.setdefault(reference_claim.claim_id, reference_claim.verdict)
    prediction_counts = Counter(first_prediction.values())
    reference_counts = Counter(first_reference.values())
    rubric_counts = Counter(result.verdict for result in output.rubric_results)

    correct, incorrect = prediction_counts["correct"], prediction_counts["incorrect"]
    unsure_predictions = prediction_counts["not_verifiable"] + prediction_counts["ambiguous"]
    matched, missing = reference_counts["matched"], reference_counts["missing"]
    precision = _ratio(correct, correct + incorrect)
    recall = _ratio(matched, len(sent_references))
    f1: float | None = None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    counts = {
        "prediction_claims_sent": len(sent_predictions),
        "correct": correct,
        "incorrect": incorrect,
        "not_verifiable": prediction_counts["not_verifiable"],
        "ambiguous": prediction_counts["ambiguous"],
        "reference_claims_sent": len(sent_references),
        "matched": matched,
        "missing": missing,
        "reference_ambiguous": reference_counts["ambiguous"],
        "rubric_pass": rubric_counts["pass"],
        "rubric_fail": rubric_counts["fail"],
        "rubric_uncertain": rubric_counts["uncertain"],
        "skipped_ids": len(prediction_check.skipped) + len(reference_check.skipped),
        "invented_ids": len(prediction_check.invented) + len(reference_check.invented),
        "repeated_ids": len(prediction_check.repeated) + len(reference_check.repeated),
    }
    scores = {
        "claim_precision": precision,
        "reference_recall": recall,
        "f1": f1,
        "claim_verification_coverage": _ratio(correct + incorrect, len(sent_predictions)),
        "reference_coverage": _ratio(matched + missing, len(sent_references)),
        "rubric_pass_rate": _ratio(rubric_counts["pass"], len(output.rubric_results)),
    }
    notes = []
    for label, check in (("prediction", prediction_check), ("reference", reference_check)):
        if check.skipped:
            notes.append(
                f"judge skipped {len(check.skipped)} {label} claim(s): {_ids(check.skipped)}"
            )
        if check.invented:
            notes.append(f"judge invented {label} claim id(s): {_ids(check.invented)}")
        if check.repeated:
            notes.append(f"judge repeated {label} claim id(s): {_ids(check.repeated)}")
    nothing_to_judge = not sent_predictions and not sent_references and not output.rubric_results
    verdict: Verdict
    if incorrect or missing or rubric_counts["fail"]:
        verdict = "fail"
    elif nothing_to_judge:
        verdict = "not_applicable"
    elif (
        unsure_predictions
        or reference_counts["ambiguous"]
        or rubric_counts["uncertain"]
        or not prediction_check.clean
        or not reference_check.clean
    ):
        verdict = "uncertain"
    else:
        verdict = "pass"
    return JudgementScores(verdict, scores, counts, prediction_check, reference_check, notes)


def _ids(ids: list[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def output_details(output: JudgeOutput) -> dict[str, Any]:
    """The judge's answer as report details."""
    return output.model_dump(mode="json")
