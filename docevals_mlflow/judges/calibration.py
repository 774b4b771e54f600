"""Judge calibration: how often an LLM judge agrees with human labels, and how much
of that agreement is more than chance.

Human labels (:class:`HumanLabel`, read by :func:`load_human_labels`) name a case
(``pass``/``fail``) or one claim of a case (``correct``/``incorrect`` for a
prediction claim, ``matched``/``missing`` for a reference claim). :func:`calibrate`
pairs each label with what the judge said about the same case or claim in evaluation
reports and measures, per level (cases, claims):

* agreement, the share of labels the judge matched;
* Cohen's kappa between judge and humans, with the judge's unsure answers
  (``uncertain``, ``not_verifiable``, ``ambiguous``, an unanswered claim) as
  categories of their own, and again on the decided subset without them;
* a confusion matrix (rows human, columns judge), and precision/recall of the
  judge's ``fail``/``incorrect`` calls;
* percentile bootstrap intervals for agreement and kappa.

For judge panels it adds Fleiss' kappa across the variants' case verdicts and each
variant's own kappa with the humans. Labels that match nothing and judged items
nobody labelled are listed in the report, never dropped.

Pure computation: no MLflow, no network.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, field_validator, model_validator

from docevals_mlflow._version import __version__
from docevals_mlflow.core.datafiles import read_text_file
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.errors import ConfigurationError, InputError, InputFileNotFoundError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CalibrationPair",
    "CalibrationReport",
    "ConfidenceInterval",
    "HumanLabel",
    "JudgedItem",
    "LevelCalibration",
    "PanelCalibration",
    "UnmatchedLabel",
    "VariantCalibration",
    "calibrate",
    "cohen_kappa",
    "fleiss_kappa",
    "kappa_strength",
    "load_human_labels",
]

LabelValue = Literal["pass", "fail", "correct", "incorrect", "matched", "missing"]
ClaimKind = Literal["prediction", "reference"]
LevelName = Literal["cases", "claims"]

CASE_LABELS: tuple[str, ...] = ("pass", "fail")
PREDICTION_CLAIM_LABELS: tuple[str, ...] = ("correct", "incorrect")
REFERENCE_CLAIM_LABELS: tuple[str, ...] = ("matched", "missing")
CASE_ABSTENTIONS: tuple[str, ...] = ("uncertain", "not_applicable")
"""Case verdicts that decide nothing; the order is the confusion matrix's column order."""
CLAIM_ABSTENTIONS: tuple[str, ...] = ("not_verifiable", "ambiguous", "unanswered")
"""Claim answers that decide nothing; ``unanswered`` is a claim the judge was sent
but skipped."""
FLEISS_CATEGORIES: tuple[str, ...] = ("pass", "fail", "uncertain")

# A claim label says whether the prediction got one fact right. For a reference claim
# "matched" means it did and "missing" that it did not, so both kinds pool into one
# correct/incorrect scale; the pair keeps the label exactly as given.
_CLAIM_SCALE = {
    "correct": "correct",
    "matched": "correct",
    "incorrect": "incorrect",
    "missing": "incorrect",
}
_LABEL_COLUMNS = ("case_id", "stage_id", "claim_id", "label", "labeler", "notes")
_NO_ANSWER = "the judge gave no usable answer for this case, so its claims are unknown"
# Bounds the index matrix of one bootstrap batch (resamples x units) to ~16 MB.
_BOOTSTRAP_CELLS = 2_000_000


# --- labels ---------------------------------------------------------------------


class HumanLabel(DocEvalsModel):
    """One human judgement of a case, or of one claim of a case.

    Without ``claim_id`` the label is the case verdict (``pass`` or ``fail``). With
    it, the label judges that claim: ``correct``/``incorrect`` for a prediction claim
    (``p00002``), ``matched``/``missing`` for a reference claim (``r00001``). Labels
    are read case-insensitively.
    """

    case_id: str = Field(min_length=1)
    stage_id: str = Field(default="output", min_length=1)
    claim_id: str | None = Field(default=None, min_length=1)
    label: LabelValue
    labeler: str | None = None
    notes: str | None = None

    @field_validator("label", mode="before")
    @classmethod
    def _normalise_label(cls, value: Any) -> Any:
        # Hand-written spreadsheets say "Pass " as often as "pass".
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _label_fits_level(self) -> HumanLabel:
        if self.claim_id is None and self.label not in CASE_LABELS:
            raise ValueError(
                f"label {self.label!r} judges a claim, but no claim_id is given "
                "(a case label is pass or fail)"
            )
        if self.claim_id is not None and self.label in CASE_LABELS:
            raise ValueError(
                f"label {self.label!r} judges a case, but claim_id {self.claim_id!r} is "
                "given (a claim label is correct, incorrect, matched or missing)"
            )
        return self

    def describe(self) -> str:
        """Where this label points, for messages: case, stage and claim."""
        text = f"case {self.case_id!r} stage {self.stage_id!r}"
        return text + (f" claim {self.claim_id!r}" if self.claim_id is not None else "")


def _label_from_fields(fields: Mapping[str, Any], *, source: str, line: int) -> HumanLabel:
    # Absent and empty values both mean "not given", so that a CSV's empty cell and a
    # JSON null fall back to the same defaults (stage "output", no claim).
    given = {key: value for key, value in fields.items() if value is not None and value != ""}
    try:
        return HumanLabel(**given)
    except InputError as exc:
        raise exc.located(source=source, record=f"line {line}") from None


def _jsonl_labels(text: str, source: str) -> list[HumanLabel]:
    labels = []
    # Split on "\n" only: str.splitlines would also break at U+2028 inside a JSON
    # string and shift every later line number.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"malformed JSON at column {exc.colno}: {exc.msg}",
                source=source,
                record=f"line {number}",
                expected="one JSON object per line (JSON Lines)",
            ) from None
        if not isinstance(data, dict):
            raise InputError(
                f"expected a JSON object, got {type(data).__name__}",
                source=source,
                record=f"line {number}",
            )
        labels.append(_label_from_fields(data, source=source, line=number))
    return labels


def _csv_labels(text: str, source: str, delimiter: str) -> list[HumanLabel]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, None)
    if header is None:
        return []
    columns = [name.strip().lower() for name in header]
    unknown = [name for name in columns if name not in _LABEL_COLUMNS]
    if unknown:
        raise InputError(
            f"unknown column(s) {', '.join(repr(name) for name in unknown)}",
            source=source,
            record="line 1",
            expected=f"columns among {', '.join(_LABEL_COLUMNS)}",
        )
    missing = [name for name in ("case_id", "label") if name not in columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", source=source, record="line 1")
    labels = []
    ended = reader.line_num
    for row in reader:
        # A quoted cell may span lines; the record starts right after the last one.
        start, ended = ended + 1, reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            raise InputError(
                f"{len(row)} cells in a row of {len(columns)} columns",
                source=source,
                record=f"line {start}",
            )
        fields = {name: cell.strip() for name, cell in zip(columns, row, strict=True)}
        labels.append(_label_from_fields(fields, source=source, line=start))
    return labels


def load_human_labels(path: str | os.PathLike[str]) -> list[HumanLabel]:
    """Read human labels from a JSON Lines (``.jsonl``, ``.ndjson``) or CSV/TSV file.

    JSON Lines: one object per line with the :class:`HumanLabel` fields. CSV: a
    header naming columns among ``case_id, stage_id, claim_id, label, labeler,
    notes`` (``case_id`` and ``label`` required); empty cells take the defaults.
    Blank lines are skipped. A label given twice for the same case or claim is an
    error: adjudicate disagreements between labellers before calibrating.

    Raises:
        InputFileNotFoundError: the file does not exist.
        InputError: a line is malformed; the message names the file and line.
    """
    file_path = Path(path)
    source = str(file_path)
    if not file_path.is_file():
        raise InputFileNotFoundError("labels file not found", source=source)
    suffix = file_path.suffix.lower()
    text = read_text_file(file_path)
    if suffix in (".jsonl", ".ndjson"):
        labels = _jsonl_labels(text, source)
    elif suffix in (".csv", ".tsv"):
        labels = _csv_labels(text, source, "\t" if suffix == ".tsv" else ",")
    else:
        raise InputError(
            f"unknown labels format {suffix or '(no suffix)'!r}",
            source=source,
            expected=".jsonl, .ndjson, .csv or .tsv",
        )
    if not labels:
        raise InputError("the labels file holds no labels", source=source)
    _reject_repeats(labels, source=source)
    return labels


def _label_key(label: HumanLabel) -> tuple[str, str, str | None]:
    return (label.case_id, label.stage_id, label.claim_id)


def _reject_repeats(labels: Sequence[HumanLabel], *, source: str | None = None) -> None:
    # Two labels for one item would make it count twice; which one is right is a
    # decision for the labellers, not for this code.
    seen: dict[tuple[str, str, str | None], int] = {}
    for position, label in enumerate(labels, start=1):
        key = _label_key(label)
        if key in seen:
            raise InputError(
                f"{label.describe()} is labelled twice (labels {seen[key]} and {position})",
                source=source,
                expected="one label per case or claim",
            )
        seen[key] = position


# --- agreement statistics ---------------------------------------------------------


def _kappa_from_sums(units: int, agreeing: int, chance: int) -> float | None:
    """Cohen's kappa from integer sums, exact up to one division.

    With ``n`` units, ``a`` agreeing ones and ``chance = sum_k rows_k * cols_k``,
    kappa = (p_o - p_e) / (1 - p_e) = (n*a - chance) / (n*n - chance). The
    denominator is zero exactly when both raters used one and the same category.
    """
    denominator = units * units - chance
    if units == 0 or denominator == 0:
        return None
    return (units * agreeing - chance) / denominator


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters who rated the same items (in the same order).

    Categories only one rater used count like any other (they add disagreement and
    nothing to chance agreement). ``None`` when undefined: no items, or both raters
    gave every item one and the same category (no variance to agree on).
    """
    if len(first) != len(second):
        raise ConfigurationError(
            f"the raters rated different numbers of items ({len(first)} and {len(second)})"
        )
    rows, cols = Counter(first), Counter(second)
    agreeing = sum(a == b for a, b in zip(first, second, strict=True))
    chance = sum(count * cols[category] for category, count in rows.items())
    return _kappa_from_sums(len(first), agreeing, chance)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from a subjects x categories table of rating counts.

    Row ``i`` holds how many raters put subject ``i`` in each category; every row
    must sum to the same number of raters (at least two). ``None`` when there are
    no subjects or every rating falls in one category. Computed with exact
    fractions, so hand-computed examples reproduce to the last digit.

    Raises:
        ConfigurationError: rows of different sums or lengths, negative counts, or
            fewer than two raters.
    """
    if not counts:
        return None
    raters = sum(counts[0])
    width = len(counts[0])
    for index, row in enumerate(counts):
        if len(row) != width or any(count < 0 for count in row):
            raise ConfigurationError(
                f"row {index} of the Fleiss table is not {width} non-negative counts"
            )
        if sum(row) != raters:
            raise ConfigurationError(
                f"row {index} of the Fleiss table has {sum(row)} ratings, not {raters}"
            )
    if raters < 2:
        raise ConfigurationError("Fleiss' kappa needs at least two ratings per subject")
    ratings = len(counts) * raters
    # Mean observed agreement: for each subject, the share of agreeing rater pairs.
    pairs_agreeing = sum(count * count for row in counts for count in row) - ratings
    observed = Fraction(pairs_agreeing, ratings * (raters - 1))
    totals = [sum(row[column] for row in counts) for column in range(width)]
    expected = Fraction(sum(total * total for total in totals), ratings * ratings)
    if expected == 1:
        return None
    return float((observed - expected) / (1 - expected))


def kappa_strength(kappa: float) -> str:
    """Landis and Koch's (1977) words for a kappa value.

    Below 0 poor; up to 0.20 slight; 0.40 fair; 0.60 moderate; 0.80 substantial;
    above that almost perfect.
    """
    if kappa < 0:
        return "poor"
    for bound, word in (
        (0.20, "slight"),
        (0.40, "fair"),
        (0.60, "moderate"),
        (0.80, "substantial"),
    ):
        if kappa <= bound:
            return word
    return "almost perfect"


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


# --- report models -----------------------------------------------------------------


class ConfidenceInterval(DocEvalsModel):
    """A percentile bootstrap interval."""

    low: float
    high: float


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
        text = f"judge agrees with humans on {_percent(figures.agreement)} of {level}"
        if figures.agreement_ci is not None:
            text += (
                f" ({_percent(self.confidence)} CI "
                f"{_percent(figures.agreement_ci.low, sign=False)}–"
                f"{_percent(figures.agreement_ci.high)})"
            )
        if figures.kappa is None:
            return text + ", κ undefined (one category only)"
        return text + f", κ {figures.kappa:.2f} ({kappa_strength(figures.kappa)})"

    def confusion_frame(self, level: LevelName = "cases") -> pd.DataFrame:
        """The confusion matrix of ``level`` as a DataFrame (rows human, columns judge)."""
        return self.level(level).confusion_frame()

    def to_markdown(self, *, max_rows: int = 50) -> str:
        """A compact Markdown report: verdict lines, a table and a confusion matrix per
        level, the panel, and the unpaired labels and items (at most ``max_rows``
        each; the JSON report has all of them)."""
        return _render_markdown(self, max_rows)


# --- pairing labels with judge answers ----------------------------------------------


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


# --- per-level figures --------------------------------------------------------------


def _percentile_interval(values: npt.NDArray[np.float64], confidence: float) -> ConfidenceInterval:
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return ConfidenceInterval(low=float(low), high=float(high))


def _bootstrap(
    human: npt.NDArray[np.int64],
    judge: npt.NDArray[np.int64],
    categories: int,
    resamples: int,
    rng: np.random.Generator,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Agreement and kappa of ``resamples`` resamples of the units (NaN: undefined)."""
    units = len(human)
    batch = max(1, min(resamples, _BOOTSTRAP_CELLS // units))
    agreements: list[npt.NDArray[np.float64]] = []
    kappas: list[npt.NDArray[np.float64]] = []
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        index = rng.integers(0, units, size=(size, units))
        drawn_human, drawn_judge = human[index], judge[index]
        agreeing = (drawn_human == drawn_judge).sum(axis=1)
        chance = np.zeros(size, dtype=np.int64)
        for category in range(categories):
            chance += (drawn_human == category).sum(axis=1) * (drawn_judge == category).sum(axis=1)
        numerator = (units * agreeing - chance).astype(np.float64)
        denominator = (units * units - chance).astype(np.float64)
        # Division only where defined, so no warning (tests turn warnings into errors).
        kappa = np.full(size, np.nan)
        np.divide(numerator, denominator, out=kappa, where=denominator != 0)
        agreements.append(agreeing / units)
        kappas.append(kappa)
    return np.concatenate(agreements), np.concatenate(kappas)


def _undefined_note(pairs: Sequence[CalibrationPair], what: str) -> str:
    shown = sorted({pair.human for pair in pairs} | {pair.judge for pair in pairs})
    return f"{what} is undefined: humans and judge used one category only ({', '.join(shown)})"


def _level_figures(
    level: LevelName,
    pairs: list[CalibrationPair],
    *,
    human_categories: tuple[str, ...],
    abstention_categories: tuple[str, ...],
    positive: str,
    resamples: int,
    seed: np.random.SeedSequence,
    confidence: float,
) -> LevelCalibration:
    abstaining = [pair for pair in pairs if pair.judge in abstention_categories]
    decided = [pair for pair in pairs if pair.judge not in abstention_categories]
    seen_abstentions = Counter(pair.judge for pair in abstaining)
    # Known categories first in a fixed order, so matrices line up across runs.
    judge_categories = [*human_categories]
    judge_categories += [name for name in abstention_categories if seen_abstentions[name]]
    judge_categories += sorted({pair.judge for pair in pairs} - set(judge_categories))
    confusion = {human: dict.fromkeys(judge_categories, 0) for human in human_categories}
    for pair in pairs:
        confusion[pair.human][pair.judge] += 1
    kappa = cohen_kappa([pair.human for pair in pairs], [pair.judge for pair in pairs])
    kappa_decided = cohen_kappa([pair.human for pair in decided], [pair.judge for pair in decided])
    notes = []
    if not pairs:
        notes.append(f"no labelled {level}: nothing to compare")
    elif kappa is None:
        notes.append(_undefined_note(pairs, "κ"))
    if kappa is not None and kappa_decided is None and decided:
        notes.append(_undefined_note(decided, "κ on the decided subset"))
    called = sum(pair.judge == positive for pair in pairs)
    labelled = sum(pair.human == positive for pair in pairs)
    hits = sum(pair.judge == positive and pair.human == positive for pair in pairs)
    figures = LevelCalibration(
        level=level,
        n=len(pairs),
        agreement=_ratio(sum(pair.agrees for pair in pairs), len(pairs)),
        kappa=kappa,
        decided_n=len(decided),
        decided_agreement=_ratio(sum(pair.agrees for pair in decided), len(decided)),
        kappa_decided=kappa_decided,
        abstentions=len(abstaining),
        abstention_rate=_ratio(len(abstaining), len(pairs)),
        abstention_counts=dict(seen_abstentions),
        positive=positive,
        precision=_ratio(hits, called),
        recall=_ratio(hits, labelled),
        human_categories=list(human_categories),
        judge_categories=judge_categories,
        confusion=confusion,
        notes=notes,
        pairs=pairs,
    )
    if not pairs or resamples == 0:
        return figures
    codes = {name: code for code, name in enumerate(judge_categories)}
    agreements, kappas = _bootstrap(
        np.array([codes[pair.human] for pair in pairs], dtype=np.int64),
        np.array([codes[pair.judge] for pair in pairs], dtype=np.int64),
        len(judge_categories),
        resamples,
        np.random.default_rng(seed),
    )
    figures.bootstrap_resamples = resamples
    figures.agreement_ci = _percentile_interval(agreements, confidence)
    defined = kappas[~np.isnan(kappas)]
    figures.kappa_resamples = int(defined.size)
    if defined.size:
        figures.kappa_ci = _percentile_interval(defined, confidence)
    # With no kappa at all, the note above already says why; no second one per resample.
    if kappa is not None and defined.size < resamples:
        figures.notes.append(
            f"κ was undefined in {resamples - defined.size} of {resamples} bootstrap "
            "resamples (one category only); its interval uses the rest"
        )
    return figures


def _variant_figures(name: str, pairs: Sequence[tuple[str, str]]) -> VariantCalibration:
    decided = [(human, judge) for human, judge in pairs if judge not in CASE_ABSTENTIONS]
    return VariantCalibration(
        name=name,
        n=len(pairs),
        agreement=_ratio(sum(human == judge for human, judge in pairs), len(pairs)),
        kappa=cohen_kappa([human for human, _ in pairs], [judge for _, judge in pairs]),
        kappa_decided=cohen_kappa([human for human, _ in decided], [judge for _, judge in decided]),
        abstentions=len(pairs) - len(decided),
    )


def _panel_figures(
    units: Sequence[_Judged], variant_pairs: Mapping[str, list[tuple[str, str]]]
) -> PanelCalibration | None:
    panels = [unit for unit in units if unit.variants is not None]
    if not panels:
        return None
    names: list[str] = []
    for unit in panels:
        names.extend(name for name in unit.variants or {} if name not in names)
    notes = []
    sizes = sorted({len(unit.variants or {}) for unit in panels})
    rows: list[list[int]] = []
    folded = 0
    for unit in panels:
        folded += sum(
            verdict not in FLEISS_CATEGORIES for verdict in (unit.variants or {}).values()
        )
        votes = Counter(
            verdict if verdict in FLEISS_CATEGORIES else "uncertain"
            for verdict in (unit.variants or {}).values()
        )
        rows.append([votes[category] for category in FLEISS_CATEGORIES])
    category_counts = {
        category: sum(row[column] for row in rows)
        for column, category in enumerate(FLEISS_CATEGORIES)
    }
    kappa: float | None = None
    observed: float | None = None
    raters: int | None = sizes[0] if len(sizes) == 1 else None
    if raters is None:
        notes.append(
            "panels differ in size ("
            + ", ".join(str(size) for size in sizes)
            + " variants); Fleiss' κ needs the same number of ratings per case"
        )
    elif raters < 2:
        notes.append("a panel of one variant: Fleiss' κ needs at least two")
    else:
        kappa = fleiss_kappa(rows)
        agreeing = sum(count * count for row in rows for count in row) - len(rows) * raters
        observed = agreeing / (len(rows) * raters * (raters - 1))
        if kappa is None:
            used = [category for category, count in category_counts.items() if count]
            notes.append(f"Fleiss' κ is undefined: every variant verdict is {', '.join(used)}")
    if folded:
        notes.append(
            f"{folded} variant verdict(s) other than pass, fail, uncertain count as uncertain"
        )
    return PanelCalibration(
        metrics=sorted({unit.metric for unit in panels}),
        variants=names,
        cases=len(panels),
        raters=raters,
        category_counts=category_counts,
        observed_agreement=observed,
        fleiss_kappa=kappa,
        variant_calibration=[_variant_figures(name, variant_pairs.get(name, [])) for name in names],
        notes=notes,
    )


def calibrate(
    reports: Iterable[EvaluationReport | PipelineEvaluationReport | SuiteReport],
    labels: Iterable[HumanLabel],
    *,
    metric: str | None = None,
    bootstrap: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CalibrationReport:
    """Compare a judge's verdicts in ``reports`` with human ``labels``.

    Each case label is paired with the verdict of ``metric`` on that case and stage
    (by default the stage's only judge or panel metric); each claim label with the
    judge's answer on that claim (a panel's consensus answer). Kappa is computed
    with the judge's unsure answers as categories of their own (the headline
    figure, which an abstaining judge cannot game) and on the decided subset.

    Intervals are percentile bootstrap intervals over ``bootstrap`` resamples of the
    labelled units, drawn from a NumPy generator seeded with ``seed`` (each level
    from its own stream, so the case interval does not depend on the claims);
    ``bootstrap=0`` skips them.

    Raises:
        ConfigurationError: a stage has several judge metrics and ``metric`` is not
            given, no stage has the metric asked for, or a setting is out of range.
        InputError: a suite report is passed, a case appears twice, a label is given
            twice, or a claim label does not fit its claim's kind.
    """
    if bootstrap < 0:
        raise ConfigurationError(f"bootstrap must be 0 or more, not {bootstrap}")
    if not 0 < confidence < 1:
        raise ConfigurationError(f"confidence {confidence} is outside (0, 1)")
    if seed < 0:
        raise ConfigurationError(f"seed must be 0 or more, not {seed}")
    labels = list(labels)
    _reject_repeats(labels)
    stages = _stage_reports(reports)
    units, present = _judged_units(stages, metric)
    if not units:
        if metric is not None:
            found = sorted({result.name for stage in stages for result in stage.metric_results})
            raise ConfigurationError(
                f"no report has a metric {metric!r}",
                expected=f"one of {', '.join(found)}" if found else None,
            )
        raise ConfigurationError("no report has a judge or panel metric to calibrate")
    pairing = _pair_labels(labels, units, present, metric)
    case_seed, claim_seed = np.random.SeedSequence(seed).spawn(2)
    cases = _level_figures(
        "cases",
        pairing.case_pairs,
        human_categories=CASE_LABELS,
        abstention_categories=CASE_ABSTENTIONS,
        positive="fail",
        resamples=bootstrap,
        seed=case_seed,
        confidence=confidence,
    )
    claims = _level_figures(
        "claims",
        pairing.claim_pairs,
        human_categories=PREDICTION_CLAIM_LABELS,
        abstention_categories=CLAIM_ABSTENTIONS,
        positive="incorrect",
        resamples=bootstrap,
        seed=claim_seed,
        confidence=confidence,
    )
    labelled = {_label_key(label) for label in labels}
    unlabelled_cases = [
        JudgedItem(
            case_id=unit.case_id,
            stage_id=unit.stage_id,
            metric=unit.metric,
            judge_answer=unit.verdict,
        )
        for unit in units.values()
        if (unit.case_id, unit.stage_id, None) not in labelled
    ]
    unlabelled_claims = [
        JudgedItem(
            case_id=unit.case_id,
            stage_id=unit.stage_id,
            claim_id=claim_id,
            metric=unit.metric,
            judge_answer=answer,
        )
        for unit in units.values()
        for claim_id, (_, answer) in (unit.claims or {}).items()
        if (unit.case_id, unit.stage_id, claim_id) not in labelled
    ]
    notes = []
    used = Counter(unit.metric for unit in units.values())
    if len(used) > 1:
        notes.append(
            "verdicts come from several metrics: "
            + ", ".join(f"{name} ({count} cases)" for name, count in sorted(used.items()))
        )
    blind = sum(unit.no_claims == _NO_ANSWER for unit in units.values())
    if blind:
        notes.append(
            f"{blind} judged case(s) hold no usable judge answer, so their claims are unknown"
        )
    if len({(pair.case_id, pair.stage_id) for pair in pairing.claim_pairs}) < claims.n:
        # Claims of one case share a document and a judge call; resampling them one by
        # one treats them as independent, which narrows the interval.
        claims.notes.append(
            "claims are resampled one by one, though claims of one case are not "
            "independent: the claim intervals are optimistic"
        )
    return CalibrationReport(
        metric=metric,
        metrics_used=sorted(used),
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        cases=cases,
        claims=claims,
        panel=_panel_figures(list(units.values()), pairing.variant_pairs),
        unmatched_labels=pairing.unmatched,
        unlabelled_cases=unlabelled_cases,
        unlabelled_claims=unlabelled_claims,
        notes=notes,
    )


# --- Markdown -------------------------------------------------------------------------


def _percent(value: float, *, sign: bool = True) -> str:
    text = f"{value * 100:.0f}"
    return text + "%" if sign else text


def _share(value: float | None, interval: ConfidenceInterval | None) -> str:
    if value is None:
        return "n/a"
    text = _percent(value)
    if interval is not None:
        text += f" ({_percent(interval.low, sign=False)}–{_percent(interval.high)})"
    return text


def _kappa_text(value: float | None, interval: ConfidenceInterval | None = None) -> str:
    if value is None:
        return "undefined"
    text = f"{value:.2f}"
    if interval is not None:
        # "to" rather than a dash: kappa bounds can be negative.
        text += f" ({interval.low:.2f} to {interval.high:.2f})"
    return text


def _level_markdown(report: CalibrationReport, name: LevelName) -> list[str]:
    from docevals_mlflow.reports.markdown import table

    figures = report.level(name)
    lines = [f"## {name.capitalize()}", "", report.verdict_line(name), ""]
    if figures.n == 0:
        return lines
    level = _percent(report.confidence)
    lines += table(
        [
            "n",
            f"agreement ({level} CI)",
            f"κ ({level} CI)",
            "κ decided",
            "abstentions",
            f"{figures.positive} precision",
            f"{figures.positive} recall",
        ],
        [
            (
                figures.n,
                _share(figures.agreement, figures.agreement_ci),
                _kappa_text(figures.kappa, figures.kappa_ci),
                _kappa_text(figures.kappa_decided),
                f"{figures.abstentions} of {figures.n}",
                _share(figures.precision, None),
                _share(figures.recall, None),
            )
        ],
    )
    lines += ["", "Rows human, columns judge:", ""]
    lines += table(
        ["human \\ judge", *figures.judge_categories],
        (
            [human, *(figures.confusion[human][judge] for judge in figures.judge_categories)]
            for human in figures.human_categories
        ),
    )
    if figures.notes:
        lines += ["", *(f"- {note}" for note in figures.notes)]
    return [*lines, ""]


def _render_markdown(report: CalibrationReport, max_rows: int) -> str:
    from docevals_mlflow.reports.markdown import table

    lines = ["# Judge calibration", ""]
    lines += [
        f"Metric: {', '.join(f'`{name}`' for name in report.metrics_used)}; "
        f"bootstrap {report.bootstrap} resamples, seed {report.seed}.",
        "",
    ]
    lines += _level_markdown(report, "cases")
    lines += _level_markdown(report, "claims")
    panel = report.panel
    if panel is not None:
        lines += ["## Panel", ""]
        if panel.fleiss_kappa is None:
            lines.append(f"Fleiss' κ across variants on {panel.cases} cases: undefined")
        else:
            lines.append(
                f"Fleiss' κ across {panel.raters} variants on {panel.cases} cases: "
                f"{panel.fleiss_kappa:.2f} ({kappa_strength(panel.fleiss_kappa)})"
            )
        lines += [
            "",
            *table(
                ["variant", "labelled cases", "agreement", "κ with humans", "abstentions"],
                (
                    (
                        variant.name,
                        variant.n,
                        _share(variant.agreement, None),
                        _kappa_text(variant.kappa),
                        variant.abstentions,
                    )
                    for variant in panel.variant_calibration
                ),
            ),
        ]
        lines += ["", *(f"- {note}" for note in panel.notes), ""]
    if report.unmatched_labels:
        lines += [f"## Unmatched labels ({len(report.unmatched_labels)})", ""]
        lines += table(
            ["case", "stage", "claim", "label", "reason"],
            (
                (
                    item.label.case_id,
                    item.label.stage_id,
                    item.label.claim_id,
                    item.label.label,
                    item.reason,
                )
                for item in report.unmatched_labels[:max_rows]
            ),
        )
        lines += _more(len(report.unmatched_labels), max_rows)
    if report.unlabelled_cases or report.unlabelled_claims:
        lines += [
            "## Unlabelled judged items",
            "",
            f"{len(report.unlabelled_cases)} judged case(s) and "
            f"{len(report.unlabelled_claims)} judged claim(s) have no human label.",
            "",
        ]
        if report.unlabelled_cases:
            lines += table(
                ["case", "stage", "judge verdict"],
                (
                    (item.case_id, item.stage_id, item.judge_answer)
                    for item in report.unlabelled_cases[:max_rows]
                ),
            )
            lines += _more(len(report.unlabelled_cases), max_rows)
    if report.notes:
        lines += ["## Notes", "", *(f"- {note}" for note in report.notes), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _more(total: int, shown: int) -> list[str]:
    if total <= shown:
        return [""]
    return ["", f"... and {total - shown} more (see the JSON report).", ""]
