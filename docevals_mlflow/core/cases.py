"""Evaluation cases: one recorded stage, and pipelines of stages."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.core.fingerprints import optional_sha256_json
from docevals_mlflow.core.literals import JudgeInstructionMode
from docevals_mlflow.core.model import DocEvalsModel, FrozenModel
from docevals_mlflow.core.specs import EvaluationSpec
from docevals_mlflow.errors import PipelineDefinitionError

DEFAULT_RUBRIC = (
    "The prediction must be correct and complete for the operation: every value it "
    "states must be supported by the authoritative references, nothing required may "
    "be missing, and each value must stay attached to the right label, row and page."
)


class Producer(FrozenModel):
    """Who produced the prediction, so judges can be labelled independent or not."""

    provider: str = Field(min_length=1)
    model: str | None = None

    @property
    def label(self) -> str:
        """``provider:model`` (or just the provider when the model is unknown)."""
        return f"{self.provider}:{self.model}" if self.model else self.provider


class EvaluationCase(FrozenModel):
    """One stage of a document pipeline, as it was recorded.

    The library evaluates what went in (``input_data``) and what came out
    (``prediction``) against ``references``; it never runs the system under test.
    """

    case_id: str = Field(min_length=1)
    stage_id: str = Field(default="output", min_length=1)
    operation: str = Field(default="generic", min_length=1)
    action_instruction: str | None = None
    evaluation_spec: EvaluationSpec | None = None
    input_data: Any = None
    prediction: Any
    prediction_name: str = Field(default="prediction", min_length=1)
    producer: Producer | None = None
    references: list[ReferenceArtifact] = Field(default_factory=list)
    depends_on: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    rubric: str = DEFAULT_RUBRIC
    judge_instruction: str | None = None
    judge_instruction_mode: JudgeInstructionMode = "append"
    allow_unsafe_judge_override: bool = False
    operation_spec_id: str | None = None
    """Stamped by :class:`OperationRegistry` when an operation spec governs this case."""
    operation_spec_version: str | None = None
    """Stamped by :class:`OperationRegistry` together with ``operation_spec_id``."""

    @property
    def action_instruction_hash(self) -> str | None:
        """SHA-256 of the action instruction's canonical JSON (as in reports)."""
        return optional_sha256_json(self.action_instruction)

    @property
    def evaluation_spec_hash(self) -> str | None:
        """SHA-256 of the evaluation spec's canonical JSON (as in reports)."""
        return optional_sha256_json(self.evaluation_spec)

    @property
    def has_ground_truth(self) -> bool:
        """Whether any reference is authoritative ground truth."""
        return any(reference.authority == "ground_truth" for reference in self.references)

    @property
    def has_generated_reference(self) -> bool:
        """Whether any reference is a generated (provisional) one."""
        return any(reference.authority == "generated" for reference in self.references)

    @model_validator(mode="after")
    def _check(self) -> EvaluationCase:
        where = f"case {self.case_id!r} stage {self.stage_id!r}"
        if not self.references and self.input_data is None:
            raise ValueError(f"{where}: needs references or input_data to evaluate against")
        if self.judge_instruction_mode == "replace":
            if not (self.judge_instruction and self.judge_instruction.strip()):
                raise ValueError(
                    f"{where}: judge_instruction is required: judge_instruction_mode='replace' "
                    "needs a non-empty judge_instruction"
                )
            if not self.allow_unsafe_judge_override:
                raise ValueError(
                    f"{where}: replacing the base judge prompt needs "
                    "allow_unsafe_judge_override=True"
                )
        ids = [reference.id for reference in self.references]
        duplicates = sorted({ref_id for ref_id in ids if ids.count(ref_id) > 1})
        if duplicates:
            raise ValueError(f"{where}: duplicate reference ids {duplicates}")
        if len(set(self.depends_on)) != len(self.depends_on):
            raise ValueError(f"{where}: depends_on lists a stage twice")
        return self


class PipelineCase(DocEvalsModel):
    """Stages of one document's pipeline, linked by ``depends_on``.

    Stage ids must be unique; every dependency must name another stage; the graph
    must be acyclic.
    """

    pipeline_id: str = Field(min_length=1)
    stages: list[EvaluationCase] = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_graph(self) -> PipelineCase:
        ids: set[str] = set()
        for stage in self.stages:
            if stage.stage_id in ids:
                raise PipelineDefinitionError(
                    f"pipeline {self.pipeline_id!r}: duplicate stage id", stage=stage.stage_id
                )
            ids.add(stage.stage_id)
        for stage in self.stages:
            for dependency in stage.depends_on:
                if dependency == stage.stage_id:
                    raise PipelineDefinitionError(
                        f"pipeline {self.pipeline_id!r}: stage depends on itself",
                        stage=stage.stage_id,
                    )
                if dependency not in ids:
                    raise PipelineDefinitionError(
                        f"pipeline {self.pipeline_id!r}: unknown dependency {dependency!r}",
                        stage=stage.stage_id,
                        expected="one of " + ", ".join(sorted(ids)),
                    )
        self.waves()  # raises on a cycle
        return self

    def stage(self, stage_id: str) -> EvaluationCase:
        """The stage with this id."""
        for stage in self.stages:
            if stage.stage_id == stage_id:
                return stage
        raise KeyError(stage_id)

    def waves(self) -> list[list[EvaluationCase]]:
        """Stable topological waves: each wave only depends on earlier waves.

        Within a wave, stages keep the order they were given in.
        """
        done: set[str] = set()
        remaining = list(self.stages)
        waves: list[list[EvaluationCase]] = []
        while remaining:
            wave = [stage for stage in remaining if set(stage.depends_on) <= done]
            if not wave:
                cycle = sorted(stage.stage_id for stage in remaining)
                raise PipelineDefinitionError(
                    f"pipeline {self.pipeline_id!r}: dependency cycle among stages "
                    + ", ".join(repr(stage_id) for stage_id in cycle),
                    stage=cycle[0],
                )
            waves.append(wave)
            done.update(stage.stage_id for stage in wave)
            remaining = [stage for stage in remaining if stage.stage_id not in done]
        return waves

    def ordered_stages(self) -> list[EvaluationCase]:
        """All stages in dependency order (the waves, flattened)."""
        return [stage for wave in self.waves() for stage in wave]

    def ancestors(self, stage_id: str) -> list[str]:
        """Every stage ``stage_id`` depends on, directly or transitively, in order."""
        by_id = {stage.stage_id: stage for stage in self.stages}
        found: set[str] = set()
        pending = list(by_id[stage_id].depends_on)
        while pending:
            current = pending.pop()
            if current not in found:
                found.add(current)
                pending.extend(by_id[current].depends_on)
        return [stage.stage_id for stage in self.ordered_stages() if stage.stage_id in found]
