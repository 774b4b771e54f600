"""``docevals fields`` with SEMANTIC and LLM fields against the loopback provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docevals_mlflow.cli import main
from tests.judges.provider_server import ok

SCHEMA = {
    "classes": [
        {
            "name": "Statement",
            "fields": {
                "Purpose": {"method": "SEMANTIC", "threshold": 0.5},
                "Vendor": {"method": "LLM"},
                "Total": {"method": "NUMERIC_EXACT"},
            },
        }
    ]
}


def write_inputs(folder: Path) -> list[str]:
    schema = folder / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    expected = folder / "expected.jsonl"
    predicted = folder / "predicted.jsonl"
    expected.write_text(
        json.dumps(
            {"id": "d1", "data": {"Purpose": "office paper", "Vendor": "ACME Corp", "Total": 5}}
        )
        + "\n"
    )
    predicted.write_text(
        json.dumps(
            {"id": "d1", "data": {"Purpose": "paper office", "Vendor": "ACME Inc.", "Total": 5}}
        )
        + "\n"
    )
    return [
        "fields",
        "--schema",
        str(schema),
        "--expected",
        str(expected),
        "--predicted",
        str(predicted),
        "--output",
        str(folder / "report.json"),
    ]


def test_fields_use_the_embedding_model_and_the_judge(provider_server, tmp_path, capsys):
    provider_server.script(
        "chat/completions",
        ok({"results": [{"id": 0, "match": True, "score": 0.9, "reason": "same firm"}]}),
    )
    argv = write_inputs(tmp_path)
    url = provider_server.base_url
    code = main(
        [
            *argv,
            "--embeddings-model",
            "embed",
            "--embeddings-url",
            url,
            "--judge",
            "openai-compatible",
            "--model",
            "judge",
            "--base-url",
            url,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["overall"]["counts"]["tp"] == 3
    assert "field methods: 2 requests" in out
    [embedding_request] = provider_server.requests_for("embeddings")
    assert "authorization" not in embedding_request.headers  # no key sent to a local server
    assert len(provider_server.requests_for("chat/completions")) == 1


def test_semantic_fields_without_a_model_are_refused(tmp_path, capsys):
    code = main(write_inputs(tmp_path))
    err = capsys.readouterr().err
    assert code == 2
    assert "SEMANTIC needs a provider" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--embeddings-model", "text-embedding-3-small"], "set OPENAI_API_KEY"),
        (["--embeddings-url", "http://127.0.0.1:9/v1"], "need --embeddings-model"),
    ],
)
def test_embedding_options_are_checked_before_reading_inputs(
    tmp_path, capsys, monkeypatch, extra, message
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main([*write_inputs(tmp_path), *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert not (tmp_path / "report.json").exists()
