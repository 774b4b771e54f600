"""Names and values MLflow accepts, made from anything: keys, run and experiment names,
param and tag values. Deterministic, so the same input always gives the same key.

The rules are MLflow's own (``mlflow/utils/validation.py`` and the column sizes of
its SQL schema, which PostgreSQL and MySQL enforce even where SQLite does not):

* metric, param and tag keys: letters and digits (Unicode ones too), ``_ - . /`` and
  space, at most 250 characters, no empty, ``.`` or ``..`` path segment and no
  leading or trailing ``/``. ``:`` is legal except on Windows, so it is replaced too.
* param values: at most 6,000 characters (the bundle writer moves longer ones to an
  artifact); tag values: at most 8,000; run names: 250; experiment names: 256;
  dataset names: 500; dataset input tag keys 255 and values 500.
* text is stored as UTF-8: lone surrogates cannot be, and NUL is refused by
  PostgreSQL; both become U+FFFD.

Field templates such as ``$.Transactions[].Amount`` become ``Transactions.Amount``;
anything else illegal becomes ``_``. :class:`KeyMap` keeps every key segment it hands
out at most :data:`MAX_SEGMENT_LENGTH` characters (longer ones end in ``_h<hash>``),
so that a whole key built from one or two segments never needs shortening and the
segment recorded in ``metrics_index.json`` is exactly the one in the logged key. Two
different sources that clean up to the same segment get ``_2``, ``_3`` ... in the
order they were first seen.
"""

from __future__ import annotations

import hashlib
import re

MAX_KEY_LENGTH = 250
"""Metric, param and tag keys (MLflow's ``MAX_ENTITY_KEY_LENGTH``)."""
MAX_SEGMENT_LENGTH = 100
"""A key segment from :class:`KeyMap`: two of them plus the longest layout prefix and
metric name stay under :data:`MAX_KEY_LENGTH`."""
MAX_PARAM_VALUE_LENGTH = 6000
MAX_TAG_VALUE_LENGTH = 8000
MAX_RUN_NAME_LENGTH = 250
"""``runs.name`` is ``VARCHAR(250)``; MLflow's client does not check it, the database does."""
MAX_EXPERIMENT_NAME_LENGTH = 256
"""``experiments.name`` is ``VARCHAR(256)``, below the 500 MLflow's validation allows."""
MAX_DATASET_NAME_LENGTH = 500
MAX_DATASET_SOURCE_LENGTH = 65535
MAX_INPUT_TAG_KEY_LENGTH = 255
MAX_INPUT_TAG_VALUE_LENGTH = 500

_ILLEGAL = re.compile(r"[^\w\-. /]")
_SLASHES = re.compile(r"/{2,}")
_DOTS = re.compile(r"\.{2,}")
# Lone surrogates cannot be encoded as UTF-8; NUL is refused by PostgreSQL text.
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
_HASH_LENGTH = 12


def _digest(text: str) -> str:
    # surrogatepass: a lone surrogate must still hash (and hash differently from
    # U+FFFD), or two different sources could share a shortened name.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LENGTH]


def _shorten_key(text: str, source: str, limit: int) -> str:
    # "_h<hash>": only characters legal in a key, so the result needs no more cleaning.
    suffix = f"_h{_digest(source)}"
    return text[: limit - len(suffix)].rstrip("/. ") + suffix


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
    """A whole metric, param or tag key made legal: segments cleaned, no empty
    segments, at most :data:`MAX_KEY_LENGTH` characters (a longer key keeps its start
    and ends in ``_h<hash of the original>``). Legal keys come back unchanged."""
    parts = [clean_segment(part) for part in _SLASHES.sub("/", key).strip("/").split("/")]
    joined = "/".join(part for part in parts if part) or "_"
    if len(joined) > MAX_KEY_LENGTH:
        joined = _shorten_key(joined, key, MAX_KEY_LENGTH)
    return joined


def storable_text(text: str) -> str:
    """``text`` with what no store can hold (lone surrogates, NUL) as U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", text)


def _bounded_text(text: str, limit: int, marker: str) -> str:
    text = storable_text(text)
    if len(text) <= limit:
        return text
    return text[: limit - len(marker)] + marker


def _bounded_name(text: str, limit: int) -> str:
    # Names identify things (a run in the UI, an experiment): a shortened one keeps a
    # hash of the whole name, so two long names that share a start stay apart.
    text = storable_text(text)
    if len(text) <= limit:
        return text
    suffix = f"…{_digest(text)}"
    return text[: limit - len(suffix)].rstrip() + suffix


def legal_tag_value(value: str) -> str:
    """A tag value MLflow stores whole: at most 8,000 characters, a longer one cut with
    a visible marker (MLflow itself would cut it silently)."""
    return _bounded_text(value, MAX_TAG_VALUE_LENGTH, " …[cut]")


def legal_run_name(name: str | None) -> str | None:
    """A run name every store accepts (``None`` for an empty one: MLflow picks one)."""
    if not name:
        return None
    return _bounded_name(name, MAX_RUN_NAME_LENGTH) or None


def legal_experiment_name(name: str) -> str:
    """An experiment name every store accepts (an empty one is an error to the caller:
    there is no name to make from it)."""
    return _bounded_name(name, MAX_EXPERIMENT_NAME_LENGTH)


def legal_dataset_name(name: str) -> str:
    """A dataset name (run input) MLflow accepts."""
    return _bounded_name(name, MAX_DATASET_NAME_LENGTH) or "dataset"


def legal_input_tag(key: str, value: str) -> tuple[str, str]:
    """A dataset input tag MLflow accepts (key 255, value 500 characters)."""
    return (
        _bounded_name(key, MAX_INPUT_TAG_KEY_LENGTH) or "_",
        _bounded_text(value, MAX_INPUT_TAG_VALUE_LENGTH, "…"),
    )


class KeyNames:
    """Legal keys for one kind of entry (params, metrics or tags) of one run.

    Different sources that come out as the same legal key get ``_2``, ``_3`` ... in the
    order they were seen, so that no entry silently replaces another; the same source
    always gets the same key.
    """

    def __init__(self) -> None:
        self._by_source: dict[str, str] = {}
        self._taken: set[str] = set()

    def key(self, source: str) -> str:
        """The legal key of ``source``."""
        known = self._by_source.get(source)
        if known is not None:
            return known
        base = legal_key(source)
        candidate, number = base, 2
        while candidate in self._taken:
            suffix = f"_{number}"
            candidate = base[: MAX_KEY_LENGTH - len(suffix)].rstrip("/. ") + suffix
            number += 1
        self._taken.add(candidate)
        self._by_source[source] = candidate
        return candidate

    def renamed(self) -> dict[str, str]:
        """``{source: key}`` for every source whose key differs from it."""
        return {source: key for source, key in self._by_source.items() if source != key}


def _bounded_segment(cleaned: str, source: str) -> str:
    if len(cleaned) <= MAX_SEGMENT_LENGTH:
        return cleaned
    return _shorten_key(cleaned, source, MAX_SEGMENT_LENGTH)


class KeyMap:
    """Stable segments for named things (fields, classes, stages) within one run."""

    def __init__(self) -> None:
        self._by_source: dict[tuple[str, str], str] = {}
        self._taken: dict[tuple[str, str], tuple[str, str]] = {}

    def segment(self, namespace: str, source: str, cleaned: str) -> str:
        """The key segment for ``source`` in ``namespace`` (``field``, ``class``, ...).

        ``cleaned`` is the readable form (cleaned again here, so any text will do); a
        long one is shortened with a hash of ``source``, and a collision with another
        source gets a ``_2``, ``_3`` ... suffix.
        """
        known = self._by_source.get((namespace, source))
        if known is not None:
            return known
        base = _bounded_segment(clean_segment(cleaned), source)
        candidate, number = base, 2
        while (namespace, candidate) in self._taken:
            suffix = f"_{number}"
            candidate = base[: MAX_SEGMENT_LENGTH - len(suffix)].rstrip(". ") + suffix
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
