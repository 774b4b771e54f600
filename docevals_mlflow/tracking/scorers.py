"""Field comparison as an ``mlflow.genai`` scorer.

``mlflow.genai.evaluate`` has no plugin group: custom logic ships as
:class:`~mlflow.genai.scorers.Scorer` objects passed in ``scorers=[...]``. This module
provides one, :class:`FieldComparisonScorer`, which compares a record's ``outputs``
(the predicted document) with its ``expectations`` (the expected document) by the
rules of a :class:`~docevals_mlflow.fields.schema.DocumentSchema`::

    scorer = FieldComparisonScorer(schema, metrics=("f1", "recall"), fields=["total"])
    mlflow.genai.evaluate(data=records, scorers=[scorer])
    # run metrics: docevals/f1/mean, docevals/recall/mean,
    #              docevals/field/total/f1/mean, docevals/field/total/recall/mean

MLflow turns every feedback name into a metric key (``<name>/mean``) only after all
records are scored, and an illegal character then fails the whole evaluation; every
name here is therefore made legal with :func:`~docevals_mlflow.tracking.keys.legal_key`
when the scorer is built, before anything is paid for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from mlflow.entities import AssessmentSource, Feedback
from mlflow.genai.scorers import Scorer
from pydantic import PrivateAttr

from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer
from docevals_mlflow.fields.counts import METRIC_NAMES, Counts
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.tracking.keys import legal_key, template_segment
from docevals_mlflow.tracking.layout_shared import CELL_NAMES

SOURCE_ID = "docevals"
"""``source_id`` of every feedback: the assessments come from docevals code, not a judge."""

DEFAULT_METRICS: tuple[str, ...] = ("f1", "precision", "recall")
SCORER_METRICS: tuple[str, ...] = (*METRIC_NAMES, *CELL_NAMES)
"""What a feedback can report: the derived metrics and the raw cell counts."""

MAX_LISTED = 20
"""Wrong fields listed in a rationale; a record with more says how many were left out."""
_MAX_VALUE_TEXT = 60


def _text(value: Any) -> str:
    """A compared value as short text for a rationale."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    shown = text if len(text) <= _MAX_VALUE_TEXT else text[: _MAX_VALUE_TEXT - 1] + "…"
    return json.dumps(shown, ensure_ascii=False) if isinstance(value, str) else shown


def _document(value: Any, role: str) -> Mapping[str, Any]:
    """A record's document: a mapping, or its JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{role} is not valid JSON ({exc.msg} at character {exc.pos})",
                expected="a JSON object, or its text",
            ) from None
    if not isinstance(value, Mapping):
        raise InputError(
            f"{role} is a {type(value).__name__}, not an object",
            expected="the document as a dict (or JSON text)",
        )
    return value


def wrong_fields(
    comparison: DocumentComparison, templates: Iterable[str] | None = None
) -> list[str]:
    """``path: expected …, got … (outcome, method)`` for every comparison that is not
    TP or TN, optionally only those of the given field templates."""
    only = None if templates is None else set(templates)
    wrong = []
    for row in comparison.row_dicts():
        if row["matched"] or (only is not None and row["template"] not in only):
            continue
        wrong.append(
            f"{row['path']}: expected {_text(row['expected'])}, got {_text(row['actual'])} "
            f"({row['outcome']}, {row['method']})"
        )
    return wrong


def _listing(label: str, wrong: list[str]) -> str:
    """``label: a; b; … and N more`` (at most ``MAX_LISTED`` entries), or ``""``."""
    if not wrong:
        return ""
    more = len(wrong) - MAX_LISTED
    return f"{label}: " + "; ".join(wrong[:MAX_LISTED]) + (f"; and {more} more" if more > 0 else "")


def _undefined_reason(metric: str, counts: Counts) -> str:
    """Why a ratio has no value: which of its denominators is zero."""
    if metric == "precision":
        return "nothing was predicted (TP + FP = 0)"
    if metric == "recall":
        return "nothing was expected (TP + FN = 0)"
    if metric == "f1":
        return "there was nothing to find and nothing was predicted (TP + FP + FN = 0)"
    if metric == "far":
        return "no field was expected to be empty (FA + TN = 0)"
    if metric == "fdr":
        return "no predicted value was compared with an expected one (FD + TP = 0)"
    return f"no field was compared ({counts.total} comparisons)"


def _metric_value(metric: str, counts: Counts) -> float | None:
    if metric in CELL_NAMES:
        return float(getattr(counts, metric))
    return counts.metrics()[metric]


def _counts_text(counts: Counts) -> str:
    return ", ".join(f"{name.upper()} {getattr(counts, name)}" for name in CELL_NAMES)


class FieldComparisonScorer(Scorer):
    """Compares a record's ``outputs`` with its ``expectations``, field by field.

    One scorer returning a list of :class:`~mlflow.entities.Feedback` rather than a
    factory of one scorer per metric: a single comparison of the record gives every
    metric, whereas MLflow would run N scorers as N comparisons of the same record.

    Args:
        schema: a :class:`DocumentSchema`, a schema dict in any supported form, the
            path of a schema file, or ``None`` (every field compared by inferred rules).
        name: the scorer's name and the first segment of every feedback name.
        metrics: which figures each record reports: ``precision``, ``recall``, ``f1``,
            ``accuracy``, ``far``, ``fdr``, or the cell counts ``tp fa fd fn tn``.
        fields: field templates (``$.total``, ``total``, ``Transactions.Amount``) that
            also get per-field feedback, named ``<name>/field/<field>/<metric>``.
        expectation_key: when the expected document is one entry of ``expectations``
            (``{"document": {...}}``), its key; by default ``expectations`` is the
            expected document itself.
        document_class: the schema class to compare with (default: the schema's
            default class, or its only class).

    Feedback names are ``<name>/<metric>``, made legal as MLflow metric keys. An
    undefined metric (a zero denominator, say recall of a record that expects
    nothing) is reported as a feedback with value ``None`` and the reason as its
    rationale: MLflow leaves ``None`` out of the mean, so ``<name>/f1/mean`` is the
    mean over the records where F1 is defined, and the per-record view still shows
    why the others have none.

    MLflow computes ``mean`` for each feedback name. It looks a scorer's
    ``aggregations`` up by the part of the feedback name after the first ``/``, which
    here is the metric, not this scorer; so custom aggregations would be silently
    ignored and are not offered.

    This is a class-based scorer, so it cannot be registered with
    ``Scorer.register`` (MLflow serialises only built-in and ``@scorer`` scorers).
    """

    document_schema: DocumentSchema | None = None
    metrics: tuple[str, ...] = DEFAULT_METRICS
    fields: tuple[str, ...] | None = None
    expectation_key: str | None = None
    document_class: str | None = None

    _comparer: FieldComparer = PrivateAttr()
    _field_segments: dict[str, str] = PrivateAttr(default_factory=dict)

    def __init__(
        self,
        schema: DocumentSchema | Mapping[str, Any] | str | os.PathLike[str] | None = None,
        *,
        name: str = "docevals",
        metrics: Iterable[str] = DEFAULT_METRICS,
        fields: Iterable[str] | None = None,
        expectation_key: str | None = None,
        document_class: str | None = None,
        description: str | None = None,
    ) -> None:
        from docevals_mlflow.tracking.plugin import resolve_schema

        wanted = tuple(metrics)
        unknown = [metric for metric in wanted if metric not in SCORER_METRICS]
        if unknown or not wanted:
            raise InputError(
                f"unknown scorer metrics: {', '.join(map(repr, unknown))}"
                if unknown
                else "a scorer needs at least one metric",
                expected=", ".join(SCORER_METRICS),
            )
        field_list = None if fields is None else tuple(fields)
        if field_list is not None and not all(
            isinstance(field, str) and template_segment(field) != "_" for field in field_list
        ):
            raise InputError(
                f"fields must be field templates, got {field_list!r}",
                expected="names such as '$.total' or 'Transactions.Amount'",
            )
        seen: dict[str, str] = {}
        for field in field_list or ():
            # Two spellings of one field would give two feedbacks of the same name.
            other = seen.setdefault(template_segment(field), field)
            if other != field:
                raise InputError(f"fields {other!r} and {field!r} name the same field")
        super().__init__(
            name=name,
            description=description
            or "docevals field comparison of outputs with expectations: " + ", ".join(wanted),
            document_schema=resolve_schema(schema),
            metrics=wanted,
            fields=field_list,
            expectation_key=expectation_key,
            document_class=document_class,
        )
        # Built once: a schema whose fields need an unavailable provider fails here,
        # naming the field, rather than once per record inside the evaluation.
        self._comparer = FieldComparer(
            self.document_schema
            if self.document_schema is not None
            else DocumentSchema(schema_id="inferred")
        )
        self._field_segments = {field: template_segment(field) for field in field_list or ()}

    def feedback_name(self, metric: str, field: str | None = None) -> str:
        """The (legal) feedback name of ``metric``, overall or for one field template."""
        if field is None:
            return legal_key(f"{self.name}/{metric}")
        return legal_key(f"{self.name}/field/{template_segment(field)}/{metric}")

    def feedback_names(self) -> list[str]:
        """Every feedback name one record produces, in order."""
        names = [self.feedback_name(metric) for metric in self.metrics]
        for field in self.fields or ():
            names += [self.feedback_name(metric, field) for metric in self.metrics]
        return names

    def compare(self, outputs: Any, expectations: Any) -> DocumentComparison:
        """The field comparison of one record (``outputs`` against ``expectations``)."""
        if expectations is None:
            raise InputError("the record has no expectations (the expected document)")
        expected: Any = expectations
        if self.expectation_key is not None:
            if not isinstance(expectations, Mapping) or self.expectation_key not in expectations:
                keys = sorted(expectations) if isinstance(expectations, Mapping) else []
                raise InputError(
                    f"expectations have no {self.expectation_key!r} entry (they have: "
                    f"{', '.join(map(repr, keys)) or 'none'})",
                    expected="the expected document under expectation_key",
                )
            expected = expectations[self.expectation_key]
        return self._comparer.compare(
            _document(expected, "the expected document"),
            _document(outputs, "outputs"),
            document_class=self.document_class,
        )

    def _feedback(self, name: str, metric: str, counts: Counts, context: str) -> Feedback:
        value = _metric_value(metric, counts)
        if value is None:
            rationale = f"{metric} is undefined: {_undefined_reason(metric, counts)}. {context}"
        else:
            rationale = f"{metric} = {metric_text(value)} ({_counts_text(counts)}). {context}"
        return Feedback(
            name=name,
            value=value,
            rationale=rationale.strip(),
            source=AssessmentSource(source_type="CODE", source_id=SOURCE_ID),
        )

    # MLflow documents narrowing __call__ to the arguments a scorer uses, and passes
    # only those (Scorer.run inspects the signature); mypy sees an incompatible override.
    def __call__(  # type: ignore[override]
        self, *, outputs: Any = None, expectations: Any = None
    ) -> list[Feedback]:
        """Feedback for each requested metric, overall and for each requested field.

        Values are floats (``None`` where a metric is undefined); each rationale gives
        the cell counts and lists the wrong fields with expected and predicted values.
        """
        comparison = self.compare(outputs, expectations)
        context = _listing("Wrong fields", wrong_fields(comparison)) or "No wrong fields."
        feedback = [
            self._feedback(self.feedback_name(metric), metric, comparison.counts, context)
            for metric in self.metrics
        ]
        if self.fields:
            feedback += self._field_feedback(comparison)
        return feedback

    def _field_feedback(self, comparison: DocumentComparison) -> list[Feedback]:
        by_segment: dict[str, list[str]] = {}
        for template in comparison.cells:
            by_segment.setdefault(template_segment(template), []).append(template)
        out = []
        for field in self.fields or ():
            templates = by_segment.get(self._field_segments[field], [])
            counts = Counts()
            for template in templates:
                counts.add_list(comparison.cells[template])
            context = (
                _listing("Wrong", wrong_fields(comparison, templates)) or "No wrong values."
                if templates
                else f"Field {field!r} was not compared in this record."
            )
            out += [
                self._feedback(self.feedback_name(metric, field), metric, counts, context)
                for metric in self.metrics
            ]
        return out


__all__ = [
    "DEFAULT_METRICS",
    "MAX_LISTED",
    "SCORER_METRICS",
    "SOURCE_ID",
    "FieldComparisonScorer",
    "wrong_fields",
]
