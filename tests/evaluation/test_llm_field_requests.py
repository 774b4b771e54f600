"""How many requests SEMANTIC and LLM fields cost: one per document and provider,
whatever the number of fields, counted on fakes that speak the providers' wire formats
(an ``httpx.MockTransport`` chat-completions server, and the loopback provider)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docevals_mlflow import DocumentSchema, compare_documents
from docevals_mlflow.evaluation.field_providers import (
    LLMFieldComparator,
    LLMFieldJudge,
    field_providers,
)
from docevals_mlflow.fields.compare import FieldComparer
from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter
from docevals_mlflow.judges.cache import JudgeCache
from docevals_mlflow.judges.embeddings import EmbeddingClient
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.usage import total_usage
from tests.judges.provider_server import ProviderServer, _chat_answer, ok, status

KEY = "sk-PLANTED-field-judge-7731"

LLM_FIELDS = ("Vendor", "Customer", "Purpose", "Address", "Terms")
SCHEMA = DocumentSchema.model_validate(
    {
        "classes": [
            {
                "name": "Invoice",
                "fields": {
                    **{name: {"method": "LLM"} for name in LLM_FIELDS},
                    "Vendor": {"method": "LLM", "description": "the seller's legal name"},
                    "Total": {"method": "NUMERIC_EXACT"},
                    "Lines": {
                        "items": {
                            "fields": {
                                "Description": {"method": "LLM"},
                                "Unit": {"method": "LLM", "description": "unit of measure"},
                                "Amount": {"method": "NUMERIC_EXACT"},
                            }
                        }
                    },
                },
            }
        ]
    }
)
PAIRS_PER_DOCUMENT = len(LLM_FIELDS) + 2 * 2  # five fields, two items of two LLM attributes


def invoice(index: int) -> dict[str, Any]:
    """A document whose LLM pairs are all new (no pair repeats another document's)."""
    return {
        "id": f"inv-{index}",
        "expected": {
            "Vendor": f"ACME Corporation {index}",
            "Customer": f"Globex Industries {index}",
            "Purpose": f"Office paper {index}",
            "Address": f"12 Main Street {index}",
            "Terms": f"Net 30 {index}",
            "Total": 42,
            "Lines": [
                {"Description": f"printer paper {index}", "Unit": f"box {index}", "Amount": 12},
                {"Description": f"blue ink {index}", "Unit": f"piece {index}", "Amount": 30},
            ],
        },
        "predicted": {
            "Vendor": f"ACME Corp. {index}",
            "Customer": f"Initech {index}",
            "Purpose": f"office supplies {index}",
            "Address": f"12 Main St {index}",
            "Terms": f"Due on receipt {index}",
            "Total": 42,
            "Lines": [
                {
                    "Description": f"blue ink cartridge {index}",
                    "Unit": f"pcs {index}",
                    "Amount": 30,
                },
                {
                    "Description": f"printer paper A4 {index}",
                    "Unit": f"boxes {index}",
                    "Amount": 12,
                },
            ],
        },
    }


def same_meaning(expected: str, predicted: str) -> bool:
    """The fake model's rule: the first words agree."""
    return expected.split()[0].casefold() == predicted.split()[0].casefold()


Answer = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def reversed_answers(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One decision per pair, last id first (a model need not keep the order)."""
    return [
        {
            "id": pair["id"],
            "match": same_meaning(pair["expected"], pair["predicted"]),
            "score": 0.9 if same_meaning(pair["expected"], pair["predicted"]) else 0.2,
            "reason": f"{pair.get('field', '-')}: {pair['expected']} ~ {pair['predicted']}",
        }
        for pair in reversed(pairs)
    ]


class FakeChat:
    """A chat-completions provider on ``httpx.MockTransport``: it reads the pairs of
    the task JSON in the user message and decides each with :func:`same_meaning`."""

    def __init__(self, answer: Answer = reversed_answers) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.fail_next = 0

    def pairs(self, index: int) -> list[dict[str, Any]]:
        """The pairs sent in request ``index``."""
        body = self.requests[index]
        return list(json.loads(body["messages"][1]["content"][0]["text"])["pairs"])

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if self.fail_next:
            self.fail_next -= 1
            # Providers echo a rejected key; the adapter must redact it.
            sent = request.headers.get("authorization", "")
            return httpx.Response(400, json={"error": {"message": f"bad key {sent}"}})
        task = json.loads(body["messages"][1]["content"][0]["text"])
        text = json.dumps({"results": self.answer(task["pairs"])})
        return httpx.Response(200, json=_chat_answer(ok(), text, body["model"], 100, 20))

    def adapter(self, **transport: Any) -> OpenAICompatibleChatAdapter:
        client = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        return OpenAICompatibleChatAdapter(
            model="judge",
            base_url="http://127.0.0.1:9/v1",
            api_key=KEY,
            http=TransportSettings(client=client, **transport),
        )


def tracked_providers(
    providers: dict[str, Any],
) -> tuple[dict[str, Any], list[Any]]:
    """The providers, and the comparators they build (to read their usage)."""
    built: list[Any] = []

    def tracking(build: Any) -> Any:
        def tracked(spec: Any) -> Any:
            built.append(build(spec))
            return built[-1]

        return tracked

    return {method: tracking(build) for method, build in providers.items()}, built


def llm_rows(batch: Any) -> list[dict[str, Any]]:
    return [
        row
        for document in batch.documents
        for row in document.row_dicts()
        if str(row["method"]).startswith("LLM")
    ]


def test_a_document_with_many_llm_fields_makes_one_request() -> None:
    fake = FakeChat()
    adapter = fake.adapter()
    providers, comparators = tracked_providers(field_providers(llm=adapter))
    batch = compare_documents([invoice(0)], SCHEMA, providers=providers)
    # Before: one request per LLM field and document (7 here); now one per document.
    assert len(fake.requests) == 1
    assert len(fake.pairs(0)) == PAIRS_PER_DOCUMENT
    assert adapter.total_usage.requests == 1
    # What `docevals fields` prints sums the comparators' usage: each request once.
    assert total_usage(comparator.usage for comparator in comparators).requests == 1
    assert comparators[0].judge.usage.requests == 1
    assert batch.undecided == 0
    rows = llm_rows(batch)
    assert len(rows) == PAIRS_PER_DOCUMENT
    # Answers came back in reverse order: each row still has its own pair's decision.
    for row in rows:
        matched = same_meaning(row["expected"], row["actual"])
        assert row["outcome"] == ("TP" if matched else "FD"), row
        assert f"{row['expected']} ~ {row['actual']}" in row["reason"]


def test_each_pair_carries_its_own_field_description() -> None:
    fake = FakeChat()
    compare_documents([invoice(0)], SCHEMA, providers=field_providers(llm=fake.adapter()))
    fields = {pair["expected"]: pair.get("field") for pair in fake.pairs(0)}
    assert fields["ACME Corporation 0"] == "the seller's legal name"
    assert fields["box 0"] == "unit of measure"
    assert fields["Globex Industries 0"] is None  # no description, no field key
    batch = compare_documents([invoice(1)], SCHEMA, providers=field_providers(llm=fake.adapter()))
    rows = {row["path"]: row for row in llm_rows(batch)}
    assert rows["$.Vendor"]["reason"].endswith(
        "the seller's legal name: ACME Corporation 1 ~ ACME Corp. 1"
    )


def test_documents_make_one_request_each_and_a_cached_rerun_none(tmp_path: Path) -> None:
    fake = FakeChat()
    documents = [invoice(index) for index in range(3)]
    first = compare_documents(
        documents,
        SCHEMA,
        providers=field_providers(llm=fake.adapter(), cache=JudgeCache(tmp_path / "cache")),
    )
    assert len(fake.requests) == 3  # before: 21 (seven LLM fields, three documents)
    assert [len(fake.pairs(index)) for index in range(3)] == [PAIRS_PER_DOCUMENT] * 3
    rerun_fake = FakeChat()
    adapter = rerun_fake.adapter()
    cache = JudgeCache(tmp_path / "cache")
    second = compare_documents(
        documents, SCHEMA, providers=field_providers(llm=adapter, cache=cache)
    )
    assert len(rerun_fake.requests) == 0
    assert adapter.total_usage.requests == 0
    assert cache.hits == 3 * PAIRS_PER_DOCUMENT
    assert first.to_report()["documents"] == second.to_report()["documents"]


def test_only_pairs_missing_from_the_cache_are_sent(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    compare_documents(
        [invoice(0)],
        SCHEMA,
        providers=field_providers(llm=FakeChat().adapter(), cache=JudgeCache(cache_dir)),
    )
    fake = FakeChat()
    batch = compare_documents(
        [invoice(0), invoice(1)],
        SCHEMA,
        providers=field_providers(llm=fake.adapter(), cache=JudgeCache(cache_dir)),
    )
    assert len(fake.requests) == 1  # inv-0 comes from the cache
    assert {pair["expected"] for pair in fake.pairs(0)} >= {"ACME Corporation 1", "box 1"}
    assert all(not pair["expected"].endswith(" 0") for pair in fake.pairs(0))
    assert batch.undecided == 0


def test_a_threshold_is_applied_to_the_shared_answer() -> None:
    # Two fields, same values and description: one question, two thresholds.
    schema = DocumentSchema.model_validate(
        {
            "classes": [
                {
                    "name": "x",
                    "fields": {
                        "a": {"method": "LLM", "threshold": 0.5},
                        "b": {"method": "LLM", "threshold": 0.95},
                    },
                }
            ]
        }
    )
    fake = FakeChat()
    batch = compare_documents(
        [({"a": "ACME Corp", "b": "ACME Corp"}, {"a": "ACME Inc", "b": "ACME Inc"})],
        schema,
        providers=field_providers(llm=fake.adapter()),
    )
    assert len(fake.requests) == 1
    assert len(fake.pairs(0)) == 1  # the same question is asked once
    rows = {row["path"]: row for row in llm_rows(batch)}
    # The model said "match": each field keeps its score on the matching side of
    # its own threshold.
    assert (rows["$.a"]["outcome"], rows["$.a"]["score"]) == ("TP", pytest.approx(0.9))
    assert (rows["$.b"]["outcome"], rows["$.b"]["score"]) == ("TP", pytest.approx(0.95))


def test_dropped_and_invented_answers_leave_only_their_pairs_undecided() -> None:
    def sloppy(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = reversed_answers(pairs)
        dropped = next(answer for answer in answers if "Globex" in answer["reason"])
        answers.remove(dropped)
        answers.append({"id": 999, "match": True, "score": 1.0, "reason": "invented"})
        answers.append({"id": -1, "match": True, "score": 1.0, "reason": "invented"})
        return answers

    fake = FakeChat(sloppy)
    batch = compare_documents([invoice(0)], SCHEMA, providers=field_providers(llm=fake.adapter()))
    assert len(fake.requests) == 1  # a partial answer is used, not repaired
    assert batch.undecided == 1
    rows = {row["path"]: row for row in llm_rows(batch)}
    customer = rows["$.Customer"]
    assert (customer["outcome"], customer["score"]) == ("FD", None)
    assert customer["reason"].startswith("not decided: ProviderError:")
    assert "no usable answer" in customer["reason"]
    assert batch.documents[0].undecided == {"$.Customer": 1}
    assert len(batch.documents[0].undecided_reasons) == 1
    for path, row in rows.items():
        if path != "$.Customer":
            assert "invented" not in row["reason"]
            assert row["outcome"] == (
                "TP" if same_meaning(row["expected"], row["actual"]) else "FD"
            )


def test_a_missing_answer_is_asked_again_in_a_later_document() -> None:
    calls = 0

    def first_drops_all_but_one(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        nonlocal calls
        calls += 1
        answers = reversed_answers(pairs)
        return answers[:1] if calls == 1 else answers

    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "x", "fields": {"a": {"method": "LLM"}, "b": {"method": "LLM"}}}]}
    )
    fake = FakeChat(first_drops_all_but_one)
    document = ({"a": "ACME Corp", "b": "Globex"}, {"a": "ACME Inc", "b": "Initech"})
    batch = compare_documents(
        [document, document], schema, providers=field_providers(llm=fake.adapter())
    )
    assert [len(fake.pairs(index)) for index in range(len(fake.requests))] == [2, 1]
    assert [document.undecided for document in batch.documents] == [{"$.a": 1}, {}]


def test_a_failed_request_leaves_every_pair_of_the_document_undecided() -> None:
    fake = FakeChat()
    fake.fail_next = 1
    adapter = fake.adapter(max_retries=0)
    batch = compare_documents(
        [invoice(0), invoice(1)], SCHEMA, providers=field_providers(llm=adapter)
    )
    assert len(fake.requests) == 2
    first, second = batch.documents
    assert sum(first.undecided.values()) == PAIRS_PER_DOCUMENT
    assert first.undecided["$.Lines[].Description"] == 2
    assert second.undecided == {}
    (reason,) = first.undecided_reasons
    assert reason.startswith("not decided: ProviderError")
    assert KEY not in reason
    for row in first.row_dicts():
        assert KEY not in str(row["reason"])
    assert first.counts.fd >= PAIRS_PER_DOCUMENT
    assert adapter.total_usage.requests == 2  # the failed request is counted too


def test_comparators_of_different_judges_are_asked_apart() -> None:
    # Two field_providers calls are two judge configurations: never merged.
    first, second = FakeChat(), FakeChat()
    one = field_providers(llm=first.adapter())["LLM"]
    other = field_providers(llm=second.adapter())["LLM"]

    def build(spec: Any) -> Any:
        return (one if spec.threshold is None else other)(spec)

    schema = DocumentSchema.model_validate(
        {
            "classes": [
                {
                    "name": "x",
                    "fields": {"a": {"method": "LLM"}, "b": {"method": "LLM", "threshold": 0.5}},
                }
            ]
        }
    )
    compare_documents(
        [({"a": "ACME Corp", "b": "ACME Corp"}, {"a": "ACME Inc", "b": "ACME Inc"})],
        schema,
        providers={"LLM": build},
    )
    assert (len(first.requests), len(second.requests)) == (1, 1)


def test_a_standalone_comparator_still_scores_pairs() -> None:
    fake = FakeChat()
    comparator = LLMFieldComparator(fake.adapter(), threshold=0.5, field="vendor")
    assert comparator.score_pairs([("ACME", "ACME Inc"), ("ACME", "Globex")]) == [
        pytest.approx(0.9),
        pytest.approx(0.2),
    ]
    assert comparator.usage.requests == 1
    assert isinstance(comparator.judge, LLMFieldJudge)
    assert comparator.reason("ACME", "ACME Inc", 0.9).endswith("vendor: ACME ~ ACME Inc")


# -- SEMANTIC: one embeddings request for the chunk, whatever the number of fields ----

SEMANTIC_SCHEMA = DocumentSchema.model_validate(
    {
        "classes": [
            {
                "name": "Invoice",
                "fields": {name: {"method": "SEMANTIC", "threshold": 0.5} for name in LLM_FIELDS},
            }
        ]
    }
)


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    server = ProviderServer(latency=0.0).start()
    try:
        yield server
    finally:
        server.stop()


def test_semantic_fields_share_one_embeddings_request(provider_server: ProviderServer) -> None:
    embeddings = EmbeddingClient(model="embed", base_url=provider_server.base_url, api_key_env=None)
    documents = [
        {
            "id": f"d{index}",
            "expected": {name: f"{name} expected words {index}" for name in LLM_FIELDS},
            "predicted": {name: f"words expected {name} {index}" for name in LLM_FIELDS},
        }
        for index in range(3)
    ]
    batch = compare_documents(
        documents, SEMANTIC_SCHEMA, providers=field_providers(embeddings=embeddings)
    )
    # Before: one prefetch request per SEMANTIC field (5); now one for the chunk.
    assert len(provider_server.requests_for("embeddings")) == 1
    assert embeddings.usage.requests == 1
    assert batch.counts.tp == 15


def test_failing_embeddings_leave_each_documents_pairs_undecided(
    provider_server: ProviderServer,
) -> None:
    provider_server.script("embeddings", *[status(400, message="model not loaded")] * 3)
    embeddings = EmbeddingClient(
        model="embed", base_url=provider_server.base_url, api_key_env=None, max_retries=0
    )
    documents = [
        {
            "id": f"d{index}",
            "expected": {name: f"{name} expected {index}" for name in LLM_FIELDS},
            "predicted": {name: f"expected {name} {index}" for name in LLM_FIELDS},
        }
        for index in range(2)
    ]
    batch = compare_documents(
        documents, SEMANTIC_SCHEMA, providers=field_providers(embeddings=embeddings)
    )
    # The chunk's prefetch, then one request per document: each fails.
    assert len(provider_server.requests_for("embeddings")) == 3
    assert [sum(document.undecided.values()) for document in batch.documents] == [5, 5]
    assert all(len(document.undecided_reasons) == 1 for document in batch.documents)


def test_rows_keep_each_documents_order_whatever_the_chunk_holds(
    provider_server: ProviderServer,
) -> None:
    # d0 has no LLM pair, so the chunk meets the SEMANTIC batch first; d1's rows must
    # still come in its own order, as when it is compared alone.
    schema = DocumentSchema.model_validate(
        {
            "classes": [
                {
                    "name": "x",
                    "fields": {"a": {"method": "LLM"}, "b": {"method": "SEMANTIC"}},
                }
            ]
        }
    )
    embeddings = EmbeddingClient(model="embed", base_url=provider_server.base_url, api_key_env=None)
    comparer = FieldComparer(
        schema, providers=field_providers(embeddings=embeddings, llm=FakeChat().adapter())
    )
    first = ({"a": None, "b": "paper office"}, {"a": None, "b": "office paper"}, {})
    second = ({"a": "ACME Corp", "b": "blue ink"}, {"a": "ACME Inc", "b": "ink blue"}, {})
    together = comparer.compare_many([first, second])
    alone = comparer.compare(*second[:2])
    assert [row["path"] for row in together[1].row_dicts()] == ["$.a", "$.b"]
    assert together[1].row_dicts() == alone.row_dicts()


class CountingComparator:
    """A deferred comparator of its own making (no shared batch): decided as before,
    one ``score_pairs`` call per document."""

    method = "LLM"
    threshold = 0.5
    label = "counting"
    deferred = True

    def __init__(self, calls: list[list[tuple[Any, Any]]]) -> None:
        self.calls = calls

    def config(self) -> dict[str, Any]:
        return {}

    def prepare(self, value: Any) -> Any:
        return str(value)

    def prepare_many(self, values: Any) -> tuple[list[bool], list[Any]]:
        return [value is not None for value in values], [str(value) for value in values]

    def matrix(self, expected: Any, predicted: Any) -> Any:
        raise AssertionError("no lists here")

    def pairwise(self, expected: Any, predicted: Any, left: Any, right: Any) -> Any:
        raise AssertionError("no lists here")

    def score(self, expected: Any, predicted: Any) -> float:
        return self.score_pairs([(expected, predicted)])[0]

    def score_pairs(self, pairs: list[tuple[Any, Any]]) -> list[float]:
        self.calls.append(list(pairs))
        if any(left == "boom" for left, _ in pairs):
            raise RuntimeError("provider down")
        return [1.0 if same_meaning(left, right) else 0.0 for left, right in pairs]

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        return f"counted {score:g}"


def test_a_comparator_without_a_shared_batch_is_decided_on_its_own() -> None:
    calls: list[list[tuple[Any, Any]]] = []
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "x", "fields": {"a": {"method": "LLM"}, "b": {"method": "LLM"}}}]}
    )
    batch = compare_documents(
        [
            ({"a": "ACME Corp", "b": "blue ink"}, {"a": "ACME Inc", "b": "red ink"}),
            ({"a": "boom", "b": "blue ink"}, {"a": "boom!", "b": "blue pen"}),
        ],
        schema,
        providers={"LLM": lambda spec: CountingComparator(calls)},
    )
    # One call per comparator and document, as before batches could be shared.
    assert len(calls) == 4
    first, second = batch.documents
    assert {row["path"]: row["outcome"] for row in first.row_dicts()} == {
        "$.a": "TP",
        "$.b": "FD",
    }
    assert second.undecided == {"$.a": 1}
    assert second.undecided_reasons == ["not decided: RuntimeError: provider down"]
