"""A scripted judge for your own tests: answers from a function or a list, no network.

:class:`ScriptedAdapter` is an adapter (like ``httpx.MockTransport`` is a transport):
give it to :class:`~docevals_mlflow.LLMJudgeMetric`, a
:class:`~docevals_mlflow.JudgeVariant`, a :class:`~docevals_mlflow.ModelJudge` or a
ground-truth panel, and it answers every request from your script, counts the calls
and records what it was asked. :func:`answer` writes a well-formed judge answer
for every claim of a request::

    from docevals_mlflow import LLMJudgeMetric
    from docevals_mlflow.judges.testing import ScriptedAdapter, answer

    judge = ScriptedAdapter(lambda request: answer(request, prediction="incorrect"))
    result = LLMJudgeMetric(judge).evaluate(case)
    assert result.verdict == "fail" and judge.calls == 1
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Iterable
from typing import Any

from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage

DEFAULT_USAGE = Usage(requests=1, input_tokens=100, output_tokens=20, total_tokens=120)
"""What each scripted call reports using, unless told otherwise."""

Respond = Callable[..., Any]
"""``respond(request)`` or ``respond(request, repair)`` returning an answer."""


def answer(
    request: JudgeRequest,
    *,
    prediction: str | dict[str, str] = "correct",
    reference: str | dict[str, str] = "matched",
    rubric: dict[str, str] | None = None,
    summary: str = "scripted",
) -> dict[str, Any]:
    """A well-formed judge answer deciding every claim ``request`` sends.

    Args:
        prediction: the verdict of every prediction claim (``correct``,
            ``incorrect``, ``not_verifiable``, ``ambiguous``), or ``{claim_id:
            verdict}`` for some of them (the others are ``correct``).
        reference: the same for reference claims (``matched``, ``missing``,
            ``ambiguous``; default ``matched``).
        rubric: ``{criterion: verdict}`` (``pass``, ``fail``, ``uncertain``).
        summary: the answer's summary.
    """

    def pick(choice: str | dict[str, str], claim_id: str, default: str) -> str:
        return choice.get(claim_id, default) if isinstance(choice, dict) else choice

    return {
        "summary": summary,
        "prediction_claims": [
            {"claim_id": claim_id, "verdict": pick(prediction, claim_id, "correct")}
            for claim_id in request.prediction_claim_ids()
        ],
        "reference_claims": [
            {"claim_id": claim_id, "verdict": pick(reference, claim_id, "matched")}
            for claim_id in request.reference_claim_ids()
        ],
        "rubric_results": [
            {"criterion": criterion, "verdict": verdict}
            for criterion, verdict in (rubric or {}).items()
        ],
    }


def _takes_repair(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes a second argument (the repair hint)."""
    try:
        inspect.signature(fn).bind(None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (some builtins): call it with one
        return False
    return True


class ScriptedAdapter:
    """An in-memory adapter that answers from a script, for tests.

    Args:
        script: a function ``respond(request)`` or ``respond(request, repair)`` (the
            :class:`~docevals_mlflow.judges.judge.RepairHint` of a repair attempt,
            else ``None``), or a list of answers given one per call, in order. An
            answer is a dict or :class:`~docevals_mlflow.judges.output.JudgeOutput`
            (parsed as the model's structured output), a string (the model's text,
            JSON or not), or an :class:`~docevals_mlflow.judges.judge.AdapterReply`
            (to script a refusal or a truncated answer). An exception, returned in
            the list or raised by the function, is raised from the call, as a
            provider failure would be.
        provider, model, temperature: who the judge says it is (its ``describe()``).
        delay: seconds each call waits before answering (to test concurrency).
        usage: what each call reports using (an ``AdapterReply`` keeps its own).

    Attributes:
        calls: how many calls were made, repair attempts included.
        requests: the request of every call, in order.
        repairs: the repair hint of every call (``None`` for first attempts).
        in_flight, max_in_flight: calls running now, and the most at once.
    """

    def __init__(
        self,
        script: Respond | Iterable[Any],
        *,
        provider: str = "scripted",
        model: str = "judge-1",
        temperature: float | None = 0.0,
        delay: float = 0.0,
        usage: Usage = DEFAULT_USAGE,
    ) -> None:
        if callable(script):
            self._respond: Respond | None = script
            self._answers: list[Any] = []
            self._takes_repair = _takes_repair(script)
        else:
            self._respond = None
            self._answers = list(script)
            self._takes_repair = False
        self.provider = provider
        self.model = model
        self.temperature = temperature
        self.delay = delay
        self.usage = usage
        self.calls = 0
        self.requests: list[JudgeRequest] = []
        self.repairs: list[RepairHint | None] = []
        self.in_flight = 0
        self.max_in_flight = 0
        # Sync evaluations of a notebook run calls on worker threads.
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        """Provider, model and temperature: the judge's identity in reports and caches."""
        return {"provider": self.provider, "model": self.model, "temperature": self.temperature}

    def _next(self, request: JudgeRequest, repair: RepairHint | None, call: int) -> Any:
        if self._respond is not None:
            if self._takes_repair:
                return self._respond(request, repair)
            return self._respond(request)
        if call >= len(self._answers):
            raise AssertionError(
                f"ScriptedAdapter was called {call + 1} times but scripts "
                f"{len(self._answers)} answer(s)"
            )
        return self._answers[call]

    async def agenerate(
        self, request: JudgeRequest, *, repair: RepairHint | None = None
    ) -> AdapterReply:
        """The next scripted answer to ``request``."""
        with self._lock:
            call = self.calls
            self.calls += 1
            self.requests.append(request)
            self.repairs.append(repair)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            value = self._next(request, repair, call)
        finally:
            with self._lock:
                self.in_flight -= 1
        if isinstance(value, BaseException):
            raise value
        if isinstance(value, AdapterReply):
            return value
        # A copy per reply: whoever receives a reply may keep (and change) its usage.
        if isinstance(value, str):
            return AdapterReply(text=value, usage=self.usage.model_copy())
        return AdapterReply(data=value, usage=self.usage.model_copy())
