"""What a field method record holds: :class:`FieldMethod` and the options it reads
(:class:`MethodOption`), validated when the record is made.

The registry (:mod:`~docevals_mlflow.fields.registry`) keeps the records; the
package's own are in :mod:`~docevals_mlflow.fields.builtin_methods`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from docevals_mlflow.errors import ConfigurationError

if TYPE_CHECKING:
    from docevals_mlflow.fields.methods import Comparator
    from docevals_mlflow.fields.schema import FieldSpec

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
        structured_values: the comparator scores any JSON value as one leaf (objects,
            lists, scalars, ``None``), so a single-value field of this method may hold
            an object or a list without being a shape mismatch (``ANLS_STAR``).
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
    structured_values: bool = False
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
        # Imported here: the built-in records are made of this class.
        from docevals_mlflow.fields.builtin_methods import BUILTINS

        return BUILTINS.get(self.name) is self

    def provenance(self) -> dict[str, str | None]:
        """``{"package", "version"}``: what provided the method (for fingerprints)."""
        return {"package": self.package, "version": self.version}
