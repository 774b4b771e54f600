"""docevals-mlflow: document-AI evaluations as MLflow experiments.

The names below are the public API; everything else may change without notice.
"""

from docevals_mlflow._version import __version__
from docevals_mlflow.core.artifacts import (
    ReferenceArtifact,
    artifact_from_path,
    artifact_from_value,
)
from docevals_mlflow.core.cases import DEFAULT_RUBRIC, EvaluationCase, PipelineCase, Producer
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
from docevals_mlflow.errors import (
    CheckpointWarning,
    ConfigurationError,
    DocEvalsError,
    DocEvalsWarning,
    InputError,
    InputFileNotFoundError,
    MetricError,
    OutputError,
    PipelineDefinitionError,
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
from docevals_mlflow.fields.report import FieldsReport
from docevals_mlflow.fields.schema import ClassSchema, DocumentSchema, FieldSpec
from docevals_mlflow.judges.judge import Judge, JudgeResult, ModelJudge
from docevals_mlflow.judges.output import JudgeOutput
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.usage import PriceTable, Usage
from docevals_mlflow.reports.files import load_report, write_report
from docevals_mlflow.reports.markdown import (
    render_case_markdown,
    render_pipeline_markdown,
    render_suite_markdown,
)
from docevals_mlflow.tracking.api import log_evaluation_report, log_field_comparison
from docevals_mlflow.tracking.runs import (
    LoggedRun,
    TrackingError,
    TrackingUnavailableError,
    log_bundle,
)

__all__ = [
    "BatchComparison",
    "CheckpointSummary",
    "CheckpointWarning",
    "ClassSchema",
    "ConfigurationError",
    "Counts",
    "DEFAULT_RUBRIC",
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
    "FieldMetric",
    "FieldSpec",
    "FieldsReport",
    "FunctionMetric",
    "InputError",
    "InputFileNotFoundError",
    "Judge",
    "JudgeOutput",
    "JudgePanelMetric",
    "JudgeRequest",
    "JudgeResult",
    "JudgeVariant",
    "LLMJudgeMetric",
    "LoggedRun",
    "Metric",
    "MetricError",
    "MetricResult",
    "MetricSummary",
    "ModelJudge",
    "OperationRegistry",
    "OperationSpec",
    "OutputError",
    "PipelineCase",
    "PipelineDefinitionError",
    "PipelineEvaluationReport",
    "PipelineEvaluator",
    "PriceTable",
    "Producer",
    "ReferenceArtifact",
    "ReferenceSummary",
    "SpecFingerprints",
    "StageSummary",
    "SuiteReport",
    "TrackingError",
    "TrackingUnavailableError",
    "Usage",
    "__version__",
    "artifact_from_path",
    "artifact_from_value",
    "build_judge_request",
    "build_suite_report",
    "canonical_json",
    "combine_verdicts",
    "compare_document",
    "compare_documents",
    "failure_context",
    "format_path",
    "load_report",
    "log_bundle",
    "log_evaluation_report",
    "log_field_comparison",
    "parse_path",
    "render_case_markdown",
    "render_pipeline_markdown",
    "render_suite_markdown",
    "sha256_json",
    "values_equal",
    "write_report",
]
