"""The method records are the one list of methods: everything that names methods agrees
with them (schema, defaults, options, fast path, explanations, list labels, importer
aliases, providers), and records are checked when they are made."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.fields import registry
from docevals_mlflow.fields.compiler import SchemaCompiler
from docevals_mlflow.fields.importers import schema_from_idp_config, schema_from_json_schema
from docevals_mlflow.fields.importers.common import IDP_LISTING_ORDER
from docevals_mlflow.fields.importers.idp import HUNGARIAN_LISTING_ORDER
from docevals_mlflow.fields.importers.json_rules import _CONFIG_KEYS, STICKLER_LISTING_ORDER
from docevals_mlflow.fields.leaves import ScalarNode
from docevals_mlflow.fields.lists import ArrayNode
from docevals_mlflow.fields.methods import SimpleComparator, make_comparator
from docevals_mlflow.fields.parallel import provider_fields
from docevals_mlflow.fields.registry import (
    BUILTIN_METHODS,
    BUILTIN_OPTIONS,
    STRUCTURAL_KEYS,
    FieldMethod,
    MethodOption,
)
from docevals_mlflow.fields.schema import (
    DEFAULT_THRESHOLDS,
    METHODS,
    ClassSchema,
    DocumentSchema,
    FieldSpec,
    Method,
)
from docevals_mlflow.reports.fields_markdown import METHOD_EXPLANATIONS

BUILTIN = {method.name: method for method in BUILTIN_METHODS}
DECIDED_HERE = [method for method in BUILTIN_METHODS if not method.provider]

OPTION_VALUES: dict[str, Any] = {
    "fuzzy_scorer": "token_set_ratio",
    "date_order": "day_first",
    "relative_tolerance": 0.01,
    "case_sensitive": True,
}
"""A value for each built-in option (any value the option accepts)."""

SAMPLES = ["RM7.42", "N/A", "Acme Corp.", "  padded  ", "2024-01-15", "1,234.50", "ß", "x-1"]
"""Non-blank texts whose identity the fast path decides."""


class _Provided(SimpleComparator):
    def score(self, expected: Any, predicted: Any) -> float:
        return 1.0 if expected == predicted else 0.0


def _fake_provider(spec: FieldSpec) -> Any:
    """What an embedding model or a judge would build, without either."""
    return _Provided(spec.effective_method, spec.effective_threshold)


# --- every list is the registry's --------------------------------------------------------


def test_the_method_literal_and_methods_are_the_builtin_records() -> None:
    assert get_args(Method) == METHODS == tuple(BUILTIN)
    assert set(BUILTIN) == registry.BUILTIN_NAMES


def test_default_thresholds_are_the_records() -> None:
    assert {
        name: method.default_threshold for name, method in BUILTIN.items()
    } == DEFAULT_THRESHOLDS
    for name, method in BUILTIN.items():
        assert FieldSpec(method=name).effective_threshold == method.default_threshold


def test_threshold_kind_decides_the_range() -> None:
    for name, method in BUILTIN.items():
        if method.threshold_kind == "tolerance":
            assert FieldSpec(method=name, threshold=5).effective_threshold == 5
        else:
            with pytest.raises(InputError, match=f"threshold 5.0 for {name} must be in"):
                FieldSpec(method=name, threshold=5)


def test_schema_keys_are_the_builtin_options_and_the_structural_keys() -> None:
    assert set(FieldSpec.model_fields) == set(BUILTIN_OPTIONS) | set(STRUCTURAL_KEYS)
    read = {option.name for method in BUILTIN_METHODS for option in method.options}
    assert read == set(BUILTIN_OPTIONS) == set(OPTION_VALUES)


@pytest.mark.parametrize("option", BUILTIN_OPTIONS)
def test_an_option_is_accepted_exactly_by_the_methods_that_read_it(option: str) -> None:
    for name, method in BUILTIN.items():
        settings = {"method": name, option: OPTION_VALUES[option]}
        if method.reads(option):
            assert getattr(FieldSpec(**settings), option) == OPTION_VALUES[option]
        else:
            with pytest.raises(InputError, match=f"'{option}' applies to"):
                FieldSpec(**settings)
    readers = [name for name, method in BUILTIN.items() if method.reads(option)]
    assert registry.option_readers(option)[: len(readers)] == tuple(readers)


@pytest.mark.parametrize("method", DECIDED_HERE, ids=lambda method: method.name)
def test_the_fast_path_claims_only_what_the_comparator_confirms(method: FieldMethod) -> None:
    node = SchemaCompiler().compile(FieldSpec(method=method.name), "$.f")
    assert isinstance(node, ScalarNode)
    assert node.text_identity is method.identical_text_matches
    comparator = node.comparator
    if method.identical_text_matches:
        for text in SAMPLES:
            key = comparator.prepare(text)
            assert comparator.score(key, comparator.prepare(text)) == 1.0, text


def test_provider_methods_take_the_fast_path_too() -> None:
    providers = {name: _fake_provider for name, method in BUILTIN.items() if method.provider}
    for name in providers:
        node = SchemaCompiler(providers).compile(FieldSpec(method=name), "$.f")
        assert isinstance(node, ScalarNode)
        assert node.text_identity is BUILTIN[name].identical_text_matches


@pytest.mark.parametrize("method", DECIDED_HERE, ids=lambda method: method.name)
def test_factories_build_their_own_method(method: FieldMethod) -> None:
    assert make_comparator(FieldSpec(method=method.name)).method == method.name


def test_provider_methods_are_the_provider_records() -> None:
    schema = DocumentSchema(
        classes=[ClassSchema(name="c", fields={name: FieldSpec(method=name) for name in BUILTIN})]
    )
    assert provider_fields(schema) == [
        f"$.{name}" for name, method in BUILTIN.items() if method.provider
    ]
    for name, method in BUILTIN.items():
        if method.provider:
            with pytest.raises(ConfigurationError, match=f"method {name} needs a provider"):
                make_comparator(FieldSpec(method=name))


def test_explanations_are_the_records() -> None:
    assert list(METHOD_EXPLANATIONS) == [*BUILTIN, "HUNGARIAN"]
    for name, method in BUILTIN.items():
        assert METHOD_EXPLANATIONS[name] == method.explanation


@pytest.mark.parametrize("method", BUILTIN_METHODS, ids=lambda method: method.name)
def test_list_labels_are_the_records(method: FieldMethod) -> None:
    providers = {name: _fake_provider for name, known in BUILTIN.items() if known.provider}
    spec = FieldSpec(items=FieldSpec(method=method.name, threshold=0.25))
    node = SchemaCompiler(providers).compile(spec, "$.list")
    assert isinstance(node, ArrayNode)
    name = method.list_label or method.name
    shown = ", threshold: 0.25" if method.threshold_in_list_label else ""
    assert node.label == f"HUNGARIAN (comparator: {name}{shown})"


def test_idp_method_names_are_the_records() -> None:
    assert set(IDP_LISTING_ORDER) == set(BUILTIN) | {"HUNGARIAN"}
    for name in BUILTIN:
        schema = schema_from_idp_config(
            {"classes": [{"name": "c", "attributes": [{"name": "f", "evaluation_method": name}]}]}
        )
        assert schema.classes[0].fields["f"].method == name


def test_idp_hungarian_comparators_are_the_records() -> None:
    aliases = {m.idp_list_comparator: m.name for m in BUILTIN_METHODS if m.idp_list_comparator}
    assert set(HUNGARIAN_LISTING_ORDER) == set(aliases)
    for alias, name in aliases.items():
        attribute = {
            "name": "tags",
            "attributeType": "list",
            "hungarian_comparator": alias.lower(),
            "evaluation_threshold": 0.4,
        }
        schema = schema_from_idp_config({"classes": [{"name": "c", "attributes": [attribute]}]})
        items = schema.classes[0].fields["tags"].items
        assert items is not None
        assert items.method == name
        # The IDP applies the threshold to the items of its graded comparator only.
        graded = BUILTIN[name].threshold_in_list_label
        assert items.threshold == (0.4 if graded else None)


def test_stickler_names_are_the_records() -> None:
    assert set(STICKLER_LISTING_ORDER) == {m.name for m in BUILTIN_METHODS if m.stickler_names}
    for method in BUILTIN_METHODS:
        assert method.stickler_names[0].endswith("Comparator")
        for alias in method.stickler_names:
            for spelling in (alias, alias.upper()):
                schema = schema_from_json_schema(
                    {"properties": {"f": {"type": "string", "x-aws-stickler-comparator": spelling}}}
                )
                assert schema.classes[0].fields["f"].method == method.name


def test_stickler_config_keys_follow_the_records() -> None:
    # Each comparator setting is accepted by the methods that read its option (or,
    # for the tolerances, whose threshold is a tolerance), refused by the others.
    values = {
        "tolerance": 0.5,
        "absolute_tolerance": 0.5,
        "relative_tolerance": 0.01,
        "method": "token_set_ratio",
        "dayfirst": True,
        "case_sensitive": True,
    }
    assert set(values) == set(_CONFIG_KEYS)
    for key, value in values.items():
        for name, method in BUILTIN.items():
            option = _CONFIG_KEYS[key]
            applies = (
                method.threshold_kind == "tolerance" if option is None else method.reads(option)
            )
            prop = {
                "type": "string",
                "x-aws-idp-evaluation-method": name,
                "x-aws-stickler-comparator-config": {key: value},
            }
            if applies:
                schema_from_json_schema({"properties": {"f": prop}})
            else:
                with pytest.raises(InputError, match=f"config.{key} applies to"):
                    schema_from_json_schema({"properties": {"f": prop}})


# --- records are checked ------------------------------------------------------------------


def _factory(spec: FieldSpec) -> Any:
    return make_comparator(FieldSpec(method="EXACT"))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "jaccard"}, "upper-case"),
        ({"name": "HUNGARIAN"}, "list method"),
        ({"explanation": ""}, "explanation"),
        ({"explanation": "two\nlines"}, "one line"),
        ({"default_threshold": 1.5}, "out of range for a score"),
        ({"default_threshold": True}, "out of range"),
        ({"default_threshold": -1, "threshold_kind": "tolerance"}, "out of range"),
        ({"threshold_kind": "distance"}, "threshold_kind"),
        ({"factory": None}, "factory"),
        ({"provider": True}, "provider"),
        ({"options": (MethodOption("x"), MethodOption("x"))}, "listed twice"),
        ({"idp_list_comparator": "jac"}, "idp_list_comparator"),
        ({"stickler_names": ("",)}, "stickler_names"),
        ({"list_label": " "}, "list_label"),
    ],
)
def test_bad_records_are_refused(changes: dict[str, Any], message: str) -> None:
    settings: dict[str, Any] = {
        "name": "MINE",
        "explanation": "mine.",
        "default_threshold": 0.5,
        "factory": _factory,
        **changes,
    }
    with pytest.raises(ConfigurationError, match=message):
        FieldMethod(**settings)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (lambda: MethodOption("Bad"), "invalid method option name"),
        (lambda: MethodOption("threshold"), "shadow the schema key"),
        (lambda: MethodOption("weight"), "shadow the schema key"),
        (lambda: MethodOption("case_sensitive", default=True), "schema attribute"),
        (lambda: MethodOption("tokens", validate=3), "not callable"),  # type: ignore[arg-type]
    ],
)
def test_bad_options_are_refused(option: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        option()


def test_builtin_methods_cannot_be_replaced_or_removed() -> None:
    exact = FieldMethod(name="EXACT", explanation="x.", default_threshold=1.0, factory=_factory)
    with pytest.raises(ConfigurationError, match="built in"):
        registry.register_field_method(exact)
    with pytest.raises(ConfigurationError, match="built in"):
        registry.unregister_field_method("EXACT")
    assert all(method.builtin for method in BUILTIN_METHODS)
    assert not exact.builtin
