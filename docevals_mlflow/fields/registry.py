"""Field comparison methods as records: one :class:`FieldMethod` per method.

Everything the package knows about a method lives in its record: its default
threshold and what the threshold means (a score or a tolerance), the options it reads
and how they are validated, the one-line explanation reports print, whether identical
texts always match (the engine's fast path), the names other tools use for it (the IDP
accelerator's ``hungarian_comparator``, Stickler's comparator names), how list labels
name it, whether an outside provider decides it (``SEMANTIC``, ``LLM``), and the
factory that builds its comparator from a :class:`~docevals_mlflow.fields.schema.FieldSpec`.
The schema, the compiler, the list labels, the importers and the reports all read
these records; nothing else lists methods.

Third-party methods are records too. They come from

* the entry point group ``docevals.field_methods`` (:data:`ENTRY_POINT_GROUP`): each
  entry point names a :class:`FieldMethod`, a list of them, or a function returning
  either. They are loaded once, the first time something asks for a method that is not
  built in (or for every method); a schema of built-in methods never loads them;
* :func:`register_field_method`, called by the program itself.

A plugin's method is then valid in every schema form, its options are checked like
the built-in ones, reports explain it, and the schema fingerprint names the package
and version that provided it. Worker processes (``compare_documents(workers=N)``)
receive the parent's plugin methods with their first chunk (:func:`helper_payload`).

Lookups happen when a schema is validated or compiled, never per comparison.
"""

from __future__ import annotations

import importlib
import math
import pickle
import re
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from docevals_mlflow.errors import ConfigurationError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from docevals_mlflow.fields.methods import Comparator
    from docevals_mlflow.fields.schema import FieldSpec

ENTRY_POINT_GROUP = "docevals.field_methods"
"""The entry point group third-party field methods register in."""

ThresholdKind = Literal["score", "tolerance"]
"""``score``: a match needs a score of at least the threshold, in [0, 1].
``tolerance``: the threshold is an allowed difference (any number ≥ 0), as
``NUMERIC_EXACT``'s absolute tolerance; the comparator turns it into a 0/1 score."""

ComparatorFactory = Callable[["FieldSpec"], "Comparator"]
"""Builds the comparator of one scalar field from its spec (once, at compile time)."""

BUILTIN_OPTIONS: tuple[str, ...] = (
    "fuzzy_scorer",
    "date_order",
    "relative_tolerance",
    "case_sensitive",
)
"""The method options that are :class:`FieldSpec` attributes of their own (typed and
validated there), in the order messages list them. A plugin method may read them too."""

STRUCTURAL_KEYS: tuple[str, ...] = (
    "method",
    "threshold",
    "fields",
    "items",
    "match_threshold",
    "pairing",
    "weight",
    "description",
    "method_options",
)
"""The other :class:`FieldSpec` keys, which no method option may be called."""

_METHOD_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_OPTION_NAME = re.compile(r"[a-z][a-z0-9_]*")


def names_text(names: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``: names in a message."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class MethodOption:
    """A setting a method reads from the field spec, written next to ``method``.

    ``validate`` takes the value as written and returns the value to keep (raise
    ``ValueError`` or ``TypeError`` with a short reason to refuse it); without one any
    JSON value is kept. ``default`` is what :meth:`FieldSpec.option` answers when the
    field does not set it. Options named in :data:`BUILTIN_OPTIONS` are the spec's own
    attributes: a method that reads one gives neither ``validate`` nor ``default``.
    """

    name: str
    validate: Callable[[Any], Any] | None = None
    default: Any = None
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _OPTION_NAME.fullmatch(self.name):
            raise ConfigurationError(
                f"invalid method option name {self.name!r}",
                expected="lower-case letters, digits and underscores, starting with a letter",
            )
        if self.name in STRUCTURAL_KEYS:
            raise ConfigurationError(
                f"method option {self.name!r} would shadow the schema key of that name",
                expected=f"a name other than {', '.join(STRUCTURAL_KEYS)}",
            )
        if self.name in BUILTIN_OPTIONS and (self.validate is not None or self.default is not None):
            raise ConfigurationError(
                f"method option {self.name!r} is a schema attribute, validated and defaulted there",
                expected="MethodOption(name) without validate or default",
            )
        if self.validate is not None and not callable(self.validate):
            raise ConfigurationError(f"method option {self.name!r}: validate is not callable")


@dataclass(frozen=True, kw_only=True)
class FieldMethod:
    """One field comparison method: everything the engine, the schema, the importers
    and the reports need to know about it.

    Attributes:
        name: the name schemas use (``method: NAME``): upper-case letters, digits and
            underscores.
        explanation: one line for the reports' method explanations.
        default_threshold: the threshold of a field that sets none.
        factory: builds the comparator from a field spec (its ``method`` attribute must
            be ``name``). ``None`` only for a method a provider decides.
        threshold_kind: ``score`` (in [0, 1]) or ``tolerance`` (any number ≥ 0).
        options: the settings the method reads besides the threshold.
        identical_text_matches: two identical non-blank texts always score 1, so the
            engine may decide them without the comparator. Only claim it when true:
            the comparator is then never asked about such pairs.
        provider: decided by an outside provider (an embedding model, an LLM judge)
            given as ``providers[name]``; such fields need one process.
        list_label: how a list of such values names its comparator (``HUNGARIAN
            (comparator: NUMERIC)``); default ``name``.
        threshold_in_list_label: whether that label also shows the threshold (and an
            IDP list's ``evaluation_threshold`` applies to its items).
        idp_list_comparator: the IDP configuration's ``hungarian_comparator`` name.
        stickler_names: Stickler's ``x-aws-stickler-comparator`` names, the
            comparator class first (``("FuzzyComparator", "fuzzy")``), any case.
        package, version: the distribution that provides the method (filled in from
            the entry point's distribution when not given); built-in methods have none.
            They are part of the fingerprint of every schema that uses the method.
    """

    name: str
    explanation: str
    default_threshold: float
    factory: ComparatorFactory | None = None
    threshold_kind: ThresholdKind = "score"
    options: tuple[MethodOption, ...] = ()
    identical_text_matches: bool = False
    provider: bool = False
    list_label: str | None = None
    threshold_in_list_label: bool = True
    idp_list_comparator: str | None = None
    stickler_names: tuple[str, ...] = ()
    package: str | None = None
    version: str | None = None

    def __post_init__(self) -> None:
        # Lists written where tuples are due would make the record unhashable.
        object.__setattr__(self, "options", tuple(self.options))
        object.__setattr__(self, "stickler_names", tuple(self.stickler_names))
        problem = self._problem()
        if problem is not None:
            raise ConfigurationError(f"field method {self.name!r}: {problem}")

    def _problem(self) -> str | None:
        if not isinstance(self.name, str) or not _METHOD_NAME.fullmatch(self.name):
            return "the name must be upper-case letters, digits and underscores"
        if self.name == "HUNGARIAN":
            return "HUNGARIAN is the list method, not a scalar method"
        if not isinstance(self.explanation, str) or not self.explanation.strip():
            return "an explanation (one line for reports) is required"
        if "\n" in self.explanation:
            return "the explanation must be one line"
        if self.threshold_kind not in ("score", "tolerance"):
            return f"threshold_kind {self.threshold_kind!r} is not 'score' or 'tolerance'"
        threshold = self.default_threshold
        high = 1.0 if self.threshold_kind == "score" else math.inf
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not 0 <= threshold <= high
            or math.isnan(threshold)
        ):
            return f"default_threshold {threshold!r} is out of range for a {self.threshold_kind}"
        if self.provider and self.factory is not None:
            return "a provider-decided method takes its comparator from the provider, not a factory"
        if not self.provider and not callable(self.factory):
            return "a factory (FieldSpec -> comparator) is required"
        names = [option.name for option in self.options]
        if not all(isinstance(option, MethodOption) for option in self.options):
            return "options must be MethodOption records"
        if len(set(names)) != len(names):
            return "an option is listed twice"
        if self.list_label is not None and not (
            isinstance(self.list_label, str) and self.list_label.strip()
        ):
            return "list_label must be non-empty text"
        if self.idp_list_comparator is not None and not (
            isinstance(self.idp_list_comparator, str)
            and _METHOD_NAME.fullmatch(self.idp_list_comparator)
        ):
            return "idp_list_comparator must be upper-case letters, digits and underscores"
        if not all(isinstance(name, str) and name.strip() for name in self.stickler_names):
            return "stickler_names must be non-empty texts"
        return None

    @property
    def option_names(self) -> frozenset[str]:
        """The names of the options this method reads."""
        return frozenset(option.name for option in self.options)

    def reads(self, option: str) -> bool:
        """Whether the method reads ``option``."""
        return any(entry.name == option for entry in self.options)

    def option(self, name: str) -> MethodOption | None:
        """The option ``name`` of this method, if it reads it."""
        return next((entry for entry in self.options if entry.name == name), None)

    @property
    def label_in_lists(self) -> str:
        """How the label of a list of such values names the comparator."""
        return self.list_label or self.name

    @property
    def builtin(self) -> bool:
        """Whether this is one of the package's own methods."""
        return _BUILTINS.get(self.name) is self

    def provenance(self) -> dict[str, str | None]:
        """``{"package", "version"}``: what provided the method (for fingerprints)."""
        return {"package": self.package, "version": self.version}


# ---------------------------------------------------------------------------- built-ins
# The factories import the comparators when first called: the comparators' module
# imports the schema, which imports this module.


def _exact(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import ExactComparator

    return ExactComparator(
        case_sensitive=spec.case_sensitive is not False, threshold=spec.effective_threshold
    )


def _normalized(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import NormalizedComparator

    return NormalizedComparator(
        case_sensitive=bool(spec.case_sensitive), threshold=spec.effective_threshold
    )


def _numeric(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import NumericComparator

    return NumericComparator(
        tolerance=spec.effective_threshold, relative_tolerance=spec.relative_tolerance
    )


def _fuzzy(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import FuzzyComparator

    return FuzzyComparator(threshold=spec.effective_threshold, scorer=spec.fuzzy_scorer)


def _levenshtein(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import LevenshteinComparator

    return LevenshteinComparator(threshold=spec.effective_threshold)


def _date(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import DateComparator

    return DateComparator(order=spec.date_order, threshold=spec.effective_threshold)


# Every built-in method: identical text is never a mismatch ("RM7.42" is "RM7.42"
# whatever a parser makes of it), so they all take the fast path.
BUILTIN_METHODS: tuple[FieldMethod, ...] = (
    FieldMethod(
        name="EXACT",
        default_threshold=1.0,
        factory=_exact,
        options=(MethodOption("case_sensitive"),),
        identical_text_matches=True,
        threshold_in_list_label=False,
        idp_list_comparator="EXACT",
        stickler_names=("ExactComparator", "exact"),
        explanation="the values are identical as text (case-sensitive unless the label says "
        "otherwise); score 1 or 0.",
    ),
    FieldMethod(
        name="NORMALIZED",
        default_threshold=1.0,
        factory=_normalized,
        options=(MethodOption("case_sensitive"),),
        identical_text_matches=True,
        threshold_in_list_label=False,
        stickler_names=("NormalizedComparator", "normalized"),
        explanation="equal after Unicode normalisation, case folding and removing "
        "punctuation and extra whitespace; score 1 or 0.",
    ),
    FieldMethod(
        name="NUMERIC_EXACT",
        default_threshold=0.0,  # an absolute tolerance, as in the IDP format
        threshold_kind="tolerance",
        factory=_numeric,
        options=(MethodOption("relative_tolerance"),),
        identical_text_matches=True,
        list_label="NUMERIC",
        threshold_in_list_label=False,
        idp_list_comparator="NUMERIC",
        stickler_names=("NumericComparator", "numeric"),
        explanation="both values read as numbers (currency and unit markers and "
        "thousands separators removed) and equal within the tolerance shown; text that is "
        "not a number matches only identical text.",
    ),
    FieldMethod(
        name="FUZZY",
        default_threshold=0.7,
        factory=_fuzzy,
        options=(MethodOption("fuzzy_scorer"),),
        identical_text_matches=True,
        threshold_in_list_label=True,
        idp_list_comparator="FUZZY",
        stickler_names=("FuzzyComparator", "fuzzy"),
        explanation="similarity from 0 to 1 of the trimmed, lower-cased texts (rapidfuzz); a "
        "match when the score reaches the threshold shown (inclusive).",
    ),
    FieldMethod(
        name="LEVENSHTEIN",
        default_threshold=0.7,
        factory=_levenshtein,
        identical_text_matches=True,
        threshold_in_list_label=True,
        stickler_names=("LevenshteinComparator", "levenshtein"),
        explanation="1 − edit distance / length of the longer lower-cased text; a match "
        "when the score reaches the threshold.",
    ),
    FieldMethod(
        name="DATE",
        default_threshold=1.0,
        factory=_date,
        options=(MethodOption("date_order"),),
        identical_text_matches=True,
        threshold_in_list_label=False,
        stickler_names=("DateComparator", "date"),
        explanation="both values read as calendar dates (in any format) and the same day.",
    ),
    FieldMethod(
        name="SEMANTIC",
        default_threshold=0.7,
        provider=True,
        identical_text_matches=True,
        threshold_in_list_label=False,
        stickler_names=("SemanticComparator", "semantic"),
        explanation="cosine similarity of text embeddings; a match when it reaches the threshold.",
    ),
    FieldMethod(
        name="LLM",
        default_threshold=0.5,
        provider=True,
        identical_text_matches=True,
        threshold_in_list_label=False,
        stickler_names=("LLMComparator", "llm"),
        explanation="an LLM judges whether the values mean the same; its reason is shown.",
    ),
)
"""The package's own methods, in the order schemas, messages and reports list them."""

_BUILTINS: dict[str, FieldMethod] = {method.name: method for method in BUILTIN_METHODS}
BUILTIN_NAMES: frozenset[str] = frozenset(_BUILTINS)


# ---------------------------------------------------------------------------- plugins

_LOCK = threading.RLock()
"""Guards the plugin table; re-entrant because a plugin module may register while its
entry point is being loaded."""
_PLUGINS: dict[str, FieldMethod] = {}
_SOURCES: dict[str, tuple[str, str] | None] = {}
"""How each plugin method was found: ``(entry point name, value)``, or ``None`` when
the program registered it."""
_entry_points_loaded = False


def _conflict(existing: FieldMethod, new: FieldMethod) -> bool:
    # The same code reached twice (an entry point whose module also registers on
    # import, a package on the path twice) is one method, not a conflict.
    return existing != replace(new, package=existing.package, version=existing.version)


def _register(
    method: FieldMethod, source: tuple[str, str] | None, *, replace_existing: bool
) -> FieldMethod:
    with _LOCK:
        if method.name in _BUILTINS:
            raise ConfigurationError(
                f"field method {method.name} is built in and cannot be replaced",
                expected="another name for the plugin's method",
            )
        existing = _PLUGINS.get(method.name)
        if existing is not None and not replace_existing:
            if not _conflict(existing, method):
                return existing
            raise ConfigurationError(
                f"field method {method.name} is registered twice, by "
                f"{_describe_source(existing, _SOURCES.get(method.name))} and by "
                f"{_describe_source(method, source)}",
                expected="one provider per method name (uninstall one of the plugins)",
            )
        _PLUGINS[method.name] = method
        _SOURCES[method.name] = source
        return method


def _describe_source(method: FieldMethod, source: tuple[str, str] | None) -> str:
    where = f"entry point {source[0]} = {source[1]}" if source else _module_of(method)
    if method.package:
        where += f" ({' '.join(filter(None, (method.package, method.version)))})"
    return where


def _module_of(method: FieldMethod) -> str:
    return str(getattr(method.factory, "__module__", None) or "the program")


def register_field_method(method: FieldMethod, *, replace: bool = False) -> FieldMethod:
    """Make ``method`` available to every schema in this process; returns it.

    Registering the same method again is harmless; another method of the same name is
    an error unless ``replace``. Built-in methods cannot be replaced. For
    ``compare_documents(workers=N)`` the factory and option validators must be
    importable functions of a module (not of the script being run), since worker
    processes import them by name.

    Raises:
        ConfigurationError: a built-in name, or a name already taken by another method.
    """
    if not isinstance(method, FieldMethod):
        raise ConfigurationError(
            f"register_field_method takes a FieldMethod, not {type(method).__name__}"
        )
    return _register(method, None, replace_existing=replace)


def unregister_field_method(name: str) -> None:
    """Forget the plugin method ``name`` (schemas validated before keep their specs).

    Raises:
        ConfigurationError: ``name`` is built in.
    """
    with _LOCK:
        if name in _BUILTINS:
            raise ConfigurationError(f"field method {name} is built in")
        _PLUGINS.pop(name, None)
        _SOURCES.pop(name, None)


def _records(target: Any, where: str) -> list[FieldMethod]:
    """The methods an entry point names: a record, a list of them, or a function
    returning either."""
    if callable(target) and not isinstance(target, FieldMethod):
        target = target()
    if isinstance(target, FieldMethod):
        return [target]
    if isinstance(target, list | tuple) and all(isinstance(item, FieldMethod) for item in target):
        return list(target)
    raise ConfigurationError(
        f"{where} gives {type(target).__name__}",
        expected="a FieldMethod, a list of them, or a function returning either",
    )


def _load_entry_point(entry_point: EntryPoint) -> None:
    where = f"field method plugin {entry_point.name} = {entry_point.value}"
    dist = getattr(entry_point, "dist", None)
    package = getattr(dist, "name", None) if dist is not None else None
    version = getattr(dist, "version", None) if dist is not None else None
    if package:
        where += f" (from {package} {version})"
    try:
        target = entry_point.load()
        records = _records(target, where)
    except ConfigurationError:
        raise
    except Exception as exc:  # a plugin's import may fail in any way; say which one
        raise ConfigurationError(
            f"{where} could not be loaded: {type(exc).__name__}: {exc}",
            expected="a working installation of the plugin, or the plugin uninstalled",
        ) from exc
    for record in records:
        _register(
            replace(
                record,
                package=record.package or package,
                version=record.version or version,
            ),
            (entry_point.name, entry_point.value),
            replace_existing=False,
        )


def load_field_method_plugins() -> tuple[FieldMethod, ...]:
    """Load the ``docevals.field_methods`` entry points (once per process) and return
    every plugin method registered.

    Raises:
        ConfigurationError: a plugin that cannot be imported, names something other
            than field methods, or takes a name another plugin has.
    """
    global _entry_points_loaded
    if not _entry_points_loaded:
        with _LOCK:
            if not _entry_points_loaded:
                from importlib.metadata import entry_points

                found = sorted(
                    entry_points(group=ENTRY_POINT_GROUP),
                    key=lambda entry: (entry.name, entry.value),
                )
                for entry_point in found:
                    _load_entry_point(entry_point)
                _entry_points_loaded = True
    with _LOCK:
        return tuple(_PLUGINS[name] for name in sorted(_PLUGINS))


def registered_field_method(name: str) -> FieldMethod | None:
    """The method ``name`` if it is built in or already registered (loads nothing)."""
    return _BUILTINS.get(name) or _PLUGINS.get(name)


def find_field_method(name: str) -> FieldMethod | None:
    """The method ``name``, loading the plugins first if it is not known yet."""
    method = _BUILTINS.get(name) or _PLUGINS.get(name)
    if method is None and not _entry_points_loaded:
        load_field_method_plugins()
        method = _PLUGINS.get(name)
    return method


def get_field_method(name: str) -> FieldMethod:
    """The method ``name``.

    Raises:
        ConfigurationError: no such method (built in, installed or registered).
    """
    method = find_field_method(name)
    if method is None:
        raise ConfigurationError(
            f"unknown field method {name!r}",
            expected=f"one of {', '.join(field_method_names())}; a plugin's method needs "
            f"its package installed (entry point group {ENTRY_POINT_GROUP}) or "
            "register_field_method()",
        )
    return method


def field_methods() -> tuple[FieldMethod, ...]:
    """Every method: the built-in ones in their order, then plugins by name."""
    return BUILTIN_METHODS + load_field_method_plugins()


def field_method_names() -> tuple[str, ...]:
    """The names of every method (see :func:`field_methods`)."""
    return tuple(method.name for method in field_methods())


def option_readers(option: str) -> tuple[str, ...]:
    """The methods that read ``option``, in :func:`field_methods` order."""
    return tuple(method.name for method in field_methods() if method.reads(option))


def plugin_option_names() -> frozenset[str]:
    """The options of plugin methods that are not schema attributes of their own."""
    return frozenset(
        option.name
        for method in load_field_method_plugins()
        for option in method.options
        if option.name not in BUILTIN_OPTIONS
    )


# ---------------------------------------------------------------------------- helpers
# A helper process (fields/processes.py) is forked from a fork server that may have
# started before the parent loaded its plugins or extended its import path, and it
# never runs the parent's own register_field_method() calls. The parent therefore
# sends what the schema's plugin methods need: its import path, then each method as
# its entry point (loaded again by name) or as the registered record itself (whose
# functions pickle by reference).


def helper_payload(names: Iterable[str]) -> bytes:
    """What a helper process needs to know the plugin methods ``names`` (built-in
    names are skipped); empty when there are none.

    Raises:
        ConfigurationError: a registered method whose functions cannot be imported by
            name in another process (defined in the running script, or locally).
    """
    plugins = sorted(set(names) - BUILTIN_NAMES)
    sources: list[tuple[Any, ...]] = []
    seen: set[tuple[str, str]] = set()
    for name in plugins:
        method = get_field_method(name)
        source = _SOURCES.get(name)
        if source is not None:
            if source not in seen:
                seen.add(source)
                sources.append(("entry_point", *source, method.package, method.version))
            continue
        functions = [method.factory, *(option.validate for option in method.options)]
        if any(getattr(function, "__module__", None) == "__main__" for function in functions):
            raise _unsendable(name, "it is defined in the script being run")
        sources.append(("record", method))
    if not sources:
        return b""
    try:
        inner = pickle.dumps(tuple(sources), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise _unsendable(names_text(plugins), str(exc)) from None
    path = tuple(_absolute(entry) for entry in sys.path)
    return pickle.dumps((path, inner), protocol=pickle.HIGHEST_PROTOCOL)


def _unsendable(name: str, why: str) -> ConfigurationError:
    return ConfigurationError(
        f"field method {name} cannot be used by worker processes: {why}",
        expected="its factory and option validators defined at the top level of an "
        "importable module (or the method installed through the entry point group "
        f"{ENTRY_POINT_GROUP}), or workers=1",
    )


def _absolute(entry: str) -> str:
    import os

    # The helper's working directory may differ from the parent's.
    return os.path.abspath(entry) if entry else os.getcwd()


def adopt_helper_payload(payload: bytes) -> None:
    """In a helper process: register the parent's plugin methods (see
    :func:`helper_payload`); the parent's version of a method wins."""
    if not payload:
        return
    path, inner = pickle.loads(payload)
    missing = [entry for entry in path if entry not in sys.path]
    if missing:
        sys.path.extend(missing)
        importlib.invalidate_caches()
    from importlib.metadata import EntryPoint

    for source in pickle.loads(inner):
        if source[0] == "record":
            _register(source[1], None, replace_existing=True)
            continue
        _, name, value, package, version = source
        entry_point = EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)
        for record in _records(entry_point.load(), f"field method plugin {name} = {value}"):
            _register(
                replace(record, package=package, version=version),
                (name, value),
                replace_existing=True,
            )


__all__ = [
    "BUILTIN_METHODS",
    "BUILTIN_NAMES",
    "BUILTIN_OPTIONS",
    "ENTRY_POINT_GROUP",
    "STRUCTURAL_KEYS",
    "ComparatorFactory",
    "FieldMethod",
    "MethodOption",
    "ThresholdKind",
    "adopt_helper_payload",
    "field_method_names",
    "field_methods",
    "find_field_method",
    "get_field_method",
    "helper_payload",
    "load_field_method_plugins",
    "names_text",
    "option_readers",
    "plugin_option_names",
    "register_field_method",
    "registered_field_method",
    "unregister_field_method",
]
