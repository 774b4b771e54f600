"""Accepting one-sided values: for unattended runs where one generator's omission
should not remove a field another one found."""

from __future__ import annotations

from docevals_mlflow.groundtruth.consensus import overall_agreement
from docevals_mlflow.groundtruth.models import ConsensusRow, Disagreement, GenerationReport
from docevals_mlflow.judges.usage import Usage


def resolve_ground_truth_union(generation: GenerationReport) -> GenerationReport:
    """Accept every disputed field that has exactly one distinct value.

    A field where the generators that gave a value all gave the same (normalised)
    value, and the others omitted it, is accepted with ``resolved_by="union"`` and the
    value's vote share as its agreement. Conflicting values (ties included) stay
    disputed, and so do fields nobody gave. Nothing is asked of any model: the
    result's ``providers`` are the generation's and its ``usage`` is zero. The
    authority stays ``generated``: scores against it are provisional agreement
    signals, not verified accuracy.

    Returns a new report (stage ``union``) whose ``parent_sha256`` is the
    generation's digest.
    """
    accepted: dict[str, ConsensusRow] = {}
    remaining: list[Disagreement] = []
    for item in generation.disagreements:
        if len(item.candidates) == 1:
            (only,) = item.candidates
            accepted[item.path] = ConsensusRow(
                path=item.path,
                expected_value=only.value,
                agreement=item.agreement,
                providers=list(only.providers),
                evidence=list(only.evidence),
                reference_ids=list(only.reference_ids),
                resolved_by="union",
            )
        else:
            remaining.append(item)
    kept = {row.path: row for row in generation.consensus}
    order = list(generation.expected_fields) + [
        path for path in [*kept, *accepted] if path not in generation.expected_fields
    ]
    consensus = [
        kept.get(path) or accepted[path] for path in order if path in kept or path in accepted
    ]
    return generation.model_copy(
        update={
            "stage": "union",
            "consensus": consensus,
            "disagreements": remaining,
            "overall_agreement": overall_agreement(consensus, remaining),
            "parent_sha256": generation.digest,
            "usage": Usage(),
        }
    )
