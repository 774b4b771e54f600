"""A second, blind, targeted read of the fields a generation left disputed."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.groundtruth.cache import GenerationCache
from docevals_mlflow.groundtruth.consensus import (
    Tally,
    check_minimum_agreement,
    overall_agreement,
    tally,
)
from docevals_mlflow.groundtruth.generators import read_all, resolve_generators
from docevals_mlflow.groundtruth.models import (
    Candidate,
    ConsensusRow,
    Disagreement,
    GenerationReport,
    summarize_source,
)
from docevals_mlflow.groundtruth.request import build_generation_request
from docevals_mlflow.groundtruth.sources import PathScrubber, check_sources
from docevals_mlflow.groundtruth.votes import vote_key
from docevals_mlflow.judges.judge import run_sync
from docevals_mlflow.judges.usage import Usage, total_usage


class GroundTruthAdjudicator:
    """Re-reads only the disputed fields of a generation, blind, to shrink the review
    queue.

    Each generator is shown the sources, the original extraction instruction and the
    disputed paths, never the first reading's candidate values. The second reading is
    voted like the first (same rules, this adjudicator's ``minimum_agreement``, unanimity
    by default). A field the second reading settles moves into the consensus with
    ``resolved_by="adjudication"``; the rest stay disputed with reason
    ``adjudication_unresolved``: their candidates list every distinct value either
    reading proposed (the votes, omissions and agreement are the second reading's).
    Like the first reading, the second never settles a field as absent.

    The result is a new report (stage ``adjudication``) whose ``parent_sha256`` is the
    generation's digest; its ``providers`` and ``usage`` are the second reading's.
    The authority stays ``generated``.

    Args:
        generators: as for :class:`~docevals_mlflow.groundtruth.panel.GroundTruthPanel`.
        minimum_agreement: the share of voting groups (in (0, 1]) a value needs.
        extraction_instruction: more guidance for the re-read (the seed library's
            "target output contract", such as which paths are allowed), added after
            the generation's own extraction instruction; never the first reading's
            values.
        groups: ``{label: group}`` to override the provider/model grouping.
        cache: as for the panel.
    """

    def __init__(
        self,
        generators: Mapping[str, Any] | Sequence[Any],
        minimum_agreement: float = 1.0,
        *,
        extraction_instruction: str | None = None,
        groups: Mapping[str, str] | None = None,
        cache: Any = None,
    ) -> None:
        if extraction_instruction is not None and not isinstance(extraction_instruction, str):
            raise ConfigurationError(
                "extraction_instruction must be text", path="extraction_instruction"
            )
        self.extraction_instruction = extraction_instruction
        self.generators = resolve_generators(generators, groups)
        self.minimum_agreement = check_minimum_agreement(minimum_agreement)
        self.cache = GenerationCache.coerce(cache)

    async def aadjudicate(
        self, generation: GenerationReport, references: Sequence[ReferenceArtifact]
    ) -> GenerationReport:
        """Re-read the disputed fields of ``generation`` from the same sources.

        Raises:
            InputError: ``references`` are not the sources the generation read (ids or
                content differ), or are not usable sources.
        """
        references = list(references)
        check_sources(references, case_id=generation.case_id)
        _check_same_sources(generation, references)
        disputed = [item.path for item in generation.disagreements]
        if not disputed:
            return generation.model_copy(
                update={
                    "stage": "adjudication",
                    "parent_sha256": generation.digest,
                    "minimum_agreement": self.minimum_agreement,
                    "providers": [],
                    "usage": Usage(),
                }
            )
        request = build_generation_request(
            extraction_instruction=self._instruction(generation),
            expected_fields=disputed,
            references=references,
            purpose="adjudication",
        )
        answers = await read_all(
            self.generators, request, cache=self.cache, scrub=PathScrubber(references)
        )
        second = tally(answers, disputed, self.minimum_agreement, resolved_by="adjudication")
        consensus, disagreements = _merge(generation, second)
        return GenerationReport(
            case_id=generation.case_id,
            stage="adjudication",
            extraction_instruction=generation.extraction_instruction,
            instructions_sha256=request.instructions_sha256,
            expected_fields=list(generation.expected_fields),
            minimum_agreement=self.minimum_agreement,
            sources=list(generation.sources),
            providers=second.providers,
            consensus=consensus,
            disagreements=disagreements,
            overall_agreement=overall_agreement(consensus, disagreements),
            parent_sha256=generation.digest,
            usage=total_usage(provider.usage for provider in second.providers),
        )

    def _instruction(self, generation: GenerationReport) -> str:
        """The generation's extraction instruction, with this adjudicator's added."""
        extra = (self.extraction_instruction or "").strip()
        if not extra:
            return generation.extraction_instruction
        return f"{generation.extraction_instruction.strip()}\n\nFor this re-read:\n{extra}".strip()

    def adjudicate(
        self, generation: GenerationReport, references: Sequence[ReferenceArtifact]
    ) -> GenerationReport:
        """Synchronous :meth:`aadjudicate`."""
        return run_sync(self.aadjudicate(generation, references))


def _merge(
    generation: GenerationReport, second: Tally
) -> tuple[list[ConsensusRow], list[Disagreement]]:
    """The first reading's agreed rows, with the fields the second reading settled
    added and the rest still disputed, in the generation's field order."""
    settled = {row.path: row for row in second.consensus}
    again = {item.path: item for item in second.disagreements}
    first_rows = {row.path: row for row in generation.consensus}
    first_disputes = {item.path: item for item in generation.disagreements}
    consensus: list[ConsensusRow] = []
    disagreements: list[Disagreement] = []
    for path in _field_order(generation):
        if path in first_rows:
            consensus.append(first_rows[path])
        elif path in settled:
            consensus.append(settled[path])
        elif path in again:
            disagreements.append(_unresolved(first_disputes[path], again[path]))
    return consensus, disagreements


def _field_order(generation: GenerationReport) -> list[str]:
    """Expected fields first (in order), then any other field the report holds."""
    order = list(generation.expected_fields)
    for path in [row.path for row in generation.consensus] + [
        item.path for item in generation.disagreements
    ]:
        if path not in order:
            order.append(path)
    return order


def _check_same_sources(
    generation: GenerationReport, references: Sequence[ReferenceArtifact]
) -> None:
    given = {source.id: source.sha256 for source in map(summarize_source, references)}
    read = {source.id: source.sha256 for source in generation.sources}
    if given == read:
        return
    missing = sorted(set(read) - set(given))
    extra = sorted(set(given) - set(read))
    changed = sorted(key for key in set(read) & set(given) if read[key] != given[key])
    problems = [
        f"{label}: {', '.join(ids)}"
        for label, ids in (("missing", missing), ("not read before", extra), ("changed", changed))
        if ids
    ]
    raise InputError(
        "adjudication must re-read the generation's own sources; " + "; ".join(problems),
        record=generation.case_id,
    )


def _unresolved(first: Disagreement, second: Disagreement) -> Disagreement:
    merged: dict[Hashable, Candidate] = {}
    for candidate in second.candidates:
        merged[vote_key(candidate.value)] = candidate
    for candidate in first.candidates:
        key = vote_key(candidate.value)
        if key in merged:
            known = merged[key]
            merged[key] = known.model_copy(
                update={
                    "providers": sorted(set(known.providers) | set(candidate.providers)),
                    "evidence": known.evidence
                    + [text for text in candidate.evidence if text not in known.evidence],
                    "reference_ids": known.reference_ids
                    + [ref for ref in candidate.reference_ids if ref not in known.reference_ids],
                }
            )
        else:
            # Seen in the first reading only: listed for the reviewer, with no vote now.
            merged[key] = candidate.model_copy(update={"votes": 0.0})
    return Disagreement(
        path=second.path,
        reason="adjudication_unresolved",
        candidates=list(merged.values()),
        omitted_by=second.omitted_by,
        agreement=second.agreement,
    )
