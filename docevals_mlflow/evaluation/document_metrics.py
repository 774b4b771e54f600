"""Reading-stage metrics for pipelines: text (CER, WER, normalized edit distance, token
F1), tables (TEDS, TEDS-S) and ANLS*, scored on a stage's prediction against its
ground truth with :mod:`docevals_mlflow.docmetrics`.

Each metric compares the prediction (or the value at ``path`` in it) with the value of
the case's first usable reference: ``ground_truth`` references, else ``generated`` ones
(the basis then says the result is provisional), never evidence, never a reference in
``semantic`` comparison mode, and only references that hold content (text files,
JSON, CSV tables, inline values). A case without one is ``not_applicable``.

The prediction is the system's output, so a prediction that is not what the metric
reads (a number where text is due, a malformed table, no value at ``path``) is the
model's failure: verdict ``fail`` with the reason and the worst score. The reference
is the user's input, so the same problems there raise an :class:`InputError` naming
the case, the reference and the path.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import model_validator

from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.paths import FieldPath, parse_path
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.docmetrics.anls import anls_star
from docevals_mlflow.docmetrics.normalize import (
    TextNormalization,
    UnicodeForm,
)
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.evaluation.exact import GENERATED_BASIS, GROUND_TRUTH_BASIS

TextMeasure = Literal["cer", "wer", "ned", "token_f1"]
TEXT_MEASURES: tuple[str, ...] = ("cer", "wer", "ned", "token_f1")
TableFormat = Literal["auto", "html", "markdown"]
ERROR_MEASURES = frozenset({"cer", "wer", "ned"})
_MISSING = object()


class NormalizationOptions(DocEvalsModel):
    """The ``normalization:`` options of a ``text`` metric: those of
    :class:`~docevals_mlflow.docmetrics.normalize.TextNormalization`, same defaults."""

    unicode_form: UnicodeForm = "NFC"
    collapse_whitespace: bool = True
    casefold: bool = False
    remove_punctuation: bool = False

    @model_validator(mode="before")
    @classmethod
    def _known_options(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(str(key) for key in data if key not in cls.model_fields)
            if unknown:
                # ``case: false`` could mean either "ignore case" or "do not fold":
                # the options keep TextNormalization's unambiguous names.
                raise ValueError(
                    f"unknown option {', '.join(repr(k) for k in unknown)}; the options are "
                    "unicode_form (NFC, NFKC, none), collapse_whitespace, casefold "
                    "(true: compare without case) and remove_punctuation"
                )
        return data

    def build(self) -> TextNormalization:
        """The normalization these options describe."""
        return TextNormalization(**self.model_dump())


def threshold_problem(
    kind: str, measure: str | None, max_error: float | None, min_score: float | None
) -> str | None:
    """What is wrong with a document metric's threshold options, or ``None``.

    ``max_error`` bounds an error figure (CER, WER, NED) from above; ``min_score`` a
    score (token F1, TEDS, ANLS*) from below. Used by the classes and the config file.
    """
    if max_error is not None and min_score is not None:
        return "give one of 'max_error' and 'min_score', not both"
    chosen = measure or "cer"
    if kind == "text" and chosen not in TEXT_MEASURES:
        return f"measure {chosen!r} is not one of {', '.join(TEXT_MEASURES)}"
    lower_is_better = kind == "text" and chosen in ERROR_MEASURES
    if lower_is_better and min_score is not None:
        return f"measure {chosen!r} is an error rate (lower is better): use 'max_error'"
    if not lower_is_better and max_error is not None:
        what = f"measure {chosen!r}" if kind == "text" else f"a {kind} metric's score"
        return f"{what} is a score (higher is better): use 'min_score'"
    if max_error is not None and max_error < 0:
        return f"max_error must be >= 0, got {max_error}"
    if min_score is not None and not 0 <= min_score <= 1:
        return f"min_score must be between 0 and 1, got {min_score}"
    return None


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise ConfigurationError("a metric needs a non-empty name")
    return name


def _parsed_path(path: str | None) -> FieldPath | None:
    if path is None:
        return None
    try:
        return parse_path(path)
    except InputError as error:
        raise ConfigurationError(error.message, path="path") from None


def follow(value: Any, path: FieldPath) -> Any:
    """The value at ``path`` (a digit key indexes a list, so ``pages.0.text`` works);
    ``_MISSING`` when there is none."""
    current = value
    for segment in path:
        if isinstance(current, list):
            index = segment if isinstance(segment, int) else None
            if isinstance(segment, str) and segment.isdigit():
                index = int(segment)
            if index is None or index >= len(current):
                return _MISSING
            current = current[index]
        elif isinstance(current, dict) and str(segment) in current:
            current = current[str(segment)]
        else:
            return _MISSING
    return current


def _is_json(reference: ReferenceArtifact) -> bool:
    return reference.content_format == "json" and isinstance(reference.content, (dict, list))


class DocumentMetricBase:
    """What the three metrics share: a name, a path, the reference and the verdict."""

    name: str

    def __init__(self, name: str, path: str | None) -> None:
        self.name = _check_name(name)
        self.path = path
        self._path = _parsed_path(path)

    def _fits(self, content: Any) -> bool:
        """Whether a reference's content is one this metric reads (without a path)."""
        raise NotImplementedError

    def _reference(self, case: EvaluationCase) -> tuple[ReferenceArtifact | None, str, list[str]]:
        """The reference to compare with, its basis, and notes (``None`` when none)."""
        held = [
            ref
            for ref in case.references
            if ref.content is not None
            and ref.comparison_mode != "semantic"
            and ref.authority in ("ground_truth", "generated")
        ]
        truth = [ref for ref in held if ref.authority == "ground_truth"]
        chosen, basis = (truth, GROUND_TRUTH_BASIS) if truth else (held, GENERATED_BASIS)
        if not chosen:
            return None, "none", ["no ground_truth or generated reference with content"]
        # With a path, JSON references come first (the path leads into them); a text
        # or table file is the expected value as a whole either way.
        structured = [ref for ref in chosen if self._path is not None and _is_json(ref)]
        whole = [ref for ref in chosen if not _is_json(ref) and self._fits(ref.content)]
        if self._path is None:
            whole = [ref for ref in chosen if self._fits(ref.content)]
        fitting = structured + whole
        if not fitting:
            # As a field metric facing only a path table: the stage has truth, just not
            # of this kind (a metric listed under ``default`` reaches every stage).
            ids = ", ".join(repr(ref.id) for ref in chosen)
            wanted = self._wants()
            if self._path is not None:
                wanted += f" or JSON to follow path {self.path!r} into"
            return None, basis, [f"no reference holds {wanted} (references: {ids})"]
        notes = []
        if len(fitting) > 1:
            notes.append(f"{len(fitting)} usable references; compared with {fitting[0].id!r} only")
        return fitting[0], basis, notes

    def _wants(self) -> str:
        raise NotImplementedError

    def _expected(self, case: EvaluationCase, reference: ReferenceArtifact) -> Any:
        if self._path is None or not _is_json(reference):
            return reference.content
        value = follow(reference.content, self._path)
        if value is _MISSING:
            raise InputError(
                f"case {case.case_id!r}, reference {reference.id!r}: no value at path "
                f"{self.path!r}",
                expected="the path to exist in the reference",
            )
        return value

    def _predicted(self, case: EvaluationCase) -> tuple[Any, str | None]:
        """The value to score, or a reason the prediction has none."""
        if self._path is None:
            return case.prediction, None
        value = follow(case.prediction, self._path)
        if value is _MISSING:
            return None, f"the prediction has no value at path {self.path!r}"
        return value, None

    def _where(self, case: EvaluationCase, reference: ReferenceArtifact) -> str:
        at = f", path {self.path!r}" if self.path is not None and _is_json(reference) else ""
        return f"case {case.case_id!r}, reference {reference.id!r}{at}"

    def _not_applicable(self, basis: str, notes: list[str]) -> MetricResult:
        return MetricResult(name=self.name, basis=basis, verdict="not_applicable", notes=notes)


def verdict_of(value: float, *, lower_is_better: bool, bound: float | None) -> Verdict:
    """``pass`` when ``value`` is within ``bound``; without one only a perfect value
    (0 error, score 1) passes, as a field metric passes only when all is right."""
    if lower_is_better:
        return "pass" if value <= (bound if bound is not None else 0.0) else "fail"
    return "pass" if value >= (bound if bound is not None else 1.0) else "fail"


class AnlsMetric(DocumentMetricBase):
    """ANLS* of a stage's whole prediction (or the value at ``path``) against the
    reference (see :mod:`docevals_mlflow.docmetrics.anls`): strings, numbers, ``None``,
    lists and dicts, recursively. Passes at ``min_score`` or above, or without one
    only at 1. A prediction holding a value ANLS* cannot read fails with 0.
    """

    def __init__(
        self, name: str = "anls", *, min_score: float | None = None, path: str | None = None
    ) -> None:
        problem = threshold_problem("anls", None, None, min_score)
        if problem:
            raise ConfigurationError(problem)
        super().__init__(name, path)
        self.min_score = min_score

    def config(self) -> dict[str, Any]:
        """Settings that change this metric's result."""
        return {"min_score": self.min_score, "path": self.path}

    def _fits(self, content: Any) -> bool:
        return True

    def _wants(self) -> str:
        return "a value"

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Score the prediction against the reference with ANLS*."""
        reference, basis, notes = self._reference(case)
        if reference is None:
            return self._not_applicable(basis, notes)
        expected = self._expected(case, reference)
        try:
            # Checks the reference alone first, so that its problems are the user's.
            anls_star(expected, None)
        except InputError as error:
            raise InputError(f"{self._where(case, reference)}: {error.message}") from None
        predicted, problem = self._predicted(case)
        score = 0.0
        if problem is None:
            try:
                score = anls_star(expected, predicted)
            except InputError as error:
                problem = error.message
        details: dict[str, Any] = {"reference_id": reference.id, "path": self.path}
        if problem is not None:
            details["prediction_problem"] = problem
            notes = [*notes, f"not scored: {problem}"]
        return MetricResult(
            name=self.name,
            basis=basis,
            verdict=(
                "fail"
                if problem is not None
                else verdict_of(score, lower_is_better=False, bound=self.min_score)
            ),
            scores={"anls_star": score},
            details=details,
            notes=notes,
        )
