"""One judge described as data: provider, model and settings, and the judge
``--judge auto`` picks.

A :class:`JudgeConfig` names a provider (see :mod:`docevals_mlflow.judges.providers`),
a model and its settings and builds a :class:`~docevals_mlflow.judges.judge.ModelJudge`.
API keys are read from environment variables only: a configuration names the
variable (``api_key_env``), never the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from docevals_mlflow.core.model import DocEvalsModel, Number, WholeNumber
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.judges.judge import ModelJudge
from docevals_mlflow.judges.providers import (
    OPTIONAL_SETTINGS,
    AdapterSettings,
    JudgeProvider,
    judge_provider,
    provider_registry,
)
from docevals_mlflow.judges.settings import TransportSettings

if TYPE_CHECKING:
    # Only for annotations: importing httpx here would make every pipeline
    # configuration load the HTTP stack even when no judge is configured.
    import httpx

    from docevals_mlflow.judges.cache import JudgeCache
    from docevals_mlflow.judges.usage import PriceTable

AUTO_PROVIDERS: tuple[str, ...] = ("openai", "anthropic")
"""The providers ``--judge auto`` tries, in order: the first whose key is set."""
MODEL_VARIABLE = "VISUAL_EVAL_MODEL"
"""The judge model when none is given (``--model`` wins)."""
REASONING_EFFORT_VARIABLE = "VISUAL_EVAL_REASONING_EFFORT"
"""OpenAI reasoning effort when none is given (``--reasoning-effort`` wins)."""

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
"""The values OpenAI's ``reasoning.effort`` takes (models accept subsets of them)."""


def check_base_url(url: str) -> None:
    """Refuse a base URL that is not ``http(s)://host[...]`` (a file path, ``ftp://``,
    or ``localhost:8000`` without a scheme would fail later, with a worse message)."""
    parsed = urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        # The URL itself is not echoed: it may carry credentials in its user-info.
        scheme = f"{parsed.scheme}://" if parsed.scheme else "no scheme"
        host = "" if parsed.hostname else ", no host"
        raise ValueError(
            f"base_url must be an http:// or https:// URL with a host (got {scheme}{host})"
        )


def _choices(names: tuple[str, ...]) -> str:
    """``'a', 'b' or 'c'``, as pydantic words a choice."""
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _and(names: list[str] | tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


class JudgeConfig(DocEvalsModel):
    """One judge model: provider, model and settings (see the module docstring).

    ``provider`` names a registered judge provider (see
    :mod:`docevals_mlflow.judges.providers`): ``openai``, ``anthropic``,
    ``openai-compatible`` or one a plugin adds. Its record decides the default model,
    the key variable, the settings it requires and the optional settings it takes.

    ``api_key_env`` is the *name* of the environment variable holding the key; by
    default the provider's own (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``), and none
    for ``openai-compatible`` servers, so an OpenAI key is never sent to another
    server unless a variable is named. ``max_concurrency`` and ``requests_per_minute``
    limit requests per provider and base URL.
    """

    provider: str
    model: str | None = Field(default=None, min_length=1)
    base_url: str | None = Field(default=None, min_length=1)
    api_key_env: str | None = None
    temperature: Number | None = Field(default=None, ge=0)
    top_p: Number | None = Field(default=None, ge=0, le=1)
    max_output_tokens: WholeNumber | None = Field(default=None, ge=1)
    timeout: Number | None = Field(default=None, gt=0)
    max_retries: WholeNumber = Field(default=5, ge=0)
    max_concurrency: WholeNumber | None = Field(default=None, ge=1)
    requests_per_minute: Number | None = Field(default=None, gt=0)
    reasoning_effort: ReasoningEffort | None = None
    name: str | None = Field(default=None, min_length=1)

    @field_validator("provider")
    @classmethod
    def _registered(cls, value: str) -> str:
        registry = provider_registry()
        if value not in registry:
            raise ValueError(
                f"unknown judge provider {value!r}: should be {_choices(registry.names())}"
            )
        try:
            judge_provider(value)
        except ConfigurationError as exc:
            # A plugin that failed to load: say why, as a problem of this file.
            raise ValueError(exc.message) from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> JudgeConfig:
        if self.base_url is not None:
            check_base_url(self.base_url)
        if self.api_key_env is not None and not _VARIABLE_NAME.fullmatch(self.api_key_env):
            raise ValueError(
                "api_key_env must be the name of an environment variable (such as "
                "MY_LLM_KEY), not a key"
            )
        provider = self.provider_record
        missing = provider.missing({name: getattr(self, name) for name in provider.required})
        if missing:
            raise ValueError(f"the {self.provider} judge needs {_and(missing)} (it has no default)")
        for setting in OPTIONAL_SETTINGS:
            if getattr(self, setting) is not None and setting not in provider.supported:
                takers = provider_registry().supporting(setting)
                raise ValueError(
                    f"{setting} applies to {_and(takers)} judges only"
                    if takers
                    else f"no judge provider takes {setting}"
                )
        return self

    @property
    def provider_record(self) -> JudgeProvider:
        """The registered provider this judge uses."""
        return judge_provider(self.provider)

    @property
    def key_variable(self) -> str | None:
        """The environment variable the key is read from (``None``: no key is sent)."""
        return self.api_key_env or self.provider_record.key_variable

    @property
    def label(self) -> str:
        """``name``, else ``provider:model`` (``provider`` when the model is the default)."""
        if self.name:
            return self.name
        return f"{self.provider}:{self.model}" if self.model else self.provider

    def api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The key from the environment, ``None`` when this judge sends none.

        Raises:
            ConfigurationError: the variable is unset or empty; the message names it.
        """
        variable = self.key_variable
        if variable is None:
            return None
        value = (os.environ if environ is None else environ).get(variable)
        if not value:
            raise ConfigurationError(
                f"the {self.provider} judge needs an API key: set {variable} in the environment"
            )
        return value

    def transport_settings(self, client: httpx.AsyncClient | None = None) -> TransportSettings:
        """The timeouts, retries and limits configured here, with ``client``."""
        # Unset limits keep the transport's defaults rather than None, which would
        # mean "no limit" for max_concurrency.
        limits: dict[str, Any] = {}
        if self.timeout is not None:
            limits["timeout"] = self.timeout
        if self.max_concurrency is not None:
            limits["max_concurrency"] = self.max_concurrency
        return TransportSettings(
            max_retries=self.max_retries,
            requests_per_minute=self.requests_per_minute,
            client=client,
            **limits,
        )

    def build(
        self,
        prices: PriceTable | None = None,
        client: httpx.AsyncClient | None = None,
        *,
        cache: JudgeCache | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> ModelJudge:
        """The judge, with the adapter its provider builds.

        Args:
            prices: for ``cost_usd`` in usage; ``None`` leaves cost unknown.
            client: an ``httpx.AsyncClient`` instead of the shared pooled one.
            cache: answers are read from and written to this cache.
            environ: where keys are read (default ``os.environ``).

        Raises:
            ConfigurationError: the key is missing, or the adapter refuses a setting.
        """
        provider = self.provider_record
        settings = AdapterSettings(
            provider=self.provider,
            model=self.model or provider.default_model,
            base_url=self.base_url,
            api_key=self.api_key(environ),
            temperature=self.temperature,
            top_p=self.top_p,
            max_output_tokens=self.max_output_tokens,
            reasoning_effort=self.reasoning_effort,
            prices=prices,
            http=self.transport_settings(client),
        )
        return ModelJudge(provider.build(settings), name=self.name, cache=cache)


def auto_judge(environ: Mapping[str, str] | None = None) -> JudgeConfig | None:
    """The judge ``--judge auto`` picks: OpenAI when ``OPENAI_API_KEY`` is set (even
    if ``ANTHROPIC_API_KEY`` is too), else Anthropic, else ``None`` (only
    deterministic metrics run).

    The model comes from ``VISUAL_EVAL_MODEL`` when set (else the provider's default),
    and the reasoning effort, where the provider takes one, from
    ``VISUAL_EVAL_REASONING_EFFORT``.
    """
    env = os.environ if environ is None else environ
    model = env.get(MODEL_VARIABLE) or None
    for name in AUTO_PROVIDERS:
        provider = judge_provider(name)
        if provider.key_variable is None or not env.get(provider.key_variable):
            continue
        effort = None
        if "reasoning_effort" in provider.supported:
            effort = env.get(REASONING_EFFORT_VARIABLE) or None
        return JudgeConfig(provider=name, model=model, reasoning_effort=effort)
    return None
