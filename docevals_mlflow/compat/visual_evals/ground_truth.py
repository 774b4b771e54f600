"""The seed's ``visual_evals.ground_truth``: provisional ground truth from several
models, its review and approval, on this package's ground-truth generation.

Generation, voting, adjudication, union, review files and approvals are this
package's (see docs/differences.md for how they differ); results come in the seed's
shapes and carry the package's own report as ``generation``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias

from docevals_mlflow.compat.visual_evals._documents import (
    DOCUMENT_TO_MARKDOWN_INSTRUCTIONS,
    DocumentMarkdownConverter,
    DocumentMarkdownReport,
    GroundTruthGenerationRequest,
    GroundTruthPreparationReport,
    GroundTruthRouter,
    MarkdownConversionOutput,
)
from docevals_mlflow.compat.visual_evals._generation import (
    GeneratedGroundTruthOutput,
    GroundTruthAdjudicationReport,
    GroundTruthGenerationReport,
    seed_generation,
    seed_resolution,
)
from docevals_mlflow.compat.visual_evals.judge import _adapter
from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.groundtruth import adjudicator as native_adjudicator
from docevals_mlflow.groundtruth import panel as native_panel
from docevals_mlflow.groundtruth import promotion
from docevals_mlflow.groundtruth.approval import approve_review, approved_reference
from docevals_mlflow.groundtruth.models import GeneratedClaim, GenerationReport
from docevals_mlflow.groundtruth.records import ReviewFile as GroundTruthReviewFile
from docevals_mlflow.groundtruth.records import ReviewItem as GroundTruthReviewItem
from docevals_mlflow.groundtruth.request import GENERATION_INSTRUCTIONS
from docevals_mlflow.groundtruth.review import load_ground_truth_review, review_from_generation
from docevals_mlflow.groundtruth.review import (
    write_ground_truth_review as native_write_review,
)
from docevals_mlflow.groundtruth.union import resolve_ground_truth_union as native_union

__all__ = [
    "DOCUMENT_TO_MARKDOWN_INSTRUCTIONS",
    "GROUND_TRUTH_GENERATION_INSTRUCTIONS",
    "DocumentMarkdownConverter",
    "DocumentMarkdownReport",
    "GeneratedClaim",
    "GeneratedGroundTruthOutput",
    "GroundTruthAdjudicationReport",
    "GroundTruthAdjudicator",
    "GroundTruthGenerationReport",
    "GroundTruthGenerationRequest",
    "GroundTruthGenerator",
    "GroundTruthGeneratorAdapter",
    "GroundTruthGeneratorResult",
    "GroundTruthPanel",
    "GroundTruthPreparationReport",
    "GroundTruthReviewFile",
    "GroundTruthReviewItem",
    "GroundTruthRouter",
    "MarkdownConversionOutput",
    "approve_generated_reference",
    "approved_reference_from_review",
    "ground_truth_review_from_generation",
    "load_ground_truth_review",
    "resolve_ground_truth_union",
    "write_ground_truth_review",
]

GROUND_TRUTH_GENERATION_INSTRUCTIONS = GENERATION_INSTRUCTIONS
"""The base prompt of every generator (this package's)."""

GroundTruthGeneratorResult: TypeAlias = GeneratedGroundTruthOutput | Mapping[str, Any] | str
GroundTruthGenerator: TypeAlias = Callable[[GroundTruthGenerationRequest], Any]


class GroundTruthGeneratorAdapter(Protocol):
    """The seed's generator object: ``generate(request)`` returns the answer."""

    def generate(self, request: GroundTruthGenerationRequest) -> Any:
        """Answer one generation request."""
        ...


def _generators(generators: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(generators, Mapping):
        raise ConfigurationError(
            "generators must be a mapping {name: generator}", path="generators"
        )
    return {label: _adapter(value) for label, value in generators.items()}


def _native(report: Any, what: str) -> GenerationReport:
    native = getattr(report, "generation", None)
    if isinstance(report, GenerationReport):
        return report
    if not isinstance(native, GenerationReport):
        raise InputError(
            f"{what} needs a report made by this package's GroundTruthPanel (its "
            "'generation' holds the package's own report)",
            path="generation",
        )
    return native


class GroundTruthPanel:
    """Two or more models read the sources blind; their values are voted field by
    field (this package's :class:`~docevals_mlflow.groundtruth.panel.GroundTruthPanel`:
    concurrent, ties never accepted, omissions never agreed).

    ``expected_fields`` may be left out: then every path a generator gave is voted on.
    """

    def __init__(
        self,
        generators: Mapping[str, Any],
        *,
        extraction_instruction: str,
        expected_fields: Sequence[str] = (),
        minimum_agreement: float = 1.0,
    ) -> None:
        if not isinstance(extraction_instruction, str) or not extraction_instruction.strip():
            raise ConfigurationError(
                "extraction_instruction must describe what to extract",
                path="extraction_instruction",
            )
        self.generators = dict(generators)
        self.extraction_instruction = extraction_instruction
        self.expected_fields = list(expected_fields)
        self.minimum_agreement = minimum_agreement
        self.panel = native_panel.GroundTruthPanel(
            _generators(generators),
            extraction_instruction,
            self.expected_fields or None,
            minimum_agreement,
        )

    def build_request(
        self, *, case_id: str, references: Sequence[ReferenceArtifact]
    ) -> GroundTruthGenerationRequest:
        """The request every generator receives (its schema titled
        ``GeneratedGroundTruthOutput``)."""
        request = self.panel.build_request(case_id=case_id, references=references)
        schema = {"title": "GeneratedGroundTruthOutput", **request.output_schema}
        return GroundTruthGenerationRequest(
            instructions=request.instructions,
            task=request.task,
            output_schema=schema,
            references=list(request.references),
        )

    def generate(
        self, *, case_id: str, references: Sequence[ReferenceArtifact]
    ) -> GroundTruthGenerationReport:
        """Generate provisional ground truth for one case."""
        return seed_generation(self.panel.generate(case_id, references))


class GroundTruthAdjudicator:
    """A blind re-read of the disputed fields only (this package's
    :class:`~docevals_mlflow.groundtruth.adjudicator.GroundTruthAdjudicator`: a field
    is set or stays unresolved, never omitted by agreement)."""

    def __init__(
        self,
        generators: Mapping[str, Any],
        *,
        extraction_instruction: str,
        minimum_agreement: float = 1.0,
    ) -> None:
        if not isinstance(extraction_instruction, str) or not extraction_instruction.strip():
            raise ConfigurationError(
                "extraction_instruction must define the target path contract",
                path="extraction_instruction",
            )
        self.generators = dict(generators)
        self.extraction_instruction = extraction_instruction
        self.minimum_agreement = minimum_agreement
        self.adjudicator = native_adjudicator.GroundTruthAdjudicator(
            _generators(generators),
            minimum_agreement,
            extraction_instruction=extraction_instruction,
        )

    def adjudicate(
        self,
        generation: GroundTruthGenerationReport,
        *,
        references: Sequence[ReferenceArtifact],
    ) -> GroundTruthAdjudicationReport:
        """Re-read ``generation``'s disputed fields from the same sources."""
        before = _native(generation, "adjudication")
        after = self.adjudicator.adjudicate(before, references)
        return seed_resolution(
            before,
            after,
            reason="targeted_reread_consensus",
            policy="targeted_reread",
            notes=[
                "Adjudicators saw the disputed paths and the sources, not the first "
                "reading's values.",
                f"Values were accepted at a minimum agreement of {self.minimum_agreement:.1%}; "
                "a field the re-read does not find stays unresolved for a person.",
            ],
            minimum_agreement=self.minimum_agreement,
        )


def resolve_ground_truth_union(
    generation: GroundTruthGenerationReport,
) -> GroundTruthAdjudicationReport:
    """Accept disputed fields with exactly one proposed value (the others omitted it);
    conflicts stay unresolved; the authority stays ``generated``."""
    before = _native(generation, "the union")
    return seed_resolution(
        before,
        native_union(before),
        reason="non_conflicting_provider_union",
        policy="non_conflicting_provider_union",
        notes=[
            "Non-conflicting values were accepted even where some providers omitted the field.",
            "The reference remains AI-generated and provisional; a one-provider value "
            "can still be wrong.",
        ],
    )


def ground_truth_review_from_generation(
    generation: GroundTruthGenerationReport | GroundTruthAdjudicationReport,
) -> GroundTruthReviewFile:
    """The editable review file for a generation (this package's format)."""
    return review_from_generation(_native(generation, "a review file"))


def write_ground_truth_review(
    generation: GroundTruthGenerationReport | GroundTruthAdjudicationReport | GroundTruthReviewFile,
    path: str | os.PathLike[str],
) -> Any:
    """Write the review file atomically; refuses to replace a reviewer's work."""
    if isinstance(generation, GroundTruthReviewFile):
        return native_write_review(generation, path)
    return native_write_review(_native(generation, "a review file"), path)


def _seed_metadata(reference: ReferenceArtifact, notes: str | None) -> ReferenceArtifact:
    record = reference.metadata.get("approval") or {}
    return reference.model_copy(
        update={
            "metadata": {
                **reference.metadata,
                "requires_human_review": False,
                "human_approval": {
                    "approved_by": reference.metadata.get("approved_by"),
                    "notes": notes if notes is not None else record.get("approval_notes"),
                },
            }
        }
    )


def approve_generated_reference(
    reference: ReferenceArtifact,
    *,
    approved_by: str,
    notes: str | None = None,
    resolved_content: Any | None = None,
) -> ReferenceArtifact:
    """Promote a reviewed generated reference to ``authority="ground_truth"``, with an
    approval record (signed when ``DOCEVALS_SIGNING_KEY`` is set).

    Raises:
        InputError: not generated, no approver, or unresolved disagreements and no
            ``resolved_content``.
    """
    if (
        resolved_content is None
        and reference.authority == "generated"
        and reference.metadata.get("requires_human_review")
    ):
        raise InputError(
            "this generated reference has unresolved disagreements; supply "
            "resolved_content after human review",
            source=reference.id,
            path="resolved_content",
        )
    approved = promotion.approve_generated_reference(
        reference, approved_by, notes or "", resolved_content
    )
    return _seed_metadata(approved, notes)


def approved_reference_from_review(
    review: GroundTruthReviewFile | str | os.PathLike[str],
) -> ReferenceArtifact:
    """Ground truth from an approved review (a loaded file or its path).

    Raises:
        InputError: the review is not approved, names no approver, or has unresolved
            items.
    """
    if isinstance(review, GroundTruthReviewFile):
        if review.status != "approved":
            raise InputError(
                f"status is {review.status!r}: the review is not approved; set status "
                "'approved', name approved_by and decide every review item",
                record=review.case_id,
                path="status",
            )
        return _seed_metadata(approved_reference(approve_review(review)), None)
    return _seed_metadata(promotion.approved_reference_from_review(review), None)
