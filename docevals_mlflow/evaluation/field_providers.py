"""The SEMANTIC and LLM field methods: comparators backed by an embedding model or a
judge, plugged into the field engine through its ``providers`` mapping.

Both defer scalar comparisons, and the comparators built by one
:func:`field_providers` call share one batch per provider: the engine decides a
document's comparisons of every SEMANTIC field with one embeddings request (for the
texts not seen yet), and those of every LLM field with one LLM request, never one
request per field or per pair. SEMANTIC pairs list items by cosine similarity; LLM
pairs them by a cheap text similarity and asks the model only about the pairs that
were formed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docevals_mlflow.evaluation.llm_field import LLMFieldComparator as LLMFieldComparator
from docevals_mlflow.evaluation.llm_field import LLMFieldJudge as LLMFieldJudge
from docevals_mlflow.evaluation.semantic_field import SemanticComparator
from docevals_mlflow.fields.comparator import Comparator
from docevals_mlflow.fields.deferred import ProviderCallLog
from docevals_mlflow.fields.methods import ProviderFactory
from docevals_mlflow.fields.schema import FieldSpec
from docevals_mlflow.judges.embeddings import EmbeddingClient


class FieldProviders(dict[str, ProviderFactory]):
    """The ``providers`` mapping, with ``calls``: the log of every request its
    comparators make (:class:`~docevals_mlflow.fields.deferred.ProviderCallLog`), which
    :func:`~docevals_mlflow.fields.batch.compare_documents` puts in the report (and a
    logged run in each document's trace)."""

    def __init__(
        self, factories: Mapping[str, ProviderFactory], calls: ProviderCallLog | None = None
    ) -> None:
        super().__init__(factories)
        self.calls = calls if calls is not None else ProviderCallLog()


def field_providers(
    *,
    embeddings: EmbeddingClient | None = None,
    llm: Any = None,
    cache: Any = None,
) -> FieldProviders:
    """The ``providers`` mapping for :class:`~docevals_mlflow.fields.compare.FieldComparer`
    and :func:`~docevals_mlflow.fields.batch.compare_documents`.

    ``cache`` (a :class:`~docevals_mlflow.judges.cache.JudgeCache`) keeps the LLM
    method's answers on disk, so a rerun of the same comparisons costs nothing.

    Every LLM field shares one :class:`LLMFieldJudge`, and every SEMANTIC field one
    :class:`SemanticBatch`: a document costs one request per provider, not one per
    field. Every request is kept in the mapping's ``calls``.
    """
    providers: dict[str, ProviderFactory] = {}
    calls = ProviderCallLog()
    if embeddings is not None:

        def semantic(spec: FieldSpec) -> Comparator:
            return SemanticComparator(embeddings, threshold=spec.effective_threshold, calls=calls)

        providers["SEMANTIC"] = semantic
    if llm is not None:
        judge = LLMFieldJudge(llm, cache=cache, calls=calls)

        def judged(spec: FieldSpec) -> Comparator:
            threshold = spec.threshold if spec.threshold is not None else 0.5
            return LLMFieldComparator(
                judge.adapter, threshold=threshold, field=spec.description or "", judge=judge
            )

        providers["LLM"] = judged
    return FieldProviders(providers, calls)
