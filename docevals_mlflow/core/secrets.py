"""The secrets this process uses, and their removal from everything it writes.

Provider adapters, embedding clients and transports register the credentials they
send (API keys, credential header values, user-info of base URLs) in one
process-wide registry when they are built and again when they send. Whatever is
stored afterwards (judge answers, reasons, refusals, errors, cache entries,
checkpoints, reports) goes through :func:`redact_text` or :func:`redact_data`, which
replace every registered secret with ``[REDACTED]`` in each form a provider or a
log may spell it:

* plain, JSON-escaped (a secret with quotes, slashes or non-ASCII characters) and
  HTML-escaped;
* URL-encoded (``quote``, ``quote_plus``, upper- and lower-case hex), as an echoed
  request URL or query shows it;
* base64 in the standard and URL-safe alphabets, at each of the three byte
  alignments a secret can have inside a longer base64 text (an echoed
  ``Authorization: Basic ...`` header, a base64 debug dump).

Short values are no secrets here: a value shorter than :data:`MIN_SECRET_LENGTH`
(8) characters is never registered. Real API keys and tokens are far longer, while
the placeholders given to local servers that check no key (``ollama``, ``EMPTY``,
``none``) are ordinary words; replacing them everywhere would shred reports (the
provider name ``ollama`` among them). A caller that wants such a value removed from
one message passes it to :func:`redact_text` as ``extra``: values of
:data:`MIN_WORD_LENGTH` to 7 characters are then replaced where they stand as a
whole word, in plain and URL-encoded form only (a base64 core of so few characters
would match unrelated base64 text). Values under 4 characters are never replaced.

Everything here is pure Python with no third-party import, so any module (reports,
checkpoints, caches) can use it without pulling in the HTTP stack.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 8
"""Values at least this long are secrets, replaced wherever they occur."""
MIN_WORD_LENGTH = 4
"""Shorter ``extra`` values are left alone even as whole words."""

_CREDENTIAL_WORDS = (
    "auth",
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "cookie",
    "credential",
    "session",
    "signature",
)
"""A header or query parameter whose name contains one of these carries a credential
(``Authorization``, ``x-api-key``, ``api-key``, ``X-Auth-Token``, ``?key=``, ...)."""
_SCALARS = (int, float, bool, type(None))
_HEX_ESCAPE = re.compile(r"%[0-9A-F]{2}")


# ----------------------------------------------------------------------------- forms


def _base64_cores(data: bytes) -> set[str]:
    """The base64 characters that depend on ``data`` alone wherever it sits in a
    longer base64 text: one core per byte alignment (0, 1 or 2 bytes before it in
    its 3-byte group), in the standard and the URL-safe alphabet.

    The characters that mix in bits of the neighbouring bytes are left out, so a
    replaced core can leave at most a few bits of the secret on either side.
    """
    cores: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        core = encoded[(8 * offset + 5) // 6 : (8 * (offset + len(data))) // 6]
        cores.add(core)
        cores.add(core.replace("+", "-").replace("/", "_"))
    return cores


def _url_forms(text: str) -> set[str]:
    encoded = {quote(text, safe=""), quote(text), quote_plus(text), quote_plus(text, safe="/")}
    # Percent escapes are case-insensitive; servers echo either case.
    encoded |= {_HEX_ESCAPE.sub(lambda match: match.group(0).lower(), form) for form in encoded}
    return encoded


@lru_cache(maxsize=1024)
def secret_forms(secret: str) -> tuple[str, ...]:
    """Every spelling of ``secret`` that is replaced, longest first (see the module
    docstring); empty for a value shorter than :data:`MIN_SECRET_LENGTH`."""
    if len(secret) < MIN_SECRET_LENGTH:
        return ()
    forms = {secret, *_url_forms(secret)}
    for escaped in (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]):
        # Some JSON writers (and scripts embedded in HTML) also escape "/" as "\/".
        forms |= {escaped, escaped.replace("/", "\\/")}
    forms.add(html.escape(secret))
    for core in _base64_cores(secret.encode("utf-8")):
        forms.add(core)
        # Base64 text inside a URL gets its '+', '/' and '=' percent-encoded.
        forms.add(quote(core, safe=""))
    # A base64 core of a secret of 8 or more characters has at least 10 characters;
    # the length check only guards against surprises in the forms above.
    return tuple(sorted((form for form in forms if len(form) >= 8), key=len, reverse=True))


def _word_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    spelled = sorted(
        {form for word in words for form in (word, quote(word, safe=""))}, key=len, reverse=True
    )
    if not spelled:
        return None
    # Bounded by anything but letters and digits, so "EMPTY" goes and "EMPTYING" stays.
    alternatives = "|".join(re.escape(form) for form in spelled)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")


# ----------------------------------------------------------------------------- credentials


def is_credential_name(name: str) -> bool:
    """Whether a header or query parameter named ``name`` carries a credential."""
    lowered = name.lower()
    return any(word in lowered for word in _CREDENTIAL_WORDS)


def credential_parts(value: str) -> list[str]:
    """The secrets in one credential value: the value itself, the token after an
    auth scheme (``Bearer <token>``), and for ``Basic`` the decoded ``user:password``
    and both of its halves."""
    parts = [value, value.strip()]
    scheme, _, rest = value.strip().partition(" ")
    rest = rest.strip()
    if rest:
        parts.append(rest)
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(rest, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                decoded = ""
            if decoded:
                parts += [decoded, *decoded.split(":", 1)]
    return parts


def header_credentials(headers: Mapping[str, str] | None) -> list[str]:
    """The secrets carried by ``headers``: the values (and their parts, see
    :func:`credential_parts`) of headers named like credentials."""
    found: list[str] = []
    for name, value in (headers or {}).items():
        if isinstance(value, str) and value and is_credential_name(str(name)):
            found += credential_parts(value)
    return found


def url_credentials(url: str | None) -> list[str]:
    """The secrets in ``url``: its user name, password and ``user:password`` (raw
    and percent-decoded), the base64 of ``user:password`` an HTTP client sends as
    Basic credentials, and the values of query parameters named like credentials
    (``?key=...``, ``?access_token=...``)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if userinfo:
        user, _, password = userinfo.partition(":")
        decoded = f"{unquote(user)}:{unquote(password)}"
        found += [userinfo, user, password, unquote(user), unquote(password), decoded]
        found.append(base64.b64encode(decoded.encode("utf-8")).decode("ascii"))
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if is_credential_name(name):
            found += [value, quote(value, safe="")]
    return [value for value in found if value]


# ----------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class _Plan:
    """What one redaction replaces: substrings, longest first, and whole words."""

    forms: tuple[str, ...]
    words: re.Pattern[str] | None

    @property
    def empty(self) -> bool:
        return not self.forms and self.words is None

    def apply(self, text: str) -> str:
        # ``in`` before ``replace``: a text without the secret is returned as the
        # very same object, which lets redact_data tell that nothing changed.
        for form in self.forms:
            if form in text:
                text = text.replace(form, REDACTED)
        if self.words is not None:
            text = self.words.sub(REDACTED, text)
        return text

    def found_in(self, text: str) -> bool:
        return any(form in text for form in self.forms) or (
            self.words is not None and self.words.search(text) is not None
        )


class SecretRegistry:
    """A set of secrets, safe to share between threads (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # A dict keeps registration order, so plans (and their cache keys) are stable.
        self._secrets: dict[str, None] = {}

    def add(self, *values: str | None) -> int:
        """Register ``values`` (short and empty ones are ignored); returns how many
        were new."""
        fresh = [
            value for value in values if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH
        ]
        if not fresh:
            return 0
        added = 0
        with self._lock:
            for value in fresh:
                if value not in self._secrets:
                    self._secrets[value] = None
                    added += 1
        return added

    def secrets(self) -> tuple[str, ...]:
        """The registered secrets, in registration order."""
        with self._lock:
            return tuple(self._secrets)

    def clear(self) -> None:
        """Forget every secret (tests; a process never needs it)."""
        with self._lock:
            self._secrets.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._secrets)

    def plan(self, extra: Iterable[str | None] = ()) -> _Plan:
        """The redaction of the registered secrets plus ``extra``."""
        with self._lock:
            registered = tuple(self._secrets)
        extras = tuple(sorted({value for value in extra if isinstance(value, str) and value}))
        return _plan(registered, extras)


@lru_cache(maxsize=64)
def _plan(registered: tuple[str, ...], extras: tuple[str, ...]) -> _Plan:
    # Cached per set of secrets: building the forms costs far more than using them,
    # and the same few secrets serve every message.
    forms = {form for secret in (*registered, *extras) for form in secret_forms(secret)}
    words = [word for word in extras if MIN_WORD_LENGTH <= len(word) < MIN_SECRET_LENGTH]
    return _Plan(tuple(sorted(forms, key=len, reverse=True)), _word_pattern(words))


REGISTRY = SecretRegistry()
"""The process-wide registry."""


def register_secrets(*values: str | None) -> int:
    """Register secrets (values shorter than :data:`MIN_SECRET_LENGTH` are ignored)."""
    return REGISTRY.add(*values)


def register_headers(headers: Mapping[str, str] | None) -> int:
    """Register the credentials in ``headers`` (see :func:`header_credentials`)."""
    return REGISTRY.add(*header_credentials(headers))


def register_url(url: str | None) -> int:
    """Register the credentials in ``url`` (see :func:`url_credentials`)."""
    return REGISTRY.add(*url_credentials(url))


def register_environment(*names: str | None, environ: Mapping[str, str] | None = None) -> int:
    """Register the values of the environment variables ``names`` (unset ones are
    skipped): for a credential your own code reads and uses outside an adapter."""
    env = os.environ if environ is None else environ
    return REGISTRY.add(*(env.get(name) for name in names if name))


def registered_secrets() -> tuple[str, ...]:
    """Every registered secret."""
    return REGISTRY.secrets()


# ----------------------------------------------------------------------------- redaction


def redact_text(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every registered secret and every ``extra`` value replaced by
    ``[REDACTED]``, in every form (see the module docstring)."""
    plan = REGISTRY.plan(extra)
    return text if plan.empty else plan.apply(text)


def contains_secret(text: str, extra: Iterable[str | None] = ()) -> bool:
    """Whether ``text`` holds a registered secret or an ``extra`` value in any form."""
    plan = REGISTRY.plan(extra)
    return not plan.empty and plan.found_in(text)


def redact_data(value: Any, extra: Iterable[str | None] = ()) -> Any:
    """``value`` with every string in it (dictionary keys included) redacted as
    :func:`redact_text` does.

    Dicts, lists and tuples are walked; an object with ``model_dump`` and
    ``model_validate`` (a pydantic model) is dumped (to JSON data when it can be),
    redacted and, when something was replaced, validated again. Anything else is
    returned as it is. When nothing needed
    redacting, ``value`` itself is returned (no copy), so a caller can test
    ``redact_data(value) is value``.
    """
    plan = REGISTRY.plan(extra)
    if plan.empty:
        return value
    return _walk(value, plan)


def _walk(value: Any, plan: _Plan) -> Any:
    if isinstance(value, str):
        return plan.apply(value)
    if type(value) in _SCALARS:
        return value
    if isinstance(value, dict):
        changed = False
        items = []
        for key, item in value.items():
            new_key = _walk(key, plan) if isinstance(key, str) else key
            new_item = _walk(item, plan)
            changed = changed or new_key is not key or new_item is not item
            items.append((new_key, new_item))
        return dict(items) if changed else value
    if isinstance(value, (list, tuple)):
        copied: list[Any] | None = None
        for index, item in enumerate(value):
            # Long lists of numbers (embedding vectors) are common: skip them cheaply.
            if type(item) in _SCALARS:
                continue
            new_item = _walk(item, plan)
            if new_item is not item:
                if copied is None:
                    copied = list(value)
                copied[index] = new_item
        if copied is None:
            return value
        return tuple(copied) if isinstance(value, tuple) else copied
    dump = getattr(value, "model_dump", None)
    validate = getattr(type(value), "model_validate", None)
    if callable(dump) and callable(validate):
        try:
            # JSON data reaches strings inside any object a model holds...
            data = dump(mode="json")
        except (TypeError, ValueError):
            # ...unless one of them cannot be serialised: then the Python dump, whose
            # containers are walked and whose other objects are kept as they are.
            data = dump()
        redacted = _walk(data, plan)
        return value if redacted is data else validate(redacted)
    return value
