"""``docevals fields`` with SEMANTIC and LLM fields against the loopback provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docevals_mlflow.cli import main
from tests.judges.provider_server import ok, status

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
        (["--embeddings-url", "http://127.0.0.1:9/v1"], "needs --embeddings-model"),
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


def judge_options(url: str) -> list[str]:
    return ["--judge", "openai-compatible", "--model", "judge", "--base-url", url]


def embedding_options(url: str) -> list[str]:
    return ["--embeddings-model", "embed", "--embeddings-url", url]


AGREES = {"results": [{"id": 0, "match": True, "score": 0.9, "reason": "same firm"}]}


def test_judge_cache_makes_a_rerun_free(provider_server, tmp_path, capsys):
    provider_server.script("chat/completions", ok(AGREES))
    url = provider_server.base_url
    argv = [
        *write_inputs(tmp_path),
        *embedding_options(url),
        *judge_options(url),
        "--judge-cache",
        str(tmp_path / "cache"),
    ]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "answers from the cache" not in first
    assert main(argv) == 0
    second = capsys.readouterr().out
    assert len(provider_server.requests_for("chat/completions")) == 1
    assert "1 answers from the cache" in second
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["overall"]["counts"]["tp"] == 3


def test_prices_give_the_field_methods_a_cost(provider_server, tmp_path, capsys):
    provider_server.script("chat/completions", ok(AGREES))
    prices = tmp_path / "prices.yaml"
    # $1 per output token (only the judge writes any): the cost is the output tokens.
    prices.write_text("judge: {input: 0, output: 1000000}\n")
    url = provider_server.base_url
    argv = [*write_inputs(tmp_path), *embedding_options(url), *judge_options(url)]
    assert main([*argv, "--prices", str(prices)]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "field methods" in line]
    output_tokens = int(line.split(", ")[2].split()[0])
    assert output_tokens > 0
    # The embedding model has no price: the cost covers the judge only, and says so.
    assert line.endswith(f", ${output_tokens:.4f} (some models have no price)")

    (tmp_path / "prices.yaml").write_text(
        "judge: {input: 1.0, output: 1.0}\nembed: {input: 1.0, output: 0}\n"
    )
    provider_server.script("chat/completions", ok(AGREES))
    assert main([*argv, "--prices", str(prices)]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "field methods" in line]
    assert "$" in line
    assert "no price" not in line


def test_undecided_comparisons_are_reported(provider_server, tmp_path, capsys):
    provider_server.script("chat/completions", status(400, message="model not loaded"))
    url = provider_server.base_url
    markdown = tmp_path / "report.md"
    code = main(
        [
            *write_inputs(tmp_path),
            *embedding_options(url),
            *judge_options(url),
            "--markdown",
            str(markdown),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["overall"]["undecided"] == 1
    assert report["overall"]["counts"]["fd"] == 1
    (warning,) = [line for line in err.splitlines() if "warning" in line]
    assert warning.startswith("docevals: warning: 1 field comparison was not decided (")
    assert "model not loaded" in warning
    assert "counted as FD" in warning
    assert "1 comparison(s) not decided" in markdown.read_text()
    # One embeddings request and the failed chat request.
    assert "field methods: 2 requests" in out


def test_embeddings_failing_while_pairing_is_a_warning_not_an_exit(
    provider_server, tmp_path, capsys
):
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps(
            {
                "classes": [
                    {
                        "name": "Invoice",
                        "fields": {
                            "Lines": {"items": {"fields": {"Item": {"method": "SEMANTIC"}}}}
                        },
                    }
                ]
            }
        )
    )
    lines = [{"Item": "printer paper"}, {"Item": "blue ink"}]
    (tmp_path / "expected.jsonl").write_text(json.dumps({"id": "d1", "data": {"Lines": lines}}))
    (tmp_path / "predicted.jsonl").write_text(
        json.dumps(
            {"id": "d1", "data": {"Lines": [{"Item": "ink, blue"}, {"Item": "paper printer"}]}}
        )
    )
    provider_server.script("embeddings", *[status(400, message="model not loaded")] * 20)
    code = main(
        [
            "fields", "--schema", str(schema),
            "--expected", str(tmp_path / "expected.jsonl"),
            "--predicted", str(tmp_path / "predicted.jsonl"),
            "--output", str(tmp_path / "report.json"),
            *embedding_options(provider_server.base_url),
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("docevals: warning:")]
    assert any(
        "while pairing list items" in line and "model not loaded" in line for line in warnings
    )
    assert any("were not decided" in line for line in warnings)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["overall"]["undecided"] == 2
