"""The ``text`` stage metric: CER, WER, normalized edit distance and token F1 of a
stage's text output (see :mod:`docevals_mlflow.evaluation.document_metrics`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.docmetrics.normalize import DEFAULT, TextNormalization, check_text
from docevals_mlflow.docmetrics.text import score_texts
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.evaluation.document_metrics import (
    ERROR_MEASURES,
    DocumentMetricBase,
    TextMeasure,
    threshold_problem,
    verdict_of,
)


class TextMetric(DocumentMetricBase):
    """CER, WER, normalized edit distance and token F1 of a stage's text output.

    The prediction and the reference are texts (``str``: a page, a region, a Markdown
    document), or JSON holding them at ``path`` (``pages.0.text``). Every figure is
    reported; ``measure`` (``cer``, ``wer``, ``ned`` or ``token_f1``) is the one the
    verdict reads: an error rate passes at most ``max_error``, token F1 at least
    ``min_score``; with no threshold only a perfect figure passes. A prediction that
    is not text fails with error 1 and token F1 0.
    """

    def __init__(
        self,
        name: str = "text",
        *,
        measure: TextMeasure = "cer",
        max_error: float | None = None,
        min_score: float | None = None,
        normalization: TextNormalization = DEFAULT,
        path: str | None = None,
    ) -> None:
        problem = threshold_problem("text", measure, max_error, min_score)
        if problem:
            raise ConfigurationError(problem)
        super().__init__(name, path)
        self.measure = measure
        self.max_error = max_error
        self.min_score = min_score
        self.normalization = normalization

    def config(self) -> dict[str, Any]:
        """Settings that change this metric's result."""
        return {
            "measure": self.measure,
            "max_error": self.max_error,
            "min_score": self.min_score,
            "normalization": asdict(self.normalization),
            "path": self.path,
        }

    def _fits(self, content: Any) -> bool:
        return isinstance(content, str)

    def _wants(self) -> str:
        return "text"

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Score the predicted text against the reference text."""
        reference, basis, notes = self._reference(case)
        if reference is None:
            return self._not_applicable(basis, notes)
        expected = check_text(self._expected(case, reference), self._where(case, reference))
        predicted, problem = self._predicted(case)
        if problem is None:
            try:
                check_text(predicted, "the prediction")
            except InputError as error:
                problem = error.message
        normalized = self.normalization.apply(expected)
        counts = {
            "reference_characters": len(normalized),
            "reference_words": len(normalized.split()),
        }
        details = {"reference_id": reference.id, "measure": self.measure, "path": self.path}
        if problem is not None:
            return MetricResult(
                name=self.name,
                basis=basis,
                verdict="fail",
                scores={"cer": 1.0, "wer": 1.0, "ned": 1.0, "token_f1": 0.0},
                counts=counts,
                details={**details, "prediction_problem": problem},
                notes=[*notes, f"not scored as text: {problem}"],
            )
        pair = score_texts(
            [expected], [predicted], names=[case.case_id], normalization=self.normalization
        ).items[0]
        scores = {
            "cer": pair.cer,
            "wer": pair.wer,
            "ned": pair.edit_distance,
            "token_f1": pair.token_f1,
        }
        lower = self.measure in ERROR_MEASURES
        bound = self.max_error if lower else self.min_score
        return MetricResult(
            name=self.name,
            basis=basis,
            verdict=verdict_of(scores[self.measure], lower_is_better=lower, bound=bound),
            scores=dict(scores),
            counts={
                **counts,
                "predicted_characters": pair.predicted_chars,
                "predicted_words": pair.predicted_words,
                "character_edits": pair.char_edits,
                "word_edits": pair.word_edits,
            },
            details=details,
            notes=notes,
        )
