"""Pairing human labels with what the judge said about the same case or claim.

For each case and stage the chosen metric (by default the stage's only judge or panel
metric) gives a case verdict, the judge's claim answers (a panel's consensus answer)
and, for a panel, each variant's verdict. Each label is paired with the verdict or
claim answer it names; a label with nothing to pair with is kept with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.judges.calibration.labels import (
    PREDICTION_CLAIM_LABELS,
    REFERENCE_CLAIM_LABELS,
    ClaimKind,
    HumanLabel,
)
from docevals_mlflow.judges.calibration.report import CalibrationPair, UnmatchedLabel

# A claim label says whether the prediction got one fact right. For a reference claim
# "matched" means it did and "missing" that it did not, so both kinds pool into one
# correct/incorrect scale; the pair keeps the label exactly as given.
_CLAIM_SCALE = {
    "correct": "correct",
    "matched": "correct",
    "incorrect": "incorrect",
    "missing": "incorrect",
}
_NO_ANSWER = "the judge gave no usable answer for this case, so its claims are unknown"


@dataclass
class _Judged:
    """What the chosen metric said about one stage of one case."""

    case_id: str
    stage_id: str
    metric: str
    verdict: str
    variants: dict[str, str] | None
    """Panel variant → its verdict; ``None`` for a single judge."""
    claims: dict[str, tuple[ClaimKind, str]] | None
    """Claim id → (kind, answer); ``None`` when the result holds no claim answers."""
    no_claims: str | None = None
    """Why ``claims`` is ``None``."""


def _is_judge(result: MetricResult) -> bool:
    return result.basis.startswith("llm_judge") or result.basis == "judge_panel"


def _stage_reports(
    reports: Iterable[EvaluationReport | PipelineEvaluationReport | SuiteReport],
) -> list[EvaluationReport]:
    stages: list[EvaluationReport] = []
    for report in reports:
        if isinstance(report, SuiteReport):
            raise InputError(
                f"suite report {report.suite_id!r} holds no per-case verdicts",
                expected="case or pipeline reports",
            )
        if isinstance(report, PipelineEvaluationReport):
            stages.extend(report.stage_reports)
        else:
            stages.append(report)
    return stages


def _choose_metric(stage: EvaluationReport, metric: str | None) -> MetricResult | None:
    where = f"case {stage.case_id!r} stage {stage.stage_id!r}"
    if metric is not None:
        named = [result for result in stage.metric_results if result.name == metric]
        return named[0] if named else None
    judges = [result for result in stage.metric_results if _is_judge(result)]
    if len(judges) > 1:
        names = ", ".join(result.name for result in judges)
        raise ConfigurationError(
            f"{where} has several judge metrics ({names}); name the one to calibrate "
            "with metric= (docevals calibrate --metric NAME)"
        )
    return judges[0] if judges else None


def _answers(
    output: Any, inventory: Any, kind: ClaimKind, claims: dict[str, tuple[ClaimKind, str]]
) -> None:
    key = f"{kind}_claims"
    checked = inventory.get(kind, {}) if isinstance(inventory, dict) else {}
    invented = set(checked.get("invented", []))
    for claim in output.get(key, []):
        claim_id = claim.get("claim_id") if isinstance(claim, dict) else None
        # The first answer per sent id counts, as in scoring; invented ids were never
        # claims of the case, so no human could have labelled them.
        if not isinstance(claim_id, str) or claim_id in invented or claim_id in claims:
            continue
        claims[claim_id] = (kind, str(claim.get("verdict")))
    for claim_id in checked.get("skipped", []):
        claims.setdefault(claim_id, (kind, "unanswered"))


def _claim_answers(result: MetricResult) -> dict[str, tuple[ClaimKind, str]] | None:
    details = result.details if isinstance(result.details, dict) else {}
    if result.basis == "judge_panel":
        # The consensus answer lists every claim sent; claims without consensus are
        # "ambiguous" in it.
        output, inventory = details.get("consensus"), None
    else:
        output, inventory = details.get("output"), details.get("inventory")
    if not isinstance(output, dict):
        return None
    claims: dict[str, tuple[ClaimKind, str]] = {}
    _answers(output, inventory, "prediction", claims)
    _answers(output, inventory, "reference", claims)
    return claims


def _why_no_claims(result: MetricResult) -> str:
    if _is_judge(result):
        return _NO_ANSWER
    return f"metric {result.name!r} gives no claim verdicts"


def _variant_verdicts(result: MetricResult) -> dict[str, str] | None:
    if result.basis != "judge_panel" or not isinstance(result.details, dict):
        return None
    return {
        str(variant["name"]): str(variant["verdict"])
        for variant in result.details.get("variants", [])
        if isinstance(variant, dict) and "name" in variant
    }


def _judged_units(
    stages: Sequence[EvaluationReport], metric: str | None
) -> tuple[dict[tuple[str, str], _Judged], set[tuple[str, str]]]:
    units: dict[tuple[str, str], _Judged] = {}
    present: set[tuple[str, str]] = set()
    for stage in stages:
        key = (stage.case_id, stage.stage_id)
        if key in present:
            raise InputError(
                f"case {stage.case_id!r} stage {stage.stage_id!r} is in more than one report",
                expected="each case and stage once",
            )
        present.add(key)
        result = _choose_metric(stage, metric)
        if result is None:
            continue
        claims = _claim_answers(result)
        units[key] = _Judged(
            case_id=stage.case_id,
            stage_id=stage.stage_id,
            metric=result.name,
            verdict=result.verdict,
            variants=_variant_verdicts(result),
            claims=claims,
            no_claims=None if claims is not None else _why_no_claims(result),
        )
    return units, present


def _claim_category(answer: str) -> str:
    return _CLAIM_SCALE.get(answer, answer)


@dataclass
class _Pairing:
    case_pairs: list[CalibrationPair]
    claim_pairs: list[CalibrationPair]
    unmatched: list[UnmatchedLabel]
    variant_pairs: dict[str, list[tuple[str, str]]]


def _claim_pair(unit: _Judged, label: HumanLabel) -> CalibrationPair | str:
    """The pair for a claim label, or the reason there is none."""
    assert label.claim_id is not None
    if unit.claims is None:
        return unit.no_claims or "no claim verdicts"
    found = unit.claims.get(label.claim_id)
    if found is None:
        return f"the judge's answer has no claim {label.claim_id!r}"
    kind, answer = found
    allowed = PREDICTION_CLAIM_LABELS if kind == "prediction" else REFERENCE_CLAIM_LABELS
    if label.label not in allowed:
        # A mismatch means the labeller had another claim in mind: counting it would
        # compare unrelated things, and listing it as unmatched would hide the mix-up.
        raise InputError(
            f"{label.describe()} is a {kind} claim, but its label is {label.label!r}",
            expected=" or ".join(allowed),
        )
    human, judge = _claim_category(label.label), _claim_category(answer)
    return CalibrationPair(
        case_id=unit.case_id,
        stage_id=unit.stage_id,
        claim_id=label.claim_id,
        claim_kind=kind,
        metric=unit.metric,
        human_label=label.label,
        judge_answer=answer,
        human=human,
        judge=judge,
        agrees=human == judge,
        labeler=label.labeler,
    )


def _pair_labels(
    labels: Sequence[HumanLabel],
    units: Mapping[tuple[str, str], _Judged],
    present: set[tuple[str, str]],
    metric: str | None,
) -> _Pairing:
    pairing = _Pairing([], [], [], {})
    for label in labels:
        unit = units.get((label.case_id, label.stage_id))
        if unit is None:
            if (label.case_id, label.stage_id) not in present:
                reason = "no such case and stage in the reports"
            elif metric is not None:
                reason = f"the stage has no metric {metric!r}"
            else:
                reason = "the stage has no judge or panel metric"
            pairing.unmatched.append(UnmatchedLabel(label=label, reason=reason))
            continue
        if label.claim_id is not None:
            pair = _claim_pair(unit, label)
            if isinstance(pair, str):
                pairing.unmatched.append(UnmatchedLabel(label=label, reason=pair))
            else:
                pairing.claim_pairs.append(pair)
            continue
        pairing.case_pairs.append(
            CalibrationPair(
                case_id=unit.case_id,
                stage_id=unit.stage_id,
                metric=unit.metric,
                human_label=label.label,
                judge_answer=unit.verdict,
                human=label.label,
                judge=unit.verdict,
                agrees=label.label == unit.verdict,
                labeler=label.labeler,
            )
        )
        for name, verdict in (unit.variants or {}).items():
            pairing.variant_pairs.setdefault(name, []).append((label.label, verdict))
    return pairing
