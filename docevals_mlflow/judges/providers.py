"""Judge providers: one record per provider, kept in a registry that configuration
files, ``--judge NAME`` and the docs read.

A :class:`JudgeProvider` says how to build the provider's adapter (``factory``), its
default model, the environment variable its key is read from, which settings it
requires and which optional settings it takes, and a line of help for the command
line. The built-in providers are ``openai``, ``anthropic`` and
``openai-compatible``. More come from

* :func:`register_judge_provider`, called by your own code, or
* an installed package's entry point in the ``docevals.judge_providers`` group,
  naming a :class:`JudgeProvider` (or a function returning one); entry points are
  read once, the first time a provider that is not built in is looked up or the
  providers are listed::

      [project.entry-points."docevals.judge_providers"]
      echo = "docevals_echo:PROVIDER"

A factory receives one :class:`AdapterSettings` value and returns an adapter: any
object with ``provider``, ``model`` and ``async agenerate(request, *, repair=None)``
(see :class:`~docevals_mlflow.judges.judge.Adapter`). An adapter derived from
:class:`~docevals_mlflow.judges.adapters.base.HttpAdapter` can use its
``from_settings`` as the factory.

Nothing here imports an HTTP library: the built-in factories import their adapters
when they are called.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.judges.settings import TransportSettings

if TYPE_CHECKING:
    from docevals_mlflow.judges.usage import PriceTable

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "docevals.judge_providers"
"""The entry-point group installed packages register judge providers in."""

OPTIONAL_SETTINGS: tuple[str, ...] = (
    "temperature",
    "top_p",
    "max_output_tokens",
    "reasoning_effort",
)
"""Settings a provider takes only when its record lists them in ``supported``; a
configuration that sets one its provider does not take is refused."""

REQUIRABLE_SETTINGS: tuple[str, ...] = ("model", "base_url", "api_key_env")
"""Settings a provider can require (a server without a default URL or model, a key
without a standard variable)."""

RESERVED_NAMES = frozenset({"auto", "none"})
"""Words ``--judge`` takes besides provider names."""

_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


@dataclass(frozen=True, kw_only=True)
class AdapterSettings:
    """What a provider's factory builds its adapter from: the judge's configuration
    with the defaults applied and the key read from the environment.

    Optional settings the provider does not list in ``supported`` are always
    ``None`` here (configurations setting them are refused before).
    """

    provider: str
    """The provider's name, as configuration files and ``--judge`` spell it."""
    model: str | None
    """The configured model, else the provider's ``default_model``."""
    base_url: str | None = None
    api_key: str | None = None
    """The key read from the provider's variable (or ``api_key_env``); ``None`` when
    the judge sends none."""
    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    reasoning_effort: str | None = None
    prices: PriceTable | None = None
    http: TransportSettings = field(default_factory=TransportSettings)
    """Timeouts, retries, limits and the HTTP client."""


AdapterFactory = Callable[[AdapterSettings], Any]
"""Builds a provider's adapter from :class:`AdapterSettings`."""


@dataclass(frozen=True, kw_only=True)
class JudgeProvider:
    """One judge provider: how to build its adapter and what its configuration needs.

    Attributes:
        name: how configuration files (``provider: NAME``) and ``--judge NAME`` spell
            it: lower case letters and digits, words joined by ``-`` or ``_``.
        factory: builds the adapter from :class:`AdapterSettings`.
        default_model: the model when none is configured (``None``: the adapter's
            own default, or ``model`` is required).
        key_variable: the environment variable the key is read from by default;
            ``None`` sends no key unless ``api_key_env`` names a variable.
        required: settings every configuration must give (among ``model``,
            ``base_url`` and ``api_key_env``).
        supported: the optional settings it takes (among ``temperature``,
            ``top_p``, ``max_output_tokens`` and ``reasoning_effort``).
        help: one line for ``docevals ... --help``.
    """

    name: str
    factory: AdapterFactory
    default_model: str | None = None
    key_variable: str | None = None
    required: tuple[str, ...] = ()
    supported: frozenset[str] = frozenset()
    help: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ConfigurationError(
                f"judge provider name {self.name!r} is not a valid name",
                expected="lower case letters and digits, words joined by '-' or '_'",
            )
        if self.name in RESERVED_NAMES:
            raise ConfigurationError(
                f"judge provider name {self.name!r} is reserved (--judge {self.name} "
                "means something else)"
            )
        if not callable(self.factory):
            raise ConfigurationError(f"judge provider {self.name!r}: factory is not callable")
        # Tuples and sets given as lists or plain sets are accepted and frozen.
        object.__setattr__(self, "required", tuple(self.required))
        object.__setattr__(self, "supported", frozenset(self.supported))
        for kind, given, allowed in (
            ("required", self.required, REQUIRABLE_SETTINGS),
            ("supported", self.supported, OPTIONAL_SETTINGS),
        ):
            unknown = sorted(set(given) - set(allowed))
            if unknown:
                raise ConfigurationError(
                    f"judge provider {self.name!r}: {kind} names unknown settings "
                    f"{', '.join(unknown)}",
                    expected=", ".join(allowed),
                )

    def missing(self, settings: Mapping[str, Any]) -> list[str]:
        """The required settings that ``settings`` leaves unset, in ``required``'s
        order."""
        return [name for name in self.required if settings.get(name) is None]

    def build(self, settings: AdapterSettings) -> Any:
        """The adapter ``factory`` makes of ``settings``.

        Raises:
            ConfigurationError: the factory returned something that is no adapter.
        """
        adapter = self.factory(settings)
        if not hasattr(adapter, "agenerate"):
            raise ConfigurationError(
                f"judge provider {self.name!r} built a {type(adapter).__name__}, which "
                "is no adapter (it has no agenerate method)"
            )
        return adapter


# ----------------------------------------------------------------------------- built-ins


def _openai(settings: AdapterSettings) -> Any:
    # Imported when a judge is built: loading a configuration needs no httpx.
    from docevals_mlflow.judges.adapters.openai_responses import OpenAIResponsesAdapter

    return OpenAIResponsesAdapter.from_settings(
        settings, reasoning_effort=settings.reasoning_effort
    )


def _anthropic(settings: AdapterSettings) -> Any:
    from docevals_mlflow.judges.adapters.anthropic import AnthropicMessagesAdapter

    return AnthropicMessagesAdapter.from_settings(settings)


def _openai_compatible(settings: AdapterSettings) -> Any:
    from docevals_mlflow.judges.adapters.openai_chat import OpenAICompatibleChatAdapter

    return OpenAICompatibleChatAdapter.from_settings(settings)


_SAMPLING = frozenset({"temperature", "top_p", "max_output_tokens"})

BUILTIN_PROVIDERS: tuple[JudgeProvider, ...] = (
    JudgeProvider(
        name="openai",
        factory=_openai,
        default_model="gpt-4o-mini",
        key_variable="OPENAI_API_KEY",
        supported=_SAMPLING | {"reasoning_effort"},
        help="OpenAI's Responses API (key: OPENAI_API_KEY)",
    ),
    JudgeProvider(
        name="anthropic",
        factory=_anthropic,
        default_model="claude-sonnet-4-5",
        key_variable="ANTHROPIC_API_KEY",
        supported=_SAMPLING,
        help="Anthropic's Messages API (key: ANTHROPIC_API_KEY)",
    ),
    JudgeProvider(
        name="openai-compatible",
        factory=_openai_compatible,
        required=("model", "base_url"),
        supported=_SAMPLING,
        help="a chat-completions server such as vLLM, Ollama, llama.cpp or LM Studio "
        "(needs --base-url and --model; no key unless --api-key-env names one)",
    ),
)
"""The providers every installation has; entry points cannot replace them."""


# ----------------------------------------------------------------------------- registry


class ProviderRegistry:
    """Judge providers by name: the built-ins, those registered in code, and those
    of the ``docevals.judge_providers`` entry points (read once, when first needed).

    A provider whose entry point cannot be loaded is left out of the listing; asking
    for it by name raises an error that says why. Thread-safe.
    """

    def __init__(
        self,
        builtins: Iterable[JudgeProvider] = BUILTIN_PROVIDERS,
        *,
        group: str = ENTRY_POINT_GROUP,
    ) -> None:
        self._providers: dict[str, JudgeProvider] = {}
        for provider in builtins:
            self._providers[provider.name] = provider
        self._builtin = frozenset(self._providers)
        self._group = group
        self._broken: dict[str, str] = {}
        self._entry_points_read = False
        # Reentrant: a plugin's module may call register_judge_provider while its
        # entry point is being loaded.
        self._lock = threading.RLock()

    def register(self, provider: JudgeProvider, *, replace: bool = False) -> None:
        """Add ``provider``.

        Raises:
            ConfigurationError: its name is taken and ``replace`` is false.
        """
        if not isinstance(provider, JudgeProvider):
            raise TypeError(f"expected a JudgeProvider, not {type(provider).__name__}")
        with self._lock:
            if provider.name in self._providers and not replace:
                raise ConfigurationError(
                    f"a judge provider named {provider.name!r} is already registered",
                    expected="another name, or replace=True",
                )
            self._providers[provider.name] = provider
            self._broken.pop(provider.name, None)

    def get(self, name: str) -> JudgeProvider:
        """The provider called ``name``.

        Raises:
            ConfigurationError: there is none (the message lists the known names),
                or its entry point could not be loaded (the message says why).
        """
        with self._lock:
            provider = self._providers.get(name)
            if provider is None:
                # Built-in names never need the entry points read.
                self._read_entry_points()
                provider = self._providers.get(name)
            if provider is not None:
                return provider
            if name in self._broken:
                raise ConfigurationError(self._broken[name])
            raise ConfigurationError(
                f"unknown judge provider {name!r}",
                expected=", ".join(self.names()),
            )

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is a provider, or a plugin that failed to load (so that
        asking for it reports why rather than "unknown")."""
        if not isinstance(name, str):
            return False
        with self._lock:
            if name in self._providers:
                return True
            self._read_entry_points()
            return name in self._providers or name in self._broken

    def providers(self) -> tuple[JudgeProvider, ...]:
        """Every provider: the built-ins first, then the others in the order they
        were registered."""
        with self._lock:
            self._read_entry_points()
            return tuple(self._providers.values())

    def names(self) -> tuple[str, ...]:
        """The names of :meth:`providers`."""
        return tuple(provider.name for provider in self.providers())

    def supporting(self, setting: str) -> tuple[str, ...]:
        """The names of the providers that take the optional ``setting``."""
        return tuple(p.name for p in self.providers() if setting in p.supported)

    def _read_entry_points(self) -> None:
        if self._entry_points_read:
            return
        self._entry_points_read = True
        # Imported here: scanning the installed distributions costs tens of
        # milliseconds, which commands that never name a plugin should not pay.
        from importlib.metadata import entry_points

        for entry_point in sorted(entry_points(group=self._group), key=lambda ep: ep.name):
            self._load(entry_point.name, entry_point.value, entry_point.load)

    def _load(self, name: str, value: str, load: Callable[[], Any]) -> None:
        where = f"judge provider {name!r} (entry point {value!r} in {self._group})"
        if name in self._builtin:
            # A plugin must not take over a built-in name: it would receive that
            # provider's key (OPENAI_API_KEY, ...).
            logger.warning("%s is ignored: %r is a built-in provider", where, name)
            return
        if name in self._providers:
            return  # registered in code already (often by the plugin's own import)
        try:
            loaded = load()
            provider = loaded if isinstance(loaded, JudgeProvider) else loaded()
            if not isinstance(provider, JudgeProvider):
                raise TypeError(f"it gives a {type(provider).__name__}, not a JudgeProvider")
            if provider.name != name:
                raise ValueError(f"it gives a provider named {provider.name!r}")
        except Exception as exc:  # a broken plugin must not break the other providers
            self._broken[name] = f"{where} could not be loaded: {type(exc).__name__}: {exc}"
            logger.warning("%s", self._broken[name])
            return
        self._providers[name] = provider


_registry = ProviderRegistry()


def provider_registry() -> ProviderRegistry:
    """The registry this process uses."""
    return _registry


def register_judge_provider(provider: JudgeProvider, *, replace: bool = False) -> None:
    """Make ``provider`` usable as ``provider: NAME`` in configuration files and as
    ``--judge NAME``.

    Raises:
        ConfigurationError: the name is taken and ``replace`` is false.
    """
    _registry.register(provider, replace=replace)


def judge_provider(name: str) -> JudgeProvider:
    """The provider called ``name`` (built in, registered or from an entry point).

    Raises:
        ConfigurationError: there is none, or its entry point could not be loaded.
    """
    return _registry.get(name)


def judge_providers() -> tuple[JudgeProvider, ...]:
    """Every known provider, the built-ins first."""
    return _registry.providers()
