"""SEMANTIC and LLM field methods against the loopback provider server."""

from __future__ import annotations

import pytest

from docevals_mlflow import ConfigurationError, DocumentSchema, compare_documents
from docevals_mlflow.evaluation.field_providers import field_providers
from docevals_mlflow.fields.compare import FieldComparer
from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter
from docevals_mlflow.judges.embeddings import EmbeddingClient
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
            model="judge", base_url=provider_server.base_url, max_retries=0
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
