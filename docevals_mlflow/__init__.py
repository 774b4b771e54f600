"""docevals-mlflow: document-AI evaluations as MLflow experiments.

The names below are the public API; everything else may change without notice.
"""

# Private names: everything public here is listed in __all__.
import typing as _typing

from docevals_mlflow._version import __version__
from docevals_mlflow.compare import Comparison, PairComparison, RunSnapshot, compare_runs
from docevals_mlflow.core.artifacts import (
    ReferenceArtifact,
    artifact_from_path,
    artifact_from_value,
)
from docevals_mlflow.core.cases import DEFAULT_RUBRIC, EvaluationCase, PipelineCase, Producer
from docevals_mlflow.core.diagnostics import (
    CalibrationStats,
    CascadeEdge,
    ConfidenceCalibration,
    CounterfactualRerun,
    DisagreementBudget,
    ReviewBudget,
)
from docevals_mlflow.core.fingerprints import canonical_json, sha256_json
from docevals_mlflow.core.paths import format_path, parse_path
from docevals_mlflow.core.registry import OperationRegistry
from docevals_mlflow.core.reports import (
    CheckpointSummary,
    EvaluationReport,
    MetricSummary,
    PipelineEvaluationReport,
    ReferenceSummary,
    SpecFingerprints,
    StageSummary,
    SuiteReport,
)
from docevals_mlflow.core.results import ErrorRecord, MetricResult
from docevals_mlflow.core.specs import EvaluationSpec, OperationSpec
from docevals_mlflow.core.values import values_equal
from docevals_mlflow.core.verdicts import combine_verdicts, failure_context
from docevals_mlflow.diagnostics import (
    Counterfactual,
    RecordedRerun,
    confidence_calibration,
    disagreement_budget,
    failure_cascades,
    review_budget,
)
from docevals_mlflow.errors import (
    ApprovalError,
    CheckpointWarning,
    ConfigurationError,
    DocEvalsError,
    DocEvalsWarning,
    InputError,
    InputFileNotFoundError,
    MetricError,
    OutputError,
    PipelineDefinitionError,
    WorkerProcessError,
)
from docevals_mlflow.evaluation.evaluator import Evaluator
from docevals_mlflow.evaluation.exact import ExactStructuredMetric
from docevals_mlflow.evaluation.field_metric import FieldMetric
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.evaluation.metrics import FunctionMetric, Metric
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric, JudgeVariant
from docevals_mlflow.evaluation.pipeline import PipelineEvaluator
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.fields.batch import BatchComparison, DocumentPair, compare_documents
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer, compare_document
from docevals_mlflow.fields.counts import Counts
from docevals_mlflow.fields.methods import SimpleComparator
from docevals_mlflow.fields.registry import FieldMethod, MethodOption, register_field_method
from docevals_mlflow.fields.report import FieldsReport
from docevals_mlflow.fields.schema import ClassSchema, DocumentSchema, FieldSpec
from docevals_mlflow.groundtruth.adjudicator import GroundTruthAdjudicator
from docevals_mlflow.groundtruth.approval import (
    approve_review,
    approved_from_reference,
    approved_reference,
    load_approved_ground_truth,
    verify_approval,
    write_approved,
)
from docevals_mlflow.groundtruth.cache import GenerationCache
from docevals_mlflow.groundtruth.models import (
    Candidate,
    ConsensusRow,
    Disagreement,
    GeneratedClaim,
    GenerationReport,
    ProviderGeneration,
    SourceSummary,
)
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from docevals_mlflow.groundtruth.promotion import (
    approve_generated_reference,
    approved_reference_from_review,
)
from docevals_mlflow.groundtruth.records import (
    ApprovalRecord,
    ApprovalVerification,
    ApprovedGroundTruth,
    Resolution,
    ReviewClaim,
    ReviewFile,
    ReviewItem,
)
from docevals_mlflow.groundtruth.review import (
    apply_decisions,
    load_review,
    review_content,
    review_from_generation,
    write_ground_truth_review,
)
from docevals_mlflow.groundtruth.router import GroundTruthRouter, RoutedSources
from docevals_mlflow.groundtruth.signing import (
    PublicKey,
    SigningKey,
    generate_keypair,
    load_public_key,
    load_signing_key,
)
from docevals_mlflow.groundtruth.union import resolve_ground_truth_union
from docevals_mlflow.judges.judge import Judge, JudgeResult, ModelJudge
from docevals_mlflow.judges.output import JudgeOutput
from docevals_mlflow.judges.providers import JudgeProvider, register_judge_provider
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.usage import PriceTable, Usage
from docevals_mlflow.reports.case_markdown import render_case_markdown, render_pipeline_markdown
from docevals_mlflow.reports.files import load_report, write_report
from docevals_mlflow.reports.split_markdown import render_split_markdown
from docevals_mlflow.reports.suite_markdown import render_suite_markdown
from docevals_mlflow.split.batch import evaluate_split_batch
from docevals_mlflow.split.evaluate import evaluate_split
from docevals_mlflow.split.models import SplitPacket, SplitSection
from docevals_mlflow.split.report import PacketSplitReport, SplitReport
from docevals_mlflow.tracking.api import log_evaluation_report, log_field_comparison
from docevals_mlflow.tracking.calibration_runs import log_calibration_report
from docevals_mlflow.tracking.comparison_runs import log_comparison
from docevals_mlflow.tracking.dataset_content import DatasetIntegrityError
from docevals_mlflow.tracking.dataset_use import DatasetUse
from docevals_mlflow.tracking.datasets import (
    DatasetNotFoundError,
    DatasetVersion,
    GroundTruthDataset,
    list_ground_truth_datasets,
    load_ground_truth,
    register_ground_truth_dataset,
)
from docevals_mlflow.tracking.generation_runs import GenerationSettings, log_generation
from docevals_mlflow.tracking.options import RunOptions, RunPrompt
from docevals_mlflow.tracking.runs import (
    LoggedRun,
    TrackingError,
    TrackingUnavailableError,
    log_bundle,
)
from docevals_mlflow.tracking.snapshots import load_run_snapshot
from docevals_mlflow.tracking.split_api import log_split_report

__all__ = [
    "ApprovalError",
    "ApprovalRecord",
    "ApprovalVerification",
    "ApprovedGroundTruth",
    "BatchComparison",
    "CalibrationStats",
    "Candidate",
    "CascadeEdge",
    "CheckpointSummary",
    "CheckpointWarning",
    "ClassSchema",
    "Comparison",
    "ConfidenceCalibration",
    "ConfigurationError",
    "ConsensusRow",
    "Counterfactual",
    "CounterfactualRerun",
    "Counts",
    "DEFAULT_RUBRIC",
    "DatasetIntegrityError",
    "DatasetNotFoundError",
    "DatasetUse",
    "DatasetVersion",
    "Disagreement",
    "DisagreementBudget",
    "DocEvalsError",
    "DocEvalsWarning",
    "DocumentComparison",
    "DocumentPair",
    "DocumentSchema",
    "ErrorRecord",
    "EvaluationCase",
    "EvaluationReport",
    "EvaluationSpec",
    "Evaluator",
    "ExactStructuredMetric",
    "FieldComparer",
    "FieldMethod",
    "FieldMetric",
    "FieldSpec",
    "FieldsReport",
    "FunctionMetric",
    "GeneratedClaim",
    "GenerationCache",
    "GenerationReport",
    "GenerationSettings",
    "GroundTruthAdjudicator",
    "GroundTruthDataset",
    "GroundTruthPanel",
    "GroundTruthRouter",
    "InputError",
    "InputFileNotFoundError",
    "Judge",
    "JudgeOutput",
    "JudgePanelMetric",
    "JudgeProvider",
    "JudgeRequest",
    "JudgeResult",
    "JudgeVariant",
    "LLMJudgeMetric",
    "LoggedRun",
    "MethodOption",
    "Metric",
    "MetricError",
    "MetricResult",
    "MetricSummary",
    "ModelJudge",
    "OperationRegistry",
    "OperationSpec",
    "OutputError",
    "PacketSplitReport",
    "PairComparison",
    "PipelineCase",
    "PipelineDefinitionError",
    "PipelineEvaluationReport",
    "PipelineEvaluator",
    "PriceTable",
    "Producer",
    "ProviderGeneration",
    "PublicKey",
    "RecordedRerun",
    "ReferenceArtifact",
    "ReferenceSummary",
    "Resolution",
    "ReviewBudget",
    "ReviewClaim",
    "ReviewFile",
    "ReviewItem",
    "RoutedSources",
    "RunOptions",
    "RunPrompt",
    "RunSnapshot",
    "SigningKey",
    "SimpleComparator",
    "SourceSummary",
    "SpecFingerprints",
    "SplitPacket",
    "SplitReport",
    "SplitSection",
    "StageSummary",
    "SuiteReport",
    "TrackingError",
    "TrackingUnavailableError",
    "TransportSettings",
    "Usage",
    "WorkerProcessError",
    "__version__",
    "apply_decisions",
    "approve_generated_reference",
    "approve_review",
    "approved_from_reference",
    "approved_reference",
    "approved_reference_from_review",
    "artifact_from_path",
    "artifact_from_value",
    "build_judge_request",
    "build_suite_report",
    "canonical_json",
    "combine_verdicts",
    "compare_document",
    "compare_documents",
    "compare_runs",
    "confidence_calibration",
    "disagreement_budget",
    "evaluate_split",
    "evaluate_split_batch",
    "failure_cascades",
    "failure_context",
    "format_path",
    "generate_keypair",
    "list_ground_truth_datasets",
    "load_approved_ground_truth",
    "load_ground_truth",
    "load_public_key",
    "load_report",
    "load_review",
    "load_run_snapshot",
    "load_signing_key",
    "log_bundle",
    "log_calibration_report",
    "log_comparison",
    "log_evaluation_report",
    "log_field_comparison",
    "log_generation",
    "log_split_report",
    "parse_path",
    "register_field_method",
    "register_ground_truth_dataset",
    "register_judge_provider",
    "render_case_markdown",
    "render_pipeline_markdown",
    "render_split_heatmap",
    "render_split_markdown",
    "render_suite_markdown",
    "resolve_ground_truth_union",
    "review_budget",
    "review_content",
    "review_from_generation",
    "sha256_json",
    "values_equal",
    "verify_approval",
    "write_approved",
    "write_ground_truth_review",
    "write_report",
]

if _typing.TYPE_CHECKING:
    from docevals_mlflow.reports.split_plot import render_split_heatmap


def __getattr__(name: str) -> _typing.Any:
    # Plotly loads when a chart is drawn, not on `import docevals_mlflow` (`docevals --help`).
    if name == "render_split_heatmap":
        from docevals_mlflow.reports.split_plot import render_split_heatmap

        return render_split_heatmap
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
