"""The calibration report: :class:`CalibrationReport` and the models it is made of.

Per level (cases, claims) a :class:`LevelCalibration` holds agreement, Cohen's kappa
with and without the judge's unsure answers, a confusion matrix (rows human, columns
judge), precision/recall of the judge's ``fail``/``incorrect`` calls and bootstrap
intervals. A :class:`PanelCalibration` holds Fleiss' kappa across a panel's variants
and each variant's own kappa with the humans. Labels that match nothing
(:class:`UnmatchedLabel`) and judged items nobody labelled (:class:`JudgedItem`) are
listed, never dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from docevals_mlflow._version import __version__
from docevals_mlflow.core.diagnostics import DisagreementBudget
from docevals_mlflow.core.formatting import level_text, metric_text, percent_text
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.statistics import kappa_strength
from docevals_mlflow.judges.calibration.labels import ClaimKind, HumanLabel

if TYPE_CHECKING:
    import pandas as pd

LevelName = Literal["cases", "claims"]


def share_percent(value: float, *, sign: bool = True) -> str:
    """A share as a percentage; without ``sign``, the number only (the lower end of a
    range such as ``70.0-85.0%``)."""
    text = percent_text(value)
    return text if sign else text.removesuffix("%")


class ConfidenceInterval(DocEvalsModel):
    """An interval from the labelled cases (a case drawn with all its labels): Wilson
    for shares, the expanded percentile bootstrap for kappa. ``cases`` and
    ``observations`` are ``None`` in reports from before they were recorded."""

    low: float
    high: float
    cases: int | None = None
    """Cases (case ids) behind the interval."""
    observations: int | None = None
    """Labels (pairs) behind the interval."""
    method: str | None = None
    """``wilson`` or ``percentile``."""


def _bracket(value: float, interval: ConfidenceInterval, *, percent: bool) -> str:
    shown = percent_text if percent else metric_text
    return f"{shown(value)} [{shown(interval.low)}, {shown(interval.high)}]"


class CalibrationPair(DocEvalsModel):
    """One human label next to the judge's answer on the same case or claim."""

    case_id: str
    stage_id: str
    claim_id: str | None = None
    claim_kind: ClaimKind | None = None
    metric: str
    human_label: str
    """The label as given (``matched``, ``fail``, ...)."""
    judge_answer: str
    """The judge's answer as given (a case verdict or a claim verdict)."""
    human: str
    """The category compared: the label on the level's scale (matched → correct)."""
    judge: str
    """The judge's category on the same scale; an unsure answer keeps its own name."""
    agrees: bool
    labeler: str | None = None


class LevelCalibration(DocEvalsModel):
    """Agreement between judge and humans on one level (cases or claims)."""

    level: LevelName
    n: int
    """Labels paired with a judge answer."""
    agreement: float | None
    agreement_ci: ConfidenceInterval | None = None
    kappa: float | None
    """Cohen's kappa with the judge's unsure answers as categories of their own (an
    abstention never agrees with a human, so it lowers kappa)."""
    kappa_ci: ConfidenceInterval | None = None
    decided_n: int
    """Pairs where the judge decided (did not abstain)."""
    decided_agreement: float | None
    kappa_decided: float | None
    """Cohen's kappa on the decided pairs only."""
    abstentions: int
    abstention_rate: float | None
    abstention_counts: dict[str, int] = Field(default_factory=dict)
    positive: str
    """The category precision and recall are about: ``fail`` or ``incorrect``."""
    precision: float | None
    """Share of the judge's ``positive`` calls the humans agree with."""
    recall: float | None
    """Share of the humans' ``positive`` labels the judge called too."""
    human_categories: list[str]
    judge_categories: list[str]
    confusion: dict[str, dict[str, int]]
    """``confusion[human][judge]``: how many pairs had that combination."""
    judge_pass_rate: float | None = None
    """Cases only: the share of the labelled cases the judge called ``pass``."""
    judge_pass_rate_ci: ConfidenceInterval | None = None
    human_pass_rate: float | None = None
    """Cases only: the share of the labelled cases the humans called ``pass``."""
    human_pass_rate_ci: ConfidenceInterval | None = None
    cases_resampled: int = 0
    """Case ids behind the intervals (the clusters resampled)."""
    bootstrap_resamples: int = 0
    kappa_resamples: int = 0
    """Resamples in which kappa was defined (those form the kappa interval)."""
    notes: list[str] = Field(default_factory=list)
    pairs: list[CalibrationPair] = Field(default_factory=list)

    def confusion_frame(self) -> pd.DataFrame:
        """The confusion matrix as a DataFrame (index human, columns judge)."""
        import pandas as pd

        frame = pd.DataFrame(
            [
                [self.confusion[human][judge] for judge in self.judge_categories]
                for human in self.human_categories
            ],
            index=pd.Index(self.human_categories, name="human"),
            columns=pd.Index(self.judge_categories, name="judge"),
        )
        return frame


class VariantCalibration(DocEvalsModel):
    """One panel variant's case verdicts against the human case labels."""

    name: str
    n: int
    agreement: float | None
    kappa: float | None
    kappa_decided: float | None
    abstentions: int


class PanelCalibration(DocEvalsModel):
    """How far a judge panel's variants agree with each other and with humans."""

    metrics: list[str]
    variants: list[str]
    cases: int
    """Panel-judged cases (labelled or not) behind Fleiss' kappa."""
    raters: int | None
    category_counts: dict[str, int]
    """Variant verdicts per category (``not_applicable`` counts as ``uncertain``)."""
    observed_agreement: float | None
    """Mean share of agreeing variant pairs per case (Fleiss' P-bar)."""
    fleiss_kappa: float | None
    variant_calibration: list[VariantCalibration] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class UnmatchedLabel(DocEvalsModel):
    """A label with no judged case or claim to pair with, and why."""

    label: HumanLabel
    reason: str


class JudgedItem(DocEvalsModel):
    """A judged case or claim that no human labelled."""

    case_id: str
    stage_id: str
    claim_id: str | None = None
    metric: str
    judge_answer: str


class ShareEstimate(DocEvalsModel):
    """A share with its normal-approximation (CLT) interval and the cases behind it."""

    estimate: float
    low: float
    high: float
    n: int


class PassRateCorrection(DocEvalsModel):
    """The true case pass rate estimated three ways: from the judge alone (every
    judged case; biased by the judge's errors), from the human labels alone, and by
    PPI++ (both: unbiased when the labelled cases are a random sample of the judged
    ones). ``corrected`` is the PPI++ estimate, or the human-only one when
    ``fallback`` says why the judge was not used."""

    method: Literal["ppi++", "human_only"]
    prediction: Literal["verdict", "panel_vote_share"] = "verdict"
    """The judge's score PPI++ used: 1/0 for a ``pass`` verdict, or (when every judged
    case has a panel's votes) the share of the panel's members voting ``pass``."""
    corrected: ShareEstimate
    judge_only: ShareEstimate
    human_only: ShareEstimate
    lam: float
    """The power-tuning λ used (0 on fallback)."""
    lam_estimated: float | None
    labelled: int
    unlabelled: int
    fallback: str | None = None


class CalibrationReport(DocEvalsModel):
    """The result of :func:`calibrate`: agreement per level, panel figures, and
    every label or judged item left unpaired."""

    kind: Literal["calibration"] = "calibration"
    package_version: str = __version__
    metric: str | None
    """The metric asked for (``None``: the only judge or panel metric per stage)."""
    metrics_used: list[str]
    bootstrap: int
    seed: int
    confidence: float
    cases: LevelCalibration
    claims: LevelCalibration
    panel: PanelCalibration | None = None
    disagreement: DisagreementBudget | None = None
    """For judge panels: which verdicts to review first, ranked by panel disagreement,
    and the share of the panel's errors (against the human case labels) each review
    budget catches."""
    pass_rate: PassRateCorrection | None = None
    """The judge-bias-corrected (PPI++) case pass rate beside the judge-only and
    human-only ones; ``None`` with fewer than two labelled cases."""
    unmatched_labels: list[UnmatchedLabel] = Field(default_factory=list)
    unlabelled_cases: list[JudgedItem] = Field(default_factory=list)
    unlabelled_claims: list[JudgedItem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def level(self, name: LevelName) -> LevelCalibration:
        """The figures of ``cases`` or ``claims``."""
        return self.cases if name == "cases" else self.claims

    def verdict_line(self, level: LevelName = "cases") -> str:
        """One sentence, e.g. ``judge agrees with humans on 87% of cases (95% CI
        80-93%), kappa 0.71 (substantial)`` (with an en dash and the letter kappa)."""
        figures = self.level(level)
        if figures.n == 0 or figures.agreement is None:
            return f"no labelled {level} to compare with the judge"
        text = f"judge agrees with humans on {share_percent(figures.agreement)} of {level}"
        if figures.agreement_ci is not None:
            text += (
                f" ({level_text(self.confidence)} CI "
                f"{share_percent(figures.agreement_ci.low, sign=False)}–"
                f"{share_percent(figures.agreement_ci.high)})"
            )
        if figures.kappa is None:
            return text + ", κ undefined (one category only)"
        return text + f", κ {metric_text(figures.kappa)} ({kappa_strength(figures.kappa)})"

    def interval_line(self, level: LevelName = "cases") -> str | None:
        """The level's intervals with the cases and labels behind them, e.g.
        ``cases, 95% intervals resampling cases: agreement 70.0% [39.7%, 89.2%], κ 0.4444
        [-0.1991, 1.0000], judge pass rate 50.0% [23.7%, 76.3%], human pass rate 60.0%
        [31.3%, 83.2%]; 10 cases, 10 labels``; ``None`` without intervals."""
        figures = self.level(level)
        found = figures.agreement_ci
        if found is None or figures.agreement is None:
            return None
        parts = [f"agreement {_bracket(figures.agreement, found, percent=True)}"]
        if figures.kappa is not None and figures.kappa_ci is not None:
            parts.append(f"κ {_bracket(figures.kappa, figures.kappa_ci, percent=False)}")
        for name, value, interval in (
            ("judge pass rate", figures.judge_pass_rate, figures.judge_pass_rate_ci),
            ("human pass rate", figures.human_pass_rate, figures.human_pass_rate_ci),
        ):
            if value is not None and interval is not None:
                parts.append(f"{name} {_bracket(value, interval, percent=True)}")
        return (
            f"{level}, {level_text(self.confidence)} intervals resampling cases: "
            + ", ".join(parts)
            + f"; {found.cases} cases, {found.observations} labels"
        )

    def confusion_frame(self, level: LevelName = "cases") -> pd.DataFrame:
        """The confusion matrix of ``level`` as a DataFrame (rows human, columns judge)."""
        return self.level(level).confusion_frame()
