"""The judge-bias-corrected case pass rate: PPI++ over every judged case, with the
human case labels as the ground truth of a subset.

The judge's score of a case is 1 when its verdict is ``pass`` and 0 otherwise (an
unsure verdict is not a pass, as in the judge's own pass rate); a human label is 1
for ``pass``. When every judged case has a panel's votes, the score is instead the
share of the panel's members voting ``pass``: PPI++ is unbiased for any score, and a
graded one correlates better with the humans than the 0/1 majority verdict, so the
interval is narrower (power tuning's λ takes care of the scale). The cases nobody
labelled are the judged cases with no case label on that stage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from docevals_mlflow.core.formatting import level_text
from docevals_mlflow.core.statistics.ppi import MeanEstimate, clt_mean, ppi_mean
from docevals_mlflow.judges.calibration.matching import _Judged
from docevals_mlflow.judges.calibration.report import (
    CalibrationPair,
    PassRateCorrection,
    ShareEstimate,
    share_percent,
)

_SHARE = (0.0, 1.0)
# The 0/1 verdict is the default and goes unnamed; a graded score is said.
_PREDICTION_TEXT = {"verdict": "", "panel_vote_share": " on the panel's pass-vote share"}
Prediction = Literal["verdict", "panel_vote_share"]


def _vote_share(unit: _Judged) -> float | None:
    if not unit.variants:
        return None
    votes = list(unit.variants.values())
    return sum(vote == "pass" for vote in votes) / len(votes)


def _scores(
    units: Mapping[tuple[str, str], _Judged],
) -> tuple[dict[tuple[str, str], float], Prediction]:
    """Each judged case's score and which score it is: the panel's pass-vote share when
    every case has one (a mix of graded and 0/1 scores would not be one prediction)."""
    shares = {key: _vote_share(unit) for key, unit in units.items()}
    if shares and all(share is not None for share in shares.values()):
        return {key: float(share or 0.0) for key, share in shares.items()}, "panel_vote_share"
    return {key: float(unit.verdict == "pass") for key, unit in units.items()}, "verdict"


def _share(estimate: MeanEstimate) -> ShareEstimate:
    return ShareEstimate(
        estimate=estimate.estimate, low=estimate.low, high=estimate.high, n=estimate.n
    )


def pass_rate_correction(
    units: Mapping[tuple[str, str], _Judged],
    case_pairs: Sequence[CalibrationPair],
    *,
    kappa: float | None,
    confidence: float,
) -> PassRateCorrection | None:
    """PPI++ estimate of the share of judged cases humans would call ``pass``, beside
    the judge-only and human-only ones; ``None`` with fewer than two labelled cases."""
    if len(case_pairs) < 2:
        return None
    labelled = {(pair.case_id, pair.stage_id) for pair in case_pairs}
    scores, prediction = _scores(units)
    human = [float(pair.human == "pass") for pair in case_pairs]
    judge_labelled = [
        scores.get((pair.case_id, pair.stage_id), float(pair.judge == "pass"))
        for pair in case_pairs
    ]
    judge_unlabelled = [score for key, score in scores.items() if key not in labelled]
    result = ppi_mean(
        human,
        judge_labelled,
        judge_unlabelled,
        confidence=confidence,
        bounds=_SHARE,
        kappa=kappa,
    )
    return PassRateCorrection(
        method="human_only" if result.fallback else "ppi++",
        prediction=prediction,
        corrected=_share(result.corrected),
        # The judge's own pass rate stays the share of pass verdicts, whatever score
        # PPI++ used.
        judge_only=_share(
            clt_mean(
                [float(unit.verdict == "pass") for unit in units.values()],
                confidence=confidence,
                bounds=_SHARE,
            )
        ),
        human_only=_share(result.human_only),
        lam=result.lam,
        lam_estimated=result.lam_estimated,
        labelled=result.labelled,
        unlabelled=result.unlabelled,
        fallback=result.fallback,
    )


def _range(estimate: ShareEstimate) -> str:
    return (
        f"{share_percent(estimate.estimate)} "
        f"({share_percent(estimate.low, sign=False)}–{share_percent(estimate.high)})"
    )


def correction_lines(correction: PassRateCorrection, confidence: float) -> list[str]:
    """Three lines: judge-only, human-only and corrected pass rate with intervals,
    e.g. ``pass rate, judge only: 84.0% (82.5-85.5%) over 2200 judged cases`` (with an
    en dash)."""
    level = level_text(confidence)
    corrected = (
        f"pass rate, PPI++{_PREDICTION_TEXT[correction.prediction]} "
        f"(λ {correction.lam:.2f}): {_range(correction.corrected)}"
        if correction.fallback is None
        else f"pass rate, corrected: human-only used ({correction.fallback})"
    )
    return [
        f"pass rate, judge only: {_range(correction.judge_only)} over "
        f"{correction.judge_only.n} judged cases ({level} CI; the judge's bias not included)",
        f"pass rate, humans only: {_range(correction.human_only)} over "
        f"{correction.labelled} labelled cases",
        corrected,
    ]
