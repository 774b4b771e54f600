"""The judge contract: adapters talk to providers, :class:`ModelJudge` turns their
answers into checked :class:`JudgeOutput`, whatever the provider."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import copy
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import Field

from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.secrets import redact_data, redact_text
from docevals_mlflow.errors import ProviderError
from docevals_mlflow.judges.output import JudgeOutput, OutputParseError, parse_judge_output
from docevals_mlflow.judges.repeats import cache_bypassed
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.usage import Usage, total_usage

T = TypeVar("T")
ReplyStatus = Literal["complete", "refused", "truncated"]
ResultStatus = Literal["ok", "repaired", "malformed", "refused", "truncated", "error"]


@dataclass
class RepairHint:
    """Asked of a model whose previous answer was not valid JSON for the schema."""

    previous: str
    problem: str
    keep: str = "your verdicts"
    """What the model should keep from its previous answer (judges keep verdicts,
    generators the values they read)."""

    def message(self) -> str:
        """The follow-up instruction sent with the repair attempt."""
        return (
            "Your previous answer could not be used: "
            f"{self.problem}. Answer again with only one JSON object that matches the "
            f"schema exactly, keeping {self.keep}."
        )


@dataclass
class AdapterReply:
    """One provider answer."""

    text: str | None = None
    data: Any = None
    """An already-parsed object, for providers that return one."""
    status: ReplyStatus = "complete"
    refusal: str | None = None
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class Adapter(Protocol):
    """A provider (or any model client) that answers a :class:`JudgeRequest`."""

    provider: str
    model: str

    async def agenerate(
        self, request: JudgeRequest, *, repair: RepairHint | None = None
    ) -> AdapterReply:
        """Send the request (and, for a repair, the previous answer and the problem)."""
        ...


def identity(adapter: Any) -> dict[str, Any]:
    """Provider, model and sampling settings of an adapter (for reports and caches)."""
    described = getattr(adapter, "describe", None)
    if callable(described):
        return dict(described())
    return {
        "provider": getattr(adapter, "provider", "custom"),
        "model": getattr(adapter, "model", getattr(adapter, "__name__", type(adapter).__name__)),
    }


class CallableAdapter:
    """A plain function as an adapter: ``fn(request)`` (sync or async) returning the
    answer: a :class:`JudgeOutput` (or, for ground-truth generation, a claims object),
    a matching dict, or matching JSON text. A function that accepts ``repair`` also
    receives the :class:`RepairHint` of a repair attempt."""

    def __init__(
        self, fn: Callable[..., Any], *, provider: str = "custom", model: str | None = None
    ) -> None:
        self.fn = fn
        self.provider = provider
        self.model = model or getattr(fn, "__name__", type(fn).__name__)
        self._accepts_repair = "repair" in inspect.signature(fn).parameters

    def describe(self) -> dict[str, Any]:
        """Provider and model."""
        return {"provider": self.provider, "model": self.model}

    async def agenerate(
        self, request: JudgeRequest, *, repair: RepairHint | None = None
    ) -> AdapterReply:
        """Call the function; a sync function runs in a worker thread."""
        kwargs = {"repair": repair} if self._accepts_repair else {}
        if inspect.iscoroutinefunction(self.fn):
            value = await self.fn(request, **kwargs)
        else:
            value = await asyncio.to_thread(self.fn, request, **kwargs)
        if isinstance(value, AdapterReply):
            return value
        if isinstance(value, str):
            return AdapterReply(text=value, usage=Usage(requests=1))
        return AdapterReply(data=value, usage=Usage(requests=1))


def as_adapter(value: Any) -> Any:
    """An adapter object, or a function wrapped as one."""
    if hasattr(value, "agenerate"):
        return value
    if callable(value):
        return CallableAdapter(value)
    raise TypeError(f"{type(value).__name__} is neither an adapter nor a callable")


class JudgeResult(DocEvalsModel):
    """A judgement and how it was obtained."""

    output: JudgeOutput | None
    status: ResultStatus
    error: str | None = None
    raw_text: str | None = None
    """The model's text when it could not be used (malformed, refused, truncated)."""
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 1
    latency_seconds: float = 0.0
    cached: bool = False
    judge: dict[str, Any] = Field(default_factory=dict)
    instructions_sha256: str = ""
    request_fingerprint: str = ""


@runtime_checkable
class Judge(Protocol):
    """Anything that judges a request asynchronously."""

    name: str

    async def ajudge(self, request: JudgeRequest) -> JudgeResult:
        """Judge one request."""
        ...


class ModelJudge:
    """The one judge: an adapter (OpenAI, Anthropic, a local server, your function)
    plus checked output.

    A malformed answer gets one repair attempt (the model is shown its answer and the
    problem); if that fails too, the result is ``malformed`` with the text kept.
    Refusals and truncated answers are reported as such, never parsed as verdicts.
    An adapter error (after its own retries) becomes an ``error`` result; it never
    escapes into the evaluation.
    """

    def __init__(self, adapter: Any, *, name: str | None = None, cache: Any = None) -> None:
        self.adapter = as_adapter(adapter)
        details = identity(self.adapter)
        self.name = name or f"{details.get('provider', 'custom')}:{details.get('model', 'model')}"
        self.cache = cache

    def describe(self) -> dict[str, Any]:
        """Provider, model and sampling settings."""
        return identity(self.adapter)

    async def ajudge(self, request: JudgeRequest) -> JudgeResult:
        """Judge ``request`` (from the cache when it holds this exact request)."""
        details = self.describe()
        # Hashing the request (canonical JSON of the whole task) is the costliest
        # step outside the network; do it once per call.
        fingerprint = request.fingerprint
        key = None
        # A repeat (``--repeats``) must be a real call: no cached answer, none stored.
        if self.cache is not None and not cache_bypassed():
            key = self.cache.key(request, details, fingerprint=fingerprint)
            cached: JudgeResult | None = self.cache.get(key)
            if cached is not None:
                return cached.model_copy(update={"cached": True, "usage": Usage()})
        started = time.perf_counter()
        result = await self._judge(request)
        result = result.model_copy(
            update={
                "latency_seconds": time.perf_counter() - started,
                "judge": details,
                "instructions_sha256": request.instructions_sha256,
                "request_fingerprint": fingerprint,
            }
        )
        if self.cache is not None and key is not None and result.status in ("ok", "repaired"):
            self.cache.put(key, result)
        return result

    def judge(self, request: JudgeRequest) -> JudgeResult:
        """Synchronous :meth:`ajudge`."""
        return run_sync(self.ajudge(request))

    async def _judge(self, request: JudgeRequest) -> JudgeResult:
        answer = await ask_structured(self.adapter, request, parse_judge_output)
        return JudgeResult(
            output=answer.value,
            status=answer.status,
            error=answer.error,
            raw_text=answer.raw_text,
            usage=answer.usage,
            attempts=answer.attempts,
        )


@dataclass(frozen=True)
class StructuredAnswer(Generic[T]):
    """What :func:`ask_structured` got from a model, and how.

    ``value`` is set exactly when ``status`` is ``ok`` or ``repaired``; otherwise
    ``error`` says what went wrong and ``raw_text`` keeps the unusable text.
    """

    value: T | None
    status: ResultStatus
    error: str | None = None
    raw_text: str | None = None
    usage: Usage = field(default_factory=Usage)
    """Usage of every attempt together."""
    attempts: int = 1

    @property
    def usable(self) -> bool:
        """Whether ``value`` holds a parsed answer."""
        return self.status in ("ok", "repaired")


async def ask_structured(
    adapter: Any,
    request: JudgeRequest,
    parse: Callable[[Any], T],
    *,
    keep: str = "your verdicts",
) -> StructuredAnswer[T]:
    """Ask ``adapter`` for a structured answer and parse it with ``parse``.

    ``parse`` receives what the model returned (already-parsed data, or its text) and
    raises :class:`~docevals_mlflow.judges.output.OutputParseError` when the answer is
    unusable. A malformed answer gets one repair attempt (the model is shown its
    answer and the problem, and asked to keep ``keep``); if that fails too the answer
    is ``malformed`` with the text kept. Refusals and truncated answers are reported as
    such and never parsed. An adapter exception (after the adapter's own retries)
    becomes an ``error`` answer: nothing escapes.

    Every registered secret (see :mod:`docevals_mlflow.core.secrets`) is removed
    from each reply before it is parsed and from every error, whatever the adapter:
    what a model says goes into reports, caches and checkpoints, and a model can
    quote the key it was called with.
    """
    usages: list[Usage] = []
    try:
        reply = _redacted(await adapter.agenerate(request))
    except Exception as exc:  # adapters retry on their own; what remains is reported
        return StructuredAnswer(
            value=None, status="error", error=_error_text(exc), usage=failure_usage(exc)
        )
    usages.append(reply.usage)
    if reply.status != "complete":
        return _unusable(reply, usages)
    try:
        return StructuredAnswer(value=_parse(reply, parse), status="ok", usage=total_usage(usages))
    except OutputParseError as first:
        hint = RepairHint(previous=first.text, problem=str(first), keep=keep)
    return await _repair(adapter, request, parse, hint, usages)


async def _repair(
    adapter: Any,
    request: JudgeRequest,
    parse: Callable[[Any], T],
    hint: RepairHint,
    usages: list[Usage],
) -> StructuredAnswer[T]:
    """The one repair attempt of :func:`ask_structured`, after a malformed answer."""
    try:
        repaired = _redacted(await adapter.agenerate(request, repair=hint))
    except Exception as exc:
        usages.append(failure_usage(exc))
        return StructuredAnswer(
            value=None,
            status="error",
            error=f"repair attempt failed: {_error_text(exc)}",
            raw_text=hint.previous,
            usage=total_usage(usages),
            attempts=2,
        )
    usages.append(repaired.usage)
    if repaired.status != "complete":
        return _unusable(repaired, usages, attempts=2)
    try:
        value = _parse(repaired, parse)
    except OutputParseError as second:
        return StructuredAnswer(
            value=None,
            status="malformed",
            error=f"{hint.problem}; after one repair attempt: {second}",
            raw_text=second.text,
            usage=total_usage(usages),
            attempts=2,
        )
    return StructuredAnswer(value=value, status="repaired", usage=total_usage(usages), attempts=2)


def _redacted(reply: AdapterReply) -> AdapterReply:
    """``reply`` without registered secrets in its text, data or refusal (the same
    object when it held none)."""
    text = None if reply.text is None else redact_text(reply.text)
    data = redact_data(reply.data)
    refusal = None if reply.refusal is None else redact_text(reply.refusal)
    if text is reply.text and data is reply.data and refusal is reply.refusal:
        return reply
    # A shallow copy: the adapter may keep its reply, and any reply-like object works.
    copied = copy.copy(reply)
    copied.text, copied.data, copied.refusal = text, data, refusal
    return copied


def _parse(reply: AdapterReply, parse: Callable[[Any], T]) -> T:
    if reply.data is not None:
        return parse(reply.data)
    if reply.text is None:
        raise OutputParseError("the answer was empty", "")
    return parse(reply.text)


def _unusable(
    reply: AdapterReply, usages: list[Usage], *, attempts: int = 1
) -> StructuredAnswer[Any]:
    status: ResultStatus
    if reply.status == "refused":
        status, error = "refused", f"the model refused: {reply.refusal or 'no reason given'}"
    else:
        status = "truncated"
        error = "the answer was cut off (output token limit) before it was complete"
    # The model's own words: its text, else its data, else (a refusal without text)
    # the refusal itself; never the JSON of nothing.
    if reply.text is not None:
        text: str | None = reply.text
    elif reply.data is not None:
        text = json.dumps(reply.data, default=str)
    else:
        text = reply.refusal
    return StructuredAnswer(
        value=None,
        status=status,
        error=error,
        raw_text=text,
        usage=total_usage(usages),
        attempts=attempts,
    )


def failure_usage(exc: BaseException) -> Usage:
    """What a failed adapter call used: the usage an HTTP adapter attached to its
    :class:`~docevals_mlflow.errors.ProviderError` (every attempt is a request), else
    the attempts the error counts; nothing for other exceptions."""
    if isinstance(exc, ProviderError):
        if isinstance(exc.usage, Usage):
            return exc.usage
        return Usage(requests=exc.attempts)
    return Usage()


def _error_text(exc: BaseException) -> str:
    # HTTP adapters redact their own errors; a function adapter's need not be.
    return redact_text(f"{type(exc).__name__}: {exc}")


_THREADS = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="docevals-sync")


def run_sync(awaitable: Coroutine[Any, Any, T] | Awaitable[T]) -> T:
    """Run a coroutine to completion from synchronous code, even inside a running event
    loop (Jupyter): there it runs on a fresh loop in a worker thread."""

    async def wrapped() -> T:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrapped())
    # The caller's context variables (a repeat's cache bypass) go with it.
    context = contextvars.copy_context()
    return _THREADS.submit(context.run, asyncio.run, wrapped()).result()
