"""Evaluating a pipeline of stages with dependency-aware failure attribution."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.cases import EvaluationCase, PipelineCase
from docevals_mlflow.core.datafiles import safe_file_name
from docevals_mlflow.core.registry import OperationRegistry
from docevals_mlflow.core.reports import (
    CheckpointSummary,
    EvaluationReport,
    PipelineEvaluationReport,
)
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.core.specs import OperationSpec
from docevals_mlflow.core.verdicts import combine_verdicts
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.evaluation.checkpoints import CheckpointStore, checkpoint_fingerprint
from docevals_mlflow.evaluation.evaluator import as_registry
from docevals_mlflow.evaluation.metrics import Metric, check_metric_names
from docevals_mlflow.evaluation.progress import Progress, ProgressCounter
from docevals_mlflow.evaluation.stage import (
    arun_stage_metrics,
    build_stage_report,
    reattach_upstream,
    stage_warnings,
)
from docevals_mlflow.judges.judge import run_sync

if TYPE_CHECKING:
    from docevals_mlflow.diagnostics.counterfactual import Counterfactual

FILE_NAME_LIMIT = 120
"""Characters of a pipeline's file name (its report, its checkpoint folder)."""
_HASH_LENGTH = 12


def pipeline_file_name(pipeline_id: str) -> str:
    """The file name of a pipeline's report and checkpoint folder.

    Unsafe characters become ``_``; an id longer than :data:`FILE_NAME_LIMIT` keeps
    its beginning and gets the first 12 hex digits of its SHA-256, so ids that share
    a long prefix still get distinct names.
    """
    full = safe_file_name(pipeline_id, fallback="pipeline", limit=len(pipeline_id) + 1)
    if len(full) <= FILE_NAME_LIMIT:
        return full
    digest = hashlib.sha256(pipeline_id.encode("utf-8")).hexdigest()[:_HASH_LENGTH]
    head = full[: FILE_NAME_LIMIT - _HASH_LENGTH - 1].rstrip("._-") or "pipeline"
    return f"{head}-{digest}"


def pipeline_file_names(pipeline_ids: Iterable[str]) -> dict[str, str]:
    """Each pipeline id's file name (see :func:`pipeline_file_name`).

    Raises:
        ConfigurationError: two ids make the same name (``invoice/7`` and
            ``invoice_7``, or an id given twice): their reports and checkpoints
            would collide, so the error names both ids.
    """
    names: dict[str, str] = {}
    owners: dict[str, str] = {}
    for pipeline_id in pipeline_ids:
        name = pipeline_file_name(pipeline_id)
        first = owners.get(name)
        if first is not None:
            what = (
                f"pipeline id {pipeline_id!r} is given twice"
                if first == pipeline_id
                else f"pipeline ids {first!r} and {pipeline_id!r} both make the file name {name!r}"
            )
            raise ConfigurationError(
                f"{what}, so their reports and checkpoints would collide",
                expected="pipeline ids that stay distinct as file names (letters, digits, "
                "'.', '_' and '-')",
            )
        owners[name] = pipeline_id
        names[pipeline_id] = name
    return names


class PipelineEvaluator:
    """Evaluates every stage of a :class:`PipelineCase` in dependency order.

    Metrics for a stage are chosen by its stage id (``stage_metrics``), else its
    operation (``operation_metrics``), else ``default_metrics``; a stage with none is
    a configuration error raised before anything runs.

    Each stage report carries the verdicts of all its transitive ancestors and a
    ``failure_context`` saying whether a failure belongs to this stage, upstream, or
    cannot be separated.

    With ``counterfactual`` (a :class:`~docevals_mlflow.diagnostics.Counterfactual`),
    a stage that failed along with an upstream stage is rerun on the ground-truth
    versions of its upstream outputs and scored again with its own metrics, which
    refines ``upstream_or_combined`` into ``caused_by_upstream`` or
    ``independent_failure``. Without it, nothing is rerun.
    """

    def __init__(
        self,
        stage_metrics: Mapping[str, Sequence[Metric]] | None = None,
        operation_metrics: Mapping[str, Sequence[Metric]] | None = None,
        default_metrics: Sequence[Metric] | None = None,
        *,
        operation_specs: Iterable[OperationSpec] | OperationRegistry = (),
        counterfactual: Counterfactual | None = None,
    ) -> None:
        self.counterfactual = counterfactual
        self.stage_metrics = {key: list(value) for key, value in (stage_metrics or {}).items()}
        self.operation_metrics = {
            key: list(value) for key, value in (operation_metrics or {}).items()
        }
        self.default_metrics = list(default_metrics or [])
        for stage_id, metrics in self.stage_metrics.items():
            check_metric_names(metrics, where=f"stage_metrics[{stage_id!r}]")
        for operation, metrics in self.operation_metrics.items():
            check_metric_names(metrics, where=f"operation_metrics[{operation!r}]")
        check_metric_names(self.default_metrics, where="default_metrics")
        self.registry = as_registry(operation_specs)

    def metrics_for(self, stage: EvaluationCase) -> list[Metric]:
        """The metrics chosen for ``stage`` (stage id, then operation, then defaults)."""
        for chosen in (
            self.stage_metrics.get(stage.stage_id),
            self.operation_metrics.get(stage.operation),
            self.default_metrics,
        ):
            if chosen:
                return chosen
        raise ConfigurationError(
            f"no metrics for operation {stage.operation!r}",
            stage=stage.stage_id,
            expected="stage_metrics, operation_metrics or default_metrics covering it",
        )

    def check_references(self, pipelines: Sequence[PipelineCase]) -> None:
        """Refuse settings that name stages or operations none of ``pipelines`` has.

        Metrics configured for a stage id or an operation that no stage has, and
        counterfactual reruns or actions naming none, would silently never apply (a
        typo in a stage id quietly falls back to the default metrics). Called by
        ``docevals evaluate-pipeline`` before anything is evaluated; an evaluator
        shared by pipelines evaluated apart can call it with all of them.

        Raises:
            InputError: naming the stage id or operation and the ones there are.
        """
        stages = [
            self.registry.resolve(stage) for pipeline in pipelines for stage in pipeline.stages
        ]
        stage_ids = sorted({stage.stage_id for stage in stages})
        operations = sorted({stage.operation for stage in stages})
        for where, configured, known, kind in (
            ("metrics.stages", self.stage_metrics, stage_ids, "stage"),
            ("metrics.operations", self.operation_metrics, operations, "operation"),
        ):
            for name in configured:
                if name not in known:
                    raise InputError(
                        f"metrics are configured for {kind} {name!r}, which no pipeline has",
                        path=f"{where}.{name}",
                        expected=f"one of the {kind}s: {_listed(known)}",
                    )
        if self.counterfactual is not None:
            self.counterfactual.check_references(pipelines)

    def evaluate(
        self,
        pipeline: PipelineCase,
        *,
        checkpoint_dir: str | os.PathLike[str] | None = None,
        checkpoint_context: Mapping[str, Any] | None = None,
        progress: Progress | None = None,
    ) -> PipelineEvaluationReport:
        """Evaluate every stage; with ``checkpoint_dir``, reuse and write checkpoints.

        A checkpoint is reused only when its fingerprint (the resolved stage, its
        metrics' configuration, ``checkpoint_context``, the package version and the
        bytes of file references) matches; stale or corrupt ones are recomputed with a
        :class:`~docevals_mlflow.errors.CheckpointWarning`. ``progress(done, total)``
        is called as stages finish.
        """
        counter = ProgressCounter(progress, len(pipeline.stages))
        counter.start()
        return run_sync(
            self.aevaluate(
                pipeline,
                checkpoint_dir=checkpoint_dir,
                checkpoint_context=checkpoint_context,
                counter=counter,
            )
        )

    def evaluate_batch(
        self,
        pipelines: Sequence[PipelineCase],
        *,
        max_concurrency: int = 8,
        checkpoint_root: str | os.PathLike[str] | None = None,
        checkpoint_context: Mapping[str, Any] | None = None,
        progress: Progress | None = None,
    ) -> list[PipelineEvaluationReport]:
        """Evaluate many pipelines; at most ``max_concurrency`` stages (across all
        pipelines) are being evaluated at a time, each as soon as its dependencies
        are done. Reports come back in the order of ``pipelines``.

        With ``checkpoint_root``, each pipeline checkpoints under
        ``checkpoint_root/<pipeline id>``. ``progress(done, total)`` counts the stages
        of the whole batch.
        """
        if max_concurrency < 1:
            raise ConfigurationError("max_concurrency must be at least 1")
        folders = (
            pipeline_file_names(pipeline.pipeline_id for pipeline in pipelines)
            if checkpoint_root is not None
            else {}
        )

        counter = ProgressCounter(progress, sum(len(p.stages) for p in pipelines))
        counter.start()

        async def all_pipelines() -> list[PipelineEvaluationReport]:
            limit = asyncio.Semaphore(max_concurrency)
            return list(
                await asyncio.gather(
                    *(
                        self.aevaluate(
                            pipeline,
                            checkpoint_dir=(
                                Path(checkpoint_root) / folders[pipeline.pipeline_id]
                                if checkpoint_root is not None
                                else None
                            ),
                            checkpoint_context=checkpoint_context,
                            limit=limit,
                            counter=counter,
                        )
                        for pipeline in pipelines
                    )
                )
            )

        return run_sync(all_pipelines())

    async def aevaluate(
        self,
        pipeline: PipelineCase,
        *,
        checkpoint_dir: str | os.PathLike[str] | None = None,
        checkpoint_context: Mapping[str, Any] | None = None,
        limit: asyncio.Semaphore | None = None,
        counter: ProgressCounter | None = None,
    ) -> PipelineEvaluationReport:
        """The async core of :meth:`evaluate`: each stage starts as soon as the stages
        it depends on are done, so independent stages run concurrently."""
        waves = pipeline.waves()
        ordered = [self.registry.resolve(stage) for wave in waves for stage in wave]
        chosen = {stage.stage_id: self.metrics_for(stage) for stage in ordered}
        store = (
            CheckpointStore(checkpoint_dir, checkpoint_context)
            if checkpoint_dir is not None
            else None
        )
        run = _PipelineRun(self, pipeline, ordered, chosen, store, limit, counter)
        reports = await run.stage_reports()
        if self.counterfactual is not None:
            reports = await self.counterfactual.apply(
                pipeline.pipeline_id, ordered, reports, run.score
            )
        return PipelineEvaluationReport(
            pipeline_id=pipeline.pipeline_id,
            metadata=dict(pipeline.metadata),
            execution_order=[stage.stage_id for stage in ordered],
            waves=[[stage.stage_id for stage in wave] for wave in waves],
            stage_reports=reports,
            verdict=combine_verdicts(report.verdict for report in reports),
            requires_human_review=any(report.requires_human_review for report in reports),
            checkpoint=run.checkpoint_summary(checkpoint_dir),
        )


class _PipelineRun:
    """One evaluation of one pipeline: each stage's task, waiting on its dependencies,
    and which stages came from checkpoints."""

    def __init__(
        self,
        evaluator: PipelineEvaluator,
        pipeline: PipelineCase,
        ordered: list[EvaluationCase],
        chosen: dict[str, list[Metric]],
        store: CheckpointStore | None,
        limit: asyncio.Semaphore | None,
        counter: ProgressCounter | None,
    ) -> None:
        self.evaluator = evaluator
        self.pipeline = pipeline
        self.ordered = ordered
        self.store = store
        self.limit = limit
        self.counter = counter
        self.chosen = chosen
        self.positions = {stage.stage_id: index for index, stage in enumerate(ordered, start=1)}
        self.reused: set[str] = set()
        self.computed: set[str] = set()
        self.invalidated: dict[str, str] = {}
        self.done: dict[str, asyncio.Future[EvaluationReport]] = {}

    async def stage_reports(self) -> list[EvaluationReport]:
        """Every stage's report, in execution order."""
        for stage in self.ordered:
            self.done[stage.stage_id] = asyncio.ensure_future(self._evaluate_stage(stage))
        return list(await asyncio.gather(*(self.done[stage.stage_id] for stage in self.ordered)))

    async def score(self, case: EvaluationCase) -> list[MetricResult]:
        """The stage's own metrics on ``case``, within the concurrency limit."""
        if self.limit is None:
            return await arun_stage_metrics(case, self.chosen[case.stage_id])
        async with self.limit:
            return await arun_stage_metrics(case, self.chosen[case.stage_id])

    async def _evaluate_stage(self, stage: EvaluationCase) -> EvaluationReport:
        report = await self._stage_report(stage)
        if self.counter is not None:
            self.counter.advance()
        return report

    async def _stage_report(self, stage: EvaluationCase) -> EvaluationReport:
        for dependency in stage.depends_on:
            await self.done[dependency]
        upstream = {
            name: self.done[name].result().verdict
            for name in self.pipeline.ancestors(stage.stage_id)
        }
        store = self.store
        fingerprint = path = None
        if store is not None:
            path = store.path_for(self.positions[stage.stage_id], stage.stage_id)
            fingerprint = checkpoint_fingerprint(
                self.pipeline.pipeline_id, stage, self.chosen[stage.stage_id], store.context
            )
            stored, status = store.load(path, stage.stage_id, fingerprint)
            if stored is not None:
                self.reused.add(stage.stage_id)
                return reattach_upstream(stored, upstream)
            if status != "missing":
                self.invalidated[stage.stage_id] = status
        results = await self.score(stage)
        report = build_stage_report(
            stage, results, upstream, stage_warnings(stage, self.evaluator.registry)
        )
        if store is not None and path is not None and fingerprint is not None:
            store.save(path, stage.stage_id, fingerprint, report)
            self.computed.add(stage.stage_id)
        return report

    def checkpoint_summary(
        self, checkpoint_dir: str | os.PathLike[str] | None
    ) -> CheckpointSummary | None:
        """What the checkpoints gave, in execution order (``None`` without a store)."""
        if self.store is None:
            return None
        order = [stage.stage_id for stage in self.ordered]
        return CheckpointSummary(
            directory=str(checkpoint_dir),
            reused=[stage_id for stage_id in order if stage_id in self.reused],
            computed=[stage_id for stage_id in order if stage_id in self.computed],
            invalidated={
                stage_id: self.invalidated[stage_id]
                for stage_id in order
                if stage_id in self.invalidated
            },
        )


def _listed(names: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(repr(name) for name in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
