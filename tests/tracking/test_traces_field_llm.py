"""Provider calls of SEMANTIC and LLM fields as spans of the documents' traces: type,
model, token usage, cost, latency and cache hits, against the loopback provider and
temporary SQLite stores; the spans add up to the run's ``usage/`` metrics."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import DocumentSchema, compare_documents
from docevals_mlflow.cli import main
from docevals_mlflow.cli.field_method_providers import FieldMethodProviders
from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter
from docevals_mlflow.judges.cache import JudgeCache
from docevals_mlflow.judges.embeddings import EmbeddingClient
from docevals_mlflow.judges.usage import PriceTable, total_usage
from docevals_mlflow.tracking.assembly import assemble_fields, log_assembled
from docevals_mlflow.tracking.options import RunOptions
from tests.judges.provider_server import ProviderServer, ok
from tests.tracking.test_cli_tracking import run_id_from

SCHEMA = {
    "classes": [
        {
            "name": "Statement",
            "fields": {
                "Purpose": {"method": "SEMANTIC", "threshold": 0.5},
                "Vendor": {"method": "LLM"},
                "Bank": {"method": "LLM"},
                "Total": {"method": "NUMERIC_EXACT"},
            },
        }
    ]
}
PRICES = PriceTable.from_mapping(
    {"judge": {"input": 2.0, "output": 8.0}, "embed": {"input": 0.5, "output": 0.0}}
)
PLANTED = "sk-planted-field-llm-7c1d9e"


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    provider = ProviderServer(latency=0.01).start()
    try:
        yield provider
    finally:
        provider.stop()


def _documents(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"d{index}",
            "class": "Statement",
            "expected": {
                "Purpose": f"office paper number {index}",
                "Vendor": f"ACME Corporation {index}",
                "Bank": f"First Bank {index}",
                "Total": index,
            },
            "predicted": {
                "Purpose": f"paper for the office {index}",
                "Vendor": f"ACME Corp. {index}",
                "Bank": f"1st Bank {index}",
                "Total": index,
            },
        }
        for index in range(count)
    ]


AGREE_TWO = {
    "results": [
        {"id": 0, "match": True, "score": 0.9, "reason": "same"},
        {"id": 1, "match": True, "score": 0.8, "reason": "same"},
    ]
}


def _providers(server: ProviderServer, cache: JudgeCache | None = None) -> FieldMethodProviders:
    embeddings = EmbeddingClient(
        model="embed", base_url=server.base_url, api_key=PLANTED, prices=PRICES
    )
    judge = OpenAICompatibleChatAdapter(model="judge", base_url=server.base_url, prices=PRICES)
    return FieldMethodProviders(embeddings, judge, cache=cache)


@pytest.fixture(autouse=True)
def _store_is_migrated(migrated_store: str) -> None:
    """The store the tests name (tmp_path/mlflow.db) is a copy of one migrated once
    per session: MLflow's migrations cost seconds per new store."""


def _log(tmp_path: Path, report: dict[str, Any], traces: str = "all") -> tuple[str, Any]:
    uri = f"sqlite:///{tmp_path.as_posix()}/mlflow.db"
    options = RunOptions(tracking_uri=uri, traces=traces)
    return uri, log_assembled(assemble_fields(report, options))


def _traces(uri: str, logged: Any) -> list[Any]:
    found = MlflowClient(uri).search_traces(
        locations=[logged.experiment_id],
        filter_string=f"metadata.`mlflow.sourceRun` = '{logged.run_id}'",
    )
    return sorted(found, key=lambda trace: trace.info.tags["docevals.document.id"])


def _call_spans(trace: Any) -> list[Any]:
    return [span for span in trace.data.spans if span.span_type in ("LLM", "EMBEDDING")]


def test_each_documents_calls_are_spans_that_add_up_to_the_run(server, tmp_path):
    for _ in range(3):
        server.script("chat/completions", ok(AGREE_TWO))
    providers = _providers(server)
    batch = compare_documents(
        _documents(3), DocumentSchema.model_validate(SCHEMA), providers=providers.providers
    )
    uri, logged = _log(tmp_path, batch.to_report())
    traces = _traces(uri, logged)
    assert [trace.info.tags["docevals.document.id"] for trace in traces] == ["d0", "d1", "d2"]

    spent = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    cost = 0.0
    embedding_calls = set()
    for trace in traces:
        spans = _call_spans(trace)
        (llm,) = [span for span in spans if span.span_type == "LLM"]
        (embedding,) = [span for span in spans if span.span_type == "EMBEDDING"]
        # One request for both LLM fields of the document, named after them.
        assert llm.name == "LLM · $.Vendor, $.Bank"
        assert llm.get_attribute("mlflow.llm.model") == "judge"
        assert llm.get_attribute("docevals.cache_hit") is False
        assert llm.inputs["pairs"][0]["expected"].startswith("ACME Corporation")
        assert [row["match"] for row in llm.outputs["results"]] == [True, True]
        assert embedding.name == "SEMANTIC · $.Purpose"
        assert embedding.get_attribute("mlflow.llm.model") == "embed"
        # The chunk's texts went in one embeddings request: each document has its share.
        share = embedding.get_attribute("docevals.call.share")
        assert share["documents"] == 3
        embedding_calls.add(embedding.get_attribute("docevals.call"))
        for span in spans:
            usage = span.get_attribute("mlflow.chat.tokenUsage")
            assert usage["input_tokens"] > 0
            for name in spent:
                spent[name] += usage.get(name, 0)
            cost += span.get_attribute("mlflow.llm.cost")["total_cost"]
            assert span.end_time_ns > span.start_time_ns
        # The trace's totals are its spans'.
        trace_tokens = json.loads(trace.info.trace_metadata["mlflow.trace.tokenUsage"])
        assert trace_tokens["input_tokens"] == sum(
            span.get_attribute("mlflow.chat.tokenUsage")["input_tokens"] for span in spans
        )
        feedback = {
            item.name: item for item in trace.info.assessments if item.name != "document_f1"
        }
        assert feedback["$.Vendor"].metadata["model"] == "judge"
        assert feedback["$.Purpose"].metadata["model"] == "embed"
        assert "model" not in feedback["$.Total"].metadata
        assert PLANTED not in json.dumps([span.to_dict() for span in trace.data.spans])
    assert len(embedding_calls) == 1

    metrics = MlflowClient(uri).get_run(logged.run_id).data.metrics
    # What the providers counted themselves, what the run logged, and the spans agree.
    counted = total_usage(
        [
            *(
                comparator.usage
                for comparator in providers.comparators
                if hasattr(comparator, "usage")
            ),
            providers.embeddings.usage,
        ]
    )
    assert metrics["usage/requests"] == counted.requests == 4
    for name, value in spent.items():
        assert metrics[f"usage/{name}"] == getattr(counted, name) == value
    assert metrics["usage/cost_usd"] == pytest.approx(counted.cost_usd)
    assert cost == pytest.approx(counted.cost_usd)


def test_answers_from_the_judge_cache_are_spans_marked_as_cache_hits(server, tmp_path):
    server.script("chat/completions", ok(AGREE_TWO))
    schema = DocumentSchema.model_validate(SCHEMA)
    cache = JudgeCache(tmp_path / "cache")
    compare_documents(_documents(1), schema, providers=_providers(server, cache).providers)
    providers = _providers(server, JudgeCache(tmp_path / "cache"))
    report = compare_documents(_documents(1), schema, providers=providers.providers).to_report()
    uri, logged = _log(tmp_path, report)
    (trace,) = _traces(uri, logged)
    (llm,) = [span for span in _call_spans(trace) if span.span_type == "LLM"]
    assert len(server.requests_for("chat/completions")) == 1
    assert llm.name == "LLM · $.Vendor, $.Bank (cache)"
    assert llm.get_attribute("docevals.cache_hit") is True
    assert llm.get_attribute("docevals.cache_hits") == 2
    assert llm.get_attribute("mlflow.chat.tokenUsage") is None
    metrics = MlflowClient(uri).get_run(logged.run_id).data.metrics
    assert metrics["usage/cache_hits"] == 2
    # Only the embeddings request was made and spent anything.
    assert metrics["usage/requests"] == 1


def test_the_traces_policy_keeps_the_spans_of_the_documents_it_selects(server, tmp_path):
    server.script(
        "chat/completions",
        ok(AGREE_TWO),
        ok({"results": [{"id": 0, "match": False, "score": 0.1, "reason": "other firm"}]}),
    )
    documents = _documents(2)
    documents[1]["predicted"]["Vendor"] = "Globex"
    documents[1]["predicted"]["Bank"] = documents[1]["expected"]["Bank"]
    batch = compare_documents(
        documents, DocumentSchema.model_validate(SCHEMA), providers=_providers(server).providers
    )
    uri, logged = _log(tmp_path, batch.to_report(), traces="errors")
    (trace,) = _traces(uri, logged)
    assert trace.info.tags["docevals.document.id"] == "d1"
    (llm,) = [span for span in _call_spans(trace) if span.span_type == "LLM"]
    assert llm.name == "LLM · $.Vendor"
    assert llm.outputs["results"][0]["match"] is False


def test_docevals_fields_logs_the_call_spans(server, mlflow_store, tmp_path, capsys):
    server.script("chat/completions", ok(AGREE_TWO), ok(AGREE_TWO))
    schema, expected, predicted = (tmp_path / name for name in ("s.json", "e.jsonl", "p.jsonl"))
    schema.write_text(json.dumps(SCHEMA))
    documents = _documents(2)
    for path, side in ((expected, "expected"), (predicted, "predicted")):
        path.write_text(
            "".join(
                json.dumps({"id": doc["id"], "class": doc["class"], "data": doc[side]}) + "\n"
                for doc in documents
            )
        )
    prices = tmp_path / "prices.yaml"
    prices.write_text("judge: {input: 2.0, output: 8.0}\nembed: {input: 0.5, output: 0}\n")
    uri = mlflow_store
    url = server.base_url
    code = main(
        [
            "fields",
            *("--schema", str(schema), "--expected", str(expected)),
            *("--predicted", str(predicted), "--output", str(tmp_path / "report.json")),
            *("--embeddings-model", "embed", "--embeddings-url", url),
            *("--judge", "openai-compatible", "--model", "judge", "--base-url", url),
            *("--prices", str(prices), "--experiment", "calls"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    client = MlflowClient(uri)
    run = client.get_run(run_id_from(out))
    traces = client.search_traces(
        locations=[run.info.experiment_id],
        filter_string=f"metadata.`mlflow.sourceRun` = '{run.info.run_id}'",
    )
    spans = [span for trace in traces for span in _call_spans(trace)]
    assert sorted(span.span_type for span in spans) == ["EMBEDDING", "EMBEDDING", "LLM", "LLM"]
    tokens = sum(span.get_attribute("mlflow.chat.tokenUsage")["input_tokens"] for span in spans)
    assert run.data.metrics["usage/input_tokens"] == tokens
    assert f"{tokens} input tokens" in out
    cost = sum(span.get_attribute("mlflow.llm.cost")["total_cost"] for span in spans)
    assert run.data.metrics["usage/cost_usd"] == pytest.approx(cost)
