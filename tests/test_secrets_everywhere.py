"""Keys planted in what providers answer never reach anything written.

A loopback provider echoes the credentials it was sent (the environment keys, the
``--api-key-env`` key, extra credential headers and the user-info of a base URL)
back in its answers, its refusals, its malformed text and its error bodies, plain,
URL-encoded and base64-encoded. Every command that calls providers then runs against
it (``fields`` with SEMANTIC and LLM fields, ``evaluate-case``, ``evaluate-pipeline``
with three judges, ``generate``), plus ``calibrate`` on the reports, plus the Python
API with an extra header; and every byte written under the test folder (reports,
Markdown, caches, checkpoints, run bundles, the SQLite MLflow store, artifact
folders) and every line printed is searched for each secret in every form.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pandas as pd
import pymupdf
import pytest

from docevals_mlflow import (
    EvaluationCase,
    Evaluator,
    ExactStructuredMetric,
    LLMJudgeMetric,
    PipelineEvaluationReport,
    artifact_from_value,
    load_report,
)
from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter
from docevals_mlflow.judges.cache import JudgeCache
from docevals_mlflow.judges.judge import ModelJudge
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.reports.files import write_report
from tests.helpers import run, write_json, write_jsonl, write_text
from tests.judges import conftest as judges_conftest
from tests.judges.provider_server import (
    ENDPOINTS,
    Behaviour,
    ProviderServer,
    ReceivedRequest,
    _answer,
    _embeddings,
    _Handler,
    default_answer,
    generation_answer,
)

# The judges' guards: loopback only, and no developer key ever reaches a test.
_loopback_only = judges_conftest._loopback_only
_no_real_keys = judges_conftest._no_real_keys

OPENAI_KEY = "sk-proj-PLANTEDopenai0123456789abcdefXYZ"
ANTHROPIC_KEY = "sk-ant-api03-PLANTEDanthropic-0123456789"
JUDGE_KEY = "judge/PLANTED+key=0123456789~x"
"""Read through ``--api-key-env``; its ``/``, ``+`` and ``=`` make its URL-encoded and
base64 forms differ from the plain one."""
EMBED_KEY = "emb-PLANTED-0123456789abcdef"
URL_USER = "urluserPLANTED"
URL_PASSWORD = "p@ss:w0rd/PLANTED-42"
HEADER_TOKEN = "hdr-PLANTED-token-0123456789"
JUDGE_KEY_ENV = "MY_JUDGE_KEY"
EMBED_KEY_ENV = "MY_EMBED_KEY"
SECRETS = (
    OPENAI_KEY,
    ANTHROPIC_KEY,
    JUDGE_KEY,
    EMBED_KEY,
    URL_USER,
    URL_PASSWORD,
    f"{URL_USER}:{URL_PASSWORD}",
    HEADER_TOKEN,
)

MODES = ("MODE-MALFORMED", "MODE-REFUSE", "MODE-ERRTEXT", "MODE-ERROR")
"""Markers in a request's task that choose the answer: text that is not JSON, a
refusal, an error with a text body, an error with a JSON body; else a usable answer."""
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-custom-token")
_HEX = re.compile("%[0-9A-F]{2}")


# ----------------------------------------------------------------------------- forms


def base64_cores(data: bytes) -> set[str]:
    """The base64 text ``data`` becomes inside any longer base64 stream, at each of
    the three byte alignments (the characters that depend on ``data`` alone), in the
    standard and URL-safe alphabets."""
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode()
        core = encoded[(8 * offset + 5) // 6 : (8 * (offset + len(data))) // 6]
        cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


def forms(secret: str) -> set[str]:
    """Every spelling of ``secret`` searched for: plain, URL-encoded (both hex cases,
    ``+`` or ``%20`` for spaces), JSON-escaped, and base64 at every alignment."""
    spelled = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret)}
    spelled |= {_HEX.sub(lambda match: match.group(0).lower(), form) for form in spelled}
    spelled.add(json.dumps(secret)[1:-1])
    spelled |= base64_cores(secret.encode())
    return {form for form in spelled if len(form) >= 8}


SEARCHED = {form: secret for secret in SECRETS for form in forms(secret)}


def leaks(data: bytes) -> list[str]:
    """The secrets (with the form found) in ``data``."""
    text = data.decode("latin-1")
    return sorted({f"{secret!r} as {form!r}" for form, secret in SEARCHED.items() if form in text})


def file_leaks(path: Path) -> list[str]:
    """The secrets in a file's bytes and, for a Parquet table (whose pages are
    compressed, so a secret need not appear in its bytes), in its decoded cells."""
    found = leaks(path.read_bytes())
    if path.suffix == ".parquet":
        cells = pd.read_parquet(path).to_json(orient="records", force_ascii=False)
        found += leaks(cells.encode("utf-8"))
    return found


# ----------------------------------------------------------------------------- provider


def credentials_sent(headers: dict[str, str]) -> list[str]:
    """What the request carried as credentials, as a provider could echo it."""
    sent = []
    for name in _CREDENTIAL_HEADERS:
        value = headers.get(name)
        if not value:
            continue
        sent.append(value)
        scheme, _, rest = value.partition(" ")
        if scheme.lower() == "bearer":
            sent.append(rest)
        elif scheme.lower() == "basic":
            decoded = base64.b64decode(rest).decode()
            sent += [rest, decoded, *decoded.split(":", 1)]
    return sent


def echo(headers: dict[str, str]) -> str:
    """The credentials of a request quoted back in every spelling: plain, URL-encoded
    and base64 (as an echoed request URL, query or a debug dump would show them)."""
    parts = [f"request headers: {json.dumps(headers)}"]
    for value in credentials_sent(headers):
        parts += [
            value,
            f"?key={quote(value, safe='')}",
            f"q={quote_plus(value)}",
            base64.b64encode(value.encode()).decode(),
            base64.urlsafe_b64encode(f"Bearer {value}".encode()).decode(),
        ]
    return "I was sent " + " | ".join(parts)


def _find(value: Any, key: str) -> dict[str, Any] | None:
    """The JSON object with ``key`` anywhere inside a request body (tasks are JSON
    text inside the provider's message format)."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) and key in value else None
    items = list(value.values()) if isinstance(value, dict) else value
    if isinstance(items, list):
        for item in items:
            found = _find(item, key)
            if found is not None:
                return found
    return None


def leaky_answer(body: Any, said: str) -> dict[str, Any]:
    """A usable answer to whatever was asked, quoting ``said`` wherever text goes."""
    pairs = _find(body, "pairs")
    if pairs is not None:
        return {
            "results": [
                {"id": pair["id"], "match": True, "score": 0.9, "reason": said}
                for pair in pairs["pairs"]
            ]
        }
    generation = _find(body, "expected_fields")
    if generation is not None:
        answer = generation_answer(generation, dict.fromkeys(generation["expected_fields"], said))
        for claim in answer["claims"]:
            claim["evidence"] = said
        return answer
    answer = default_answer(_find(body, "prediction_claims"))
    answer["summary"] = said
    for item in answer["prediction_claims"] + answer["reference_claims"]:
        item["evidence"] = said
    return answer


class EchoingProvider(ProviderServer):
    """The fake provider, telling every caller its credentials back."""

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        path = handler.path.split("?", 1)[0]
        endpoint = next((name for name in ENDPOINTS if path.endswith("/" + name)), "")
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            self._requests.append(
                ReceivedRequest(handler.command, path, endpoint, headers, raw, body, time.time())
            )
        said = echo(headers)
        text = raw.decode("utf-8", errors="replace")
        mode = next((mode for mode in MODES if mode in text), None)
        if mode == "MODE-ERROR":
            handler.send_json(400, {"error": {"message": said, "type": "invalid_request_error"}})
        elif mode == "MODE-ERRTEXT":
            handler.send_bytes(400, said.encode(), "text/plain")
        elif endpoint == "embeddings":
            # Nothing of a usable embeddings answer but its vectors is read; the echo
            # in its model name must not matter either.
            handler.send_json(200, {**_embeddings(body), "model": said})
        elif endpoint:
            behaviour = {
                # Without braces: prose around a JSON object would be read as an answer.
                "MODE-MALFORMED": Behaviour(
                    "malformed", text="not JSON: " + said.replace("{", "(").replace("}", ")")
                ),
                "MODE-REFUSE": Behaviour("refusal", text=said),
            }.get(mode or "", Behaviour("ok", payload=leaky_answer(body, said)))
            handler.send_json(200, _answer(endpoint, body, raw, behaviour))
        else:
            handler.send_json(404, {"error": {"message": said}})


@pytest.fixture
def provider() -> Iterator[EchoingProvider]:
    server = EchoingProvider(latency=0.0).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _planted_keys(_no_real_keys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv(JUDGE_KEY_ENV, JUDGE_KEY)
    monkeypatch.setenv(EMBED_KEY_ENV, EMBED_KEY)


def with_user_info(server: ProviderServer) -> str:
    """The server's base URL with a user name and password in it."""
    return server.base_url.replace(
        "http://", f"http://{quote(URL_USER, safe='')}:{quote(URL_PASSWORD, safe='')}@"
    )


# ----------------------------------------------------------------------------- inputs


def fields_inputs(inputs: Path, vendors: dict[str, str], purpose: str) -> list[str | Path]:
    """A SEMANTIC and an LLM field, over documents whose values steer the provider."""
    schema = write_json(
        inputs / "schema.json",
        {
            "classes": [
                {
                    "name": "Statement",
                    "fields": {
                        "Purpose": {"method": "SEMANTIC", "threshold": 0.5},
                        "Vendor": {"method": "LLM", "description": "the seller"},
                        "Total": {"method": "NUMERIC_EXACT"},
                    },
                }
            ]
        },
    )
    tag = purpose.split()[0]
    expected = write_jsonl(
        inputs / f"expected-{tag}.jsonl",
        [
            {"id": doc, "data": {"Purpose": "office paper", "Vendor": "ACME Corp", "Total": 5}}
            for doc in vendors
        ],
    )
    predicted = write_jsonl(
        inputs / f"predicted-{tag}.jsonl",
        [
            {"id": doc, "data": {"Purpose": purpose, "Vendor": vendor, "Total": 5}}
            for doc, vendor in vendors.items()
        ],
    )
    return ["--schema", schema, "--expected", expected, "--predicted", predicted]


def pipeline_config(inputs: Path, server: ProviderServer) -> Path:
    """Five stages, one per kind of answer, judged by OpenAI and Anthropic judges
    configured in the file."""
    write_json(inputs / "truth.json", {"total": 3})
    reference = {"path": "truth.json", "authority": "ground_truth"}
    stages = [
        {"stage_id": stage, "prediction": {"total": 3, "note": mode}, "references": [reference]}
        for stage, mode in zip("abcde", ("fine", *MODES), strict=True)
    ]
    judges = [
        {"type": "exact"},
        {"type": "judge", "name": "gpt_judge", "provider": "openai", "model": "gpt-test",
         "base_url": server.base_url},
        {"type": "judge", "name": "claude_judge", "provider": "anthropic",
         "model": "claude-test", "base_url": server.base_url},
    ]  # fmt: skip
    return write_json(
        inputs / "pipeline.json",
        {"pipeline_id": "p-secrets", "stages": stages, "metrics": {"default": judges}},
    )


def generation_config(inputs: Path, server: ProviderServer) -> Path:
    return write_text(
        inputs / "gen.yaml",
        f"""\
        instruction: Extract the currency and the amount.
        expected_fields: [$.currency, $.amount]
        generators:
          - {{name: gpt, provider: openai, model: gpt-test, base_url: "{server.base_url}"}}
          - {{name: claude, provider: anthropic, model: claude-test, base_url: "{server.base_url}"}}
          - name: local
            provider: openai-compatible
            model: local-vl
            base_url: "{server.base_url}"
            api_key_env: {JUDGE_KEY_ENV}
          - name: proxied
            provider: openai-compatible
            model: proxied-vl
            base_url: "{with_user_info(server)}"
        """,
    )


def page(path: Path, text: str) -> Path:
    document = pymupdf.open()
    document.new_page(width=300, height=200).insert_text((40, 60), text)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)
    document.close()
    return path


def row_reasons(path: Path) -> list[str]:
    """The reason of every row of a fields report."""
    report = json.loads(path.read_text(encoding="utf-8"))
    return [str(row["reason"]) for document in report["documents"] for row in document["rows"]]


# ----------------------------------------------------------------------------- the test


def test_no_planted_key_reaches_any_file_store_or_output(
    provider: EchoingProvider, tmp_path: Path, mlflow_store: str, capsys
) -> None:
    inputs = tmp_path / "inputs"  # written here, never searched: they hold no key
    out = tmp_path / "out"
    printed: list[str] = []
    # Behind a base URL with user-info the client sends Basic credentials (httpx
    # replaces the bearer key with them), so the --api-key-env key goes out through
    # a judge without user-info.
    user_info_judge = (
        "--judge", "openai-compatible", "--model", "local-judge",
        "--base-url", with_user_info(provider),
    )  # fmt: skip
    key_env_judge = (
        "--judge", "openai-compatible", "--model", "local-judge",
        "--base-url", provider.base_url, "--api-key-env", JUDGE_KEY_ENV,
    )  # fmt: skip

    # fields: SEMANTIC (embeddings, with their own key) and LLM (the judge behind a
    # base URL with user-info), every kind of LLM answer in one run.
    vendors = {"d1": "ACME Inc.", "d2": "MODE-ERROR Corp", "d3": "MODE-REFUSE Ltd"}
    vendors |= {"d4": "MODE-MALFORMED GmbH", "d5": "MODE-ERRTEXT plc"}
    code, stdout, stderr = run(
        capsys, "fields", *fields_inputs(inputs, vendors, "paper office"),
        "--output", out / "fields.json", "--markdown", out / "fields.md",
        "--embeddings-model", "embed", "--embeddings-url", provider.base_url,
        "--embeddings-key-env", EMBED_KEY_ENV, *user_info_judge, "--judge-cache", out / "cache",
    )  # fmt: skip
    assert code == 0, stderr
    printed += [stdout, stderr]
    reasons = row_reasons(out / "fields.json")
    assert any(reason.startswith("LLM: same meaning (0.90): I was sent") for reason in reasons)
    undecided = [r for r in reasons if r.startswith("not decided: ProviderError: LLM field")]
    assert len(undecided) == 4  # an error, a refusal, malformed twice, an error text
    # The reasons quote the provider, except the malformed one (its text is not kept).
    assert sum("[REDACTED]" in reason for reason in undecided) == 3

    # Again with embeddings that fail (their error quotes the embeddings key) and the
    # judge's key read through --api-key-env.
    code, stdout, stderr = run(
        capsys, "fields", *fields_inputs(inputs, {"d1": "ACME Inc."}, "MODE-ERRTEXT paper"),
        "--output", out / "fields-2.json", "--markdown", out / "fields-2.md",
        "--embeddings-model", "embed", "--embeddings-url", provider.base_url,
        "--embeddings-key-env", EMBED_KEY_ENV, *key_env_judge, "--judge-cache", out / "cache",
    )  # fmt: skip
    assert code == 0, stderr
    printed += [stdout, stderr]
    reasons = row_reasons(out / "fields-2.json")
    assert any(
        reason.startswith("not decided: ProviderError: embeddings returned HTTP 400")
        and "[REDACTED]" in reason
        for reason in reasons
    )

    # evaluate-pipeline: two judges from the file and the local one from the options.
    code, stdout, stderr = run(
        capsys, "evaluate-pipeline", pipeline_config(inputs, provider),
        "--output", out / "pipeline.json", "--markdown", out / "pipeline.md",
        *user_info_judge, "--judge-cache", out / "cache",
        "--checkpoint-dir", out / "checkpoints", "--fail-on", "never",
    )  # fmt: skip
    assert code == 0, stderr
    printed += [stdout, stderr]
    report = load_report(out / "pipeline.json")
    assert isinstance(report, PipelineEvaluationReport)
    statuses = {
        result.details["status"]
        for stage in report.stage_reports
        for result in stage.metric_results
        if isinstance(result.details, dict) and "status" in result.details
    }
    assert statuses == {"ok", "malformed", "refused", "error"}

    # A rerun reads every stage from its checkpoint and rewrites the reports.
    code, stdout, stderr = run(
        capsys, "evaluate-pipeline", inputs / "pipeline.json",
        "--output", out / "pipeline-again.json", *user_info_judge,
        "--judge-cache", out / "cache", "--checkpoint-dir", out / "checkpoints",
        "--fail-on", "never",
    )  # fmt: skip
    assert code == 0, stderr
    printed += [stdout, stderr]

    # evaluate-case: the --api-key-env judge, reading its cached answer on the rerun.
    write_json(inputs / "prediction.json", {"total": 3, "note": "fine"})
    for name in ("case", "case-again"):
        code, stdout, stderr = run(
            capsys, "evaluate-case", "--prediction", inputs / "prediction.json",
            "--ground-truth", inputs / "truth.json", "--output", out / f"{name}.json",
            "--markdown", out / f"{name}.md", *key_env_judge, "--judge-cache", out / "cache",
        )  # fmt: skip
        assert code == 0, stderr
        printed += [stdout, stderr]

    # generate: three generators, each told its own key back in the values it reads.
    code, stdout, stderr = run(
        capsys, "generate", "--config", generation_config(inputs, provider),
        "--source", page(inputs / "statement.pdf", "EUR 1,234.50"),
        "--output-dir", out / "generated", "--generation-cache", out / "generation-cache",
    )  # fmt: skip
    assert code == 0, stderr
    printed += [stdout, stderr]

    # calibrate: reads the judged reports (no provider call) and writes its own.
    labels = write_jsonl(
        inputs / "labels.jsonl",
        [{"case_id": "p-secrets", "stage_id": stage, "label": "pass"} for stage in "abcde"],
    )
    code, stdout, stderr = run(
        capsys, "calibrate", out / "pipeline.json", "--labels", labels,
        "--metric", "gpt_judge", "--output", out / "calibration.json",
        "--markdown", out / "calibration.md", "--bootstrap", "0",
    )  # fmt: skip
    assert code == 0, stderr
    printed += [stdout, stderr]

    # Python: an extra credential header, a cache, and a report written and logged.
    from docevals_mlflow.tracking.api import log_evaluation_report

    adapter = OpenAICompatibleChatAdapter(
        model="local-judge",
        base_url=with_user_info(provider),
        http=TransportSettings(extra_headers={"X-Custom-Token": HEADER_TOKEN}, max_retries=0),
    )
    case = EvaluationCase(
        case_id="python-case",
        prediction={"total": 3},
        references=[artifact_from_value({"total": 3}, authority="ground_truth", artifact_id="t")],
    )
    judge = ModelJudge(adapter, cache=JudgeCache(out / "python-cache"))
    python_report = Evaluator([ExactStructuredMetric(), LLMJudgeMetric(judge)]).evaluate(case)
    assert python_report.metric_results[1].details["status"] == "ok"
    write_report(python_report, out / "python.json", out / "python.md")
    log_evaluation_report(python_report, run_name="python-case")

    # Every credential went out on the wire, to the one place that needs it.
    sent = " ".join(" ".join(credentials_sent(r.headers)) for r in provider.requests)
    for secret in SECRETS:
        assert secret in sent, secret

    written = [
        path for path in tmp_path.rglob("*") if path.is_file() and inputs not in path.parents
    ]
    assert tmp_path / "mlflow.db" in written
    for folder in ("cache", "checkpoints", "generation-cache", "generated"):
        assert any((out / folder) in path.parents for path in written), folder
    assert any("mlruns" in path.parts for path in written)  # the runs' artifacts
    assert any(path.suffix == ".parquet" for path in written)  # the row tables
    found = {str(path.relative_to(tmp_path)): file_leaks(path) for path in written}
    assert {path: hits for path, hits in found.items() if hits} == {}
    assert leaks("\n".join(printed).encode()) == []


def test_base64_cores_find_a_secret_at_any_alignment() -> None:
    # The search itself must not miss: a secret inside a longer base64 stream.
    for prefix in (b"", b"a", b"ab", b"abc"):
        stream = base64.b64encode(prefix + JUDGE_KEY.encode() + b"tail").decode()
        assert leaks(stream.encode()), prefix
