"""Judges and judge panels described as data (YAML/JSON files, CLI options).

A :class:`JudgeConfig` names a provider (see :mod:`docevals_mlflow.judges.providers`),
a model and its settings and builds a :class:`~docevals_mlflow.judges.judge.ModelJudge`;
a :class:`PanelConfig` lists variants, whose judges :class:`JudgeRuntime` builds. The
metrics around them (``LLMJudgeMetric``, ``JudgePanelMetric``) are built one layer up,
by :mod:`docevals_mlflow.evaluation.judge_metrics`.

Example panel file::

    name: invoice_panel
    vote_rule: majority
    review_on_any_disagreement: true
    variants:
      - {name: gpt-cold, provider: openai, model: gpt-4.1-mini, temperature: 0}
      - {name: gpt-warm, provider: openai, model: gpt-4.1-mini, temperature: 0.8}
      - {name: claude, provider: anthropic, model: claude-sonnet-4-5}
      - name: local
        provider: openai-compatible
        model: qwen2.5-vl
        base_url: http://localhost:8000/v1
        api_key_env: LOCAL_LLM_KEY        # the NAME of a variable, never a key
    prices:                               # USD per million tokens (optional)
      gpt-4.1-mini: {input: 0.4, output: 1.6, cached_input: 0.1}

API keys are read from environment variables only. A configuration that contains
one (a field named ``api_key``, or any value that looks like ``sk-...``) is refused
with an error that says where, never what.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from docevals_mlflow.core.datafiles import load_data_file
from docevals_mlflow.core.model import DocEvalsModel, Number, WholeNumber
from docevals_mlflow.errors import ConfigurationError, DocEvalsError, InputError
from docevals_mlflow.judges.judge import ModelJudge
from docevals_mlflow.judges.providers import (
    OPTIONAL_SETTINGS,
    AdapterSettings,
    JudgeProvider,
    judge_provider,
    provider_registry,
)
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.usage import Price, PriceTable

if TYPE_CHECKING:
    # Only for annotations: importing httpx here would make every pipeline
    # configuration load the HTTP stack even when no judge is configured.
    import httpx

    from docevals_mlflow.judges.cache import JudgeCache

AUTO_PROVIDERS: tuple[str, ...] = ("openai", "anthropic")
"""The providers ``--judge auto`` tries, in order: the first whose key is set."""
MODEL_VARIABLE = "VISUAL_EVAL_MODEL"
"""The judge model when none is given (``--model`` wins)."""
REASONING_EFFORT_VARIABLE = "VISUAL_EVAL_REASONING_EFFORT"
"""OpenAI reasoning effort when none is given (``--reasoning-effort`` wins)."""

_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# OpenAI (sk-..., sk-proj-...) and Anthropic (sk-ant-...) keys; the look-behind keeps
# words that merely end in "sk-" (say "task-3") from matching.
_KEY_LIKE = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9][A-Za-z0-9_-]{5,}")
_KEY_FIELDS = frozenset(
    {"api_key", "apikey", "openai_api_key", "anthropic_api_key", "x_api_key", "authorization"}
)
ConfigModel = TypeVar("ConfigModel", bound=DocEvalsModel)


# ----------------------------------------------------------------------------- secrets


def find_api_key(data: Any, path: str = "") -> str | None:
    """Where in ``data`` an API key is written (a field path), or ``None``.

    A field named ``api_key`` (or ``authorization``, ...) counts whatever its value,
    and so does any key or value containing ``sk-`` followed by key characters.
    The value itself is never returned, so callers cannot echo it by accident.
    """
    if isinstance(data, Mapping):
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if str(key).casefold().replace("-", "_") in _KEY_FIELDS:
                return where
            if _KEY_LIKE.search(str(key)):
                return path or "(top level)"
            found = find_api_key(value, where)
            if found is not None:
                return found
        return None
    if isinstance(data, (list, tuple)):
        for index, item in enumerate(data):
            found = find_api_key(item, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(data, str) and _KEY_LIKE.search(data):
        return path or "(top level)"
    return None


def refuse_api_keys(data: Any, *, source: str | None, path: str = "") -> None:
    """Raise :class:`InputError` when ``data`` contains an API key (see
    :func:`find_api_key`); the message names the place, never the value."""
    where = find_api_key(data, path)
    if where is None:
        return
    raise InputError(
        "an API key is written in this configuration; keys must not be kept in files. "
        "Put it in an environment variable and name that variable with api_key_env "
        "(OPENAI_API_KEY and ANTHROPIC_API_KEY are read by default)",
        source=source,
        path=where,
    )


# ----------------------------------------------------------------------------- judges

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


# ----------------------------------------------------------------------------- panels


class VariantConfig(JudgeConfig):
    """A panel member: a judge, its variant ``name`` and its ``sample_group``.

    Variants of one ``sample_group`` (by default ``provider:model``) are samples of
    one model and cast one vote together.
    """

    sample_group: str | None = Field(default=None, min_length=1)


class PanelConfig(DocEvalsModel):
    """A judge panel: variants, vote rule and prices (see the module docstring).

    ``prices`` maps ``model`` (or ``provider:model``) to USD per million tokens:
    ``{input, output, cached_input}``.
    """

    name: str = Field(default="judge_panel", min_length=1)
    vote_rule: Literal["majority", "unanimous"] = "majority"
    minimum_agreement: Number | None = Field(default=None, gt=0, le=1)
    review_on_any_disagreement: bool = True
    variants: list[VariantConfig] = Field(min_length=1)
    prices: dict[str, Price] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _distinct_names(self) -> PanelConfig:
        labels = [variant.label for variant in self.variants]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            # Unnamed samples of one model get the same default name; votes and
            # reports are keyed by name, so they must differ.
            raise ValueError(
                f"variant names repeat ({', '.join(repeated)}): give each variant a distinct 'name'"
            )
        return self

    def price_table(self, extra: PriceTable | None = None) -> PriceTable | None:
        """The panel's prices, with ``extra`` (say, from ``--prices``) taking precedence;
        ``None`` when neither knows any price."""
        merged = {**self.prices, **(extra.prices if extra is not None else {})}
        return PriceTable(prices=merged) if merged else None


def load_panel_config(path: str | os.PathLike[str]) -> PanelConfig:
    """Read a panel file (YAML or JSON).

    Raises:
        InputError: the file is malformed, holds an API key, or a setting is
            invalid; the message names the file and, where it applies, the variant.
        InputFileNotFoundError: there is no such file.
    """
    return load_keyless_config(
        path,
        PanelConfig,
        what="a panel configuration",
        expected="name, vote_rule, variants, prices",
        entries="variants",
        entry="variant",
    )


def load_keyless_config(
    path: str | os.PathLike[str],
    model: type[ConfigModel],
    *,
    what: str,
    expected: str,
    entries: str,
    entry: str,
) -> ConfigModel:
    """Read a YAML or JSON mapping that must hold no API key, as ``model``.

    An error inside the list ``entries`` (``variants``, ``generators``) names the
    ``entry`` it is about, by name, else by position.

    Raises:
        InputError: the file is malformed, not a mapping (``expected`` says what it
            should hold), holds an API key, or a setting is invalid.
        InputFileNotFoundError: there is no such file.
    """
    source = str(path)
    data = load_data_file(Path(path))
    if not isinstance(data, dict):
        raise InputError(
            f"{what} must be a mapping, not {type(data).__name__}",
            source=source,
            expected=expected,
        )
    # Before validation: a validation error may quote the offending value.
    try:
        refuse_api_keys(data, source=source)
    except InputError as exc:
        raise _in_entry(exc, data, entries, entry) from None
    try:
        return model.model_validate(data)
    except InputError as exc:
        raise _in_entry(exc.located(source=source), data, entries, entry) from None


def _in_entry(
    error: DocEvalsError, data: dict[str, Any], entries: str, entry: str
) -> DocEvalsError:
    """``error`` with the entry it is about named in the message, when its path points
    into the list ``entries``."""
    match = re.match(rf"{re.escape(entries)}\[(\d+)\]", error.path or "")
    items = data.get(entries)
    if not match or not isinstance(items, list):
        return error
    index = int(match.group(1))
    item = items[index] if index < len(items) else None
    name = item.get("name") if isinstance(item, dict) else None
    label = repr(name) if isinstance(name, str) and name else f"#{index + 1}"
    return type(error)(
        f"{entry} {label}: {error.message}",
        source=error.source,
        record=error.record,
        path=error.path,
        stage=error.stage,
        expected=error.expected,
    )


def load_prices(path: str | os.PathLike[str]) -> PriceTable:
    """Read a price table file: ``model`` (or ``provider:model``) to
    ``{input, output, cached_input}`` in USD per million tokens.

    Raises:
        InputError: the file is malformed or a price is invalid (naming the file).
    """
    source = str(path)
    data = load_data_file(Path(path))
    refuse_api_keys(data, source=source)
    if not isinstance(data, dict) or not all(isinstance(value, dict) for value in data.values()):
        raise InputError(
            "a price table must map each model to its prices",
            source=source,
            expected="model: {input: USD, output: USD, cached_input: USD} per million tokens",
        )
    try:
        return PriceTable.from_mapping(data)
    except InputError as exc:
        raise exc.located(source=source) from None


# ----------------------------------------------------------------------------- runtime


AnyJudgeConfig = TypeVar("AnyJudgeConfig", bound=JudgeConfig)


@dataclass(frozen=True)
class JudgeRuntime:
    """How judges built from configuration run in this process: prices, cache,
    HTTP client, default concurrency and the environment keys come from.

    One runtime serves every judge of an invocation (the CLI's ``--judge``, its
    ``--panel``, and the judges a pipeline configuration names), so that
    ``--prices``, ``--judge-cache`` and ``--concurrency`` apply to all of them.
    ``max_concurrency`` applies where a configuration sets none of its own.
    """

    prices: PriceTable | None = None
    cache: JudgeCache | None = None
    client: httpx.AsyncClient | None = None
    max_concurrency: int | None = None
    environ: Mapping[str, str] | None = None

    def _defaults(self, config: AnyJudgeConfig) -> AnyJudgeConfig:
        if self.max_concurrency is None or config.max_concurrency is not None:
            return config
        return config.model_copy(update={"max_concurrency": self.max_concurrency})

    def judge(self, config: JudgeConfig) -> ModelJudge:
        """Build one judge."""
        return self._defaults(config).build(
            self.prices, self.client, cache=self.cache, environ=self.environ
        )

    def panel_judges(self, config: PanelConfig) -> list[tuple[VariantConfig, ModelJudge]]:
        """Build the judge of every variant of a panel, each with its variant.

        The panel's prices are extended (and overridden) by this runtime's. The panel
        metric is built from these by
        :func:`docevals_mlflow.evaluation.judge_metrics.judge_panel_metric`.

        Raises:
            ConfigurationError: a variant cannot be built (the message names it).
        """
        table = config.price_table(self.prices)
        built = []
        for index, variant in enumerate(config.variants):
            try:
                judge = self._defaults(variant).build(
                    table, self.client, cache=self.cache, environ=self.environ
                )
            except (InputError, ConfigurationError) as exc:
                raise type(exc)(
                    f"variant {variant.label!r}: {exc.message}",
                    source=exc.source,
                    path=f"variants[{index}]" + (f".{exc.path}" if exc.path else ""),
                    expected=exc.expected,
                ) from None
            built.append((variant, judge))
        return built
