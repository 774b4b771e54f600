"""Provisional ground truth from several models that read the sources blind."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.groundtruth.cache import GenerationCache
from docevals_mlflow.groundtruth.consensus import (
    canonical_path,
    check_expected_fields,
    check_minimum_agreement,
    tally,
)
from docevals_mlflow.groundtruth.generators import read_all, resolve_generators
from docevals_mlflow.groundtruth.models import (
    Disagreement,
    GenerationReport,
    ProviderGeneration,
    summarize_source,
)
from docevals_mlflow.groundtruth.request import build_generation_request
from docevals_mlflow.groundtruth.sources import PathScrubber, check_sources
from docevals_mlflow.judges.judge import run_sync
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import total_usage

CasesArg = (
    Mapping[str, Sequence[ReferenceArtifact]] | Iterable[tuple[str, Sequence[ReferenceArtifact]]]
)
"""Cases for a batch: ``{case_id: references}`` or ``(case_id, references)`` pairs."""


OPEN_FIELDS_NOTE = """No list of fields is given (expected_fields is empty and rule 2 \
does not apply): give a claim for every field the \
extraction instruction asks for, with a JSONPath-style path ($.name, $.items[0].sku), \
spelling the same field the same way every time. Give no fields it does not ask for."""
"""Added to the extraction instruction when a panel has no ``expected_fields``."""


def _pairs(cases: CasesArg) -> Iterable[tuple[str, Sequence[ReferenceArtifact]]]:
    return cases.items() if isinstance(cases, Mapping) else cases


class GroundTruthPanel:
    """Two or more independent models read the same sources and vote field by field.

    Each generator sees only the sources and the extraction instruction: never a
    system prediction, never another model's answer. All generators are asked at
    once. Their claims are reconciled by
    :func:`~docevals_mlflow.groundtruth.consensus.tally`: values that reach
    ``minimum_agreement`` (and strictly beat every alternative, absence included)
    become consensus rows; everything else, ties and fields nobody found included,
    becomes a disagreement for review. The result's ``provisional_reference`` has
    ``authority="generated"``: scores against it measure agreement with a
    provisional AI reference, not accuracy.

    A generator that fails (error, refusal, truncated or malformed answer after one
    repair) never aborts the generation: its status is recorded and it does not vote.
    No value is accepted unless at least two independent groups voted.

    Args:
        generators: ``{label: adapter_or_function}`` or a list of adapters (see
            :mod:`~docevals_mlflow.groundtruth.generators`); at least two, from at least
            two provider/model groups.
        extraction_instruction: what to read, in the caller's words; part of every
            generator's prompt.
        expected_fields: the field paths to read (``$.total`` or ``total``). When
            omitted (``None``, as the seed library allowed), the generators choose
            the paths the extraction instruction asks for, and every path any usable
            generator gave is voted on (sorted); an answer with no claims at all is
            a disagreement on ``$`` (``omitted_by_all``). A fixed list gives
            comparable, cacheable requests and keeps unexpected paths out of the
            vote, so prefer it.
        minimum_agreement: the share of voting groups (in (0, 1]) a value needs; the
            default 1.0 makes any disagreement a review item.
        groups: ``{label: group}`` to override the provider/model grouping.
        cache: a directory, :class:`~docevals_mlflow.groundtruth.cache.GenerationCache`
            or :class:`~docevals_mlflow.judges.cache.JudgeCache` to reuse answers to
            identical requests.

    Raises:
        ConfigurationError: invalid generators, fields or threshold.
    """

    def __init__(
        self,
        generators: Mapping[str, Any] | Sequence[Any],
        extraction_instruction: str,
        expected_fields: Iterable[str] | None = None,
        minimum_agreement: float = 1.0,
        *,
        groups: Mapping[str, str] | None = None,
        cache: Any = None,
    ) -> None:
        if not isinstance(extraction_instruction, str):
            raise ConfigurationError(
                "extraction_instruction must be text", path="extraction_instruction"
            )
        if isinstance(expected_fields, str):
            raise ConfigurationError(
                "expected_fields must be a list of paths, not one string",
                path="expected_fields",
            )
        self.generators = resolve_generators(generators, groups)
        self.extraction_instruction = extraction_instruction
        self.expected_fields: list[str] | None = (
            None if expected_fields is None else check_expected_fields(expected_fields)
        )
        self.minimum_agreement = check_minimum_agreement(minimum_agreement)
        self.cache = GenerationCache.coerce(cache)

    @property
    def labels(self) -> list[str]:
        """The generators' labels, in the (sorted) order reports list them."""
        return [generator.label for generator in self.generators]

    async def agenerate(
        self, case_id: str, references: Sequence[ReferenceArtifact]
    ) -> GenerationReport:
        """Generate provisional ground truth for one case from its sources.

        Raises:
            InputError: no sources, repeated source ids, or a source that is not
                evidence.
            InputFileNotFoundError: a source file is missing.
        """
        references = list(references)
        request = self.build_request(case_id=case_id, references=references)
        answers = await read_all(
            self.generators, request, cache=self.cache, scrub=PathScrubber(references)
        )
        fields = self.expected_fields
        if fields is None:
            fields = _claimed_paths(answers)
        result = tally(answers, fields, self.minimum_agreement)
        disagreements = list(result.disagreements)
        if not fields:
            # Nothing was claimed at all: the whole document is unread.
            omitted = [answer.provider for answer in answers if answer.usable]
            disagreements.append(
                Disagreement(path="$", reason="omitted_by_all", omitted_by=omitted)
            )
        return GenerationReport(
            case_id=case_id,
            stage="panel",
            extraction_instruction=self.extraction_instruction,
            instructions_sha256=request.instructions_sha256,
            expected_fields=list(fields),
            minimum_agreement=self.minimum_agreement,
            sources=[summarize_source(reference) for reference in references],
            providers=result.providers,
            consensus=result.consensus,
            disagreements=disagreements,
            overall_agreement=result.overall_agreement,
            usage=total_usage(provider.usage for provider in result.providers),
        )

    def build_request(
        self, *, case_id: str, references: Sequence[ReferenceArtifact]
    ) -> JudgeRequest:
        """The request every generator receives for these sources (inspect it, or
        hand it to an adapter's ``build_body`` to see the provider's request).

        ``case_id`` names the case in errors only: it is not sent, so identical
        sources make identical (cacheable) requests.

        Raises:
            InputError: no sources, repeated source ids, or a source that is not
                evidence.
        """
        references = list(references)
        check_sources(references, case_id=case_id)
        if self.expected_fields is not None:
            return build_generation_request(
                extraction_instruction=self.extraction_instruction,
                expected_fields=self.expected_fields,
                references=references,
            )
        instruction = f"{self.extraction_instruction.strip()}\n\n{OPEN_FIELDS_NOTE}".strip()
        request = build_generation_request(
            extraction_instruction=instruction, expected_fields=["$"], references=references
        )
        # No field list: any path may be claimed (the schema's enum would limit it).
        schema = request.output_schema
        claim = schema["properties"]["claims"]["items"]["properties"]
        claim["path"] = {"type": "string"}
        task = {**request.task, "expected_fields": []}
        return request.model_copy(update={"output_schema": schema, "task": task})

    def generate(self, case_id: str, references: Sequence[ReferenceArtifact]) -> GenerationReport:
        """Synchronous :meth:`agenerate` (works inside a running event loop too)."""
        return run_sync(self.agenerate(case_id, references))

    async def agenerate_many(
        self,
        cases: CasesArg,
        *,
        max_concurrent_cases: int = 16,
    ) -> list[GenerationReport]:
        """Generate for many cases, several at once, in the order given.

        Each provider adapter still limits its own requests in flight; this bounds
        how many cases are prepared and held in memory at the same time.
        """
        if max_concurrent_cases < 1:
            raise ConfigurationError(
                "max_concurrent_cases must be at least 1", path="max_concurrent_cases"
            )
        items = [(case_id, list(refs)) for case_id, refs in _pairs(cases)]
        repeated = sorted(
            case_id for case_id, count in Counter(case for case, _ in items).items() if count > 1
        )
        if repeated:
            raise InputError(f"case ids must be unique; repeated: {repeated}")
        # Every case's sources are checked before any provider is paid for one.
        for case_id, references in items:
            check_sources(references, case_id=case_id)
        gate = asyncio.Semaphore(max_concurrent_cases)

        async def one(case_id: str, references: Sequence[ReferenceArtifact]) -> GenerationReport:
            async with gate:
                return await self.agenerate(case_id, references)

        return list(await asyncio.gather(*(one(case_id, refs) for case_id, refs in items)))

    def generate_many(
        self,
        cases: CasesArg,
        *,
        max_concurrent_cases: int = 16,
    ) -> list[GenerationReport]:
        """Synchronous :meth:`agenerate_many`."""
        return run_sync(self.agenerate_many(cases, max_concurrent_cases=max_concurrent_cases))

    def __repr__(self) -> str:
        return (
            f"GroundTruthPanel(generators={self.labels!r}, "
            f"expected_fields={self.expected_fields!r}, "
            f"minimum_agreement={self.minimum_agreement!r})"
        )


def _claimed_paths(answers: Sequence[ProviderGeneration]) -> list[str]:
    """Every valid path a usable generator claimed, sorted (the fields of an open panel)."""
    paths: set[str] = set()
    for answer in answers:
        if not answer.usable:
            continue
        for claim in answer.claims:
            try:
                paths.add(canonical_path(claim.path))
            except InputError:
                continue  # reported as the provider's invalid path by the tally
    return sorted(paths)
