"""One assembly function per run kind: what a run holds, whoever logs it.

Each ``assemble_*`` function takes a run's content and one
:class:`~docevals_mlflow.tracking.options.RunOptions` and returns an
:class:`AssembledRun`: the run bundle, laid out for its kind, with the options (the
kind's default run name and experiment filled in). The CLI, the ``log_*`` functions,
the MLflow evaluator plugin and ``SparkFieldComparison.log`` all go through these,
so a run holds the same params, metrics and artifacts whichever of them made it:

==========================  ===========================================================
kind                        assembly function, entry points
==========================  ===========================================================
fields                      :func:`assemble_fields`: ``docevals fields``, ``docevals
                            quickstart``, ``log_field_comparison``, the ``docevals``
                            evaluator of ``mlflow.models.evaluate``,
                            ``SparkFieldComparison.log``
case / pipeline / suite     :func:`assemble_evaluation`: ``docevals evaluate-case``,
                            ``evaluate-pipeline``, ``suite``, ``log_evaluation_report``
split                       :func:`assemble_split`: ``docevals split``,
                            ``log_split_report``
generation                  :func:`assemble_generation`: ``docevals generate``,
                            ``log_generation``
approval                    :func:`assemble_approval`: ``docevals register-dataset``,
                            ``register_ground_truth_dataset``
comparison                  :func:`assemble_comparison`: ``docevals compare``,
                            ``log_comparison``
calibration                 :func:`assemble_calibration`: ``docevals calibrate``,
                            ``log_calibration_report``
==========================  ===========================================================

:func:`log_assembled` logs an assembled run as a new run (the evaluator plugin logs
its metrics and artifacts into the caller's run instead). Texts a caller has already
rendered (the CLI writes the same Markdown and JSON to files) may be passed in so
that they are not rendered twice; left out, they are rendered here the same way.

This module does not import mlflow.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking.bundle import BundleWriter, RunKind
from docevals_mlflow.tracking.options import RunOptions, apply_options

if TYPE_CHECKING:
    from docevals_mlflow.compare.results import Comparison
    from docevals_mlflow.core.reports import (
        EvaluationReport,
        PipelineEvaluationReport,
        SuiteReport,
    )
    from docevals_mlflow.fields.batch import BatchComparison
    from docevals_mlflow.groundtruth.models import GenerationReport
    from docevals_mlflow.judges.calibration import CalibrationReport
    from docevals_mlflow.split.report import PacketSplitReport, SplitReport
    from docevals_mlflow.tracking.approval_runs import ApprovalContent
    from docevals_mlflow.tracking.generation_runs import GenerationSettings
    from docevals_mlflow.tracking.runs import LoggedRun
    from docevals_mlflow.tracking.trace_records import TraceRecord

_NO_OPTIONS = RunOptions()


@dataclass(frozen=True)
class AssembledRun:
    """A run ready to be logged: its bundle, the options it was assembled with
    (the kind's default run name and experiment filled in) and the MLflow traces
    logged with it (see :mod:`~docevals_mlflow.tracking.trace_records`)."""

    writer: BundleWriter
    options: RunOptions
    traces: list[TraceRecord] = field(default_factory=list)

    @property
    def kind(self) -> RunKind:
        """``evaluation``, ``generation``, ``approval`` or ``comparison``."""
        return self.writer.bundle.kind

    @property
    def params(self) -> dict[str, str]:
        """The params the run will hold."""
        return dict(self.writer.bundle.params)

    @property
    def metrics(self) -> dict[str, float]:
        """The metrics the run will hold."""
        return dict(self.writer.bundle.metrics)

    @property
    def artifacts(self) -> list[str]:
        """The artifact paths the run will hold, sorted."""
        return sorted(self.writer.files)


def _assembled(
    writer: BundleWriter, options: RunOptions, traces: list[TraceRecord] | None = None
) -> AssembledRun:
    apply_options(writer, options)
    return AssembledRun(writer, options, list(traces or []))


def _start(
    options: RunOptions,
    *,
    kind: RunKind = "evaluation",
    run_name: str | None = None,
    experiment: str | None = None,
) -> tuple[BundleWriter, RunOptions]:
    resolved = options.with_defaults(run_name=run_name, experiment=experiment)
    return BundleWriter(kind=kind, run_name=resolved.run_name), resolved


def log_assembled(run: AssembledRun) -> LoggedRun:
    """Log an assembled run as a new MLflow run (where its options say).

    If logging fails and the options name a place to keep the bundle, it is kept
    there for ``docevals log`` first (see
    :func:`~docevals_mlflow.tracking.runs.log_writer`), then the error is raised.
    """
    from docevals_mlflow.tracking.runs import log_writer

    options = run.options
    return log_writer(
        run.writer,
        tracking_uri=options.tracking_uri,
        experiment=options.experiment,
        keep_bundle_at=options.keep_bundle_at,
        traces=run.traces,
    )


# --- field comparisons ----------------------------------------------------------------


def assemble_fields(
    comparison: BatchComparison | Mapping[str, Any],
    options: RunOptions = _NO_OPTIONS,
    *,
    verdict: str | None = None,
    markdown: str | None = None,
    dashboard: str | None = None,
    report_json: str | None = None,
) -> AssembledRun:
    """A field comparison run (a :class:`BatchComparison` or its report dict).

    The layout is :func:`~docevals_mlflow.tracking.fields_layout.layout_fields`; the
    schema of ``options`` goes to ``specs/schema.json`` (``docevals compare`` diffs
    it between runs), then what every run gets from its options
    (:func:`~docevals_mlflow.tracking.options.apply_options`). ``verdict`` is the
    outcome of a gate, when there was one.

    Raises:
        InputError: the schema of ``options`` is not the one the comparison used.
    """
    from docevals_mlflow.fields.batch import BatchComparison
    from docevals_mlflow.tracking.fields_layout import layout_fields

    report = comparison.to_report() if isinstance(comparison, BatchComparison) else comparison
    schema = options.schema
    _check_schema(schema, report)
    if markdown is None:
        from docevals_mlflow.reports.fields_markdown import render_fields_markdown

        markdown = render_fields_markdown(report)
    if dashboard is None:
        # Its own module: reports.dashboard also imports the evaluation and split pages.
        from docevals_mlflow.reports.fields_dashboard import render_fields_dashboard

        dashboard = render_fields_dashboard(report)
    writer, options = _start(options)
    layout_fields(
        writer,
        report,
        markdown=markdown,
        dashboard=dashboard,
        verdict=verdict,
        report_json=report_json,
    )
    if schema is not None:
        writer.text("specs/schema.json", schema.model_dump_json(indent=1))
    from docevals_mlflow.tracking.trace_baseline import rank_documents
    from docevals_mlflow.tracking.trace_fields import field_traces

    source = None if options.ground_truth is None else os.path.basename(options.ground_truth)
    apply_options(writer, options)  # first: the traces' baseline matches the run's inputs
    policy = rank_documents(options.trace_policy, writer, options, report)
    traces = field_traces(report, policy, source=source or None)
    return AssembledRun(writer, options, traces)


def _check_schema(schema: Any, report: Mapping[str, Any]) -> None:
    # specs/schema.json must be the text the figures were computed with.
    if schema is not None and schema.sha256 != report["schema"]["sha256"]:
        raise InputError(
            f"the schema given ({schema.schema_id!r} version {schema.version!r}) is not the "
            f"one the comparison used ({report['schema']['id']!r} version "
            f"{report['schema']['version']!r})",
            expected="the schema passed to the comparison",
        )


# --- case, pipeline and suite evaluations -------------------------------------------


def assemble_evaluation(
    report: EvaluationReport | PipelineEvaluationReport | SuiteReport,
    options: RunOptions = _NO_OPTIONS,
    *,
    stage_reports: Sequence[EvaluationReport] | None = None,
    markdown: str | None = None,
    dashboard: str | None = None,
    extend: Callable[[BundleWriter], None] | None = None,
) -> AssembledRun:
    """A case, pipeline or suite evaluation run
    (:func:`~docevals_mlflow.tracking.evaluation_layout.layout_evaluation`).

    ``stage_reports`` are the stages behind a suite report (a case or pipeline
    report holds its own). ``extend`` may add more to the bundle (judge panels,
    review queues) before the options are applied. Each case selected by the options'
    traces policy gets an MLflow trace
    (:mod:`~docevals_mlflow.tracking.trace_pipeline`).
    """
    from docevals_mlflow.tracking.evaluation_layout import layout_evaluation

    if markdown is None:
        from docevals_mlflow.reports.files import render_markdown

        markdown = render_markdown(report)
    if dashboard is None:
        from docevals_mlflow.reports.dashboard import render_evaluation_dashboard

        dashboard = render_evaluation_dashboard(report)
    writer, options = _start(options)
    layout_evaluation(
        writer,
        report,
        markdown=markdown,
        dashboard=dashboard,
        stage_reports=list(stage_reports) if stage_reports is not None else None,
    )
    if extend is not None:
        extend(writer)
    from docevals_mlflow.tracking.trace_baseline import rank_cases
    from docevals_mlflow.tracking.trace_pipeline import evaluation_traces

    apply_options(writer, options)  # first: the traces' baseline matches the run's inputs
    policy = rank_cases(options.trace_policy, writer, options, stage_reports)
    traces = evaluation_traces(report, policy, stage_reports=stage_reports)
    return AssembledRun(writer, options, traces)


# --- split evaluations ----------------------------------------------------------------


def assemble_split(
    report: SplitReport | PacketSplitReport,
    options: RunOptions = _NO_OPTIONS,
    *,
    verdict: str | None = None,
    markdown: str | None = None,
    heatmap: str | None = None,
    report_json: str | None = None,
) -> AssembledRun:
    """A split evaluation run (a batch, or one packet's report), laid out by
    :func:`~docevals_mlflow.tracking.split_layout.layout_split`."""
    from docevals_mlflow.split.batch import summarize
    from docevals_mlflow.split.report import PacketSplitReport
    from docevals_mlflow.tracking.split_layout import layout_split

    batch = summarize([report]) if isinstance(report, PacketSplitReport) else report
    if markdown is None:
        from docevals_mlflow.reports.split_markdown import render_split_markdown

        markdown = render_split_markdown(batch)
    if heatmap is None:
        from docevals_mlflow.reports.split_plot import render_split_heatmap

        heatmap = render_split_heatmap(batch)
    writer, options = _start(options)
    layout_split(
        writer, batch, markdown=markdown, heatmap=heatmap, verdict=verdict, report_json=report_json
    )
    return _assembled(writer, options)


# --- generations ----------------------------------------------------------------------


def assemble_generation(
    reports: Sequence[GenerationReport],
    options: RunOptions = _NO_OPTIONS,
    *,
    review_files: Iterable[str | os.PathLike[str]] = (),
    settings: GenerationSettings | None = None,
) -> AssembledRun:
    """A ground-truth generation run: every stage's report of every case
    (:func:`~docevals_mlflow.tracking.generation_runs.layout_generation_run`).

    Default experiment ``docevals-ground-truth``; default run name
    ``generation <case>`` for one case, else ``generation``.
    """
    from docevals_mlflow.tracking.generation_runs import (
        DEFAULT_GENERATION_EXPERIMENT,
        default_run_name,
        layout_generation_run,
    )

    writer, options = _start(
        options,
        kind="generation",
        run_name=default_run_name(reports) if reports else None,
        experiment=DEFAULT_GENERATION_EXPERIMENT,
    )
    layout_generation_run(writer, reports, review_files=review_files, settings=settings)
    from docevals_mlflow.tracking.generation_runs import generation_cases
    from docevals_mlflow.tracking.generation_traces import generation_traces

    finals = [stages[-1] for stages in generation_cases(reports).values()]
    return _assembled(writer, options, generation_traces(finals, options.trace_policy))


# --- approvals ------------------------------------------------------------------------


def assemble_approval(content: ApprovalContent, options: RunOptions = _NO_OPTIONS) -> AssembledRun:
    """The approval run of a registered ground-truth dataset version (see
    :mod:`~docevals_mlflow.tracking.approval_runs`); ``content.run_id`` is the run it
    is logged into, named ``<name> v<version>``, in ``docevals-ground-truth`` by
    default."""
    from docevals_mlflow.tracking.approval_runs import (
        DEFAULT_DATASET_EXPERIMENT,
        approval_bundle,
    )

    resolved = options.with_defaults(experiment=DEFAULT_DATASET_EXPERIMENT)
    writer = approval_bundle(content)
    # The run's name is its version's, whatever the options say: it is how the
    # versions of a dataset are told apart in the MLflow UI.
    resolved = resolved.merged(run_name=writer.bundle.run_name)
    return _assembled(writer, resolved)


# --- comparisons ----------------------------------------------------------------------


def assemble_comparison(comparison: Comparison, options: RunOptions = _NO_OPTIONS) -> AssembledRun:
    """A comparison run (:mod:`~docevals_mlflow.tracking.comparison_runs`).

    Default experiment: the baseline's (so the comparison sits next to the runs it
    compares); default run name ``compare <candidates> vs <baseline>``.
    """
    from docevals_mlflow.tracking.comparison_runs import layout_comparison

    names = ", ".join(run.label for run in comparison.candidates)
    writer, options = _start(
        options,
        kind="comparison",
        run_name=f"compare {names} vs {comparison.baseline.label}",
        experiment=comparison.baseline.experiment,
    )
    layout_comparison(writer, comparison)
    return _assembled(writer, options)


# --- judge calibrations ---------------------------------------------------------------


def assemble_calibration(
    report: CalibrationReport,
    options: RunOptions = _NO_OPTIONS,
    *,
    labels_sha256: str | None = None,
    verdict: str | None = None,
    markdown: str | None = None,
) -> AssembledRun:
    """A judge calibration run
    (:func:`~docevals_mlflow.tracking.calibration_runs.layout_calibration`).

    ``labels_sha256`` fingerprints the human labels file; ``verdict`` is the outcome
    of a ``--min-kappa`` gate, when there was one.
    """
    from docevals_mlflow.reports.calibration_markdown import render_calibration_markdown
    from docevals_mlflow.tracking.calibration_runs import layout_calibration

    writer, options = _start(options)
    layout_calibration(
        writer,
        report,
        markdown=markdown if markdown is not None else render_calibration_markdown(report),
        labels_sha256=labels_sha256,
        verdict=verdict,
    )
    return _assembled(writer, options)


__all__ = [
    "AssembledRun",
    "assemble_approval",
    "assemble_calibration",
    "assemble_comparison",
    "assemble_evaluation",
    "assemble_fields",
    "assemble_generation",
    "assemble_split",
    "log_assembled",
]
