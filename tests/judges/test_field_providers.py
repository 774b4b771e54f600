"""SEMANTIC and LLM field methods against the loopback provider server."""

from __future__ import annotations

import pytest

from docevals_mlflow import ConfigurationError, DocumentSchema, compare_documents
from docevals_mlflow.evaluation.field_providers import field_providers
from docevals_mlflow.fields.compare import FieldComparer
from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter
from docevals_mlflow.judges.embeddings import EmbeddingClient
from docevals_mlflow.judges.retry import RetryPolicy
from docevals_mlflow.judges.settings import TransportSettings
from tests.judges.provider_server import ok, status

SCHEMA = DocumentSchema.model_validate(
    {
        "classes": [
            {
                "name": "Statement",
                "fields": {
                    "Purpose": {"method": "SEMANTIC", "threshold": 0.9},
                    "Vendor": {"method": "LLM"},
                    "Lines": {"items": {"fields": {"Description": {"method": "SEMANTIC"}}}},
                },
            }
        ]
    }
)


def documents(count):
    return [
        {
            "id": f"d{index}",
            "expected": {
                "Purpose": "office paper supplies",
                "Vendor": f"ACME Corporation {index}",
                "Lines": [{"Description": "paper a4"}, {"Description": "blue ink"}],
            },
            "predicted": {
                "Purpose": "supplies paper office",
                "Vendor": f"ACME Corp. {index}",
                "Lines": [{"Description": "blue ink"}, {"Description": "a4 paper"}],
            },
        }
        for index in range(count)
    ]


def pair_answer(count, match=True):
    return {
        "results": [
            {"id": index, "match": match, "score": 0.95 if match else 0.1, "reason": "same firm"}
            for index in range(count)
        ]
    }


def test_semantic_and_llm_methods_are_batched(provider_server):
    server = provider_server
    for _ in range(3):
        server.script("chat/completions", ok(pair_answer(1)))
    embeddings = EmbeddingClient(model="embed", base_url=server.base_url, api_key_env=None)
    judge = OpenAICompatibleChatAdapter(model="judge", base_url=server.base_url)
    providers = field_providers(embeddings=embeddings, llm=judge)
    batch = compare_documents(documents(3), SCHEMA, providers=providers, chunk_size=8)
    # Bag-of-words embeddings: same words in another order are identical vectors.
    rows = {row["path"]: row for row in batch.documents[0].row_dicts()}
    assert rows["$.Purpose"]["outcome"] == "TP"
    assert rows["$.Purpose"]["score"] == pytest.approx(1.0)
    assert rows["$.Vendor"]["outcome"] == "TP"
    assert rows["$.Vendor"]["reason"] == "LLM: same meaning (0.95): same firm"
    assert rows["$.Lines[0].Description"]["actual"] == "a4 paper"  # paired by meaning
    # One embeddings request for the whole chunk's new texts, one LLM request per
    # document (never one per pair).
    assert len(server.requests_for("embeddings")) <= 2
    assert len(server.requests_for("chat/completions")) == 3
    assert batch.counts.fd == 0


def test_llm_rejections_are_wrong_values_with_the_models_reason(provider_server):
    provider_server.script("chat/completions", ok(pair_answer(1, match=False)))
    providers = field_providers(
        llm=OpenAICompatibleChatAdapter(model="judge", base_url=provider_server.base_url)
    )
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "x", "fields": {"v": {"method": "LLM"}}}]}
    )
    document = FieldComparer(schema, providers=providers).compare({"v": "ACME"}, {"v": "Globex"})
    (row,) = document.row_dicts()
    assert (row["outcome"], row["score"]) == ("FD", pytest.approx(0.1))
    assert row["reason"].startswith("LLM: different meaning")


def test_a_failing_provider_leaves_pairs_undecided_not_the_batch(provider_server):
    provider_server.script("chat/completions", *[status(400, message="bad request")] * 2)
    providers = field_providers(
        llm=OpenAICompatibleChatAdapter(
            model="judge", base_url=provider_server.base_url, http=TransportSettings(max_retries=0)
        )
    )
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "x", "fields": {"v": {"method": "LLM"}, "n": {"method": "EXACT"}}}]}
    )
    document = FieldComparer(schema, providers=providers).compare(
        {"v": "ACME", "n": "1"}, {"v": "Globex", "n": "1"}
    )
    rows = {row["path"]: row for row in document.row_dicts()}
    assert rows["$.n"]["outcome"] == "TP"
    assert rows["$.v"]["outcome"] == "FD"
    assert rows["$.v"]["reason"].startswith("not decided: ProviderError")


def test_methods_without_a_provider_fail_when_the_comparer_is_built():
    with pytest.raises(ConfigurationError, match=r"SEMANTIC needs a provider") as raised:
        FieldComparer(SCHEMA)
    assert raised.value.path == "$.Purpose"


# -- review fixes: reuse, cache, undecided comparisons, usage, keys ---------------------

LLM_ONLY = DocumentSchema.model_validate(
    {"classes": [{"name": "x", "fields": {"v": {"method": "LLM"}, "n": {"method": "EXACT"}}}]}
)


def llm_documents(*pairs):
    return [
        {
            "id": f"d{index}",
            "expected": {"v": expected, "n": "1"},
            "predicted": {"v": got, "n": "1"},
        }
        for index, (expected, got) in enumerate(pairs)
    ]


def chat(server, **transport):
    return OpenAICompatibleChatAdapter(
        model="judge", base_url=server.base_url, http=TransportSettings(**transport)
    )


def test_pairs_already_decided_are_not_asked_again(provider_server):
    provider_server.script("chat/completions", ok(pair_answer(1)), ok(pair_answer(1)))
    batch = compare_documents(
        llm_documents(("ACME", "ACME Inc."), ("ACME", "ACME Inc."), ("Globex", "Globex Corp")),
        LLM_ONLY,
        providers=field_providers(llm=chat(provider_server)),
    )
    # d1 repeats d0's pair: two requests for three documents, one pair each.
    requests = provider_server.requests_for("chat/completions")
    assert len(requests) == 2
    assert batch.counts.tp == 6
    rows = [row for document in batch.documents for row in document.row_dicts()]
    assert {row["reason"] for row in rows if row["path"] == "$.v"} == {
        "LLM: same meaning (0.95): same firm"
    }


def test_llm_answers_are_cached_on_disk(provider_server, tmp_path):
    from docevals_mlflow.judges.cache import JudgeCache

    documents = llm_documents(("ACME", "ACME Inc."))
    provider_server.script("chat/completions", ok(pair_answer(1)))
    first = compare_documents(
        documents,
        LLM_ONLY,
        providers=field_providers(llm=chat(provider_server), cache=JudgeCache(tmp_path / "c")),
    )
    cache = JudgeCache(tmp_path / "c")
    adapter = chat(provider_server)
    second = compare_documents(
        documents, LLM_ONLY, providers=field_providers(llm=adapter, cache=cache)
    )
    assert len(provider_server.requests_for("chat/completions")) == 1  # the rerun asks nothing
    assert (cache.hits, adapter.total_usage.requests) == (1, 0)
    assert first.to_report()["documents"] == second.to_report()["documents"]
    # Another model is another answer.
    provider_server.script("chat/completions", ok(pair_answer(1, match=False)))
    other = OpenAICompatibleChatAdapter(model="other", base_url=provider_server.base_url)
    third = compare_documents(
        documents, LLM_ONLY, providers=field_providers(llm=other, cache=cache)
    )
    assert third.counts.fd == 1
    assert len(provider_server.requests_for("chat/completions")) == 2


def test_undecided_comparisons_are_counted_and_explained(provider_server):
    provider_server.script("chat/completions", status(400, message="bad request"))
    adapter = chat(provider_server, max_retries=0)
    batch = compare_documents(
        llm_documents(("ACME", "Globex")), LLM_ONLY, providers=field_providers(llm=adapter)
    )
    assert batch.counts.fd == 1  # the worst case: not a match until decided
    assert batch.undecided == 1
    report = batch.to_report()
    assert report["overall"]["undecided"] == 1
    (reason,) = report["overall"]["undecided_reasons"]
    assert reason.startswith("not decided: ProviderError:")
    assert "bad request" in reason
    fields = {entry["template"]: entry["undecided"] for entry in report["fields"]}
    assert fields == {"$.v": 1, "$.n": 0}
    assert report["classes"]["x"]["undecided"] == 1
    assert report["documents"][0]["undecided"] == 1
    from docevals_mlflow.fields.report import FieldsReport

    assert FieldsReport.model_validate(report).overall.undecided == 1
    # Failed requests are requests too.
    assert adapter.total_usage.requests == 1


def test_undecided_counts_survive_without_rows(provider_server):
    provider_server.script("chat/completions", status(400), status(400))
    batch = compare_documents(
        llm_documents(("a", "b"), ("c", "d")),
        LLM_ONLY,
        keep_rows=False,
        providers=field_providers(llm=chat(provider_server, max_retries=0)),
    )
    assert batch.undecided == 2
    assert [document["undecided"] for document in batch.to_report()["documents"]] == [1, 1]
    assert len(batch.undecided_reasons) == 1  # the same reason twice is listed once


def test_comparator_usage_counts_failed_requests(provider_server):
    from docevals_mlflow.evaluation.field_providers import LLMFieldComparator

    provider_server.script("chat/completions", status(503), status(503), ok(pair_answer(1)))
    comparator = LLMFieldComparator(
        chat(provider_server, retry_policy=RetryPolicy(base_delay=0.0)), threshold=0.5
    )
    assert comparator.score_pairs([("ACME", "ACME Inc.")]) == [pytest.approx(0.95)]
    assert comparator.usage.requests == 3


def embeddings_seen(monkeypatch, **options):
    import asyncio

    import httpx

    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200,
            json={
                "data": [{"index": 0, "embedding": [1.0, 0.0]}],
                "usage": {"prompt_tokens": 1_000_000, "total_tokens": 1_000_000},
            },
        )

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-PLANTED-42")
    client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    embeddings = EmbeddingClient(model="embed", client=client, **options)
    asyncio.run(embeddings.aembed(["text"]))
    return seen, embeddings


def test_the_openai_key_goes_to_openai_only(monkeypatch):
    seen, _ = embeddings_seen(monkeypatch)  # OpenAI's own API root
    assert seen[0].headers["authorization"] == "Bearer sk-openai-PLANTED-42"
    seen, _ = embeddings_seen(monkeypatch, base_url="http://127.0.0.1:11434/v1")
    assert "authorization" not in seen[0].headers
    monkeypatch.setenv("LOCAL_KEY", "local-secret")
    seen, _ = embeddings_seen(
        monkeypatch, base_url="http://127.0.0.1:11434/v1", api_key_env="LOCAL_KEY"
    )
    assert seen[0].headers["authorization"] == "Bearer local-secret"
    seen, _ = embeddings_seen(
        monkeypatch, base_url="http://127.0.0.1:11434/v1", api_key_env="OPENAI_API_KEY"
    )
    assert seen[0].headers["authorization"] == "Bearer sk-openai-PLANTED-42"  # asked for


def test_embedding_usage_is_priced(monkeypatch):
    from docevals_mlflow.judges.usage import PriceTable

    prices = PriceTable.from_mapping({"embed": {"input": 0.02, "output": 0.0}})
    _, embeddings = embeddings_seen(monkeypatch, prices=prices)
    assert embeddings.usage.requests == 1
    assert embeddings.usage.cost_usd == pytest.approx(0.02)


LIST_SCHEMA = DocumentSchema.model_validate(
    {
        "classes": [
            {
                "name": "Invoice",
                "fields": {
                    "Lines": {
                        "items": {
                            "fields": {
                                "Description": {"method": "SEMANTIC"},
                                "Amount": {"method": "NUMERIC_EXACT"},
                            }
                        }
                    }
                },
            }
        ]
    }
)
LIST_DOCUMENT = {
    "id": "inv-1",
    "expected": {
        "Lines": [
            {"Description": "printer paper a4", "Amount": 12},
            {"Description": "blue ink cartridge", "Amount": 30},
        ]
    },
    "predicted": {
        "Lines": [
            {"Description": "ink cartridge blue", "Amount": 30},
            {"Description": "a4 printer paper", "Amount": 12},
        ]
    },
}


def test_embeddings_failing_while_pairing_list_items_fall_back_to_text(provider_server):
    # Every embeddings request fails: pairing ranks items by text instead of stopping
    # the batch, and the SEMANTIC values themselves stay undecided (FD, reported).
    provider_server.script("embeddings", *[status(400, message="model not loaded")] * 10)
    embeddings = EmbeddingClient(
        model="embed", base_url=provider_server.base_url, api_key_env=None, max_retries=0
    )
    providers = field_providers(embeddings=embeddings)
    batch = compare_documents([LIST_DOCUMENT], LIST_SCHEMA, providers=providers)
    rows = {row["path"]: row for row in batch.documents[0].row_dicts()}
    # Paired by text (the reordered words still rank highest), so amounts match.
    assert rows["$.Lines[0].Amount"]["outcome"] == "TP"
    assert rows["$.Lines[0].Description"]["actual"] == "a4 printer paper"
    assert rows["$.Lines[1].Amount"]["outcome"] == "TP"
    assert rows["$.Lines[0].Description"]["outcome"] == "FD"
    assert rows["$.Lines[0].Description"]["reason"].startswith("not decided: ProviderError")
    assert batch.undecided == 2


def test_embeddings_recovering_after_pairing_decide_the_values(provider_server):
    # The pairing request fails, the next one (deciding the values) succeeds.
    provider_server.script("embeddings", status(400, message="busy"))
    embeddings = EmbeddingClient(
        model="embed", base_url=provider_server.base_url, api_key_env=None, max_retries=0
    )
    built = []
    semantic = field_providers(embeddings=embeddings)["SEMANTIC"]

    def tracked(spec):
        built.append(semantic(spec))
        return built[-1]

    batch = compare_documents([LIST_DOCUMENT], LIST_SCHEMA, providers={"SEMANTIC": tracked})
    (comparator,) = built
    assert comparator.pairing_fallbacks == 1
    assert "busy" in comparator.pairing_error
    assert batch.undecided == 0
    assert batch.counts.tp == 4
