"""A stand-in for a local model server, so the examples run offline.

``FakeModelServer`` listens on 127.0.0.1 and speaks the OpenAI chat-completions
protocol (``POST /v1/chat/completions``), as vLLM, Ollama, llama.cpp and LM Studio
do. docevals reaches it through the ``openai-compatible`` provider with a
``base_url``, exactly as it would reach a real server; swap the URL for
``http://localhost:8000/v1`` (vLLM) or ``http://localhost:11434/v1`` (Ollama) and
the same commands ask real models.

Each model name is served by a Python function that reads the task JSON docevals
sends and returns the JSON answer. Three kinds are provided:

* :func:`careful_judge` compares every predicted value with the reference value at
  the same path (numbers by value, text ignoring case and spacing), as a diligent
  judge would;
* :func:`lenient_judge` approves everything, as a weak judge might;
* :func:`reader` answers ground-truth generation requests from an answer book
  (source file name → field values): a model that "reads" the document.

No image is looked at: the answers come from the claims in the task and from the
answer book, which is what makes the examples deterministic.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from docevals_mlflow import values_equal

Model = Callable[[dict[str, Any]], dict[str, Any]]
"""A model: the task docevals sent in, the JSON answer out."""


def careful_judge(task: dict[str, Any]) -> dict[str, Any]:
    """Judge each predicted value against the reference value at the same path."""
    expected: dict[str, Any] = {}
    for claim in task.get("reference_claims", []):
        expected.setdefault(claim["path"], claim)
    predicted = {claim["path"]: claim for claim in task.get("prediction_claims", [])}
    prediction_claims = []
    for path, claim in predicted.items():
        reference = expected.get(path)
        if reference is None:
            prediction_claims.append(
                _prediction_claim(claim, "not_verifiable", "no reference states it", None)
            )
            continue
        value = reference.get("expected_value")
        verdict = "correct" if values_equal(value, claim.get("value")) else "incorrect"
        evidence = f"the reference states {value!r}"
        prediction_claims.append(
            _prediction_claim(claim, verdict, evidence, reference.get("reference_id"))
        )
    reference_claims = []
    for claim in task.get("reference_claims", []):
        found = predicted.get(claim["path"])
        matched = found is not None and values_equal(
            claim.get("expected_value"), found.get("value")
        )
        reference_claims.append(_reference_claim(claim, "matched" if matched else "missing"))
    wrong = any(item["verdict"] == "incorrect" for item in prediction_claims) or any(
        item["verdict"] == "missing" for item in reference_claims
    )
    return _judgement(task, prediction_claims, reference_claims, passed=not wrong)


def lenient_judge(task: dict[str, Any]) -> dict[str, Any]:
    """Call every value correct and every reference value found."""
    prediction_claims = [
        _prediction_claim(claim, "correct", "looks plausible", None)
        for claim in task.get("prediction_claims", [])
    ]
    reference_claims = [
        _reference_claim(claim, "matched") for claim in task.get("reference_claims", [])
    ]
    return _judgement(task, prediction_claims, reference_claims, passed=True)


def reader(book: Mapping[str, Mapping[str, Any]]) -> Model:
    """A generator that "reads" each source: ``book[file name][field path]`` is the
    value it gives; a field missing from the book is left out, as a model that
    could not read it would."""

    def read(task: dict[str, Any]) -> dict[str, Any]:
        claims = []
        for source in task.get("sources", []):
            values = book.get(str(source.get("name")), {})
            for path in task.get("expected_fields", []):
                if path in values and values[path] is not None:
                    claims.append(
                        {
                            "path": path,
                            "expected_value": values[path],
                            "evidence": f"printed on {source.get('name')}",
                            "reference_id": source.get("id"),
                            "confidence": 0.9,
                        }
                    )
        return {"claims": claims}

    return read


def _prediction_claim(
    claim: dict[str, Any], verdict: str, evidence: str, cited: str | None
) -> dict[str, Any]:
    return {
        "claim_id": claim["claim_id"],
        "path": claim.get("path", ""),
        "verdict": verdict,
        "evidence": evidence,
        "reference_id": cited,
        "confidence": 0.9,
    }


def _reference_claim(claim: dict[str, Any], verdict: str) -> dict[str, Any]:
    value = claim.get("expected_value")
    return {
        "claim_id": claim["claim_id"],
        "path": claim.get("path", ""),
        "expected_value": None if value is None else str(value),
        "verdict": verdict,
        "matched_prediction_path": claim.get("path") if verdict == "matched" else None,
        "evidence": "compared with the prediction",
        "reference_id": claim.get("reference_id"),
        "confidence": 0.9,
    }


def _judgement(
    task: dict[str, Any],
    prediction_claims: list[dict[str, Any]],
    reference_claims: list[dict[str, Any]],
    *,
    passed: bool,
) -> dict[str, Any]:
    rubric = task.get("rubric")
    return {
        "summary": "Every value agrees with the reference." if passed else "Some values differ.",
        "prediction_claims": prediction_claims,
        "reference_claims": reference_claims,
        "rubric_results": (
            [
                {
                    "criterion": str(rubric),
                    "verdict": "pass" if passed else "fail",
                    "evidence": "judged claim by claim",
                    "confidence": 0.9,
                }
            ]
            if rubric
            else []
        ),
    }


def find_task(messages: Any) -> dict[str, Any] | None:
    """The task JSON docevals put into the user message (the first text part that
    parses as a JSON object with claims or expected fields)."""
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for part in parts:
            text = part.get("text") if isinstance(part, dict) else None
            if not isinstance(text, str) or not text.lstrip().startswith("{"):
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and (
                "prediction_claims" in value or "expected_fields" in value
            ):
                return value
    return None


def tokens(text: str) -> int:
    """About four characters a token: a stable stand-in for a tokenizer."""
    return max(1, len(text) // 4)


IMAGE_TOKENS = 765
"""What an image costs, whatever its size (OpenAI charges a 512-pixel tile about this)."""


def prompt_size(messages: Any) -> int:
    """The prompt's tokens: its text, plus a fixed cost per image."""
    total = 0
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            total += tokens(content)
            continue
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text":
                total += tokens(str(part.get("text", "")))
            else:
                total += IMAGE_TOKENS
    return max(1, total)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as docevals' pooled client expects
    # Headers and body go out in two writes; with Nagle's algorithm the body would
    # wait for the client's delayed ACK (~40 ms an answer).
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # the examples print what matters themselves

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            body = {}
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        model_name = str(body.get("model", ""))
        model = self.server.models.get(model_name)
        if model is None:
            known = ", ".join(sorted(self.server.models))
            message = f"model {model_name!r} not found (this server has {known})"
            self._send(404, {"error": {"message": message, "type": "not_found"}})
            return
        answer = json.dumps(model(find_task(body.get("messages")) or {}))
        prompt_tokens, completion_tokens = prompt_size(body.get("messages")), tokens(answer)
        self.server.requests += 1
        self._send(
            200,
            {
                "id": "chatcmpl-example",
                "object": "chat.completion",
                "model": model_name,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _send(self, code: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64
    models: Mapping[str, Model]
    requests: int


class FakeModelServer:
    """An OpenAI-compatible chat server on loopback serving ``models`` by name.

    Use it as a context manager; :attr:`base_url` is the API root to configure.
    """

    def __init__(self, models: Mapping[str, Model]) -> None:
        self.models = dict(models)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeModelServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.models = self.models
        server.requests = 0
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        assert self._server is not None, "the server is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> int:
        """Chat requests answered so far."""
        return self._server.requests if self._server is not None else 0
