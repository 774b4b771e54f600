"""The seed's ``visual_evals.judge``: the judge request, output schema, judge and
provider adapters, on this package's judges.

The request is this package's (every reference listed with id, kind and authority;
attachments labelled; claims numbered and scored against what was sent), shaped the
way seed code reads it: the task also has the seed's ``textual_references`` (text and
structured references with their content) and the output schema is titled
``JudgeOutput``. :class:`ModelJudge` gives both the seed's ``judge(case) ->
JudgeOutput`` and this package's ``ajudge(request) -> JudgeResult``, so it works in
the seed's metrics and in this package's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeAlias

from docevals_mlflow.compat.visual_evals._adapters import (
    AnthropicMessagesAdapter,
    AnthropicSender,
    OpenAIResponsesAdapter,
    OpenAISender,
)
from docevals_mlflow.compat.visual_evals.usage import TokenUsage, usage_records_for
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.paths import format_path, iter_leaves
from docevals_mlflow.errors import ProviderError
from docevals_mlflow.judges import request as native_request
from docevals_mlflow.judges.judge import CallableAdapter, JudgeResult, run_sync
from docevals_mlflow.judges.judge import ModelJudge as NativeModelJudge
from docevals_mlflow.judges.output import JudgeOutput
from docevals_mlflow.judges.output import PredictionClaim as PredictionClaimJudgment
from docevals_mlflow.judges.output import ReferenceClaim as ReferenceClaimJudgment
from docevals_mlflow.judges.output import RubricResult as RubricJudgment
from docevals_mlflow.judges.request import JudgeRequest

__all__ = [
    "JUDGE_INSTRUCTIONS",
    "AnthropicMessagesAdapter",
    "AnthropicSender",
    "GeneratorResult",
    "Judge",
    "JudgeAdapter",
    "JudgeOutput",
    "JudgeRequest",
    "ModelJudge",
    "OpenAIResponsesAdapter",
    "OpenAISender",
    "PredictionClaimJudgment",
    "ReferenceClaimJudgment",
    "RubricJudgment",
    "StructuredGenerator",
    "build_judge_request",
]

JUDGE_INSTRUCTIONS = native_request.BASE_INSTRUCTIONS
"""The base judge prompt (this package's; stage guidance is appended or replaces it)."""

GeneratorResult: TypeAlias = JudgeOutput | Mapping[str, Any] | str
StructuredGenerator: TypeAlias = Callable[[JudgeRequest], GeneratorResult]

_TEXTUAL_KINDS = frozenset({"text", "structured"})


class Judge(Protocol):
    """The seed's judge: anything that returns a :class:`JudgeOutput` for a case."""

    def judge(self, case: EvaluationCase) -> JudgeOutput:
        """Judge one case."""
        ...


class JudgeAdapter(Protocol):
    """The seed's adapter: an object whose ``generate(request)`` returns the output."""

    def generate(self, request: JudgeRequest) -> GeneratorResult:
        """Answer one request with a :class:`JudgeOutput`, a matching mapping or JSON."""
        ...


def seed_shaped(request: JudgeRequest) -> JudgeRequest:
    """``request`` with the seed's ``textual_references`` in its task and a titled
    output schema (unchanged when it has both).

    The content of a text or structured reference moves from the task's
    ``references`` entry to its ``textual_references`` entry, so nothing is sent twice.
    """
    task = request.task
    schema = request.output_schema
    if "textual_references" in task and "title" in schema:
        return request
    textual = [ref for ref in request.references if ref.kind in _TEXTUAL_KINDS]
    textual_ids = {ref.id for ref in textual}
    listed = [
        {key: value for key, value in entry.items() if key != "content"}
        if isinstance(entry, Mapping) and entry.get("id") in textual_ids
        else entry
        for entry in task.get("references", [])
    ]
    textual_entries = [
        {
            "id": ref.id,
            "authority": ref.authority,
            "kind": ref.kind,
            "comparison_mode": ref.comparison_mode,
            "content": ref.content,
            "metadata": ref.metadata,
        }
        for ref in textual
    ]
    new_task = {**task, "references": listed, "textual_references": textual_entries}
    new_schema = {"title": "JudgeOutput", **schema}
    return request.model_copy(update={"task": new_task, "output_schema": new_schema})


def _semantic_truth_claims(case: EvaluationCase, first: int) -> list[dict[str, Any]]:
    """The seed's claims from ground-truth tables that are not exact-comparable (an
    arbitrary CSV in ``auto`` mode): one per cell, numbered from ``first``.

    The exact metric ignores such tables; the seed still listed their cells as
    authoritative claims for the judge to find in the prediction.
    """
    claims = [
        {
            "path": format_path(path),
            "expected_value": value,
            "reference_id": reference.id,
            "authority": "ground_truth",
        }
        for reference in case.references
        if reference.authority == "ground_truth"
        and reference.kind == "structured"
        and not reference.exact_comparable
        for path, value in iter_leaves(reference.content)
    ]
    for number, claim in enumerate(claims, start=first):
        claim["claim_id"] = f"r{number:05d}"
    return claims


def build_judge_request(case: EvaluationCase) -> JudgeRequest:
    """The request any judge receives for ``case`` (this package's, seed-shaped).

    Besides this package's task keys, the task has the seed's
    ``textual_references``, ``authoritative_structured_claims``,
    ``action_instruction_hash``, ``evaluation_spec_hash``, ``operation_spec_id``,
    ``operation_spec_version``, ``depends_on``, ``metadata`` and
    ``allow_unsafe_judge_override``. Claims are under ``prediction_claims`` and
    ``reference_claims``; as in the seed, the cells of a ground-truth table that is
    not exact-comparable are claims too (the judge matches them by meaning), and
    ``authoritative_structured_claims`` is the list of reference claims when they are
    ground truth (empty when they come from a generated, provisional reference).
    The compat metrics score answers against this request, so what is sent is what
    is counted.
    """
    request = seed_shaped(native_request.build_judge_request(case))
    task = dict(request.task)
    claims = list(task.get("reference_claims", []))
    if task.get("reference_claims_authority") in (None, "ground_truth"):
        claims += _semantic_truth_claims(case, len(claims) + 1)
        if claims:
            task["reference_claims_authority"] = "ground_truth"
    authoritative = task.get("reference_claims_authority") == "ground_truth"
    task.update(
        {
            "reference_claims": claims,
            "authoritative_structured_claims": claims if authoritative else [],
            "action_instruction_hash": task.get("action_instruction_sha256"),
            "evaluation_spec_hash": task.get("evaluation_spec_sha256"),
            "operation_spec_id": case.operation_spec_id,
            "operation_spec_version": case.operation_spec_version,
            "depends_on": list(case.depends_on),
            "metadata": case.metadata,
            "allow_unsafe_judge_override": case.allow_unsafe_judge_override,
        }
    )
    return request.model_copy(update={"task": task})


def _adapter(value: Any) -> Any:
    """An adapter this package can call: its own adapters and functions as they are,
    a seed adapter (an object with only ``generate``) through its ``generate``."""
    if hasattr(value, "agenerate") or not hasattr(value, "generate") or callable(value):
        return value
    provider = str(getattr(value, "provider", None) or "custom")
    model = str(getattr(value, "model", None) or type(value).__name__)
    return CallableAdapter(value.generate, provider=provider, model=model)


class ModelJudge(NativeModelJudge):
    """One judge for every model: the adapter is one of the adapters here (or this
    package's), a function ``fn(request)`` or an object with ``generate(request)``,
    returning a :class:`JudgeOutput`, a matching mapping or JSON text.

    ``judge(case)`` returns the :class:`JudgeOutput` (the seed's call) and raises when
    no usable answer came; ``ajudge(request)`` / ``judge(request)`` return this
    package's :class:`JudgeResult` (status, usage, prompt hash), used by the metrics.
    Malformed answers get one repair attempt.
    """

    def __init__(self, adapter: Any, *, name: str | None = None, cache: Any = None) -> None:
        self.seed_adapter = adapter
        super().__init__(_adapter(adapter), name=name, cache=cache)

    @property
    def provider(self) -> str | None:
        """The adapter's provider, when it names one."""
        value = getattr(self.seed_adapter, "provider", None)
        return str(value) if value else None

    @property
    def model(self) -> str | None:
        """The adapter's model, when it names one."""
        value = getattr(self.seed_adapter, "model", None)
        return str(value) if value else None

    @property
    def last_usage(self) -> TokenUsage | None:
        """The adapter's last usage record (the seed's; stale under reuse, prefer the
        usage in each result)."""
        records = usage_records_for(self.seed_adapter)
        return records[-1] if records else None

    async def ajudge(self, request: JudgeRequest) -> JudgeResult:
        """Judge a request (seed-shaped first, so seed adapters see what they expect)."""
        return await super().ajudge(seed_shaped(request))

    def judge(self, case: Any) -> Any:
        """``judge(case)``: the :class:`JudgeOutput` for an evaluation case.
        ``judge(request)``: this package's :class:`JudgeResult`.

        Raises:
            ProviderError: (for a case) the model gave no usable answer (error,
                refusal, truncated or malformed after one repair).
        """
        if not isinstance(case, EvaluationCase):
            return run_sync(self.ajudge(case))
        result = run_sync(self.ajudge(build_judge_request(case)))
        if result.output is None:
            raise ProviderError(
                f"judge {self.name} gave no usable answer ({result.status}): {result.error}",
                provider=self.provider or "custom",
            )
        return result.output
