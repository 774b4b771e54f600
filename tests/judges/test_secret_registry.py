"""The process-wide secret registry: what counts as a secret, the forms it is
removed in, and the places that register and redact (transport, adapters, the
judge, caches, checkpoints, metric results, report files)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from urllib.parse import quote, quote_plus

import httpx
import pytest

from docevals_mlflow import EvaluationCase, artifact_from_value
from docevals_mlflow.core import secrets
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.core.secrets import (
    REDACTED,
    contains_secret,
    credential_parts,
    header_credentials,
    redact_data,
    redact_text,
    register_environment,
    register_headers,
    register_secrets,
    register_url,
    registered_secrets,
    secret_forms,
    url_credentials,
)
from docevals_mlflow.evaluation.checkpoints import CheckpointStore
from docevals_mlflow.evaluation.metrics import FunctionMetric, run_metric
from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter
from docevals_mlflow.judges.cache import JudgeCache
from docevals_mlflow.judges.judge import CallableAdapter, ModelJudge, ask_structured
from docevals_mlflow.judges.output import parse_judge_output
from docevals_mlflow.judges.request import build_judge_request
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.transport import Transport, redact
from docevals_mlflow.reports.files import write_report

KEY = "sk-test-REGISTRY-0123456789"


@pytest.fixture(autouse=True)
def _fresh_registry() -> Iterator[None]:
    # Each test starts from an empty registry and leaves the suite's as it found it:
    # registrations are process-wide, and other tests' secrets must not leak in here.
    saved = registered_secrets()
    secrets.REGISTRY.clear()
    try:
        yield
    finally:
        secrets.REGISTRY.clear()
        register_secrets(*saved)


def base64_inside(data: bytes, prefix: bytes) -> str:
    """``data`` base64-encoded inside a longer stream, after ``prefix``."""
    return base64.b64encode(prefix + data + b" and more bytes").decode()


# ----------------------------------------------------------------------------- forms


def test_every_form_of_a_registered_secret_is_replaced() -> None:
    secret = "judge/KEY+with=odd chars~1"
    register_secrets(secret)
    spellings = [
        secret,
        quote(secret, safe=""),
        re.sub("%[0-9A-F]{2}", lambda match: match.group(0).lower(), quote(secret, safe="")),
        quote_plus(secret),
        json.dumps(secret)[1:-1].replace("/", "\\/"),
        *(base64_inside(secret.encode(), prefix) for prefix in (b"", b"x", b"xy")),
        *(
            base64.urlsafe_b64encode(prefix + secret.encode()).decode()
            for prefix in (b"", b"x", b"xy")
        ),
    ]
    for spelled in spellings:
        text = f"before {spelled} after"
        assert contains_secret(text), spelled
        cleaned = redact_text(text)
        assert REDACTED in cleaned, spelled
        assert secret not in cleaned
        assert not contains_secret(cleaned), spelled


def test_short_values_are_not_secrets_everywhere() -> None:
    # A placeholder key for a local server ("ollama", "EMPTY") is an ordinary word:
    # registering it would shred every report that names the provider.
    assert register_secrets("ollama", "EMPTY", "", None, "1234567") == 0
    assert registered_secrets() == ()
    assert redact_text("provider ollama said EMPTY") == "provider ollama said EMPTY"
    assert secret_forms("1234567") == ()


def test_short_extra_values_go_only_as_whole_words() -> None:
    text = "key EMPTY, not EMPTYING; ?k=EMPTY end"
    assert redact_text(text, ["EMPTY"]) == "key [REDACTED], not EMPTYING; ?k=[REDACTED] end"
    assert redact_text("abc x", ["abc", "x", ""]) == "abc x"  # under 4: never
    # The transport's redact is this one, its secrets passed as extra values.
    assert redact("one sk-1234 two sk-12345", ["sk-1234", "sk-12345"]) == (
        "one [REDACTED] two [REDACTED]"
    )


def test_longer_secrets_go_first() -> None:
    register_secrets("abcdefgh", "abcdefgh-ijkl")
    assert redact_text("x abcdefgh-ijkl y abcdefgh z") == "x [REDACTED] y [REDACTED] z"


def test_redact_data_walks_json_and_models_and_keeps_clean_values() -> None:
    register_secrets(KEY)
    clean = {"a": [1, 2.5, None, True, "text"], "b": ("x",)}
    assert redact_data(clean) is clean  # nothing to do: the same object
    dirty = {KEY: [1, {"note": f"said {KEY}"}], "t": ("ok", KEY), "n": 3}
    assert redact_data(dirty) == {
        REDACTED: [1, {"note": f"said {REDACTED}"}],
        "t": ("ok", REDACTED),
        "n": 3,
    }
    result = MetricResult(name="m", basis="b", verdict="pass", notes=[KEY], details={"k": KEY})
    redacted = redact_data(result)
    assert isinstance(redacted, MetricResult)
    assert KEY not in redacted.model_dump_json()
    assert redacted.notes == [REDACTED]


# ----------------------------------------------------------------------------- credentials


def test_credentials_in_headers_and_urls() -> None:
    basic = base64.b64encode(b"someone:pass-word-1").decode()
    assert credential_parts(f"Basic {basic}")[2:] == [basic, "someone:pass-word-1", "someone",
                                                      "pass-word-1"]  # fmt: skip
    found = header_credentials(
        {"Authorization": f"Bearer {KEY}", "X-Custom-Token": "tok-0123456789", "Accept": "json"}
    )
    assert KEY in found
    assert "tok-0123456789" in found
    assert "json" not in found
    found = url_credentials("https://user%40corp:p%40ss-0123@llm.test/v1?api_key=qk-0123456789&x=1")
    assert {"user@corp", "p@ss-0123", "user@corp:p@ss-0123", "qk-0123456789"} <= set(found)
    assert base64.b64encode(b"user@corp:p@ss-0123").decode() in found
    assert url_credentials("http://127.0.0.1:8000/v1") == []


def test_registration_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_KEY_VARIABLE", "env-secret-0123456789")
    assert register_environment("SOME_KEY_VARIABLE", "UNSET_VARIABLE_XYZ", None) == 1
    assert register_headers({"x-api-key": "hdr-secret-0123456789"}) >= 1
    assert register_url("http://tok-secret-0123456789@127.0.0.1/v1") >= 1
    text = "env-secret-0123456789 hdr-secret-0123456789 tok-secret-0123456789"
    assert redact_text(text) == " ".join([REDACTED] * 3)


# ----------------------------------------------------------------------------- who registers


def test_adapters_register_their_key_headers_and_user_info() -> None:
    adapter = OpenAICompatibleChatAdapter(
        model="m",
        base_url="http://proxy-user:proxy-pass-0123@127.0.0.1:9/v1",
        api_key=KEY,
        http=TransportSettings(
            extra_headers={"X-Gateway-Token": "gateway-0123456789", "X-Trace": "trace-0123456789"}
        ),
    )
    known = set(registered_secrets())
    assert {KEY, "gateway-0123456789", "proxy-pass-0123", "proxy-user:proxy-pass-0123"} <= known
    assert "trace-0123456789" not in known  # not named like a credential
    assert "proxy-pass" not in json.dumps(adapter.describe())


def test_transport_redacts_answers_and_registers_what_it_sends() -> None:
    echoed = {}

    def handler(request: httpx.Request) -> httpx.Response:
        sent = request.headers["authorization"].removeprefix("Bearer ")
        echoed["sent"] = sent
        encoded = base64.b64encode(sent.encode()).decode()
        return httpx.Response(
            200,
            json={"answer": f"you sent {sent} ({encoded})", "vector": [0.5] * 1000},
            headers={"x-echo": sent},
        )

    async def go() -> object:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            transport = Transport(provider="p", client=client, max_concurrency=None)
            return await transport.send(
                "POST",
                "http://127.0.0.1/v1/x",
                json_body={},
                headers={"Authorization": "Bearer header-only-0123456789"},
            )

    import asyncio

    response = asyncio.run(go())
    assert echoed["sent"] == "header-only-0123456789"
    assert "header-only-0123456789" in registered_secrets()  # registered on sending
    data = response.data  # type: ignore[attr-defined]
    # The base64 form loses all but its last, partly padded character ("Q==").
    assert data["answer"].startswith(f"you sent {REDACTED} ({REDACTED}")
    assert not contains_secret(data["answer"])
    assert data["vector"] == [0.5] * 1000
    assert response.headers["x-echo"] == REDACTED  # type: ignore[attr-defined]


def test_a_short_placeholder_key_leaves_answers_alone() -> None:
    # vLLM's convention is api_key="EMPTY"; a model may answer with that word.
    answers = iter(
        [
            httpx.Response(
                200,
                json={
                    "choices": [
                        {"message": {"content": "the field is EMPTY"}, "finish_reason": "stop"}
                    ]
                },
            ),
            httpx.Response(401, json={"error": {"message": "bad key EMPTY"}}),
        ]
    )

    async def go() -> tuple[str | None, str]:
        client = httpx.AsyncClient(transport=httpx.MockTransport(lambda _: next(answers)))
        async with client:
            adapter = OpenAICompatibleChatAdapter(
                model="m",
                base_url="http://127.0.0.1:9/v1",
                api_key="EMPTY",
                http=TransportSettings(client=client),
            )
            request = build_judge_request(case())
            reply = await adapter.agenerate(request)
            try:
                await adapter.agenerate(request)
            except Exception as exc:
                return reply.text, str(exc)
            raise AssertionError("the second call should fail")

    import asyncio

    text, error = asyncio.run(go())
    assert text == "the field is EMPTY"
    assert "bad key [REDACTED]" in error
    # The header as sent is long enough to be registered, its token alone is not.
    assert registered_secrets() == ("Bearer EMPTY",)


# ----------------------------------------------------------------------------- who redacts


def case() -> EvaluationCase:
    return EvaluationCase(
        case_id="c1",
        prediction={"total": 3},
        references=[artifact_from_value({"total": 3}, authority="ground_truth", artifact_id="t")],
    )


def quoting_judge(request: object) -> dict[str, object]:
    """A function judge that quotes the key in every text it gives."""
    return {
        "summary": f"the key is {KEY}",
        "prediction_claims": [{"claim_id": "p00001", "verdict": "correct", "evidence": KEY}],
        "reference_claims": [{"claim_id": "r00001", "verdict": "matched", "evidence": KEY}],
        "rubric_results": [],
    }


def test_structured_answers_of_any_adapter_are_redacted() -> None:
    register_secrets(KEY)
    request = build_judge_request(case())

    import asyncio

    adapter = CallableAdapter(quoting_judge)
    answer = asyncio.run(ask_structured(adapter, request, parse_judge_output))
    assert answer.value is not None
    assert KEY not in answer.value.model_dump_json()

    def refusing(request: object) -> object:
        raise RuntimeError(f"upstream rejected {KEY}")

    failed = asyncio.run(ask_structured(CallableAdapter(refusing), request, parse_judge_output))
    assert failed.status == "error"
    assert failed.error is not None
    assert KEY not in failed.error
    assert REDACTED in failed.error


def test_caches_checkpoints_results_and_report_files(tmp_path) -> None:
    from docevals_mlflow import Evaluator, LLMJudgeMetric

    register_secrets(KEY)
    cache = JudgeCache(tmp_path / "cache")
    judge = ModelJudge(quoting_judge, cache=cache)
    report = Evaluator([LLMJudgeMetric(judge)]).evaluate(case())
    write_report(report, tmp_path / "r.json", tmp_path / "r.md")
    store = CheckpointStore(tmp_path / "checkpoints", None)
    store.save(store.path_for(1, "output"), "output", "f", report)

    # A cache entry and a checkpoint written before the key was known (an older
    # version, another process) are redacted when read back.
    secrets.REGISTRY.clear()
    stale = report.model_copy(update={"warnings": [f"old {KEY}"]})
    store.save(store.path_for(2, "output"), "output", "f", stale)
    cache.put_answer("a" * 64, {"reason": f"old {KEY}"})
    register_secrets(KEY)
    loaded, _ = store.load(store.path_for(2, "output"), "output", "f")
    assert loaded is not None
    assert loaded.warnings == [f"old {REDACTED}"]
    assert cache.get_answer("a" * 64) == {"reason": f"old {REDACTED}"}
    (tmp_path / "cache" / "aa" / ("a" * 64 + ".json")).unlink()
    (tmp_path / "checkpoints" / "02-output.json").unlink()

    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path

    # Any metric's result, exceptions included, is redacted on its way to a report.
    def raising(case: EvaluationCase) -> bool:
        raise ValueError(f"could not call the service with {KEY}")

    result = run_metric(FunctionMetric("raises", raising), case())
    assert result.error is not None
    assert result.error.message == f"could not call the service with {REDACTED}"
    assert KEY not in result.model_dump_json()

    def quoting(case: EvaluationCase) -> MetricResult:
        return MetricResult(name="q", basis="function", verdict="pass", notes=[KEY])

    assert run_metric(FunctionMetric("q", quoting), case()).notes == [REDACTED]
