"""Base classes for the package's pydantic models.

Validation failures surface as :class:`~docevals_mlflow.errors.InputError` (a
``ValueError``) whose message names the model, the field path and what was expected,
instead of pydantic's multi-line ``ValidationError``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Self, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import SchemaValidator

from docevals_mlflow.errors import InputError


def _loc_text(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe_validation_error(error: ValidationError, *, title: str | None = None) -> str:
    """One readable line per problem: ``field.path: message (got ...)``."""
    lines = []
    for item in error.errors(include_url=False):
        message = str(item.get("msg", "invalid value"))
        for prefix in ("Value error, ", "Assertion failed, "):
            if message.startswith(prefix):
                message = message[len(prefix) :]
        where = _loc_text(tuple(item.get("loc", ())))
        got = ""
        if (
            item.get("type") not in {"missing", "value_error", "assertion_error"}
            and "input" in item
        ):
            shown = repr(item["input"])
            got = f" (got {shown[:80] + '...' if len(shown) > 80 else shown})"
        lines.append(f"{where}: {message}{got}" if where else f"{message}{got}")
    head = f"invalid {title or error.title}"
    return head + ": " + "; ".join(lines)


def input_error_from_validation(
    error: ValidationError,
    *,
    title: str | None = None,
    source: str | None = None,
    record: str | int | None = None,
) -> InputError:
    """Convert a pydantic error to an :class:`InputError` carrying the first field path.

    When a validator raised one of this package's errors on purpose, that error (with
    its class and context) is returned instead of a generic one.
    """
    first = error.errors(include_url=False)
    if len(first) == 1:
        original = (first[0].get("ctx") or {}).get("error")
        if isinstance(original, InputError):
            outer = _loc_text(tuple(first[0].get("loc", ())))
            if outer:
                # A nested model failed inside a list or field: keep where it sits.
                nested = type(original)(
                    f"invalid {title or error.title}: {outer}: {original.message}",
                    source=original.source or source,
                    record=original.record if original.record is not None else record,
                    stage=original.stage,
                    expected=original.expected,
                )
                nested.path = outer + (f".{original.path}" if original.path else "")
                return nested
            located = original.located(source=source, record=record)
            assert isinstance(located, InputError)
            return located
    converted = InputError(
        describe_validation_error(error, title=title), source=source, record=record
    )
    # The message already names every field path; the attribute keeps the first one
    # for callers that want it without parsing text.
    converted.path = _loc_text(tuple(first[0].get("loc", ()))) if first else None
    return converted


class DocEvalsModel(BaseModel):
    """Base for models: invalid data raises :class:`InputError`."""

    model_config = ConfigDict(extra="forbid")

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise input_error_from_validation(exc, title=type(self).__name__) from None

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        extra: Any = None,
        from_attributes: bool | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        try:
            return super().model_validate(
                obj,
                strict=strict,
                extra=extra,
                from_attributes=from_attributes,
                context=context,
                by_alias=by_alias,
                by_name=by_name,
            )
        except ValidationError as exc:
            raise input_error_from_validation(exc, title=cls.__name__) from None


ModelT = TypeVar("ModelT", bound=BaseModel)

_LEAN: dict[type[BaseModel], SchemaValidator | None] = {}
_LEAN_LOCK = threading.Lock()


def validate_lean(model: type[ModelT], data: Any) -> ModelT:
    """``model.model_validate(data)`` without a Python call per nested record.

    Pydantic calls a model's own ``__init__`` for every nested instance it validates,
    and :class:`DocEvalsModel` has one (to raise :class:`InputError`), so a file of
    thousands of nested records pays that call thousands of times. This validates
    with the same schema minus those calls (same checks, same objects); only when that
    fails does ``model.model_validate`` run again, to raise exactly the error it always
    raised (nested records named as before).
    """
    validator = lean_validator(model)
    if validator is not None:
        try:
            return validator.validate_python(data)  # type: ignore[no-any-return]
        except ValidationError:
            pass
    return model.model_validate(data)


def lean_validator(model: type[BaseModel]) -> SchemaValidator | None:
    """The validator :func:`validate_lean` uses (built once per model; ``None`` when
    the model nests no record whose ``__init__`` is :class:`DocEvalsModel`'s)."""
    with _LEAN_LOCK:
        if model not in _LEAN:
            lean: list[type[BaseModel]] = []
            schema, classes = copy_core_schema(
                model.__pydantic_core_schema__, lambda node: _skip_init_call(node, lean)
            )
            with schemas_as_given(classes):
                _LEAN[model] = SchemaValidator(schema) if lean else None
        return _LEAN[model]


def _skip_init_call(node: dict[str, Any], lean: list[type[BaseModel]]) -> None:
    cls = node.get("cls")
    if (
        node.get("type") == "model"
        and node.get("custom_init")
        and getattr(cls, "__init__", None) is DocEvalsModel.__init__
    ):
        node["custom_init"] = False
        lean.append(cls)  # type: ignore[arg-type]


def copy_core_schema(
    schema: Any, edit: Callable[[dict[str, Any]], None]
) -> tuple[Any, list[type[BaseModel]]]:
    """A copy of a pydantic core schema with ``edit`` applied to each of its dicts
    (innermost first), and the model classes in it (for :func:`schemas_as_given`).

    Dicts and lists are copied (the model's own schema stays as it is); anything else
    (classes, functions) is shared.
    """
    classes: list[type[BaseModel]] = []

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        copied = {key: walk(value) for key, value in node.items()}
        if copied.get("type") == "model" and isinstance(copied.get("cls"), type):
            classes.append(copied["cls"])
        edit(copied)
        return copied

    return walk(schema), classes


@contextmanager
def schemas_as_given(classes: list[type[BaseModel]]) -> Iterator[None]:
    """While a ``SchemaValidator`` or ``SchemaSerializer`` of an edited schema copy is
    built: pydantic-core builds a nested model from the class's own prebuilt validator
    (or serializer) whenever the class is complete, ignoring the schema given, so the
    classes read as incomplete meanwhile (nothing else changes; restored at once)."""
    flipped = [c for c in dict.fromkeys(classes) if c.__dict__.get("__pydantic_complete__")]
    for cls in flipped:
        cls.__pydantic_complete__ = False
    try:
        yield
    finally:
        for cls in flipped:
            cls.__pydantic_complete__ = True


class FrozenModel(DocEvalsModel):
    """A model whose fields cannot be reassigned once fingerprinted."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _not_boolean(value: Any) -> Any:
    # YAML and JSON booleans pass for numbers in pydantic (``threshold: true`` would
    # read as 1.0); a boolean where a number is due is a slip, never a setting.
    if isinstance(value, bool):
        raise ValueError(f"a number is due here, not the boolean {str(value).lower()}")
    return value


Number = Annotated[float, BeforeValidator(_not_boolean), Field(allow_inf_nan=False)]
"""A finite number that is not a boolean: thresholds, tolerances, weights, sampling
settings. NaN compares false with everything and an infinite tolerance matches
everything, so either would decide every comparison silently."""

WholeNumber = Annotated[int, BeforeValidator(_not_boolean)]
"""An integer that is not a boolean (``max_retries: true`` is a slip, not 1)."""
