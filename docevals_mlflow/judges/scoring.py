"""Scoring a judge's answer against the claim inventory that was sent.

Claims the judge skipped are not ignored: coverage and recall are computed against
every claim id in the request, and skipped, invented and repeated ids are reported
(and make the verdict at best ``uncertain``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

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
    answered_predictions = [(claim.claim_id, claim.verdict) for claim in output.prediction_claims]
    answered_references = [(claim.claim_id, claim.verdict) for claim in output.reference_claims]
    prediction_check = check_inventory(sent_predictions, [id_ for id_, _ in answered_predictions])
    reference_check = check_inventory(sent_references, [id_ for id_, _ in answered_references])
    predictions = _first_verdicts(answered_predictions, sent_predictions)
    references = _first_verdicts(answered_references, sent_references)
    rubric: Counter[str] = Counter(result.verdict for result in output.rubric_results)
    checks = (prediction_check, reference_check)
    nothing_to_judge = not sent_predictions and not sent_references and not output.rubric_results
    return JudgementScores(
        _verdict(predictions, references, rubric, checks, nothing_to_judge=nothing_to_judge),
        _scores(predictions, references, rubric, len(sent_predictions), len(sent_references)),
        _counts(
            predictions, references, rubric, checks, len(sent_predictions), len(sent_references)
        ),
        prediction_check,
        reference_check,
        _inventory_notes(prediction_check, reference_check),
    )


def _first_verdicts(answers: Iterable[tuple[str, str]], sent: list[str]) -> Counter[str]:
    """How many sent ids got each verdict: one verdict per sent id, the first answer
    counts, repeats and inventions do not."""
    known = set(sent)
    first: dict[str, str] = {}
    for claim_id, verdict in answers:
        if claim_id in known:
            first.setdefault(claim_id, verdict)
    return Counter(first.values())


def _scores(
    predictions: Counter[str],
    references: Counter[str],
    rubric: Counter[str],
    predictions_sent: int,
    references_sent: int,
) -> dict[str, float | None]:
    correct, incorrect = predictions["correct"], predictions["incorrect"]
    matched, missing = references["matched"], references["missing"]
    precision = _ratio(correct, correct + incorrect)
    recall = _ratio(matched, references_sent)
    f1: float | None = None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "claim_precision": precision,
        "reference_recall": recall,
        "f1": f1,
        "claim_verification_coverage": _ratio(correct + incorrect, predictions_sent),
        "reference_coverage": _ratio(matched + missing, references_sent),
        "rubric_pass_rate": _ratio(rubric["pass"], rubric.total()),
    }


def _counts(
    predictions: Counter[str],
    references: Counter[str],
    rubric: Counter[str],
    checks: tuple[InventoryCheck, InventoryCheck],
    predictions_sent: int,
    references_sent: int,
) -> dict[str, int]:
    return {
        "prediction_claims_sent": predictions_sent,
        "correct": predictions["correct"],
        "incorrect": predictions["incorrect"],
        "not_verifiable": predictions["not_verifiable"],
        "ambiguous": predictions["ambiguous"],
        "reference_claims_sent": references_sent,
        "matched": references["matched"],
        "missing": references["missing"],
        "reference_ambiguous": references["ambiguous"],
        "rubric_pass": rubric["pass"],
        "rubric_fail": rubric["fail"],
        "rubric_uncertain": rubric["uncertain"],
        "skipped_ids": sum(len(check.skipped) for check in checks),
        "invented_ids": sum(len(check.invented) for check in checks),
        "repeated_ids": sum(len(check.repeated) for check in checks),
    }


def _inventory_notes(
    prediction_check: InventoryCheck, reference_check: InventoryCheck
) -> list[str]:
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
    return notes


def _verdict(
    predictions: Counter[str],
    references: Counter[str],
    rubric: Counter[str],
    checks: tuple[InventoryCheck, InventoryCheck],
    *,
    nothing_to_judge: bool,
) -> Verdict:
    if predictions["incorrect"] or references["missing"] or rubric["fail"]:
        return "fail"
    if nothing_to_judge:
        return "not_applicable"
    unsure = predictions["not_verifiable"] + predictions["ambiguous"] + references["ambiguous"]
    if unsure or rubric["uncertain"] or not all(check.clean for check in checks):
        return "uncertain"
    return "pass"


def _ids(ids: list[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
