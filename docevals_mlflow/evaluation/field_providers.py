"""The SEMANTIC and LLM field methods: comparators backed by an embedding model or a
judge, plugged into the field engine through its ``providers`` mapping.

Both defer scalar comparisons (the engine decides them in one batch per document:
one embeddings request for every new text, one LLM request for every pair).
SEMANTIC pairs list items by cosine similarity; LLM pairs them by a cheap text
similarity and asks the model only about the pairs that were formed, so a list never
costs one request per pair.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.errors import ProviderError
from docevals_mlflow.fields.methods import Comparator, ProviderFactory, prepare_each
from docevals_mlflow.fields.schema import FieldSpec
from docevals_mlflow.judges.embeddings import EmbeddingClient
from docevals_mlflow.judges.judge import as_adapter, ask_structured, identity, run_sync
from docevals_mlflow.judges.output import OutputParseError
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage

Matrix = np.ndarray[Any, np.dtype[np.float64]]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (dict, list)):
        return canonical_json(value)
    return str(value)


def text_ranking_matrix(expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
    """Token-set similarity of every (expected, predicted) text: a ranking of list
    items for pairing that needs no provider call."""
    if not expected or not predicted:
        return np.zeros((len(expected), len(predicted)), dtype=np.float64)
    scores: Matrix = process.cdist(
        list(expected), list(predicted), scorer=fuzz.token_set_ratio, dtype=np.float64
    )
    return scores / 100.0


def text_ranking_pairwise(
    expected: Sequence[Any], predicted: Sequence[Any], left: Any, right: Any
) -> Any:
    """:func:`text_ranking_matrix` for the pairs ``(expected[left[i]], predicted[right[i]])``."""
    a = [expected[index] for index in np.asarray(left).tolist()]
    b = [predicted[index] for index in np.asarray(right).tolist()]
    return process.cpdist(a, b, scorer=fuzz.token_set_ratio, dtype=np.float64) / 100.0


class SemanticComparator:
    """``SEMANTIC``: cosine similarity of embeddings, matched at ``threshold``.

    List items are paired by embedding similarity too. When the embeddings request
    for pairing fails, the items are paired by text similarity instead (counted in
    ``pairing_fallbacks``) rather than stopping the batch; the values themselves are
    then decided, or left undecided, as any other SEMANTIC comparison.
    """

    method = "SEMANTIC"
    deferred = True

    def __init__(self, client: EmbeddingClient, *, threshold: float) -> None:
        self.client = client
        self.threshold = threshold
        self.label = f"SEMANTIC (threshold: {threshold:g})"
        self.pairing_fallbacks = 0
        """List pairings that used text similarity because embeddings failed."""
        self.pairing_error: str | None = None
        """The first such failure, for the warning."""

    def _fallback(self, error: Exception) -> None:
        self.pairing_fallbacks += 1
        if self.pairing_error is None:
            self.pairing_error = f"{type(error).__name__}: {error}"

    def config(self) -> dict[str, Any]:
        """Settings that change decisions."""
        return {"method": self.method, "threshold": self.threshold, **self.client.describe()}

    def prepare(self, value: Any) -> Any:
        return _text(value)

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        return prepare_each(self.prepare, values)

    def prefetch(self, keys: Sequence[Any]) -> None:
        """Embed every text of a chunk in as few requests as possible."""
        self.client.embed([key for key in keys if key])

    def score(self, expected: Any, predicted: Any) -> float:
        return self.score_pairs([(expected, predicted)])[0]

    def score_pairs(self, pairs: Sequence[tuple[Any, Any]]) -> list[float]:
        """Cosine similarity of each pair (one request for the texts not seen yet)."""
        texts = [text for pair in pairs for text in pair]
        vectors = self.client.embed(texts)
        return [
            _clip(float(np.dot(vectors[2 * index], vectors[2 * index + 1])))
            for index in range(len(pairs))
        ]

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        if not expected or not predicted:
            return np.zeros((len(expected), len(predicted)), dtype=np.float64)
        try:
            vectors = self.client.embed([*expected, *predicted])
        except Exception as error:  # pairing only needs a ranking: never stop the batch
            self._fallback(error)
            return text_ranking_matrix(expected, predicted)
        left = np.vstack(vectors[: len(expected)])
        right = np.vstack(vectors[len(expected) :])
        scores: Matrix = np.clip(left @ right.T, 0.0, 1.0)
        return scores

    def pairwise(
        self, expected: Sequence[Any], predicted: Sequence[Any], left: Any, right: Any
    ) -> Any:
        try:
            vectors = self.client.embed([*expected, *predicted])
        except Exception as error:  # as in matrix
            self._fallback(error)
            return text_ranking_pairwise(expected, predicted, left, right)
        left_matrix = np.vstack(vectors[: len(expected)])
        right_matrix = np.vstack(vectors[len(expected) :])
        return np.clip(np.einsum("ij,ij->i", left_matrix[left], right_matrix[right]), 0.0, 1.0)

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        relation = ">=" if score >= self.threshold else "below"
        return f"Semantic similarity {score:.2f} {relation} threshold {self.threshold:g}"


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


LLM_FIELD_INSTRUCTIONS = """You compare values extracted from documents with the values a \
human confirmed. For each numbered pair, decide whether the extracted value means the same \
as the expected value for that field (same entity, amount, date or fact; formatting, \
abbreviations and word order do not matter; a different value, a partial value or an extra \
claim does). Answer with JSON that matches the schema: one result per pair id, with match \
true or false, a score between 0 and 1, and a short reason."""


def _field_schema() -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "match": {"type": "boolean"},
            "score": {"type": "number"},
            "reason": {"type": "string"},
        },
        "required": ["id", "match", "score", "reason"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"results": {"type": "array", "items": item}},
        "required": ["results"],
        "additionalProperties": False,
    }


class LLMFieldComparator:
    """``LLM``: a model decides whether two values mean the same, many pairs per request.

    Scores are the model's (0..1); a pair matches at ``threshold`` (default 0.5, so
    ``match: true`` with a confident score). Reasons are kept for report rows.

    Each distinct pair is asked about once per comparator: a pair decided for one
    document is reused for the next. With a ``cache`` (a
    :class:`~docevals_mlflow.judges.cache.JudgeCache`) answers are kept on disk too,
    keyed by the request fingerprint and the adapter's identity, so a rerun of the
    same comparisons makes no request. ``usage`` counts every HTTP request made,
    failed ones included.
    """

    method = "LLM"
    deferred = True

    def __init__(
        self, adapter: Any, *, threshold: float, field: str = "", cache: Any = None
    ) -> None:
        self.adapter = as_adapter(adapter)
        self.threshold = threshold
        self.field = field
        self.cache = cache
        self.label = f"LLM (threshold: {threshold:g})"
        self.usage = Usage()
        self._decided: dict[tuple[str, str], tuple[float, str]] = {}

    def config(self) -> dict[str, Any]:
        """Settings that change decisions."""
        return {"method": self.method, "threshold": self.threshold, "judge": identity(self.adapter)}

    def prepare(self, value: Any) -> Any:
        return _text(value)

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        return prepare_each(self.prepare, values)

    # Pairing list items only needs a ranking; a text ratio gives it without a call.
    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Matrix:
        return text_ranking_matrix(expected, predicted)

    def pairwise(
        self, expected: Sequence[Any], predicted: Sequence[Any], left: Any, right: Any
    ) -> Any:
        return text_ranking_pairwise(expected, predicted, left, right)

    def score(self, expected: Any, predicted: Any) -> float:
        return self.score_pairs([(expected, predicted)])[0]

    def score_pairs(self, pairs: Sequence[tuple[Any, Any]]) -> list[float]:
        """Scores of ``pairs``: one request for the pairs this comparator has not
        decided yet (none when every pair is known, in memory or in the cache).

        Raises:
            ProviderError: the model failed, refused, or answered unusable JSON
                twice; the pairs stay undecided.
        """
        keys = [(str(expected), str(predicted)) for expected, predicted in pairs]
        new = [key for key in dict.fromkeys(keys) if key not in self._decided]
        if new:
            run_sync(self._decide(new))
        return [self._decided[key][0] for key in keys]

    async def _decide(self, pairs: list[tuple[str, str]]) -> None:
        task = {
            "field": self.field,
            "pairs": [
                {"id": index, "expected": expected, "predicted": predicted}
                for index, (expected, predicted) in enumerate(pairs)
            ],
        }
        request = JudgeRequest(
            instructions=LLM_FIELD_INSTRUCTIONS, task=task, output_schema=_field_schema()
        )
        key = None
        results: list[Mapping[str, Any]] | None = None
        if self.cache is not None:
            key = self.cache.answer_key(CACHE_KIND, request, identity(self.adapter))
            stored = self.cache.get_answer(key)
            if stored is not None:
                try:
                    results = _results(stored, len(pairs))
                except OutputParseError:
                    results = None  # an entry that does not fit is a miss
        if results is None:
            answer = await ask_structured(
                self.adapter,
                request,
                lambda data: _results(data, len(pairs)),
                keep="your decisions",
            )
            self.usage = self.usage + answer.usage
            if answer.value is None:
                raise ProviderError(
                    f"LLM field comparison {answer.status}: {answer.error}",
                    provider=str(getattr(self.adapter, "provider", "llm")),
                )
            results = answer.value
            if self.cache is not None and key is not None:
                self.cache.put_answer(key, {"results": [dict(result) for result in results]})
        for pair, result in zip(pairs, results, strict=True):
            self._decided[pair] = (self._score(result), str(result.get("reason", "")))

    def _score(self, result: Mapping[str, Any]) -> float:
        matched = bool(result.get("match"))
        try:
            score = _clip(float(result.get("score", 1.0 if matched else 0.0)))
        except (TypeError, ValueError):
            score = 1.0 if matched else 0.0
        # The model's yes/no decides; its score is kept on the matching side of the
        # threshold so that the two never contradict each other in a report.
        if matched:
            return max(score, self.threshold)
        if score >= self.threshold:
            return max(0.0, self.threshold - 0.01)
        return score

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        decided = self._decided.get((str(expected), str(predicted)))
        said = decided[1] if decided is not None else ""
        verdict = "same meaning" if score >= self.threshold else "different meaning"
        return f"LLM: {verdict} ({score:.2f})" + (f": {said}" if said else "")


CACHE_KIND = "llm-field-pairs"
"""The cache kind of LLM field answers (kept apart from judge results)."""


def _results(data: Any, count: int) -> list[Mapping[str, Any]]:
    """One result per pair id ``0..count-1`` from the model's answer (parsed data or
    its text).

    Raises:
        OutputParseError: the answer is not JSON, has no ``results`` list, or misses
            a pair id.
    """
    text = data if isinstance(data, str) else ""
    if isinstance(data, str):
        try:
            data = json.loads(text[text.find("{") : text.rfind("}") + 1] if "{" in text else text)
        except json.JSONDecodeError as exc:
            raise OutputParseError(f"not valid JSON: {exc.msg}", text) from None
    items = data.get("results") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise OutputParseError("expected an object with a 'results' list", text or str(data))
    by_id = {item.get("id"): item for item in items if isinstance(item, Mapping)}
    missing = [index for index in range(count) if index not in by_id]
    if missing:
        raise OutputParseError(f"no result for pair ids {missing[:10]}", text or str(data))
    return [by_id[index] for index in range(count)]


def field_providers(
    *,
    embeddings: EmbeddingClient | None = None,
    llm: Any = None,
    cache: Any = None,
) -> dict[str, ProviderFactory]:
    """The ``providers`` mapping for :class:`~docevals_mlflow.fields.compare.FieldComparer`
    and :func:`~docevals_mlflow.fields.batch.compare_documents`.

    ``cache`` (a :class:`~docevals_mlflow.judges.cache.JudgeCache`) keeps the LLM
    method's answers on disk, so a rerun of the same comparisons costs nothing.
    """
    providers: dict[str, ProviderFactory] = {}
    if embeddings is not None:

        def semantic(spec: FieldSpec) -> Comparator:
            return SemanticComparator(embeddings, threshold=spec.effective_threshold)

        providers["SEMANTIC"] = semantic
    if llm is not None:
        adapter = as_adapter(llm)

        def judged(spec: FieldSpec) -> Comparator:
            threshold = spec.threshold if spec.threshold is not None else 0.5
            return LLMFieldComparator(
                adapter, threshold=threshold, field=spec.description or "", cache=cache
            )

        providers["LLM"] = judged
    return providers
