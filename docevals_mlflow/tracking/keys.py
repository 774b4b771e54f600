"""MLflow key names for field paths, stages and classes: deterministic and legal.

MLflow accepts letters and digits (Unicode ones too), ``_ - . /``, space and ``:`` in
keys (``:`` not on Windows, so it is replaced too), at most 250 characters, and rejects ``a//b``,
leading or trailing ``/`` and ``..``. Field templates such as
``$.Transactions[].Amount`` become ``Transactions.Amount``; anything else illegal
becomes ``_``. Two different sources that clean up to the same key get ``~2``,
``~3`` ... in the order they were first seen, and :class:`KeyMap` remembers which
key stands for which source so that the map can be logged next to the metrics.
"""

from __future__ import annotations

import hashlib
import re

MAX_KEY_LENGTH = 250
_ILLEGAL = re.compile(r"[^\w\-. /]")
_SLASHES = re.compile(r"/{2,}")
_DOTS = re.compile(r"\.{2,}")


def clean_segment(text: str) -> str:
    """One key segment (no ``/`` inside): illegal characters become ``_``."""
    cleaned = _ILLEGAL.sub("_", text.replace("/", "_"))
    cleaned = _DOTS.sub(".", cleaned).strip(" .")
    return cleaned or "_"


def template_segment(template: str) -> str:
    """A field template or path as a key segment: ``$.a[].b`` → ``a.b``."""
    text = template[1:] if template.startswith("$") else template
    text = text.replace("[]", "").replace("['", ".").replace("']", "")
    text = re.sub(r"\[(\d+)\]", r".\1", text)
    return clean_segment(text.lstrip("."))


def legal_key(key: str) -> str:
    """A whole key made legal: segments cleaned, no empty segments, bounded length."""
    parts = [clean_segment(part) for part in _SLASHES.sub("/", key).strip("/").split("/")]
    joined = "/".join(part for part in parts if part) or "_"
    if len(joined) > MAX_KEY_LENGTH:
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
        joined = joined[: MAX_KEY_LENGTH - 13].rstrip("/. ") + "~" + digest
    return joined


class KeyMap:
    """Stable segments for named things (fields, classes, stages) within one run."""

    def __init__(self) -> None:
        self._by_source: dict[tuple[str, str], str] = {}
        self._taken: dict[tuple[str, str], tuple[str, str]] = {}

    def segment(self, namespace: str, source: str, cleaned: str) -> str:
        """The key segment for ``source`` in ``namespace`` (``field``, ``class``, ...).

        ``cleaned`` is the legal form; a collision with another source gets a suffix.
        """
        known = self._by_source.get((namespace, source))
        if known is not None:
            return known
        candidate, number = cleaned, 2
        while (namespace, candidate) in self._taken:
            candidate = f"{cleaned}~{number}"
            number += 1
        self._taken[namespace, candidate] = (namespace, source)
        self._by_source[namespace, source] = candidate
        return candidate

    def field(self, template: str, method: str | None = None) -> str:
        """The segment of a field template (and method, when one template has several)."""
        source = template if method is None else f"{template} [{method}]"
        return self.segment("field", source, template_segment(template))

    def named(self, namespace: str, name: str) -> str:
        """The segment of a class, stage or metric name."""
        return self.segment(namespace, name, clean_segment(name))

    def index(self) -> dict[str, dict[str, str]]:
        """``{namespace: {segment: source}}`` for ``metrics_index.json``."""
        out: dict[str, dict[str, str]] = {}
        for (namespace, segment), (_, source) in sorted(self._taken.items()):
            out.setdefault(namespace, {})[segment] = source
        return out
