"""Field comparison methods as records: one :class:`FieldMethod` per method.

Everything the package knows about a method lives in its record: its default
threshold and what the threshold means (a score or a tolerance), the options it reads
and how they are validated, the one-line explanation reports print, whether identical
texts always match (the engine's fast path), the names other tools use for it (the IDP
accelerator's ``hungarian_comparator``, Stickler's comparator names), how list labels
name it, whether an outside provider decides it (``SEMANTIC``, ``LLM``), and the
factory that builds its comparator from a :class:`~docevals_mlflow.fields.schema.FieldSpec`.
The schema, the compiler, the list labels, the importers and the reports all read
these records; nothing else lists methods. The record type is in
:mod:`~docevals_mlflow.fields.method_records`, the package's own records in
:mod:`~docevals_mlflow.fields.builtin_methods`; this module keeps the table of every
method (re-exporting those names) and loads the plugins.

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
import pickle
import sys
import threading
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.fields.builtin_methods import BUILTIN_METHODS, BUILTIN_NAMES
from docevals_mlflow.fields.builtin_methods import BUILTINS as _BUILTINS
from docevals_mlflow.fields.method_records import (
    BUILTIN_OPTIONS,
    STRUCTURAL_KEYS,
    ComparatorFactory,
    FieldMethod,
    MethodOption,
    ThresholdKind,
    names_text,
)

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "docevals.field_methods"
"""The entry point group third-party field methods register in."""


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
