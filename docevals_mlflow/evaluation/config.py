"""Pipeline evaluations described in a JSON or YAML file (used by the CLI).

Example::

    pipeline_id: invoice-001
    operation_specs: []            # optional OperationSpec objects
    metrics:                       # optional; default: exact comparison everywhere
      default: [{type: exact}]
      operations:
        sum_total: [{type: function, callable: "checks:total_matches"}]
      stages:
        extract:
          - {type: exact}
          - {type: judge, provider: openai, model: gpt-4.1-mini, temperature: 0}
          - {type: panel, panel: panels/extraction.yaml}
    stages:
      - stage_id: extract
        operation: parse_line_items
        prediction_file: extract.json
        references:
          - {path: invoice.png, authority: evidence}
          - {path: truth.csv, authority: ground_truth}
      - stage_id: total
        operation: sum_total
        input_from: extract          # input_data = the prediction of stage "extract"
        prediction: {total: 11.5}
        depends_on: [extract]

Relative paths are resolved against the folder of the configuration file.

One file can also describe several pipelines that share ``operation_specs`` and
``metrics`` (one per document of a batch, say): ``pipelines:`` is then a list of
``{pipeline_id, stages, metadata}`` in place of the top-level ``pipeline_id`` and
``stages``; top-level ``metadata`` is shared. ``docevals evaluate-pipeline`` evaluates
them together and reports a suite.

Metric types: ``exact``, ``function`` (``callable: module:attribute``), ``judge`` (the
fields of :class:`~docevals_mlflow.judges.config.JudgeConfig` written inline) and
``panel`` (``panel:`` a panel file, see :mod:`docevals_mlflow.judges.config`). Judge
API keys come from environment variables only; a key written in the ``metrics``
section is refused.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path, PurePath
from typing import Any

from pydantic import Field, model_validator

from docevals_mlflow.core.artifacts import (
    ReferenceArtifact,
    artifact_from_path,
    artifact_from_value,
)
from docevals_mlflow.core.cases import DEFAULT_RUBRIC, EvaluationCase, PipelineCase, Producer
from docevals_mlflow.core.datafiles import load_data_file
from docevals_mlflow.core.input_files import read_text_file
from docevals_mlflow.core.literals import Authority, ComparisonMode, JudgeInstructionMode
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.specs import EvaluationSpec, OperationSpec
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.evaluation.metric_config import MetricConfig as MetricConfig
from docevals_mlflow.evaluation.metric_config import MetricsConfig
from docevals_mlflow.evaluation.pipeline import PipelineEvaluator
from docevals_mlflow.judges.config import JudgeRuntime, refuse_api_keys


class ReferenceConfig(DocEvalsModel):
    """A reference given by file ``path`` or inline ``value``."""

    path: str | None = None
    value: Any = None
    authority: Authority
    id: str | None = None
    comparison_mode: ComparisonMode = "auto"
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_source(self) -> ReferenceConfig:
        if (self.path is None) == (self.value is None):
            raise ValueError("give exactly one of 'path' or 'value'")
        if self.value is not None and not self.id:
            raise ValueError("an inline 'value' reference needs an 'id'")
        return self

    def build(self, base: Path, *, default_id: str | None = None) -> ReferenceArtifact:
        """Load the reference (``default_id`` when it names none; else the file stem)."""
        if self.path is not None:
            return artifact_from_path(
                base / self.path,
                authority=self.authority,
                artifact_id=self.id or default_id,
                comparison_mode=self.comparison_mode,
                metadata=self.metadata,
            )
        assert self.id is not None  # checked by the validator
        return artifact_from_value(
            self.value,
            authority=self.authority,
            artifact_id=self.id,
            comparison_mode=self.comparison_mode,
            metadata=self.metadata,
        )


def _build_references(references: list[ReferenceConfig], base: Path) -> list[ReferenceArtifact]:
    # A reference is named by its file stem unless it names itself; where two files of
    # one stage share a stem (invoice-7.pdf and invoice-7.json), they are named by
    # file name instead, rather than refused as duplicates.
    stems = Counter(
        PurePath(reference.path).stem
        for reference in references
        if reference.path is not None and not reference.id
    )
    return [
        reference.build(
            base,
            default_id=(
                PurePath(reference.path).name
                if reference.path is not None and stems[PurePath(reference.path).stem] > 1
                else None
            ),
        )
        for reference in references
    ]


class StageConfig(DocEvalsModel):
    """One stage: an :class:`EvaluationCase` whose data may live in files."""

    stage_id: str = Field(min_length=1)
    case_id: str | None = None
    operation: str = "generic"
    prediction: Any = None
    prediction_file: str | None = None
    prediction_name: str = "prediction"
    input_data: Any = None
    input_file: str | None = None
    input_from: str | None = None
    references: list[ReferenceConfig] = Field(default_factory=list)
    depends_on: list[str] = Field(default_factory=list)
    action_instruction: str | None = None
    evaluation_spec: EvaluationSpec | None = None
    rubric: str = DEFAULT_RUBRIC
    judge_instruction: str | None = None
    judge_instruction_mode: JudgeInstructionMode = "append"
    allow_unsafe_judge_override: bool = False
    producer: Producer | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _sources(self) -> StageConfig:
        if (self.prediction is None) == (self.prediction_file is None):
            raise ValueError(
                f"stage {self.stage_id!r}: give exactly one of prediction or prediction_file"
            )
        given = [
            name
            for name, value in (
                ("input_data", self.input_data),
                ("input_file", self.input_file),
                ("input_from", self.input_from),
            )
            if value is not None
        ]
        if len(given) > 1:
            raise ValueError(f"stage {self.stage_id!r}: give at most one of {', '.join(given)}")
        return self


class PipelineEntry(DocEvalsModel):
    """One pipeline of a file that describes several (``pipelines:``)."""

    pipeline_id: str = Field(min_length=1)
    stages: list[StageConfig] = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)


class PipelineConfig(DocEvalsModel):
    """A pipeline evaluation: stages, operation specs and metric selection.

    A file describes one pipeline (``pipeline_id`` and ``stages`` at the top) or
    several sharing the operation specs and metrics (``pipelines:``, a list of
    ``{pipeline_id, stages, metadata}``), such as one per document of a batch.
    """

    pipeline_id: str | None = Field(default=None, min_length=1)
    stages: list[StageConfig] | None = Field(default=None, min_length=1)
    pipelines: list[PipelineEntry] | None = Field(default=None, min_length=1)
    operation_specs: list[OperationSpec] = Field(default_factory=list)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_or_many(self) -> PipelineConfig:
        single = self.pipeline_id is not None or self.stages is not None
        if self.pipelines is not None:
            if single:
                raise ValueError(
                    "give either pipeline_id and stages (one pipeline) or pipelines "
                    "(several), not both"
                )
            ids = [entry.pipeline_id for entry in self.pipelines]
            repeated = sorted({pipeline_id for pipeline_id in ids if ids.count(pipeline_id) > 1})
            if repeated:
                raise ValueError(f"pipeline ids repeat: {', '.join(repeated)}")
        elif self.pipeline_id is None or self.stages is None:
            raise ValueError("a pipeline needs pipeline_id and stages (or a pipelines list)")
        return self

    def entries(self) -> list[PipelineEntry]:
        """Every pipeline the file describes."""
        if self.pipelines is not None:
            # Top-level metadata is shared; a pipeline's own keys win.
            return [
                entry.model_copy(update={"metadata": {**self.metadata, **entry.metadata}})
                for entry in self.pipelines
            ]
        assert self.pipeline_id is not None  # validated
        assert self.stages is not None
        return [
            PipelineEntry(pipeline_id=self.pipeline_id, stages=self.stages, metadata=self.metadata)
        ]


def load_pipeline_config(
    path: str | Path, *, judges: JudgeRuntime | None = None
) -> tuple[PipelineCase, PipelineEvaluator]:
    """Read a pipeline configuration file into a pipeline and its evaluator.

    ``judges`` (prices, cache, concurrency) builds the ``judge`` and ``panel``
    metrics the file names; without it they use the defaults. Every problem is an
    :class:`~docevals_mlflow.errors.DocEvalsError` naming the file and, where it
    applies, the stage.

    Raises:
        InputError: the file describes several pipelines (use
            :func:`load_pipelines_config`).
    """
    pipelines, evaluator = load_pipelines_config(path, judges=judges)
    if len(pipelines) != 1:
        raise InputError(
            f"the file describes {len(pipelines)} pipelines",
            source=str(path),
            expected="one pipeline (load_pipelines_config reads several)",
        )
    return pipelines[0], evaluator


def load_pipelines_config(
    path: str | Path, *, judges: JudgeRuntime | None = None
) -> tuple[list[PipelineCase], PipelineEvaluator]:
    """Read a configuration file describing one pipeline or several (``pipelines:``)
    into the pipelines, in file order, and the evaluator they share."""
    config_path = Path(path)
    base = config_path.parent
    data = load_data_file(config_path)
    if isinstance(data, dict):
        # Only the metrics section configures judges; predictions and references may
        # legitimately hold any text. Checked before validation, whose errors may
        # quote the offending value.
        refuse_api_keys(data.get("metrics"), source=str(config_path), path="metrics")
    try:
        config = PipelineConfig.model_validate(data)
    except InputError as exc:
        raise exc.located(source=str(config_path), stage=_stage_at(exc.path, data)) from None
    pipelines = [_build_pipeline(entry, config, base, config_path) for entry in config.entries()]
    try:
        evaluator = PipelineEvaluator(
            stage_metrics={
                key: [metric.build(base, judges) for metric in value]
                for key, value in config.metrics.stages.items()
            },
            operation_metrics={
                key: [metric.build(base, judges) for metric in value]
                for key, value in config.metrics.operations.items()
            },
            default_metrics=[metric.build(base, judges) for metric in config.metrics.default],
            operation_specs=config.operation_specs,
        )
    except DocEvalsError as exc:
        raise exc.located(source=str(config_path)) from None
    return pipelines, evaluator


def _build_pipeline(
    entry: PipelineEntry, config: PipelineConfig, base: Path, config_path: Path
) -> PipelineCase:
    # Errors name the pipeline too when the file holds several.
    record = entry.pipeline_id if config.pipelines is not None else None
    predictions: dict[str, Any] = {}
    stages: list[EvaluationCase] = []
    known = {stage.stage_id for stage in entry.stages}
    for stage in entry.stages:
        try:
            stages.append(_build_stage(stage, entry.pipeline_id, base, predictions, known))
        except DocEvalsError as exc:
            raise exc.located(
                source=str(config_path), record=record, stage=stage.stage_id
            ) from None
    try:
        return PipelineCase(pipeline_id=entry.pipeline_id, stages=stages, metadata=entry.metadata)
    except DocEvalsError as exc:
        raise exc.located(source=str(config_path), record=record) from None


def _build_stage(
    stage: StageConfig,
    pipeline_id: str,
    base: Path,
    predictions: dict[str, Any],
    known: set[str],
) -> EvaluationCase:
    prediction = (
        load_stage_file(base / stage.prediction_file)
        if stage.prediction_file is not None
        else stage.prediction
    )
    predictions[stage.stage_id] = prediction
    input_data = stage.input_data
    if stage.input_file is not None:
        input_data = load_stage_file(base / stage.input_file)
    elif stage.input_from is not None:
        if stage.input_from not in known:
            raise InputError(f"input_from names unknown stage {stage.input_from!r}")
        if stage.input_from not in predictions:
            raise InputError(
                f"input_from {stage.input_from!r} must name a stage listed earlier in the file"
            )
        input_data = predictions[stage.input_from]
    return EvaluationCase(
        case_id=stage.case_id or pipeline_id,
        stage_id=stage.stage_id,
        operation=stage.operation,
        action_instruction=stage.action_instruction,
        evaluation_spec=stage.evaluation_spec,
        input_data=input_data,
        prediction=prediction,
        prediction_name=stage.prediction_name,
        producer=stage.producer,
        references=_build_references(stage.references, base),
        depends_on=stage.depends_on,
        metadata=stage.metadata,
        rubric=stage.rubric,
        judge_instruction=stage.judge_instruction,
        judge_instruction_mode=stage.judge_instruction_mode,
        allow_unsafe_judge_override=stage.allow_unsafe_judge_override,
    )


def _stage_at(path: str | None, data: Any) -> str | None:
    """The stage id an error path such as ``stages[1].colour`` (or
    ``pipelines[0].stages[1].colour``) points into, if known."""
    nested = re.match(r"pipelines\[(\d+)\]\.(.*)", path or "")
    if nested and isinstance(data, dict) and isinstance(data.get("pipelines"), list):
        entries = data["pipelines"]
        index = int(nested.group(1))
        entry = entries[index] if index < len(entries) else None
        return _stage_at(nested.group(2), entry)
    match = re.match(r"stages\[(\d+)\]", path or "")
    if not match or not isinstance(data, dict) or not isinstance(data.get("stages"), list):
        return None
    stages = data["stages"]
    index = int(match.group(1))
    entry = stages[index] if index < len(stages) else None
    stage_id = entry.get("stage_id") if isinstance(entry, dict) else None
    return str(stage_id) if stage_id is not None else f"#{index + 1}"


TEXT_STAGE_SUFFIXES = frozenset((".txt", ".md", ".markdown", ".html", ".htm"))
"""Stage files read as one string: an OCR page, a parser's Markdown or HTML table."""


def load_stage_file(path: Path) -> Any:
    """A stage's prediction or input file: JSON/YAML parsed, text (``.txt``, ``.md``,
    ``.html``) as the string it holds, so a reading stage's output can be scored by
    the ``text`` and ``table`` metrics as written."""
    if path.suffix.lower() in TEXT_STAGE_SUFFIXES:
        return read_text_file(path, what="stage file")
    return load_data_file(path)
