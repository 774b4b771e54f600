"""docevals-mlflow: document-AI evaluations as MLflow experiments.

The names below are the public API; everything else may change without notice.
"""

# Private names: everything public here is listed in __all__. Each public name loads on first
# use (PEP 562), so `import docevals_mlflow` (and `docevals --help`) imports no submodule but
# the version.
import importlib as _importlib
import typing as _typing

from docevals_mlflow._version import __version__ as __version__

if _typing.TYPE_CHECKING:
    # What type checkers and IDEs see; tests/test_public_api.py checks it agrees with _EXPORTS.
    from docevals_mlflow.compare import Comparison as Comparison
    from docevals_mlflow.compare import PairComparison as PairComparison
    from docevals_mlflow.compare import RunSnapshot as RunSnapshot
    from docevals_mlflow.compare import compare_runs as compare_runs
    from docevals_mlflow.core.artifacts import ReferenceArtifact as ReferenceArtifact
    from docevals_mlflow.core.artifacts import artifact_from_path as artifact_from_path
    from docevals_mlflow.core.artifacts import artifact_from_value as artifact_from_value
    from docevals_mlflow.core.cases import DEFAULT_RUBRIC as DEFAULT_RUBRIC
    from docevals_mlflow.core.cases import EvaluationCase as EvaluationCase
    from docevals_mlflow.core.cases import PipelineCase as PipelineCase
    from docevals_mlflow.core.cases import Producer as Producer
    from docevals_mlflow.core.diagnostics import CalibrationStats as CalibrationStats
    from docevals_mlflow.core.diagnostics import CascadeEdge as CascadeEdge
    from docevals_mlflow.core.diagnostics import ConfidenceCalibration as ConfidenceCalibration
    from docevals_mlflow.core.diagnostics import CounterfactualRerun as CounterfactualRerun
    from docevals_mlflow.core.diagnostics import DisagreementBudget as DisagreementBudget
    from docevals_mlflow.core.diagnostics import ReviewBudget as ReviewBudget
    from docevals_mlflow.core.fingerprints import canonical_json as canonical_json
    from docevals_mlflow.core.fingerprints import sha256_json as sha256_json
    from docevals_mlflow.core.paths import format_path as format_path
    from docevals_mlflow.core.paths import parse_path as parse_path
    from docevals_mlflow.core.registry import OperationRegistry as OperationRegistry
    from docevals_mlflow.core.reports import CheckpointSummary as CheckpointSummary
    from docevals_mlflow.core.reports import EvaluationReport as EvaluationReport
    from docevals_mlflow.core.reports import MetricSummary as MetricSummary
    from docevals_mlflow.core.reports import PipelineEvaluationReport as PipelineEvaluationReport
    from docevals_mlflow.core.reports import ReferenceSummary as ReferenceSummary
    from docevals_mlflow.core.reports import SpecFingerprints as SpecFingerprints
    from docevals_mlflow.core.reports import StageSummary as StageSummary
    from docevals_mlflow.core.reports import SuiteReport as SuiteReport
    from docevals_mlflow.core.results import ErrorRecord as ErrorRecord
    from docevals_mlflow.core.results import MetricResult as MetricResult
    from docevals_mlflow.core.specs import EvaluationSpec as EvaluationSpec
    from docevals_mlflow.core.specs import OperationSpec as OperationSpec
    from docevals_mlflow.core.statistics.planner import plan_sample_size as plan_sample_size
    from docevals_mlflow.core.values import values_equal as values_equal
    from docevals_mlflow.core.verdicts import combine_verdicts as combine_verdicts
    from docevals_mlflow.core.verdicts import failure_context as failure_context
    from docevals_mlflow.diagnostics import Counterfactual as Counterfactual
    from docevals_mlflow.diagnostics import RecordedRerun as RecordedRerun
    from docevals_mlflow.diagnostics import confidence_calibration as confidence_calibration
    from docevals_mlflow.diagnostics import disagreement_budget as disagreement_budget
    from docevals_mlflow.diagnostics import failure_cascades as failure_cascades
    from docevals_mlflow.diagnostics import review_budget as review_budget
    from docevals_mlflow.docmetrics.anls import anls as anls
    from docevals_mlflow.docmetrics.anls import anls_star as anls_star
    from docevals_mlflow.docmetrics.inputs import read_text_pairs as read_text_pairs
    from docevals_mlflow.docmetrics.normalize import TextNormalization as TextNormalization
    from docevals_mlflow.docmetrics.reading_order import OrderBatch as OrderBatch
    from docevals_mlflow.docmetrics.reading_order import OrderScore as OrderScore
    from docevals_mlflow.docmetrics.reading_order import score_orders as score_orders
    from docevals_mlflow.docmetrics.report import TextMetricsReport as TextMetricsReport
    from docevals_mlflow.docmetrics.report import evaluate_text_inputs as evaluate_text_inputs
    from docevals_mlflow.docmetrics.tables import TableBatch as TableBatch
    from docevals_mlflow.docmetrics.tables import TableScore as TableScore
    from docevals_mlflow.docmetrics.tables import score_tables as score_tables
    from docevals_mlflow.docmetrics.tables import teds as teds
    from docevals_mlflow.docmetrics.text import TextBatchScore as TextBatchScore
    from docevals_mlflow.docmetrics.text import TextPairScore as TextPairScore
    from docevals_mlflow.docmetrics.text import character_error_rate as character_error_rate
    from docevals_mlflow.docmetrics.text import normalized_edit_distance as normalized_edit_distance
    from docevals_mlflow.docmetrics.text import score_texts as score_texts
    from docevals_mlflow.docmetrics.text import token_f1 as token_f1
    from docevals_mlflow.docmetrics.text import word_error_rate as word_error_rate
    from docevals_mlflow.errors import ApprovalError as ApprovalError
    from docevals_mlflow.errors import CheckpointWarning as CheckpointWarning
    from docevals_mlflow.errors import ConfigurationError as ConfigurationError
    from docevals_mlflow.errors import DocEvalsError as DocEvalsError
    from docevals_mlflow.errors import DocEvalsWarning as DocEvalsWarning
    from docevals_mlflow.errors import InputError as InputError
    from docevals_mlflow.errors import InputFileNotFoundError as InputFileNotFoundError
    from docevals_mlflow.errors import MetricError as MetricError
    from docevals_mlflow.errors import OutputError as OutputError
    from docevals_mlflow.errors import PipelineDefinitionError as PipelineDefinitionError
    from docevals_mlflow.errors import WorkerProcessError as WorkerProcessError
    from docevals_mlflow.evaluation.document_metrics import AnlsMetric as AnlsMetric
    from docevals_mlflow.evaluation.evaluator import Evaluator as Evaluator
    from docevals_mlflow.evaluation.exact import ExactStructuredMetric as ExactStructuredMetric
    from docevals_mlflow.evaluation.field_metric import FieldMetric as FieldMetric
    from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric as LLMJudgeMetric
    from docevals_mlflow.evaluation.metrics import FunctionMetric as FunctionMetric
    from docevals_mlflow.evaluation.metrics import Metric as Metric
    from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric as JudgePanelMetric
    from docevals_mlflow.evaluation.panel_metric import JudgeVariant as JudgeVariant
    from docevals_mlflow.evaluation.pipeline import PipelineEvaluator as PipelineEvaluator
    from docevals_mlflow.evaluation.suite import build_suite_report as build_suite_report
    from docevals_mlflow.evaluation.table_metric import TableMetric as TableMetric
    from docevals_mlflow.evaluation.text_metric import TextMetric as TextMetric
    from docevals_mlflow.fields.batch import BatchComparison as BatchComparison
    from docevals_mlflow.fields.batch import DocumentPair as DocumentPair
    from docevals_mlflow.fields.batch import compare_documents as compare_documents
    from docevals_mlflow.fields.compare import DocumentComparison as DocumentComparison
    from docevals_mlflow.fields.compare import FieldComparer as FieldComparer
    from docevals_mlflow.fields.compare import compare_document as compare_document
    from docevals_mlflow.fields.counts import Counts as Counts
    from docevals_mlflow.fields.methods import SimpleComparator as SimpleComparator
    from docevals_mlflow.fields.registry import FieldMethod as FieldMethod
    from docevals_mlflow.fields.registry import MethodOption as MethodOption
    from docevals_mlflow.fields.registry import register_field_method as register_field_method
    from docevals_mlflow.fields.report import FieldsReport as FieldsReport
    from docevals_mlflow.fields.schema import ClassSchema as ClassSchema
    from docevals_mlflow.fields.schema import DocumentSchema as DocumentSchema
    from docevals_mlflow.fields.schema import FieldSpec as FieldSpec
    from docevals_mlflow.groundtruth.adjudicator import (
        GroundTruthAdjudicator as GroundTruthAdjudicator,
    )
    from docevals_mlflow.groundtruth.approval import approve_review as approve_review
    from docevals_mlflow.groundtruth.approval import (
        approved_from_reference as approved_from_reference,
    )
    from docevals_mlflow.groundtruth.approval import approved_reference as approved_reference
    from docevals_mlflow.groundtruth.approval import (
        load_approved_ground_truth as load_approved_ground_truth,
    )
    from docevals_mlflow.groundtruth.approval import verify_approval as verify_approval
    from docevals_mlflow.groundtruth.approval import write_approved as write_approved
    from docevals_mlflow.groundtruth.cache import GenerationCache as GenerationCache
    from docevals_mlflow.groundtruth.models import Candidate as Candidate
    from docevals_mlflow.groundtruth.models import ConsensusRow as ConsensusRow
    from docevals_mlflow.groundtruth.models import Disagreement as Disagreement
    from docevals_mlflow.groundtruth.models import GeneratedClaim as GeneratedClaim
    from docevals_mlflow.groundtruth.models import GenerationReport as GenerationReport
    from docevals_mlflow.groundtruth.models import ProviderGeneration as ProviderGeneration
    from docevals_mlflow.groundtruth.models import SourceSummary as SourceSummary
    from docevals_mlflow.groundtruth.panel import GroundTruthPanel as GroundTruthPanel
    from docevals_mlflow.groundtruth.promotion import (
        approve_generated_reference as approve_generated_reference,
    )
    from docevals_mlflow.groundtruth.promotion import (
        approved_reference_from_review as approved_reference_from_review,
    )
    from docevals_mlflow.groundtruth.records import ApprovalRecord as ApprovalRecord
    from docevals_mlflow.groundtruth.records import ApprovalVerification as ApprovalVerification
    from docevals_mlflow.groundtruth.records import ApprovedGroundTruth as ApprovedGroundTruth
    from docevals_mlflow.groundtruth.records import Resolution as Resolution
    from docevals_mlflow.groundtruth.records import ReviewClaim as ReviewClaim
    from docevals_mlflow.groundtruth.records import ReviewFile as ReviewFile
    from docevals_mlflow.groundtruth.records import ReviewItem as ReviewItem
    from docevals_mlflow.groundtruth.review import apply_decisions as apply_decisions
    from docevals_mlflow.groundtruth.review import load_review as load_review
    from docevals_mlflow.groundtruth.review import review_content as review_content
    from docevals_mlflow.groundtruth.review import review_from_generation as review_from_generation
    from docevals_mlflow.groundtruth.review import (
        write_ground_truth_review as write_ground_truth_review,
    )
    from docevals_mlflow.groundtruth.router import GroundTruthRouter as GroundTruthRouter
    from docevals_mlflow.groundtruth.router import RoutedSources as RoutedSources
    from docevals_mlflow.groundtruth.signing import PublicKey as PublicKey
    from docevals_mlflow.groundtruth.signing import SigningKey as SigningKey
    from docevals_mlflow.groundtruth.signing import generate_keypair as generate_keypair
    from docevals_mlflow.groundtruth.signing import load_public_key as load_public_key
    from docevals_mlflow.groundtruth.signing import load_signing_key as load_signing_key
    from docevals_mlflow.groundtruth.union import (
        resolve_ground_truth_union as resolve_ground_truth_union,
    )
    from docevals_mlflow.judges.judge import Judge as Judge
    from docevals_mlflow.judges.judge import JudgeResult as JudgeResult
    from docevals_mlflow.judges.judge import ModelJudge as ModelJudge
    from docevals_mlflow.judges.output import JudgeOutput as JudgeOutput
    from docevals_mlflow.judges.providers import JudgeProvider as JudgeProvider
    from docevals_mlflow.judges.providers import register_judge_provider as register_judge_provider
    from docevals_mlflow.judges.request import JudgeRequest as JudgeRequest
    from docevals_mlflow.judges.request import build_judge_request as build_judge_request
    from docevals_mlflow.judges.settings import TransportSettings as TransportSettings
    from docevals_mlflow.judges.usage import PriceTable as PriceTable
    from docevals_mlflow.judges.usage import Usage as Usage
    from docevals_mlflow.reports.case_markdown import render_case_markdown as render_case_markdown
    from docevals_mlflow.reports.case_markdown import (
        render_pipeline_markdown as render_pipeline_markdown,
    )
    from docevals_mlflow.reports.files import load_report as load_report
    from docevals_mlflow.reports.files import write_report as write_report
    from docevals_mlflow.reports.split_markdown import (
        render_split_markdown as render_split_markdown,
    )
    from docevals_mlflow.reports.split_plot import render_split_heatmap as render_split_heatmap
    from docevals_mlflow.reports.suite_markdown import (
        render_suite_markdown as render_suite_markdown,
    )
    from docevals_mlflow.split.batch import evaluate_split_batch as evaluate_split_batch
    from docevals_mlflow.split.evaluate import evaluate_split as evaluate_split
    from docevals_mlflow.split.models import SplitPacket as SplitPacket
    from docevals_mlflow.split.models import SplitSection as SplitSection
    from docevals_mlflow.split.report import PacketSplitReport as PacketSplitReport
    from docevals_mlflow.split.report import SplitReport as SplitReport
    from docevals_mlflow.tracking.api import log_evaluation_report as log_evaluation_report
    from docevals_mlflow.tracking.api import log_field_comparison as log_field_comparison
    from docevals_mlflow.tracking.calibration_runs import (
        log_calibration_report as log_calibration_report,
    )
    from docevals_mlflow.tracking.comparison_runs import log_comparison as log_comparison
    from docevals_mlflow.tracking.dataset_content import (
        DatasetIntegrityError as DatasetIntegrityError,
    )
    from docevals_mlflow.tracking.dataset_use import DatasetUse as DatasetUse
    from docevals_mlflow.tracking.datasets import DatasetNotFoundError as DatasetNotFoundError
    from docevals_mlflow.tracking.datasets import DatasetVersion as DatasetVersion
    from docevals_mlflow.tracking.datasets import GroundTruthDataset as GroundTruthDataset
    from docevals_mlflow.tracking.datasets import (
        list_ground_truth_datasets as list_ground_truth_datasets,
    )
    from docevals_mlflow.tracking.datasets import load_ground_truth as load_ground_truth
    from docevals_mlflow.tracking.datasets import (
        register_ground_truth_dataset as register_ground_truth_dataset,
    )
    from docevals_mlflow.tracking.generation_runs import GenerationSettings as GenerationSettings
    from docevals_mlflow.tracking.generation_runs import log_generation as log_generation
    from docevals_mlflow.tracking.options import RunOptions as RunOptions
    from docevals_mlflow.tracking.options import RunPrompt as RunPrompt
    from docevals_mlflow.tracking.runs import LoggedRun as LoggedRun
    from docevals_mlflow.tracking.runs import TrackingError as TrackingError
    from docevals_mlflow.tracking.runs import TrackingUnavailableError as TrackingUnavailableError
    from docevals_mlflow.tracking.runs import log_bundle as log_bundle
    from docevals_mlflow.tracking.snapshots import load_run_snapshot as load_run_snapshot
    from docevals_mlflow.tracking.split_api import log_split_report as log_split_report
    from docevals_mlflow.tracking.text_runs import log_text_report as log_text_report

# Public name -> the module defining it: the one list of the public API.
_EXPORTS: dict[str, str] = {
    "ApprovalError": "docevals_mlflow.errors",
    "ApprovalRecord": "docevals_mlflow.groundtruth.records",
    "ApprovalVerification": "docevals_mlflow.groundtruth.records",
    "ApprovedGroundTruth": "docevals_mlflow.groundtruth.records",
    "BatchComparison": "docevals_mlflow.fields.batch",
    "CalibrationStats": "docevals_mlflow.core.diagnostics",
    "Candidate": "docevals_mlflow.groundtruth.models",
    "CascadeEdge": "docevals_mlflow.core.diagnostics",
    "CheckpointSummary": "docevals_mlflow.core.reports",
    "CheckpointWarning": "docevals_mlflow.errors",
    "ClassSchema": "docevals_mlflow.fields.schema",
    "Comparison": "docevals_mlflow.compare",
    "ConfidenceCalibration": "docevals_mlflow.core.diagnostics",
    "ConfigurationError": "docevals_mlflow.errors",
    "ConsensusRow": "docevals_mlflow.groundtruth.models",
    "Counterfactual": "docevals_mlflow.diagnostics",
    "CounterfactualRerun": "docevals_mlflow.core.diagnostics",
    "Counts": "docevals_mlflow.fields.counts",
    "DEFAULT_RUBRIC": "docevals_mlflow.core.cases",
    "DatasetIntegrityError": "docevals_mlflow.tracking.dataset_content",
    "DatasetNotFoundError": "docevals_mlflow.tracking.datasets",
    "DatasetUse": "docevals_mlflow.tracking.dataset_use",
    "DatasetVersion": "docevals_mlflow.tracking.datasets",
    "Disagreement": "docevals_mlflow.groundtruth.models",
    "DisagreementBudget": "docevals_mlflow.core.diagnostics",
    "DocEvalsError": "docevals_mlflow.errors",
    "DocEvalsWarning": "docevals_mlflow.errors",
    "DocumentComparison": "docevals_mlflow.fields.compare",
    "DocumentPair": "docevals_mlflow.fields.batch",
    "DocumentSchema": "docevals_mlflow.fields.schema",
    "ErrorRecord": "docevals_mlflow.core.results",
    "EvaluationCase": "docevals_mlflow.core.cases",
    "EvaluationReport": "docevals_mlflow.core.reports",
    "EvaluationSpec": "docevals_mlflow.core.specs",
    "Evaluator": "docevals_mlflow.evaluation.evaluator",
    "ExactStructuredMetric": "docevals_mlflow.evaluation.exact",
    "FieldComparer": "docevals_mlflow.fields.compare",
    "FieldMethod": "docevals_mlflow.fields.registry",
    "FieldMetric": "docevals_mlflow.evaluation.field_metric",
    "AnlsMetric": "docevals_mlflow.evaluation.document_metrics",
    "TableMetric": "docevals_mlflow.evaluation.table_metric",
    "TextMetric": "docevals_mlflow.evaluation.text_metric",
    "FieldSpec": "docevals_mlflow.fields.schema",
    "FieldsReport": "docevals_mlflow.fields.report",
    "FunctionMetric": "docevals_mlflow.evaluation.metrics",
    "GeneratedClaim": "docevals_mlflow.groundtruth.models",
    "GenerationCache": "docevals_mlflow.groundtruth.cache",
    "GenerationReport": "docevals_mlflow.groundtruth.models",
    "GenerationSettings": "docevals_mlflow.tracking.generation_runs",
    "GroundTruthAdjudicator": "docevals_mlflow.groundtruth.adjudicator",
    "GroundTruthDataset": "docevals_mlflow.tracking.datasets",
    "GroundTruthPanel": "docevals_mlflow.groundtruth.panel",
    "GroundTruthRouter": "docevals_mlflow.groundtruth.router",
    "InputError": "docevals_mlflow.errors",
    "InputFileNotFoundError": "docevals_mlflow.errors",
    "Judge": "docevals_mlflow.judges.judge",
    "JudgeOutput": "docevals_mlflow.judges.output",
    "JudgePanelMetric": "docevals_mlflow.evaluation.panel_metric",
    "JudgeProvider": "docevals_mlflow.judges.providers",
    "JudgeRequest": "docevals_mlflow.judges.request",
    "JudgeResult": "docevals_mlflow.judges.judge",
    "JudgeVariant": "docevals_mlflow.evaluation.panel_metric",
    "LLMJudgeMetric": "docevals_mlflow.evaluation.llm_metric",
    "LoggedRun": "docevals_mlflow.tracking.runs",
    "MethodOption": "docevals_mlflow.fields.registry",
    "Metric": "docevals_mlflow.evaluation.metrics",
    "MetricError": "docevals_mlflow.errors",
    "MetricResult": "docevals_mlflow.core.results",
    "MetricSummary": "docevals_mlflow.core.reports",
    "ModelJudge": "docevals_mlflow.judges.judge",
    "OperationRegistry": "docevals_mlflow.core.registry",
    "OperationSpec": "docevals_mlflow.core.specs",
    "OrderBatch": "docevals_mlflow.docmetrics.reading_order",
    "OrderScore": "docevals_mlflow.docmetrics.reading_order",
    "OutputError": "docevals_mlflow.errors",
    "PacketSplitReport": "docevals_mlflow.split.report",
    "PairComparison": "docevals_mlflow.compare",
    "PipelineCase": "docevals_mlflow.core.cases",
    "PipelineDefinitionError": "docevals_mlflow.errors",
    "PipelineEvaluationReport": "docevals_mlflow.core.reports",
    "PipelineEvaluator": "docevals_mlflow.evaluation.pipeline",
    "PriceTable": "docevals_mlflow.judges.usage",
    "Producer": "docevals_mlflow.core.cases",
    "ProviderGeneration": "docevals_mlflow.groundtruth.models",
    "PublicKey": "docevals_mlflow.groundtruth.signing",
    "RecordedRerun": "docevals_mlflow.diagnostics",
    "ReferenceArtifact": "docevals_mlflow.core.artifacts",
    "ReferenceSummary": "docevals_mlflow.core.reports",
    "Resolution": "docevals_mlflow.groundtruth.records",
    "ReviewBudget": "docevals_mlflow.core.diagnostics",
    "ReviewClaim": "docevals_mlflow.groundtruth.records",
    "ReviewFile": "docevals_mlflow.groundtruth.records",
    "ReviewItem": "docevals_mlflow.groundtruth.records",
    "RoutedSources": "docevals_mlflow.groundtruth.router",
    "RunOptions": "docevals_mlflow.tracking.options",
    "RunPrompt": "docevals_mlflow.tracking.options",
    "RunSnapshot": "docevals_mlflow.compare",
    "SigningKey": "docevals_mlflow.groundtruth.signing",
    "SimpleComparator": "docevals_mlflow.fields.methods",
    "SourceSummary": "docevals_mlflow.groundtruth.models",
    "SpecFingerprints": "docevals_mlflow.core.reports",
    "SplitPacket": "docevals_mlflow.split.models",
    "SplitReport": "docevals_mlflow.split.report",
    "SplitSection": "docevals_mlflow.split.models",
    "StageSummary": "docevals_mlflow.core.reports",
    "SuiteReport": "docevals_mlflow.core.reports",
    "TableBatch": "docevals_mlflow.docmetrics.tables",
    "TableScore": "docevals_mlflow.docmetrics.tables",
    "TextBatchScore": "docevals_mlflow.docmetrics.text",
    "TextNormalization": "docevals_mlflow.docmetrics.normalize",
    "TextMetricsReport": "docevals_mlflow.docmetrics.report",
    "evaluate_text_inputs": "docevals_mlflow.docmetrics.report",
    "read_text_pairs": "docevals_mlflow.docmetrics.inputs",
    "log_text_report": "docevals_mlflow.tracking.text_runs",
    "TextPairScore": "docevals_mlflow.docmetrics.text",
    "TrackingError": "docevals_mlflow.tracking.runs",
    "TrackingUnavailableError": "docevals_mlflow.tracking.runs",
    "TransportSettings": "docevals_mlflow.judges.settings",
    "Usage": "docevals_mlflow.judges.usage",
    "WorkerProcessError": "docevals_mlflow.errors",
    "__version__": "docevals_mlflow._version",
    "anls": "docevals_mlflow.docmetrics.anls",
    "anls_star": "docevals_mlflow.docmetrics.anls",
    "apply_decisions": "docevals_mlflow.groundtruth.review",
    "approve_generated_reference": "docevals_mlflow.groundtruth.promotion",
    "approve_review": "docevals_mlflow.groundtruth.approval",
    "approved_from_reference": "docevals_mlflow.groundtruth.approval",
    "approved_reference": "docevals_mlflow.groundtruth.approval",
    "approved_reference_from_review": "docevals_mlflow.groundtruth.promotion",
    "artifact_from_path": "docevals_mlflow.core.artifacts",
    "artifact_from_value": "docevals_mlflow.core.artifacts",
    "build_judge_request": "docevals_mlflow.judges.request",
    "build_suite_report": "docevals_mlflow.evaluation.suite",
    "canonical_json": "docevals_mlflow.core.fingerprints",
    "character_error_rate": "docevals_mlflow.docmetrics.text",
    "combine_verdicts": "docevals_mlflow.core.verdicts",
    "compare_document": "docevals_mlflow.fields.compare",
    "compare_documents": "docevals_mlflow.fields.batch",
    "compare_runs": "docevals_mlflow.compare",
    "confidence_calibration": "docevals_mlflow.diagnostics",
    "disagreement_budget": "docevals_mlflow.diagnostics",
    "evaluate_split": "docevals_mlflow.split.evaluate",
    "evaluate_split_batch": "docevals_mlflow.split.batch",
    "failure_cascades": "docevals_mlflow.diagnostics",
    "failure_context": "docevals_mlflow.core.verdicts",
    "format_path": "docevals_mlflow.core.paths",
    "generate_keypair": "docevals_mlflow.groundtruth.signing",
    "list_ground_truth_datasets": "docevals_mlflow.tracking.datasets",
    "load_approved_ground_truth": "docevals_mlflow.groundtruth.approval",
    "load_ground_truth": "docevals_mlflow.tracking.datasets",
    "load_public_key": "docevals_mlflow.groundtruth.signing",
    "load_report": "docevals_mlflow.reports.files",
    "load_review": "docevals_mlflow.groundtruth.review",
    "load_run_snapshot": "docevals_mlflow.tracking.snapshots",
    "load_signing_key": "docevals_mlflow.groundtruth.signing",
    "log_bundle": "docevals_mlflow.tracking.runs",
    "log_calibration_report": "docevals_mlflow.tracking.calibration_runs",
    "log_comparison": "docevals_mlflow.tracking.comparison_runs",
    "log_evaluation_report": "docevals_mlflow.tracking.api",
    "log_field_comparison": "docevals_mlflow.tracking.api",
    "log_generation": "docevals_mlflow.tracking.generation_runs",
    "log_split_report": "docevals_mlflow.tracking.split_api",
    "normalized_edit_distance": "docevals_mlflow.docmetrics.text",
    "parse_path": "docevals_mlflow.core.paths",
    "plan_sample_size": "docevals_mlflow.core.statistics.planner",
    "register_field_method": "docevals_mlflow.fields.registry",
    "register_ground_truth_dataset": "docevals_mlflow.tracking.datasets",
    "register_judge_provider": "docevals_mlflow.judges.providers",
    "render_case_markdown": "docevals_mlflow.reports.case_markdown",
    "render_pipeline_markdown": "docevals_mlflow.reports.case_markdown",
    "render_split_heatmap": "docevals_mlflow.reports.split_plot",
    "render_split_markdown": "docevals_mlflow.reports.split_markdown",
    "render_suite_markdown": "docevals_mlflow.reports.suite_markdown",
    "resolve_ground_truth_union": "docevals_mlflow.groundtruth.union",
    "review_budget": "docevals_mlflow.diagnostics",
    "review_content": "docevals_mlflow.groundtruth.review",
    "review_from_generation": "docevals_mlflow.groundtruth.review",
    "score_orders": "docevals_mlflow.docmetrics.reading_order",
    "score_tables": "docevals_mlflow.docmetrics.tables",
    "score_texts": "docevals_mlflow.docmetrics.text",
    "sha256_json": "docevals_mlflow.core.fingerprints",
    "teds": "docevals_mlflow.docmetrics.tables",
    "token_f1": "docevals_mlflow.docmetrics.text",
    "values_equal": "docevals_mlflow.core.values",
    "verify_approval": "docevals_mlflow.groundtruth.approval",
    "word_error_rate": "docevals_mlflow.docmetrics.text",
    "write_approved": "docevals_mlflow.groundtruth.approval",
    "write_ground_truth_review": "docevals_mlflow.groundtruth.review",
    "write_report": "docevals_mlflow.reports.files",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> _typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
