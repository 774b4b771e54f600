"""The LLM field method: a model decides whether two values mean the same, for a
document's pairs of every LLM field in one request, with answers kept per pair."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from docevals_mlflow.errors import ProviderError
from docevals_mlflow.evaluation.text_ranking import (
    clip_score,
    field_text,
    text_ranking_matrix,
    text_ranking_pairwise,
)
from docevals_mlflow.fields.comparator import Matrix, prepare_each
from docevals_mlflow.fields.deferred import ProviderCallLog, clipped, serving
from docevals_mlflow.judges.judge import as_adapter, ask_structured, identity, run_sync
from docevals_mlflow.judges.output import OutputParseError
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage

LLM_FIELD_INSTRUCTIONS = """You compare values extracted from documents with the values a \
human confirmed. For each numbered pair, decide whether the extracted value means the same \
as the expected value for that pair's field (same entity, amount, date or fact; formatting, \
abbreviations and word order do not matter; a different value, a partial value or an extra \
claim does). A pair's "field", when given, describes the field it belongs to; decide each \
pair on its own. Answer with JSON that matches the schema: one result per pair id, with \
match true or false, a score between 0 and 1, and a short reason."""


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


PairKey = tuple[str, str, str]
"""``(field description, expected text, predicted text)``: what the model is asked."""

NO_ANSWER = "LLM field comparison: the model gave no usable answer for this pair"


class LLMFieldJudge:
    """The model behind LLM fields: one adapter, an optional cache, and the answers
    so far, shared by every LLM field built by one :func:`field_providers` call.

    :meth:`score_many` asks about a document's pairs of every field in one request,
    each pair with its field's description, and maps the answers back by pair id
    (whatever their order; answers to ids that were not asked are ignored, and a pair
    left without a usable answer is undecided on its own). A pair is asked once per
    run: the same two texts with the same description are one question, whichever
    field holds them; each field applies its own threshold to the answer.

    With a ``cache`` (a :class:`~docevals_mlflow.judges.cache.JudgeCache`) every
    answer is kept on disk under a key of its own, covering the pair, the field's
    description, the prompt, the output schema and the adapter's identity: a rerun
    sends only the pairs the cache lacks, and no request when it holds them all.
    ``usage`` counts every HTTP request made, failed ones included; ``calls`` keeps
    each request (and each answer set read from the cache) for the trace of the
    document it served.
    """

    def __init__(
        self, adapter: Any, *, cache: Any = None, calls: ProviderCallLog | None = None
    ) -> None:
        self.adapter = as_adapter(adapter)
        self.cache = cache
        self.usage = Usage()
        self.calls = calls if calls is not None else ProviderCallLog()
        self._decided: dict[PairKey, dict[str, Any]] = {}

    def decision(self, key: PairKey) -> dict[str, Any] | None:
        """The answer about a pair (``match``, ``score``, ``reason``), once decided."""
        return self._decided.get(key)

    def score_many(self, pairs: Sequence[tuple[Any, Any, Any]]) -> list[float | ProviderError]:
        """The score of each ``(comparator, expected, predicted)`` on its comparator's
        threshold, or the error that left that pair undecided; one request for the
        pairs not decided yet (none when all are known, in memory or in the cache).

        Raises:
            ProviderError: the model failed, refused, or answered unusable JSON
                twice; every pair of the request stays undecided.
        """
        keys = [(comparator.field, str(left), str(right)) for comparator, left, right in pairs]
        new: dict[PairKey, Any] = {}
        for (comparator, _, _), key in zip(pairs, keys, strict=True):
            if key not in self._decided:
                new.setdefault(key, comparator)
        unanswered = run_sync(self._decide(new, _Served.now(keys))) if new else {}
        scores: list[float | ProviderError] = []
        for (comparator, _, _), key in zip(pairs, keys, strict=True):
            result = self._decided.get(key)
            scores.append(unanswered[key] if result is None else comparator.score_of(result))
        return scores

    async def _decide(
        self, new: dict[PairKey, Any], served: _Served
    ) -> dict[PairKey, ProviderError]:
        """Decide ``new`` pairs (each with the comparator that first asked); returns
        the pairs the model left unanswered."""
        schema = _field_schema()
        cache_keys: dict[PairKey, str] = {}
        hits: list[PairKey] = []
        if self.cache is not None:
            judge = identity(self.adapter)
            for key in new:
                cache_keys[key] = self.cache.answer_key(
                    CACHE_KIND, _pair_request(key, schema), judge
                )
                stored = self.cache.get_answer(cache_keys[key])
                result = _result(stored.get("result")) if isinstance(stored, Mapping) else None
                if result is not None:
                    self._decided[key] = result
                    hits.append(key)
        asked = [key for key in new if key not in self._decided]
        if not asked:
            served.record(self, hits, [], Usage(), 0.0, error=None)
            return {}
        task = {"pairs": [_pair_entry(index, key) for index, key in enumerate(asked)]}
        request = JudgeRequest(instructions=LLM_FIELD_INSTRUCTIONS, task=task, output_schema=schema)
        started = time.perf_counter()
        answer = await ask_structured(
            self.adapter,
            request,
            lambda data: _results(data, len(asked)),
            keep="your decisions",
        )
        latency_ms = (time.perf_counter() - started) * 1000
        self.usage = self.usage + answer.usage
        # Counted on one comparator only, so that the comparators' usages add up to
        # the requests made, however many fields shared each request.
        owner = new[asked[0]]
        owner.usage = owner.usage + answer.usage
        provider = str(getattr(self.adapter, "provider", "llm"))
        if answer.value is None:
            error = f"LLM field comparison {answer.status}: {answer.error}"
            served.record(self, hits, asked, answer.usage, latency_ms, error=error)
            raise ProviderError(error, provider=provider)
        unanswered: dict[PairKey, ProviderError] = {}
        missing = ProviderError(NO_ANSWER, provider=provider)
        for index, key in enumerate(asked):
            result = answer.value.get(index)
            if result is None:
                # Not stored: a later document with the same pair asks again.
                unanswered[key] = missing
                continue
            self._decided[key] = result
            if self.cache is not None:
                self.cache.put_answer(cache_keys[key], {"result": result})
        served.record(self, hits, asked, answer.usage, latency_ms, error=None)
        return unanswered


class _Served:
    """The document a request serves and the field of each pair (from
    :func:`~docevals_mlflow.fields.deferred.serving`), and how its call is recorded."""

    __slots__ = ("document", "fields")

    def __init__(self, document: str | None, fields: dict[PairKey, list[str]]) -> None:
        self.document = document
        self.fields = fields

    @classmethod
    def now(cls, keys: Sequence[PairKey]) -> _Served:
        """For the pairs ``keys`` being scored now."""
        documents = serving()
        if len(documents) != 1:
            return cls(None, {})
        templates = documents[0].templates
        fields: dict[PairKey, list[str]] = {}
        if len(templates) == len(keys):
            for key, template in zip(keys, templates, strict=True):
                fields.setdefault(key, []).append(template)
        return cls(documents[0].id, fields)

    def record(
        self,
        judge: LLMFieldJudge,
        hits: list[PairKey],
        asked: list[PairKey],
        usage: Usage,
        latency_ms: float,
        *,
        error: str | None,
    ) -> None:
        """Keep the call in the judge's log: the pairs asked (or read from the cache),
        what the model decided, and what it cost."""
        pairs = [*asked, *hits]
        fields = [name for key in pairs for name in self.fields.get(key, [key[0] or "?"])]
        decisions = []
        for key in pairs:
            decided = judge.decision(key)
            entry: dict[str, Any] = {"expected": clipped(key[1]), "predicted": clipped(key[2])}
            if decided is not None:
                entry.update(match=decided["match"], score=decided["score"])
                entry["reason"] = clipped(decided["reason"])
            decisions.append(entry)
        judge.calls.record(
            call=judge.calls.new_call(),
            method=LLMFieldComparator.method,
            document=self.document,
            fields=fields,
            identity=identity(judge.adapter),
            usage=usage.as_metrics(),
            latency_ms=latency_ms,
            cached=not asked,
            cache_hits=len(hits),
            inputs={
                "pairs": [
                    {"expected": row["expected"], "predicted": row["predicted"]}
                    for row in decisions
                ]
            },
            outputs=None if error else {"results": decisions},
            error=error,
        )


def _pair_entry(index: int, key: PairKey) -> dict[str, Any]:
    field, expected, predicted = key
    entry: dict[str, Any] = {"id": index}
    if field:
        entry["field"] = field
    entry["expected"] = expected
    entry["predicted"] = predicted
    return entry


def _pair_request(key: PairKey, schema: dict[str, Any]) -> JudgeRequest:
    """What decides the answer about one pair, for its cache key: the prompt, the
    output schema, the field's description and the two texts (not the pair's id
    or its neighbours in the request, which vary from run to run)."""
    field, expected, predicted = key
    return JudgeRequest(
        instructions=LLM_FIELD_INSTRUCTIONS,
        task={"field": field, "expected": expected, "predicted": predicted},
        output_schema=schema,
    )


class LLMFieldComparator:
    """``LLM``: a model decides whether two values mean the same, many pairs per request.

    Scores are the model's (0..1); a pair matches at ``threshold`` (default 0.5, so
    ``match: true`` with a confident score). Reasons are kept for report rows.

    The model is asked through ``judge`` (an :class:`LLMFieldJudge`, whose adapter and
    cache are then used), which :func:`field_providers` shares between every LLM
    field so that a document makes one request for all of them. Without one, the
    comparator has its own, for ``adapter`` and ``cache``. ``usage`` counts the HTTP
    requests this comparator's pairs opened, failed ones included; a request shared
    with other fields is counted on the first field that had a new pair in it, so
    the usages of all comparators add up to the requests made.
    """

    method = "LLM"
    deferred = True

    def __init__(
        self,
        adapter: Any,
        *,
        threshold: float,
        field: str = "",
        cache: Any = None,
        judge: LLMFieldJudge | None = None,
    ) -> None:
        self.judge = judge if judge is not None else LLMFieldJudge(adapter, cache=cache)
        self.batch = self.judge
        """Comparisons of every field sharing the judge are decided together."""
        self.adapter = self.judge.adapter
        self.cache = self.judge.cache
        self.threshold = threshold
        self.field = field
        self.label = f"LLM (threshold: {threshold:g})"
        self.usage = Usage()

    def config(self) -> dict[str, Any]:
        """Settings that change decisions."""
        return {"method": self.method, "threshold": self.threshold, "judge": identity(self.adapter)}

    def prepare(self, value: Any) -> Any:
        return field_text(value)

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
        """Scores of ``pairs``: one request for the pairs not decided yet (none when
        every pair is known, in memory or in the cache).

        Raises:
            ProviderError: the model failed, refused, answered unusable JSON twice,
                or left a pair unanswered; the pairs stay undecided.
        """
        scores = self.judge.score_many(
            [(self, expected, predicted) for expected, predicted in pairs]
        )
        decided: list[float] = []
        for score in scores:
            if isinstance(score, ProviderError):
                raise score
            decided.append(score)
        return decided

    def score_of(self, result: Mapping[str, Any]) -> float:
        """The score of the model's answer about a pair, on this field's threshold."""
        score = float(result["score"])
        # The model's yes/no decides; its score is kept on the matching side of the
        # threshold so that the two never contradict each other in a report.
        if result["match"]:
            return max(score, self.threshold)
        if score >= self.threshold:
            return max(0.0, self.threshold - 0.01)
        return score

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        decided = self.judge.decision((self.field, str(expected), str(predicted)))
        said = decided["reason"] if decided is not None else ""
        verdict = "same meaning" if score >= self.threshold else "different meaning"
        return f"LLM: {verdict} ({score:.2f})" + (f": {said}" if said else "")


CACHE_KIND = "llm-field-pair"
"""The cache kind of LLM field answers, one entry per pair (kept apart from judge
results)."""


def _results(data: Any, count: int) -> dict[int, dict[str, Any]]:
    """The usable result of each pair id ``0..count-1`` in the model's answer (parsed
    data or its text). Ids that were not asked are ignored, and an id answered twice
    with opposite decisions counts as unanswered.

    Raises:
        OutputParseError: the answer is not JSON, has no ``results`` list, or has no
            usable result for any pair (worth the repair attempt).
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
    found: dict[int, dict[str, Any]] = {}
    contradicted: set[int] = set()
    for item in items:
        index = _pair_id(item.get("id")) if isinstance(item, Mapping) else None
        result = _result(item)
        if index is None or not 0 <= index < count or result is None:
            continue
        first = found.setdefault(index, result)
        if first["match"] != result["match"]:
            contradicted.add(index)
    for index in contradicted:
        del found[index]
    if count and not found:
        raise OutputParseError(
            f"no usable result for any of the pair ids 0..{count - 1}", text or str(data)
        )
    return found


def _pair_id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _result(item: Any) -> dict[str, Any] | None:
    """``{"match", "score", "reason"}`` from one answer (or a cache entry), or
    ``None`` when it does not say whether the pair matches."""
    if not isinstance(item, Mapping):
        return None
    match = item.get("match")
    if isinstance(match, str) and match.strip().casefold() in ("true", "false"):
        match = match.strip().casefold() == "true"
    if not isinstance(match, bool):
        return None
    try:
        score = float(item.get("score", 1.0 if match else 0.0))
    except (TypeError, ValueError):
        score = 1.0 if match else 0.0
    if score != score:  # NaN
        score = 1.0 if match else 0.0
    reason = item.get("reason")
    return {
        "match": match,
        "score": clip_score(score),
        "reason": "" if reason is None else str(reason),
    }
