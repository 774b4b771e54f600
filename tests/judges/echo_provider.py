"""An example third-party judge provider, ``echo``, as a plugin package would ship it.

Its adapter speaks a made-up wire format, not OpenAI's or Anthropic's:

* request: ``POST {base_url}/verdicts`` with header ``x-echo-key`` and the body
  ``{"engine": MODEL, "rules": INSTRUCTIONS, "ask": {"p00001": "$.total", ...},
  "expect": ["r00001", ...], "heat": TEMPERATURE}``;
* answer: ``{"verdicts": {"p00001": true, "r00001": false, ...},
  "spent": {"in": N, "out": M}}``, true meaning correct (or matched).

:class:`EchoServer` is such a server on 127.0.0.1: it judges a prediction claim
correct unless its path is in ``wrong`` and records every request it receives.
The tests register :data:`PROVIDER` through an entry point of a package installed
in a temporary folder, and use it from the command line and from configuration files.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from docevals_mlflow.judges.adapters.base import HttpAdapter
from docevals_mlflow.judges.adapters.wire import as_dict, as_int
from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.providers import JudgeProvider
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage

KEY_VARIABLE = "ECHO_JUDGE_KEY"


class EchoAdapter(HttpAdapter):
    """A judge behind an ``echo`` server (see the module docstring)."""

    provider = "echo"
    default_model = "echo-1"
    api_key_env = KEY_VARIABLE

    def url(self) -> str:
        return f"{self.base_url}/verdicts"

    def headers(self) -> dict[str, str]:
        return {**super().headers(), "x-echo-key": self.api_key or ""}

    def build_body(self, request: JudgeRequest, repair: RepairHint | None = None) -> dict[str, Any]:
        claims = request.task["prediction_claims"]
        body: dict[str, Any] = {
            "engine": self.model,
            "rules": request.instructions,
            "ask": {claim["claim_id"]: claim["path"] for claim in claims},
            "expect": request.reference_claim_ids(),
        }
        if self.temperature is not None:
            body["heat"] = self.temperature
        return body

    def parse_reply(self, data: Any) -> AdapterReply:
        verdicts = as_dict(as_dict(data).get("verdicts"))
        if not verdicts:
            raise self.shape_error("no verdicts", data)
        answer = {
            "summary": "echo",
            "prediction_claims": [
                {"claim_id": claim, "verdict": "correct" if good else "incorrect"}
                for claim, good in verdicts.items()
                if claim.startswith("p")
            ],
            "reference_claims": [
                {"claim_id": claim, "verdict": "matched" if good else "missing"}
                for claim, good in verdicts.items()
                if claim.startswith("r")
            ],
            "rubric_results": [],
        }
        return AdapterReply(data=answer)

    def parse_usage(self, data: Any) -> Usage:
        spent = as_dict(as_dict(data).get("spent"))
        used_in, used_out = as_int(spent.get("in")), as_int(spent.get("out"))
        return Usage(
            requests=1,
            input_tokens=used_in,
            output_tokens=used_out,
            total_tokens=used_in + used_out,
        )


PROVIDER = JudgeProvider(
    name="echo",
    factory=EchoAdapter.from_settings,
    default_model="echo-1",
    key_variable=KEY_VARIABLE,
    required=("base_url",),
    supported=frozenset({"temperature"}),
    help="the echo verdict server (key: ECHO_JUDGE_KEY)",
)
"""What the plugin's entry point names."""


@dataclass
class EchoServer:
    """An ``echo`` server on 127.0.0.1 (use it as a context manager)."""

    wrong: set[str] = field(default_factory=set)
    """Prediction paths judged incorrect."""
    received: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)
    """Every request's headers (lower-cased names) and body."""

    def __enter__(self) -> EchoServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                headers = {name.lower(): value for name, value in self.headers.items()}
                server.received.append((headers, body))
                verdicts = {claim: path not in server.wrong for claim, path in body["ask"].items()}
                verdicts.update(dict.fromkeys(body["expect"], True))
                payload = json.dumps({"verdicts": verdicts, "spent": {"in": 7, "out": 3}})
                self.send_response(200 if self.path == "/v1/verdicts" else 404)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"
