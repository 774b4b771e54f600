"""The seed library ``visual_evals`` 0.1.0, on top of docevals-mlflow.

``import docevals_mlflow.compat.visual_evals as visual_evals`` (or ``from
docevals_mlflow.compat.visual_evals import ...``) is the only change code written for
the seed needs: the public names, keyword arguments and result shapes are the seed's,
the behaviour is this package's, and the deliberate differences are listed in
``docs/differences.md`` ("visual_evals compatibility").
"""

from docevals_mlflow.compat.visual_evals import report as report
from docevals_mlflow.compat.visual_evals.artifacts import (
    artifact_from_path,
    artifact_from_value,
    load_prediction,
)
from docevals_mlflow.compat.visual_evals.conversion import PyMuPDF4LLMConverter
from docevals_mlflow.compat.visual_evals.evaluator import Evaluator, PipelineEvaluator
from docevals_mlflow.compat.visual_evals.ground_truth import (
    DocumentMarkdownConverter,
    DocumentMarkdownReport,
    GeneratedClaim,
    GeneratedGroundTruthOutput,
    GroundTruthAdjudicationReport,
    GroundTruthAdjudicator,
    GroundTruthGenerationReport,
    GroundTruthGenerationRequest,
    GroundTruthPanel,
    GroundTruthPreparationReport,
    GroundTruthReviewFile,
    GroundTruthReviewItem,
    GroundTruthRouter,
    MarkdownConversionOutput,
    approve_generated_reference,
    approved_reference_from_review,
    ground_truth_review_from_generation,
    load_ground_truth_review,
    resolve_ground_truth_union,
    write_ground_truth_review,
)
from docevals_mlflow.compat.visual_evals.judge import (
    AnthropicMessagesAdapter,
    Judge,
    JudgeAdapter,
    JudgeOutput,
    JudgeRequest,
    ModelJudge,
    OpenAIResponsesAdapter,
    build_judge_request,
)
from docevals_mlflow.compat.visual_evals.metrics import (
    ExactStructuredMetric,
    FunctionMetric,
    JudgePanelMetric,
    JudgeVariant,
    LLMJudgeMetric,
)
from docevals_mlflow.compat.visual_evals.models import (
    ComparisonMode,
    EvaluationCase,
    EvaluationReport,
    EvaluationSpec,
    FailureContext,
    MetricResult,
    OperationSpec,
    PipelineCase,
    PipelineEvaluationReport,
    ProducerInfo,
    ReferenceArtifact,
    Verdict,
)
from docevals_mlflow.compat.visual_evals.specs import OperationRegistry
from docevals_mlflow.compat.visual_evals.suite import (
    EvaluationSuiteCase,
    EvaluationSuiteReport,
    EvaluatorRollup,
    build_suite_report,
)
from docevals_mlflow.compat.visual_evals.usage import TokenUsage, UsageLedger, UsageSummary

# Exactly the seed's public names. Every submodule is an attribute of the package
# (``visual_evals.report.to_markdown``), as on the seed's package: the imports above
# bind them, ``report`` explicitly since no name is taken from it.
__all__ = [
    "AnthropicMessagesAdapter",
    "ComparisonMode",
    "DocumentMarkdownConverter",
    "DocumentMarkdownReport",
    "EvaluationCase",
    "EvaluationReport",
    "EvaluationSpec",
    "EvaluationSuiteCase",
    "EvaluationSuiteReport",
    "Evaluator",
    "EvaluatorRollup",
    "ExactStructuredMetric",
    "FailureContext",
    "FunctionMetric",
    "GeneratedClaim",
    "GeneratedGroundTruthOutput",
    "GroundTruthAdjudicationReport",
    "GroundTruthAdjudicator",
    "GroundTruthGenerationReport",
    "GroundTruthGenerationRequest",
    "GroundTruthPanel",
    "GroundTruthPreparationReport",
    "GroundTruthReviewFile",
    "GroundTruthReviewItem",
    "GroundTruthRouter",
    "Judge",
    "JudgeAdapter",
    "JudgeOutput",
    "JudgePanelMetric",
    "JudgeRequest",
    "JudgeVariant",
    "LLMJudgeMetric",
    "MarkdownConversionOutput",
    "MetricResult",
    "ModelJudge",
    "OpenAIResponsesAdapter",
    "OperationRegistry",
    "OperationSpec",
    "PipelineCase",
    "PipelineEvaluationReport",
    "PipelineEvaluator",
    "ProducerInfo",
    "PyMuPDF4LLMConverter",
    "ReferenceArtifact",
    "TokenUsage",
    "UsageLedger",
    "UsageSummary",
    "Verdict",
    "approve_generated_reference",
    "approved_reference_from_review",
    "artifact_from_path",
    "artifact_from_value",
    "build_judge_request",
    "build_suite_report",
    "ground_truth_review_from_generation",
    "load_ground_truth_review",
    "load_prediction",
    "resolve_ground_truth_union",
    "write_ground_truth_review",
]
