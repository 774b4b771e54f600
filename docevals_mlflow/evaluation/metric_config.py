"""The ``metrics`` section of a pipeline configuration: which metric types exist,
the options each reads, and how a metric entry becomes a :class:`Metric`."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from docevals_mlflow.core.model import DocEvalsModel, Number
from docevals_mlflow.errors import InputError
from docevals_mlflow.evaluation.document_metrics import (
    AnlsMetric,
    NormalizationOptions,
    TableFormat,
    TextMeasure,
    threshold_problem,
)
from docevals_mlflow.evaluation.exact import ExactStructuredMetric
from docevals_mlflow.evaluation.field_metric import FieldMetric
from docevals_mlflow.evaluation.judge_metrics import (
    JUDGE_METRIC_NAME,
    llm_judge_metric,
    load_judge_panel_metric,
)
from docevals_mlflow.evaluation.metrics import FunctionMetric, Metric
from docevals_mlflow.evaluation.table_metric import TableMetric
from docevals_mlflow.evaluation.text_metric import TextMetric
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.judges.config import JudgeConfig, JudgeRuntime

JUDGE_FIELDS = frozenset(JudgeConfig.model_fields) - {"name"}
"""Fields a ``judge`` metric writes inline; ``name`` stays the metric's name."""


MetricType = Literal["exact", "field", "function", "judge", "panel", "text", "table", "anls"]
METRIC_TYPES: frozenset[str] = frozenset(
    ("exact", "field", "function", "judge", "panel", "text", "table", "anls")
)


_TYPE_OPTIONS: dict[str, tuple[str, ...]] = {
    "relative_tolerance": ("exact",),
    "absolute_tolerance": ("exact",),
    "case_sensitive": ("exact",),
    "fail_on_unexpected": ("exact",),
    "score_name": ("function",),
    "threshold": ("function",),
    "measure": ("text",),
    "max_error": ("text",),
    "normalization": ("text",),
    "min_score": ("text", "table", "anls"),
    "path": ("text", "table", "anls"),
    "structure_only": ("table",),
    "format": ("table",),
}
"""Options only some metric types read (the field and judge options are checked apart)."""


class MetricConfig(DocEvalsModel):
    """A metric: ``exact``, ``field`` (the field engine with a ``schema`` file:
    per-field methods, Hungarian list matching; ``document_class`` and ``min_scores``
    optional), ``text``/``table``/``anls`` (reading-stage metrics, see
    :mod:`~docevals_mlflow.evaluation.document_metrics`), a ``function`` named
    ``module:attribute``, an LLM ``judge`` (the
    :class:`JudgeConfig` fields inline) or a judge ``panel`` (a panel file path).
    Paths are relative to the configuration file."""

    type: MetricType
    name: str | None = None
    relative_tolerance: Number = Field(default=1e-6, ge=0)
    absolute_tolerance: Number = Field(default=1e-6, ge=0)
    case_sensitive: bool = False
    fail_on_unexpected: bool = False
    callable: str | None = None
    score_name: str = "score"
    threshold: Number | None = None
    judge: JudgeConfig | None = None
    """For ``judge``: gathered from the inline fields (``provider``, ``model``, ...)."""
    panel: str | None = None
    schema_file: str | None = Field(default=None, alias="schema")
    """For ``field``: the schema file (YAML/JSON); without it fields are inferred."""
    document_class: str | None = None
    min_scores: dict[str, Number] | None = None
    measure: TextMeasure = "cer"
    """For ``text``: the figure the verdict reads (``cer``, ``wer``, ``ned``, ``token_f1``)."""
    max_error: Number | None = None
    min_score: Number | None = None
    normalization: NormalizationOptions = Field(default_factory=NormalizationOptions)
    path: str | None = None
    """For ``text``, ``table``, ``anls``: the value inside JSON prediction and reference."""
    structure_only: bool = False
    format: TableFormat = "auto"

    @model_validator(mode="before")
    @classmethod
    def _gather_judge_fields(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        kind = data.get("type")
        if isinstance(kind, str) and kind not in METRIC_TYPES:
            # Deterministic metrics are the common case and were the only types
            # before judges; the message leads with them and then names the rest.
            raise InputError(
                f"type: Input should be 'exact' or 'function' (got {kind!r}) for a "
                "deterministic metric, 'field' for the field engine, 'text', 'table' "
                "or 'anls' for reading-stage metrics, or 'judge' or 'panel' for an "
                "LLM judge",
                path="type",
            )
        # The file writes a judge's settings next to ``type``; they are validated as
        # one JudgeConfig here so that its errors keep their own field names.
        if kind != "judge" or "judge" in data:
            return data
        inline = {key: value for key, value in data.items() if key in JUDGE_FIELDS}
        rest = {key: value for key, value in data.items() if key not in JUDGE_FIELDS}
        return {**rest, "judge": JudgeConfig.model_validate(inline)}

    @model_validator(mode="after")
    def _function_needs_callable(self) -> MetricConfig:
        if self.type == "function" and not self.callable:
            raise ValueError("a function metric needs 'callable': 'module:function'")
        if self.type != "function" and self.callable:
            raise ValueError("'callable' only applies to type 'function'")
        if self.type == "panel" and not self.panel:
            raise ValueError("a panel metric needs 'panel': the path of a panel file")
        if self.type != "panel" and self.panel:
            raise ValueError("'panel' only applies to type 'panel'")
        if self.type != "judge" and self.judge is not None:
            raise ValueError("'judge' only applies to type 'judge'")
        field_only = [
            name
            for name, value in (
                ("schema", self.schema_file),
                ("document_class", self.document_class),
                ("min_scores", self.min_scores),
            )
            if value is not None
        ]
        if self.type != "field" and field_only:
            raise ValueError(f"{', '.join(repr(n) for n in field_only)} only apply to type 'field'")
        misplaced = [
            f"'{option}' applies to type {' and '.join(repr(t) for t in types)} only"
            for option, types in _TYPE_OPTIONS.items()
            if option in self.model_fields_set and self.type not in types
        ]
        if misplaced:
            # An option the metric never reads is a mistake to hear about (a
            # tolerance on a field metric changes nothing), not a silent no-op.
            raise ValueError("; ".join(misplaced))
        if self.type in ("text", "table", "anls"):
            measure = self.measure if self.type == "text" else None
            problem = threshold_problem(self.type, measure, self.max_error, self.min_score)
            if problem:
                raise ValueError(problem)
        return self

    def build(self, base: Path, judges: JudgeRuntime | None = None) -> Metric:
        """Instantiate the metric (importing the function for ``function``, building
        the judge or panel with ``judges`` for ``judge`` and ``panel``)."""
        if self.type == "exact":
            return ExactStructuredMetric(
                self.relative_tolerance,
                self.absolute_tolerance,
                name=self.name or "exact_structured",
                case_sensitive=self.case_sensitive,
                fail_on_unexpected=self.fail_on_unexpected,
            )
        if self.type == "field":
            schema = DocumentSchema.load(base / self.schema_file) if self.schema_file else None
            return FieldMetric(
                schema,
                name=self.name or "fields",
                document_class=self.document_class,
                min_scores=self.min_scores,
            )
        if self.type == "text":
            return TextMetric(
                self.name or "text",
                measure=self.measure,
                max_error=self.max_error,
                min_score=self.min_score,
                normalization=self.normalization.build(),
                path=self.path,
            )
        if self.type == "table":
            return TableMetric(
                self.name or "table",
                structure_only=self.structure_only,
                min_score=self.min_score,
                path=self.path,
                format=self.format,
            )
        if self.type == "anls":
            return AnlsMetric(self.name or "anls", min_score=self.min_score, path=self.path)
        if self.type == "judge":
            assert self.judge is not None  # filled by the validator
            return llm_judge_metric(self.judge, judges, name=self.name or JUDGE_METRIC_NAME)
        if self.type == "panel":
            assert self.panel is not None
            return load_judge_panel_metric(base / self.panel, judges, name=self.name)
        assert self.callable is not None
        fn = import_callable(self.callable, base)
        return FunctionMetric(
            self.name or self.callable.rpartition(":")[2],
            fn,
            self.score_name,
            threshold=self.threshold,
        )


def import_callable(target: str, base: Path) -> Any:
    """Import ``module:attribute``; the configuration's folder is importable too."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise InputError(f"bad callable {target!r}", expected="'module:function'")
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # user code: a syntax error or a failing import is bad input
        detail = " ".join(str(exc).split())
        raise InputError(
            f"cannot import {module_name!r}: {type(exc).__name__}: {detail}", path=target
        ) from None
    fn = module
    for part in attribute.split("."):
        if not hasattr(fn, part):
            raise InputError(f"module {module_name!r} has no attribute {attribute!r}", path=target)
        fn = getattr(fn, part)
    if not callable(fn):
        raise InputError(f"{target!r} is not callable", path=target)
    return fn


MetricList = Annotated[list[MetricConfig], Field(min_length=1)]


class MetricsConfig(DocEvalsModel):
    """Which metrics apply where: by stage id, by operation, or by default."""

    default: list[MetricConfig] = Field(default_factory=lambda: [MetricConfig(type="exact")])
    operations: dict[str, MetricList] = Field(default_factory=dict)
    stages: dict[str, MetricList] = Field(default_factory=dict)
