"""A fake model provider on 127.0.0.1 speaking the OpenAI Responses, Anthropic
Messages, OpenAI chat-completions and OpenAI embeddings wire formats.

Tests script what each endpoint does next (answer, fail with a status, stall, answer
with malformed JSON, refuse, stop at the token limit) and read back every request it
received, headers included, to check what an adapter really put on the wire.

    server = ProviderServer()
    server.start()
    server.script("responses", status(429, retry_after="0"), malformed(), ok())
    ... OpenAIResponsesAdapter(base_url=server.base_url, api_key="...") ...
    server.requests_for("responses")[0].headers["authorization"]
    server.stop()

When an endpoint's script is empty it answers ``ok``: an "all correct" judgement built
from the claim ids in the request's task JSON. Every request waits ``latency`` seconds
first (``time.sleep`` in the handler thread), like a real model would.

Ground-truth generation requests (a task with ``expected_fields``) are answered with
claims instead: the values set with :meth:`ProviderServer.extraction` for the
request's model (or for every model), or a placeholder value per field.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Endpoint = Literal["responses", "messages", "chat/completions", "embeddings"]
ENDPOINTS: tuple[Endpoint, ...] = ("responses", "messages", "chat/completions", "embeddings")
BehaviourKind = Literal["ok", "status", "slow", "malformed", "refusal", "truncated", "invalid_body"]


@dataclass(frozen=True)
class Behaviour:
    """What an endpoint does with one request."""

    kind: BehaviourKind
    payload: dict[str, Any] | None = None
    """For ``ok``/``slow``: the JudgeOutput-shaped answer (default: all correct)."""
    status: int = 200
    message: str = ""
    """For ``status``: the error message; ``{key}`` becomes the key the request sent."""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    text: str = ""


def ok(payload: dict[str, Any] | None = None) -> Behaviour:
    """Answer with ``payload`` (default: every claim correct/matched)."""
    return Behaviour("ok", payload=payload)


def status(
    code: int,
    *,
    retry_after: str | None = None,
    message: str | None = None,
    headers: dict[str, str] | None = None,
) -> Behaviour:
    """Fail with HTTP ``code`` and a provider-style error body."""
    extra = dict(headers or {})
    if retry_after is not None:
        extra["Retry-After"] = retry_after
    return Behaviour(
        "status", status=code, message=message or f"scripted error {code}", headers=extra
    )


def slow(delay: float, payload: dict[str, Any] | None = None) -> Behaviour:
    """Wait ``delay`` seconds more, then answer like :func:`ok`."""
    return Behaviour("slow", payload=payload, delay=delay)


def malformed(text: str = '{"summary": "unfinished", "prediction_claims": [') -> Behaviour:
    """Answer with text that is not valid JSON for the schema."""
    return Behaviour("malformed", text=text)


def refusal(text: str = "I can't help with evaluating this document.") -> Behaviour:
    """Refuse in the provider's way."""
    return Behaviour("refusal", text=text)


def truncated() -> Behaviour:
    """Stop at the output token limit, mid-answer."""
    return Behaviour("truncated")


def invalid_body() -> Behaviour:
    """Answer HTTP 200 with a body that is not JSON (a misconfigured proxy)."""
    return Behaviour("invalid_body")


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    endpoint: str
    headers: dict[str, str]
    """Header names lower-cased; nothing removed."""
    raw: bytes
    body: Any
    received_at: float

    @property
    def text(self) -> str:
        """The raw body as text."""
        return self.raw.decode("utf-8", errors="replace")


def find_task(body: Any) -> dict[str, Any] | None:
    """The judge (or generation) task JSON inside a request body, wherever the format
    puts it."""
    if isinstance(body, str) and body.startswith("{"):
        try:
            value = json.loads(body)
        except json.JSONDecodeError:
            return None
        if isinstance(value, dict) and ("prediction_claims" in value or "expected_fields" in value):
            return value
        return None
    if isinstance(body, dict):
        body = list(body.values())
    if isinstance(body, list):
        for item in body:
            found = find_task(item)
            if found is not None:
                return found
    return None


def default_answer(task: dict[str, Any] | None) -> dict[str, Any]:
    """Every prediction claim correct and every reference claim matched."""
    task = task or {}
    references = [entry.get("id") for entry in task.get("references", [])]
    cited = references[0] if references else None
    rubric = task.get("rubric")
    return {
        "summary": "Every value is supported by the references.",
        "prediction_claims": [
            {
                "claim_id": claim["claim_id"],
                "path": claim.get("path", ""),
                "verdict": "correct",
                "evidence": "matches the reference",
                "reference_id": cited,
                "confidence": 0.9,
            }
            for claim in task.get("prediction_claims", [])
        ],
        "reference_claims": [
            {
                "claim_id": claim["claim_id"],
                "path": claim.get("path", ""),
                "expected_value": None
                if claim.get("expected_value") is None
                else str(claim["expected_value"]),
                "verdict": "matched",
                "matched_prediction_path": claim.get("path"),
                "evidence": "the prediction states this value",
                "reference_id": claim.get("reference_id"),
                "confidence": 0.9,
            }
            for claim in task.get("reference_claims", [])
        ],
        "rubric_results": (
            [
                {
                    "criterion": "rubric",
                    "verdict": "pass",
                    "evidence": "meets the rubric",
                    "confidence": 0.9,
                }
            ]
            if rubric
            else []
        ),
    }


def generation_answer(task: dict[str, Any], values: dict[str, Any] | None = None) -> dict[str, Any]:
    """Claims for a ground-truth generation task: ``values[path]`` for each expected
    field (a field missing from ``values``, or ``None``, is omitted); without
    ``values``, a placeholder value for every field."""
    sources = [entry.get("id") for entry in task.get("sources", [])]
    cited = sources[0] if sources else None
    claims = []
    for path in task.get("expected_fields", []):
        value = f"value of {path}" if values is None else values.get(path)
        if value is None:
            continue
        claims.append(
            {
                "path": path,
                "expected_value": value,
                "evidence": f"read from {cited}",
                "reference_id": cited,
                "confidence": 0.9,
            }
        )
    return {"claims": claims}


def embed(text: str, dimensions: int = 64) -> list[float]:
    """A deterministic unit vector: a hashed bag of words."""
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        index = int.from_bytes(digest[:4], "big") % dimensions
        vector[index] += 1.0 if digest[4] % 2 == 0 else -1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0:
        vector[0] = 1.0  # empty text still gets a unit vector
        return vector
    return [value / norm for value in vector]


def _tokens(text: str) -> int:
    # A stable stand-in for a tokenizer: about four characters a token.
    return max(1, len(text) // 4)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 drops connections when a client opens
    # sixteen at once, and a dropped SYN costs a one-second retransmit.
    request_queue_size = 256
    owner: ProviderServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out closes its socket while a slow answer is still
        # being written; that is expected here and not worth a traceback.
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the pooled client expects
    # Headers and body go out in two writes; with Nagle on, the body waits for the
    # client's delayed ACK (~40 ms a response), which would swamp the latency we model.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet test output

    def do_POST(self) -> None:
        self.server.owner._handle(self)

    def do_GET(self) -> None:
        self.server.owner._handle(self)

    def send_json(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_bytes(code, data, "application/json", headers)

    def send_bytes(
        self, code: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class ProviderServer:
    """The fake provider; see the module docstring.

    Args:
        latency: seconds every request waits before it is answered.
        host: the loopback address to bind (never anything else).
    """

    def __init__(self, *, latency: float = 0.1, host: str = "127.0.0.1") -> None:
        if host not in ("127.0.0.1", "::1"):
            raise ValueError("the fake provider only listens on loopback")
        self.latency = latency
        self.host = host
        self._lock = threading.Lock()
        self._scripts: dict[str, deque[Behaviour]] = {name: deque() for name in ENDPOINTS}
        self._requests: list[ReceivedRequest] = []
        self._in_flight = 0
        self._extraction: dict[str | None, dict[str, Any]] = {}
        self.max_in_flight = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> ProviderServer:
        """Listen on an ephemeral port in a background thread."""
        server = _Server((self.host, 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port listened on."""
        assert self._server is not None, "the server is not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The API root to give an adapter: ``http://127.0.0.1:<port>/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    # -- scripting and inspection -------------------------------------------------

    def script(self, endpoint: Endpoint, *behaviours: Behaviour) -> None:
        """Queue what ``endpoint`` does with its next requests, in order."""
        with self._lock:
            self._scripts[endpoint].extend(behaviours)

    def extraction(self, values: dict[str, Any], *, model: str | None = None) -> None:
        """Answer generation requests for ``model`` (``None``: any model without its
        own values) with these field values (``{"$.total": 12.5}``); fields missing
        from ``values`` are omitted."""
        with self._lock:
            self._extraction[model] = dict(values)

    @property
    def in_flight(self) -> int:
        """Requests being answered right now."""
        with self._lock:
            return self._in_flight

    def pending(self, endpoint: Endpoint) -> int:
        """Scripted behaviours not used yet."""
        with self._lock:
            return len(self._scripts[endpoint])

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received, in arrival order."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, endpoint: Endpoint) -> list[ReceivedRequest]:
        """The requests one endpoint received."""
        return [request for request in self.requests if request.endpoint == endpoint]

    def reset(self) -> None:
        """Forget scripts, extraction values, requests and the concurrency peak."""
        with self._lock:
            for queue in self._scripts.values():
                queue.clear()
            self._extraction.clear()
            self._requests.clear()
            self.max_in_flight = 0

    # -- serving -----------------------------------------------------------------

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        path = handler.path.split("?", 1)[0]
        endpoint = next((name for name in ENDPOINTS if path.endswith("/" + name)), "")
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        received = ReceivedRequest(
            method=handler.command,
            path=path,
            endpoint=endpoint,
            headers={name.lower(): value for name, value in handler.headers.items()},
            raw=raw,
            body=body,
            received_at=time.time(),
        )
        with self._lock:
            self._requests.append(received)
            queue = self._scripts.get(endpoint)
            behaviour = queue.popleft() if queue else ok()
            extraction = dict(self._extraction)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            time.sleep(self.latency + behaviour.delay)
        finally:
            # Out of flight before the answer leaves: once the client has it, it may
            # send its next request at once, and that one must not find this one
            # still counted (the peak would overshoot the client's limit by one).
            with self._lock:
                self._in_flight -= 1
        if not endpoint:
            handler.send_json(404, {"error": {"message": f"no route {path}"}})
        elif behaviour.kind == "status":
            self._send_error(handler, received, behaviour)
        elif behaviour.kind == "invalid_body":
            handler.send_bytes(200, b"<html>proxy error</html>", "text/html")
        elif endpoint == "embeddings":
            handler.send_json(200, _embeddings(body))
        else:
            handler.send_json(200, _answer(endpoint, body, received.raw, behaviour, extraction))

    def _send_error(
        self, handler: _Handler, received: ReceivedRequest, behaviour: Behaviour
    ) -> None:
        sent_key = received.headers.get("x-api-key") or received.headers.get(
            "authorization", ""
        ).removeprefix("Bearer ")
        # Real providers echo (part of) a rejected key; echoing it whole checks that
        # adapters redact it from their errors.
        message = behaviour.message.replace("{key}", sent_key)
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(behaviour.status, "api_error")
        if received.endpoint == "messages":
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            payload = {"error": {"message": message, "type": kind, "code": None}}
        handler.send_json(behaviour.status, payload, behaviour.headers)


def _answer(
    endpoint: str,
    body: Any,
    raw: bytes,
    behaviour: Behaviour,
    extraction: dict[str | None, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    task = find_task(body)
    asked = body.get("model") if isinstance(body, dict) else None
    if behaviour.payload is not None:
        answer = behaviour.payload
    elif task is not None and "expected_fields" in task:
        extraction = extraction or {}
        answer = generation_answer(task, extraction.get(asked, extraction.get(None)))
    else:
        answer = default_answer(task)
    answer_text = json.dumps(answer)
    if behaviour.kind == "malformed":
        answer_text = behaviour.text
    elif behaviour.kind == "truncated":
        answer_text = answer_text[: max(10, len(answer_text) // 3)]
    input_tokens = _tokens(raw.decode("utf-8", errors="replace"))
    output_tokens = _tokens(answer_text)
    model = body.get("model", "unknown") if isinstance(body, dict) else "unknown"
    if endpoint == "responses":
        return _responses_answer(behaviour, answer_text, model, input_tokens, output_tokens)
    if endpoint == "messages":
        return _messages_answer(
            behaviour, answer, answer_text, body, model, input_tokens, output_tokens
        )
    return _chat_answer(behaviour, answer_text, model, input_tokens, output_tokens)


def _responses_answer(
    behaviour: Behaviour, text: str, model: str, input_tokens: int, output_tokens: int
) -> dict[str, Any]:
    if behaviour.kind == "refusal":
        content = [{"type": "refusal", "refusal": behaviour.text}]
    else:
        content = [{"type": "output_text", "text": text, "annotations": []}]
    incomplete = behaviour.kind == "truncated"
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "error": None,
        "model": f"{model}-2025-01-01",
        "output": [
            # Reasoning models put a reasoning item first; adapters must skip it.
            {"type": "reasoning", "id": "rs_fake", "summary": []},
            {
                "type": "message",
                "id": "msg_fake",
                "status": "incomplete" if incomplete else "completed",
                "role": "assistant",
                "content": content,
            },
        ],
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": input_tokens // 2},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 3},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def _messages_answer(
    behaviour: Behaviour,
    answer: dict[str, Any],
    text: str,
    body: Any,
    model: str,
    input_tokens: int,
    output_tokens: int,
) -> dict[str, Any]:
    tool_name = "judge_output"
    if isinstance(body, dict) and isinstance(body.get("tool_choice"), dict):
        tool_name = body["tool_choice"].get("name", tool_name)
    if behaviour.kind == "refusal":
        content: list[dict[str, Any]] = [{"type": "text", "text": behaviour.text}]
        stop_reason = "refusal"
    elif behaviour.kind in ("malformed", "truncated"):
        content = [{"type": "text", "text": text}]
        stop_reason = "max_tokens" if behaviour.kind == "truncated" else "end_turn"
    else:
        content = [{"type": "tool_use", "id": "toolu_fake", "name": tool_name, "input": answer}]
        stop_reason = "tool_use"
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 5,
            "output_tokens": output_tokens,
        },
    }


def _chat_answer(
    behaviour: Behaviour, text: str, model: str, input_tokens: int, output_tokens: int
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    finish_reason = "stop"
    if behaviour.kind == "refusal":
        message = {"role": "assistant", "content": None, "refusal": behaviour.text}
    elif behaviour.kind == "truncated":
        finish_reason = "length"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
    }


def _embeddings(body: Any) -> dict[str, Any]:
    body = body if isinstance(body, dict) else {}
    texts = body.get("input", [])
    if isinstance(texts, str):
        texts = [texts]
    dimensions = int(body.get("dimensions") or 64)
    words = sum(len(re.findall(r"\w+", str(text))) for text in texts)
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": index, "embedding": embed(str(text), dimensions)}
            for index, text in enumerate(texts)
        ],
        "model": body.get("model", "fake-embedding"),
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }


def iter_strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (to search request bodies)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from iter_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from iter_strings(item)
