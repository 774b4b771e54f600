"""What every HTTP provider adapter shares: settings, the API key, the transport,
the request body's common parts and per-call usage accounting.

Every adapter takes its provider options (model, temperature, ...) as keyword
arguments and its transport as one :class:`TransportSettings` value (``http=``); the
former one-by-one transport keywords go through the shim in
:mod:`~docevals_mlflow.judges.adapters.deprecated`.

A subclass says where to send (:meth:`HttpAdapter.url`), what to send
(:meth:`HttpAdapter.build_body` from :meth:`HttpAdapter.wire_part`,
:meth:`HttpAdapter.headers`) and how to read the answer
(:meth:`HttpAdapter.parse_reply`, :meth:`HttpAdapter.parse_usage`);
:meth:`HttpAdapter.agenerate` does the rest.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Self, Unpack

from docevals_mlflow.core.secrets import (
    header_credentials,
    redact_data,
    register_secrets,
    url_credentials,
)
from docevals_mlflow.errors import ConfigurationError, ProviderError
from docevals_mlflow.judges.adapters.attachments import (
    AttachmentPolicy,
    Part,
    attachment_parts,
)
from docevals_mlflow.judges.adapters.body import RequestBody
from docevals_mlflow.judges.adapters.deprecated import (
    DeprecatedTransportOptions,
    transport_settings,
)
from docevals_mlflow.judges.adapters.options import check_sampling, read_api_key
from docevals_mlflow.judges.adapters.usage_log import UsageAccounting
from docevals_mlflow.judges.adapters.wire import as_dict
from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.transport import ProviderResponse, Transport, public_url, redact
from docevals_mlflow.judges.usage import PriceTable, Usage

if TYPE_CHECKING:
    from docevals_mlflow.judges.providers import AdapterSettings

Sender = Callable[[dict[str, Any]], Any]
"""Sends one request body and returns the provider's JSON response as data (a sync
function, or an async one): the transport seam of :class:`HttpAdapter` (``sender=``)."""


def _checked_sender(provider: str, sender: Sender | None) -> Sender | None:
    if sender is not None and not callable(sender):
        raise ConfigurationError(
            f"{provider}: sender must be a function sender(body) -> response data",
            path="sender",
        )
    return sender


class HttpAdapter(RequestBody, UsageAccounting):
    """Base of the HTTP adapters (OpenAI Responses, Anthropic Messages, OpenAI-compatible
    chat completions).

    Args:
        model: the model id; each provider has a default.
        api_key: the key; when omitted it is read from the provider's environment
            variable (never from a file).
        base_url: the API root (``https://api.openai.com/v1`` style, no trailing
            endpoint).
        temperature, top_p: sampling settings, sent only when set.
        max_output_tokens: the output token limit, sent only when set (Anthropic
            requires one and defaults to 4096).
        prices: prices for ``Usage.cost_usd``; ``None`` leaves cost unknown.
        http: timeouts, retries, limits, extra headers and body keys and the
            ``httpx.AsyncClient`` (see :class:`TransportSettings`); default settings
            when omitted.
        api_key_env: the variable the key is read from instead of the provider's own.
        sender: a function ``sender(body) -> response_data`` (sync or async) used
            instead of HTTP: it receives the request body this adapter built and
            returns the provider's JSON response, which is read as an HTTP response
            would be. For tests and for clients of your own; no key is then
            required, and retries, limits and headers do not apply. The seed
            library's ``sender=`` seam.

    The fields of :class:`TransportSettings` are also accepted one by one as keyword
    arguments (``timeout=``, ``client=``, ...), as they were before ``http=``; that
    form is deprecated and warns.
    """

    provider: str = "custom"
    default_base_url: ClassVar[str | None] = None
    default_model: ClassVar[str | None] = None
    api_key_env: ClassVar[str | None] = None
    requires_api_key: ClassVar[bool] = True
    api_path: ClassVar[str | None] = None
    """Where requests go below ``base_url`` (``"messages"``, ...), for :meth:`url`."""
    policy: AttachmentPolicy | None = None
    """The attachment settings an adapter with attachment arguments sets."""

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        max_output_tokens: int | None = None,
        prices: PriceTable | None = None,
        http: TransportSettings | None = None,
        api_key_env: str | None = None,
        sender: Sender | None = None,
        **deprecated: Unpack[DeprecatedTransportOptions],
    ) -> None:
        settings = transport_settings(type(self).__name__, http, deprecated)
        chosen_model = model or self.default_model
        if not chosen_model:
            raise ConfigurationError(f"{self.provider}: a model is required", path="model")
        chosen_url = base_url or self.default_base_url
        if not chosen_url:
            raise ConfigurationError(
                f"{self.provider}: base_url is required (the server's API root, such as "
                "http://localhost:8000/v1)",
                path="base_url",
            )
        check_sampling(temperature, top_p, max_output_tokens)
        self.model: str = chosen_model
        self.base_url = chosen_url.rstrip("/")
        self.temperature = temperature
        self.top_p = top_p
        self.max_output_tokens = max_output_tokens
        self.prices = prices
        self.http = settings
        self.sender = _checked_sender(self.provider, sender)
        self._api_key = read_api_key(
            self.provider,
            api_key,
            api_key_env or self.api_key_env,
            # A sender replaces the HTTP call, and with it the need for a key.
            required=self.requires_api_key and sender is None,
        )
        # The key, credential headers and the base URL's user-info: removed from this
        # adapter's messages, and registered process-wide so that every report,
        # cache entry and checkpoint written later is redacted of them too.
        secrets = [
            self.api_key,
            *header_credentials(settings.extra_headers),
            *url_credentials(self.base_url),
        ]
        self._secrets = tuple(dict.fromkeys(secret for secret in secrets if secret))
        register_secrets(*self._secrets)
        self.transport = Transport.from_settings(
            settings,
            provider=self.provider,
            endpoint=public_url(self.base_url),
            secrets=self._secrets,
        )
        self._start_records()

    @classmethod
    def from_settings(cls, settings: AdapterSettings, **options: Any) -> Self:
        """The adapter a judge provider builds from configuration (see
        :mod:`docevals_mlflow.judges.providers`): ``settings``' model, key, base URL,
        sampling settings, prices and transport settings, plus this adapter's own
        ``options``. A provider whose adapter derives from this class can use
        ``factory=MyAdapter.from_settings``."""
        return cls(
            model=settings.model,
            api_key=settings.api_key,
            base_url=settings.base_url,
            temperature=settings.temperature,
            top_p=settings.top_p,
            max_output_tokens=settings.max_output_tokens,
            prices=settings.prices,
            http=settings.http,
            **options,
        )

    @property
    def extra_body(self) -> dict[str, Any]:
        """Keys merged into (and overriding) every request body."""
        return dict(self.http.extra_body)

    @property
    def extra_headers(self) -> dict[str, str]:
        """Headers added to every request."""
        return dict(self.http.extra_headers)

    # -- what subclasses provide -------------------------------------------------

    def url(self) -> str:
        """The endpoint URL: ``{base_url}/{api_path}``."""
        if self.api_path is None:
            raise NotImplementedError
        return f"{self.base_url}/{self.api_path}"

    def headers(self) -> dict[str, str]:
        """Request headers, credentials included."""
        return dict(self.http.extra_headers)

    def build_body(self, request: JudgeRequest, repair: RepairHint | None = None) -> dict[str, Any]:
        """The JSON body for ``request`` (and, for a repair, the follow-up turns).

        Reads (and, where needed, renders) attachment files; call it off the event loop.
        """
        raise NotImplementedError

    def parse_reply(self, data: Any) -> AdapterReply:
        """The answer in a 2xx response body (usage is filled in by the caller).

        Raises:
            ProviderError: the body does not have the provider's response shape.
        """
        raise NotImplementedError

    def parse_usage(self, data: Any) -> Usage:
        """The token counts in a 2xx response body."""
        raise NotImplementedError

    def describe_extra(self) -> dict[str, Any]:
        """Adapter-specific settings for :meth:`describe`."""
        return {}

    # -- shared behaviour --------------------------------------------------------

    @property
    def api_key(self) -> str | None:
        """The API key (shown as nothing: read it only to build a header)."""
        return self._api_key.reveal() if self._api_key is not None else None

    def bearer_headers(self) -> dict[str, str]:
        """The extra headers plus ``authorization: Bearer <key>`` when a key is set."""
        headers = dict(self.http.extra_headers)
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def attachment_policy(self) -> AttachmentPolicy:
        """What this provider accepts as attachments: the ``policy`` the adapter set
        from its attachment arguments, else the default for its provider label."""
        if self.policy is not None:
            return self.policy
        return AttachmentPolicy(provider_label=self.provider)

    def redact(self, text: str) -> str:
        """``text`` without this adapter's secrets (nor any other registered one)."""
        return redact(text, self._secrets)

    def parts(self, request: JudgeRequest) -> list[Part]:
        """The labelled attachments of ``request`` under this adapter's policy."""
        return attachment_parts(request.references, self.attachment_policy())

    def describe(self) -> dict[str, Any]:
        """Provider, model, base URL (without credentials), sampling settings, then the
        adapter's own (:meth:`describe_extra`) and attachment settings, for reports and
        cache keys. Never contains the API key."""
        described: dict[str, Any] = {
            "provider": self.provider,
            "model": self.model,
            "base_url": public_url(self.base_url, self._secrets),
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_output_tokens": self.max_output_tokens,
        }
        described.update(self.describe_extra())
        if self.policy is not None:
            described.update(self.policy.describe())
        if self.http.extra_body:
            # Round-tripped through text so that a secret nested anywhere is removed.
            described["extra_body"] = json.loads(
                self.redact(json.dumps(dict(self.http.extra_body), sort_keys=True, default=str))
            )
        return described

    def shape_error(self, problem: str, data: Any = None) -> ProviderError:
        """A :class:`ProviderError` for a 2xx body that is not a usable response."""
        # Redacted before it is cut, so that no fragment of a secret survives the cut.
        shown = "" if data is None else f": {self.redact(json.dumps(data, default=str))[:300]}"
        return ProviderError(
            self.redact(f"{self.provider} returned an unexpected response ({problem}){shown}"),
            provider=self.provider,
            status_code=200,
        )

    def with_cost(self, usage: Usage, response_model: str | None = None) -> Usage:
        """``usage`` with its cost, when a price table knows the model (a call
        without a price keeps ``cost_usd=None``: unknown, never $0)."""
        if self.prices is None:
            return usage
        cost = self.prices.cost(self.provider, self.model, usage)
        if cost is None and response_model and response_model != self.model:
            cost = self.prices.cost(self.provider, response_model, usage)
        return usage.model_copy(update={"cost_usd": cost})

    _SETTINGS: ClassVar[tuple[str, ...]] = (
        "temperature",
        "top_p",
        "max_output_tokens",
        "reasoning_effort",
    )

    def with_settings(self, **settings: Any) -> HttpAdapter:
        """A copy of this adapter with other sampling settings (``temperature``,
        ``top_p``, ``max_output_tokens``, ``reasoning_effort`` where the adapter has
        it). The copy shares the transport (so the same limits apply) and keeps its
        own usage records.

        Raises:
            ConfigurationError: a setting this adapter does not have, or an invalid value.
        """
        unknown = sorted(
            name for name in settings if name not in self._SETTINGS or not hasattr(self, name)
        )
        if unknown:
            raise ConfigurationError(
                f"{self.provider}: cannot change {', '.join(unknown)}", path=unknown[0]
            )
        check_sampling(
            settings.get("temperature"), settings.get("top_p"), settings.get("max_output_tokens")
        )
        copied = copy.copy(self)
        for name, value in settings.items():
            setattr(copied, name, value)
        copied._start_records()
        return copied

    async def agenerate(
        self, request: JudgeRequest, *, repair: RepairHint | None = None
    ) -> AdapterReply:
        """Send ``request`` and return the answer with this call's own usage.

        Under concurrency read the usage from the returned reply (or
        :attr:`usage_records`), not from :attr:`last_usage`, which is whichever call
        finished last.

        Raises:
            ProviderError: the provider failed after retries, or answered with
                something that is not a response.
            InputFileNotFoundError: an attachment file is missing.
        """
        # Reading and rendering attachments is blocking work.
        body = await asyncio.to_thread(self.build_body, request, repair)
        started = time.perf_counter()
        response = None
        try:
            response = await self._send(body)
            reply = self.parse_reply(response.data)
            response_model = as_dict(response.data).get("model")
            if not isinstance(response_model, str):
                response_model = None
            # Every HTTP attempt is a request, the retried ones included.
            usage = self.with_cost(
                self.parse_usage(response.data).model_copy(update={"requests": response.attempts}),
                response_model,
            )
        except ProviderError as exc:
            self._record_failure(exc, response, started, repair)
            raise
        reply.usage = usage
        self._record(
            started,
            repair is not None,
            status=reply.status,
            usage=usage,
            attempts=response.attempts,
            http_status=response.status_code,
            response_model=response_model,
        )
        return reply

    async def _send(self, body: dict[str, Any]) -> ProviderResponse:
        """``body`` sent over HTTP, or handed to the ``sender`` when there is one."""
        if self.sender is None:
            return await self.transport.send(
                "POST", self.url(), json_body=body, headers=self.headers()
            )
        try:
            if inspect.iscoroutinefunction(self.sender):
                data = await self.sender(body)
            else:
                data = await asyncio.to_thread(self.sender, body)
                if inspect.isawaitable(data):
                    data = await data
        except ProviderError:
            raise
        except Exception as exc:  # a sender's failure is a failed call, like HTTP's
            raise ProviderError(
                self.redact(f"{self.provider} sender failed: {type(exc).__name__}: {exc}"),
                provider=self.provider,
            ) from exc
        # Redacted like an HTTP response body: a key quoted back must not reach reports.
        return ProviderResponse(status_code=200, data=redact_data(data))

    def _record_failure(
        self,
        exc: ProviderError,
        response: ProviderResponse | None,
        started: float,
        repair: RepairHint | None,
    ) -> None:
        # A failed call still made requests (a 2xx body that is no response counts
        # one); they go with the error so that callers can count them.
        attempts = response.attempts if response is not None else max(exc.attempts, 1)
        failed = self.with_cost(Usage(requests=attempts))
        exc.usage = failed
        self._record(
            started,
            repair is not None,
            status="error",
            usage=failed,
            attempts=attempts,
            http_status=exc.status_code,
            error=self.redact(str(exc)),
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.describe()['base_url']!r})"
        )
