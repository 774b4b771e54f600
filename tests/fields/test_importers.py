import copy
import json

import pytest
import yaml

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.importers import (
    IDP_DEFAULT_MATCH_THRESHOLD,
    infer_class_schema,
    looks_like_idp_config,
    looks_like_json_schema,
    schema_from_idp_config,
    schema_from_json_schema,
)
from docevals_mlflow.fields.schema import (
    ClassSchema,
    DocumentSchema,
    FieldSpec,
)

# The bank-statement configuration from the IDP evaluation-service documentation
# (seed 004), with its top-level "evaluation" block that the importer must ignore.
BANK_STATEMENT_CONFIG = {
    "evaluation": {
        "llm_method": {
            "model": "anthropic.claude-3-sonnet-20240229-v1:0",
            "temperature": 0.0,
            "top_k": 5,
            "system_prompt": "You are an evaluator...",
            "task_prompt": "I need to evaluate attribute extraction for {DOCUMENT_CLASS}...",
        }
    },
    "classes": [
        {
            "name": "Bank Statement",
            "attributes": [
                {
                    "name": "Account Number",
                    "description": "Primary account identifier",
                    "attributeType": "simple",
                    "evaluation_method": "EXACT",
                },
                {
                    "name": "Statement Period",
                    "description": "Statement period (e.g., January 2024)",
                    "attributeType": "simple",
                    "evaluation_method": "FUZZY",
                    "evaluation_threshold": 0.8,
                },
                {
                    "name": "Account Holder Address",
                    "description": "Complete address information for the account holder",
                    "attributeType": "group",
                    "groupAttributes": [
                        {
                            "name": "Street Number",
                            "description": "House or building number",
                            "evaluation_method": "FUZZY",
                            "evaluation_threshold": 0.9,
                        },
                        {
                            "name": "Street Name",
                            "description": "Name of the street",
                            "evaluation_method": "FUZZY",
                            "evaluation_threshold": 0.8,
                        },
                        {
                            "name": "City",
                            "description": "City name",
                            "evaluation_method": "FUZZY",
                            "evaluation_threshold": 0.9,
                        },
                        {
                            "name": "State",
                            "description": "State abbreviation",
                            "evaluation_method": "EXACT",
                        },
                        {
                            "name": "ZIP Code",
                            "description": "Postal code",
                            "evaluation_method": "EXACT",
                        },
                    ],
                },
                {
                    "name": "Transactions",
                    "description": "List of all transactions in the statement period",
                    "attributeType": "list",
                    "listItemTemplate": {
                        "itemDescription": "Individual transaction record",
                        "itemAttributes": [
                            {
                                "name": "Date",
                                "description": "Transaction date",
                                "evaluation_method": "FUZZY",
                                "evaluation_threshold": 0.9,
                            },
                            {
                                "name": "Description",
                                "description": "Transaction description or merchant name",
                                "evaluation_method": "SEMANTIC",
                                "evaluation_threshold": 0.7,
                            },
                            {
                                "name": "Amount",
                                "description": "Transaction amount",
                                "evaluation_method": "NUMERIC_EXACT",
                            },
                        ],
                    },
                },
            ],
        }
    ],
}

# The same class as JSON Schema with x-aws-idp-* extensions, using $defs for the
# address and the transaction.
BANK_STATEMENT_JSON_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "x-aws-idp-document-type": "Bank Statement",
    "properties": {
        "Account Number": {
            "type": "string",
            "description": "Primary account identifier",
            "x-aws-idp-evaluation-method": "EXACT",
        },
        "Statement Period": {
            "type": "string",
            "description": "Statement period (e.g., January 2024)",
            "x-aws-idp-evaluation-method": "FUZZY",
            "x-aws-idp-evaluation-threshold": 0.8,
        },
        "Account Holder Address": {
            "$ref": "#/$defs/Address",
            "description": "Complete address information for the account holder",
        },
        "Transactions": {
            "type": "array",
            "description": "List of all transactions in the statement period",
            "x-aws-idp-evaluation-method": "HUNGARIAN",
            "items": {"$ref": "#/$defs/Transaction"},
        },
    },
    "$defs": {
        "Address": {
            "type": "object",
            "properties": {
                "Street Number": {
                    "type": "string",
                    "description": "House or building number",
                    "x-aws-idp-evaluation-method": "FUZZY",
                    "x-aws-idp-evaluation-threshold": 0.9,
                },
                "Street Name": {
                    "type": "string",
                    "description": "Name of the street",
                    "x-aws-idp-evaluation-method": "FUZZY",
                    "x-aws-idp-evaluation-threshold": 0.8,
                },
                "City": {
                    "type": "string",
                    "description": "City name",
                    "x-aws-idp-evaluation-method": "FUZZY",
                    "x-aws-idp-evaluation-threshold": 0.9,
                },
                "State": {
                    "type": "string",
                    "description": "State abbreviation",
                    "x-aws-idp-evaluation-method": "EXACT",
                },
                "ZIP Code": {
                    "type": ["string", "null"],
                    "description": "Postal code",
                    "x-aws-idp-evaluation-method": "EXACT",
                },
            },
        },
        "Transaction": {
            "type": "object",
            "description": "Individual transaction record",
            "properties": {
                "Date": {
                    "type": "string",
                    "description": "Transaction date",
                    "x-aws-idp-evaluation-method": "FUZZY",
                    "x-aws-idp-evaluation-threshold": 0.9,
                },
                "Description": {
                    "type": "string",
                    "description": "Transaction description or merchant name",
                    "x-aws-idp-evaluation-method": "SEMANTIC",
                    "x-aws-idp-evaluation-threshold": 0.7,
                },
                "Amount": {
                    "anyOf": [{"type": "number"}, {"type": "null"}],
                    "description": "Transaction amount",
                    "x-aws-idp-evaluation-method": "NUMERIC_EXACT",
                },
            },
        },
    },
}

# What Stickler 1.0's StructuredModel.to_json_schema() wrote for a small model
# (captured once; the tests do not need Stickler installed).
STICKLER_EXPORT = {
    "type": "object",
    "x-aws-stickler-model-name": "Doc",
    "properties": {
        "acct": {
            "type": "string",
            "x-aws-stickler-comparator": "ExactComparator",
            "x-aws-stickler-threshold": 1.0,
            "x-aws-stickler-weight": 2.0,
            "x-aws-stickler-clip-under-threshold": True,
        },
        "addr": {
            "type": "object",
            "x-aws-stickler-model-name": "Addr",
            "properties": {
                "city": {
                    "type": "string",
                    "x-aws-stickler-comparator": "FuzzyComparator",
                    "x-aws-stickler-comparator-config": {"method": "ratio", "normalize": True},
                    "x-aws-stickler-threshold": 0.9,
                    "x-aws-stickler-weight": 1.0,
                    "x-aws-stickler-clip-under-threshold": True,
                }
            },
            "required": [],
            "x-aws-stickler-match-threshold": 0.7,
            "x-aws-stickler-threshold": 0.6,
            "x-aws-stickler-weight": 1.0,
            "x-aws-stickler-clip-under-threshold": True,
        },
        "txs": {
            "type": "array",
            "items": {
                "type": "object",
                "x-aws-stickler-model-name": "Tx",
                "properties": {
                    "amount": {
                        "type": "number",
                        "x-aws-stickler-comparator": "NumericComparator",
                        "x-aws-stickler-comparator-config": {"absolute_tolerance": 0.01},
                        "x-aws-stickler-threshold": 1.0,
                        "x-aws-stickler-weight": 1.0,
                        "x-aws-stickler-clip-under-threshold": True,
                    }
                },
                "required": [],
                "x-aws-stickler-match-threshold": 0.75,
            },
            "x-aws-stickler-weight": 1.0,
            "x-aws-stickler-clip-under-threshold": True,
        },
        "tags": {
            "type": "array",
            "items": {"type": "string"},
            "x-aws-stickler-comparator": "FuzzyComparator",
            "x-aws-stickler-comparator-config": {"method": "ratio", "normalize": True},
            "x-aws-stickler-threshold": 0.8,
            "x-aws-stickler-weight": 1.0,
            "x-aws-stickler-clip-under-threshold": True,
        },
    },
    "required": [],
    "x-aws-stickler-match-threshold": 0.7,
}

IDP_METHODS = "EXACT, NUMERIC_EXACT, FUZZY, HUNGARIAN, SEMANTIC, LLM, LEVENSHTEIN, DATE, NORMALIZED"


def _idp(*attributes, name="Bank Statement", **top):
    return {"classes": [{"name": name, "attributes": list(attributes)}], **top}


def _idp_fields(*attributes):
    return schema_from_idp_config(_idp(*attributes)).classes[0].fields


def _json_fields(properties, **extra):
    schema = {"type": "object", "properties": properties, **extra}
    return schema_from_json_schema(schema).classes[0].fields


def _assert_error(exc_info, *, record, path, contains):
    error = exc_info.value
    assert isinstance(error, InputError)
    assert error.record == record
    assert error.path == path
    for text in (record, path, *contains):
        assert text in error.message, (text, error.message)


# --- IDP configuration: the bank statement ------------------------------------------


def test_bank_statement_config_imports_field_by_field():
    schema = schema_from_idp_config(BANK_STATEMENT_CONFIG)
    assert schema.schema_id == "idp-config"
    assert schema.version == "1"
    assert [c.name for c in schema.classes] == ["Bank Statement"]
    fields = schema.classes[0].fields
    assert list(fields) == [
        "Account Number",
        "Statement Period",
        "Account Holder Address",
        "Transactions",
    ]

    account = fields["Account Number"]
    assert (account.kind, account.method, account.threshold) == ("scalar", "EXACT", None)
    assert account.description == "Primary account identifier"

    period = fields["Statement Period"]
    assert (period.kind, period.method, period.threshold) == ("scalar", "FUZZY", 0.8)

    address = fields["Account Holder Address"]
    assert address.kind == "object"
    assert address.method is None
    assert address.description == "Complete address information for the account holder"
    assert address.fields is not None
    expected_address = {
        "Street Number": ("FUZZY", 0.9),
        "Street Name": ("FUZZY", 0.8),
        "City": ("FUZZY", 0.9),
        "State": ("EXACT", None),
        "ZIP Code": ("EXACT", None),
    }
    assert list(address.fields) == list(expected_address)
    for name, (method, threshold) in expected_address.items():
        spec = address.fields[name]
        assert (spec.kind, spec.method, spec.threshold) == ("scalar", method, threshold), name

    transactions = fields["Transactions"]
    assert transactions.kind == "array"
    assert transactions.method is None
    assert transactions.match_threshold == IDP_DEFAULT_MATCH_THRESHOLD
    assert transactions.description == "List of all transactions in the statement period"
    item = transactions.items
    assert item is not None
    assert item.kind == "object"
    assert item.description == "Individual transaction record"
    assert item.fields is not None
    assert list(item.fields) == ["Date", "Description", "Amount"]
    date, description, amount = item.fields.values()
    assert (date.kind, date.method, date.threshold) == ("scalar", "FUZZY", 0.9)
    assert (description.kind, description.method, description.threshold) == (
        "scalar",
        "SEMANTIC",
        0.7,
    )
    assert (amount.kind, amount.method, amount.threshold) == ("scalar", "NUMERIC_EXACT", None)
    assert amount.effective_threshold == 0.0


def test_bank_statement_config_records_every_method_used():
    schema = schema_from_idp_config(BANK_STATEMENT_CONFIG)
    assert schema.methods_used() == [
        ("Bank Statement", "$.Account Number", "EXACT"),
        ("Bank Statement", "$.Statement Period", "FUZZY"),
        ("Bank Statement", "$.Account Holder Address.Street Number", "FUZZY"),
        ("Bank Statement", "$.Account Holder Address.Street Name", "FUZZY"),
        ("Bank Statement", "$.Account Holder Address.City", "FUZZY"),
        ("Bank Statement", "$.Account Holder Address.State", "EXACT"),
        ("Bank Statement", "$.Account Holder Address.ZIP Code", "EXACT"),
        ("Bank Statement", "$.Transactions[].Date", "FUZZY"),
        ("Bank Statement", "$.Transactions[].Description", "SEMANTIC"),
        ("Bank Statement", "$.Transactions[].Amount", "NUMERIC_EXACT"),
    ]


def test_importing_does_not_modify_the_config():
    config = copy.deepcopy(BANK_STATEMENT_CONFIG)
    schema_from_idp_config(config)
    assert config == BANK_STATEMENT_CONFIG


def test_schema_id_comes_from_schema_id_or_name():
    assert schema_from_idp_config(_idp(name="A", schema_id="bank")).schema_id == "bank"
    unnamed = _idp(name="A", evaluation={"llm_method": {"model": "m"}})
    assert schema_from_idp_config(unnamed).schema_id == "idp-config"
    config = {"name": "statements", "classes": [{"name": "A", "attributes": []}]}
    assert schema_from_idp_config(config).schema_id == "statements"


def test_class_description_and_classes_without_attributes():
    config = {
        "classes": [
            {"name": "Letter", "description": "A letter", "attributes": []},
            {"name": "Memo", "attributes": [{"name": "To"}]},
        ]
    }
    letter, memo = schema_from_idp_config(config).classes
    assert letter.description == "A letter"
    assert letter.fields == {}
    assert memo.fields == {"To": FieldSpec()}


# --- IDP configuration: methods and thresholds ----------------------------------------


def test_methods_are_case_insensitive_and_include_the_json_schema_ones():
    fields = _idp_fields(
        {"name": "a", "evaluation_method": "fuzzy", "evaluation_threshold": 0.6},
        {"name": "b", "evaluation_method": "Levenshtein"},
        {"name": "c", "evaluation_method": "date"},
        {"name": "d", "evaluation_method": " normalized "},
        {"name": "e", "evaluation_method": "llm", "evaluation_threshold": 0.5},
        {"name": "f"},
    )
    assert [(spec.method, spec.threshold) for spec in fields.values()] == [
        ("FUZZY", 0.6),
        ("LEVENSHTEIN", None),
        ("DATE", None),
        ("NORMALIZED", None),
        ("LLM", 0.5),
        (None, None),
    ]


def test_numeric_exact_threshold_is_an_absolute_tolerance():
    fields = _idp_fields(
        {"name": "Total", "evaluation_method": "NUMERIC_EXACT", "evaluation_threshold": 5},
        {"name": "Tax", "evaluation_method": "NUMERIC_EXACT", "evaluation_threshold": 0.01},
    )
    assert fields["Total"].threshold == 5.0
    assert fields["Tax"].threshold == 0.01


def test_thresholds_may_be_numeric_text_as_in_the_idp():
    fields = _idp_fields(
        {"name": "a", "evaluation_method": "FUZZY", "evaluation_threshold": "0.75"}
    )
    assert fields["a"].threshold == 0.75


def test_list_hungarian_threshold_is_the_match_threshold():
    fields = _idp_fields(
        {
            "name": "Items",
            "attributeType": "list",
            "evaluation_method": "HUNGARIAN",
            "evaluation_threshold": 0.65,
            "listItemTemplate": {
                "itemAttributes": [{"name": "Code", "evaluation_method": "EXACT"}]
            },
        }
    )
    items = fields["Items"]
    assert items.kind == "array"
    assert items.match_threshold == 0.65
    assert items.items == FieldSpec(fields={"Code": FieldSpec(method="EXACT")})


def test_list_of_objects_without_method_defaults_to_the_idp_match_threshold():
    # The IDP accelerator's default for arrays of objects: pairs are made as Stickler
    # 1.0 makes them, so 0.8 means here what it means there.
    assert IDP_DEFAULT_MATCH_THRESHOLD == 0.8
    fields = _idp_fields(
        {
            "name": "Items",
            "attributeType": "list",
            "listItemTemplate": {"itemAttributes": [{"name": "x"}]},
        }
    )
    assert fields["Items"].match_threshold == IDP_DEFAULT_MATCH_THRESHOLD


@pytest.mark.parametrize(
    ("attribute", "item"),
    [
        # A list without item attributes, compared by the Hungarian comparator.
        (
            {
                "name": "Tags",
                "attributeType": "list",
                "listItemTemplate": {"itemDescription": "a tag"},
                "hungarian_comparator": "FUZZY",
                "evaluation_threshold": 0.75,
            },
            FieldSpec(method="FUZZY", threshold=0.75, description="a tag"),
        ),
        (
            {"name": "Tags", "evaluation_method": "HUNGARIAN", "hungarian_comparator": "numeric"},
            FieldSpec(method="NUMERIC_EXACT"),
        ),
        # EXACT is the IDP's default comparator; the threshold is read only for FUZZY.
        (
            {"name": "Tags", "evaluation_method": "HUNGARIAN", "evaluation_threshold": 0.5},
            FieldSpec(method="EXACT"),
        ),
        ({"name": "Tags", "attributeType": "list"}, FieldSpec(method="EXACT")),
        (
            {
                "name": "Tags",
                "attributeType": "list",
                "listItemTemplate": {"itemAttributes": []},
                "hungarian_comparator": "EXACT",
            },
            FieldSpec(method="EXACT"),
        ),
        # Another scalar method on a list of scalars is the rule for each item.
        (
            {
                "name": "Tags",
                "attributeType": "list",
                "evaluation_method": "FUZZY",
                "evaluation_threshold": 0.6,
                "hungarian_comparator": "EXACT",
            },
            FieldSpec(method="FUZZY", threshold=0.6),
        ),
    ],
)
def test_lists_of_scalars(attribute, item):
    spec = _idp_fields(attribute)["Tags"]
    assert spec.kind == "array"
    assert spec.items == item
    assert spec.match_threshold == IDP_DEFAULT_MATCH_THRESHOLD


def test_attribute_type_is_inferred_from_its_keys_when_absent():
    fields = _idp_fields(
        {"name": "Address", "groupAttributes": [{"name": "City"}]},
        {"name": "Lines", "listItemTemplate": {"itemAttributes": [{"name": "Qty"}]}},
    )
    assert fields["Address"].kind == "object"
    assert fields["Lines"].kind == "array"
    assert fields["Lines"].items == FieldSpec(fields={"Qty": FieldSpec()})


def test_nested_groups_inside_list_items():
    fields = _idp_fields(
        {
            "name": "Parties",
            "attributeType": "list",
            "listItemTemplate": {
                "itemAttributes": [
                    {
                        "name": "Address",
                        "attributeType": "group",
                        "groupAttributes": [{"name": "City", "evaluation_method": "FUZZY"}],
                    }
                ]
            },
        }
    )
    item = fields["Parties"].items
    assert item == FieldSpec(
        fields={"Address": FieldSpec(fields={"City": FieldSpec(method="FUZZY")})}
    )


# --- IDP configuration: errors --------------------------------------------------------


def test_unknown_evaluation_method_lists_the_valid_ones():
    config = copy.deepcopy(BANK_STATEMENT_CONFIG)
    config["classes"][0]["attributes"][2]["groupAttributes"][2]["evaluation_method"] = "FUZY"
    with pytest.raises(InputError) as exc_info:
        schema_from_idp_config(config)
    _assert_error(
        exc_info,
        record="Bank Statement",
        path="Account Holder Address.City",
        contains=("evaluation_method", "'FUZY'", IDP_METHODS),
    )


@pytest.mark.parametrize(
    ("attributes", "path", "contains"),
    [
        ([{"description": "no name"}], "attributes[0]", ("name",)),
        (
            [{"name": "Addr", "attributeType": "group", "groupAttributes": [{"name": "A"}, {}]}],
            "Addr.groupAttributes[1]",
            ("name",),
        ),
        (
            [{"name": "Addr", "attributeType": "table"}],
            "Addr",
            ("attributeType", "'table'", "simple, group, list"),
        ),
        ([{"name": "Addr", "attributeType": "group"}], "Addr", ("groupAttributes",)),
        (
            [{"name": "Addr", "attributeType": "group", "groupAttributes": []}],
            "Addr",
            ("groupAttributes",),
        ),
        ([{"name": "Total"}, {"name": "Total"}], "Total", ("name", "duplicate")),
        (
            [
                {
                    "name": "Addr",
                    "attributeType": "group",
                    "groupAttributes": [{"name": "City"}, {"name": "City"}],
                }
            ],
            "Addr.City",
            ("name", "duplicate"),
        ),
        (
            [{"name": "Total", "evaluation_method": "FUZZY", "evaluation_threshold": "high"}],
            "Total",
            ("evaluation_threshold", "'high'", "not a number"),
        ),
        (
            [{"name": "Total", "evaluation_method": "FUZZY", "evaluation_threshold": True}],
            "Total",
            ("evaluation_threshold", "not a number"),
        ),
        (
            [{"name": "Total", "evaluation_method": "FUZZY", "evaluation_threshold": 1.5}],
            "Total",
            ("evaluation_threshold", "1.5", "out of range"),
        ),
        (
            [{"name": "Total", "evaluation_method": "NUMERIC_EXACT", "evaluation_threshold": -1}],
            "Total",
            ("evaluation_threshold", "-1", "out of range"),
        ),
        (
            [
                {
                    "name": "Rows",
                    "attributeType": "list",
                    "evaluation_threshold": 2,
                    "listItemTemplate": {"itemAttributes": [{"name": "x"}]},
                }
            ],
            "Rows",
            ("evaluation_threshold", "out of range"),
        ),
        (
            [{"name": "Tags", "evaluation_method": "HUNGARIAN", "hungarian_comparator": "COSINE"}],
            "Tags",
            ("hungarian_comparator", "'COSINE'", "EXACT, FUZZY, NUMERIC"),
        ),
        (
            [
                {
                    "name": "Rows",
                    "attributeType": "list",
                    "evaluation_method": "FUZZY",
                    "listItemTemplate": {"itemAttributes": [{"name": "x"}]},
                }
            ],
            "Rows",
            ("evaluation_method", "FUZZY", "HUNGARIAN"),
        ),
        (
            [
                {
                    "name": "Addr",
                    "attributeType": "group",
                    "evaluation_method": "EXACT",
                    "groupAttributes": [{"name": "City"}],
                }
            ],
            "Addr",
            ("evaluation_method", "group"),
        ),
        (
            [
                {
                    "name": "Rows",
                    "attributeType": "list",
                    "listItemTemplate": {
                        "itemAttributes": [{"name": "Amount", "evaluation_method": "MONEY"}]
                    },
                }
            ],
            "Rows[].Amount",
            ("evaluation_method", "'MONEY'", IDP_METHODS),
        ),
        (
            [{"name": "Rows", "attributeType": "list", "listItemTemplate": "Amount"}],
            "Rows",
            ("listItemTemplate",),
        ),
    ],
)
def test_idp_errors_name_class_attribute_and_key(attributes, path, contains):
    with pytest.raises(InputError) as exc_info:
        schema_from_idp_config(_idp(*attributes))
    _assert_error(exc_info, record="Bank Statement", path=path, contains=contains)


@pytest.mark.parametrize(
    ("config", "path"),
    [
        ({"classes": {"name": "A"}}, "classes"),
        ({"classes": [{"attributes": []}]}, "classes[0].name"),
        ({"classes": [{"name": "A", "attributes": []}, "B"]}, "classes[1]"),
    ],
)
def test_idp_structure_errors(config, path):
    with pytest.raises(InputError) as exc_info:
        schema_from_idp_config(config)
    assert exc_info.value.path == path
    assert path.split("[")[0] in exc_info.value.message


def test_duplicate_class_names_are_an_input_error():
    config = {"classes": [{"name": "A", "attributes": []}, {"name": "A", "attributes": []}]}
    with pytest.raises(InputError, match="duplicate class names: A"):
        schema_from_idp_config(config)


def test_an_idp_error_is_never_a_key_or_type_error():
    for config in ({"classes": [None]}, {"classes": [{"name": "A", "attributes": [None]}]}):
        with pytest.raises(InputError):
            schema_from_idp_config(config)
    with pytest.raises(InputError):
        schema_from_idp_config(["not", "a", "config"])


# --- JSON Schema: the bank statement and the forms ------------------------------------


def test_json_schema_of_the_bank_statement_equals_the_idp_import():
    from_json = schema_from_json_schema(BANK_STATEMENT_JSON_SCHEMA)
    from_idp = schema_from_idp_config(BANK_STATEMENT_CONFIG)
    assert from_json.classes == from_idp.classes
    assert from_json.schema_id == "json-schema"


def test_classes_form_and_class_names():
    schema = schema_from_json_schema(
        {
            "schema_id": "mixed",
            "classes": [
                {
                    "type": "object",
                    "x-aws-idp-document-type": "Invoice",
                    "title": "ignored",
                    "properties": {"number": {"type": "string"}},
                },
                {
                    "type": "object",
                    "title": "Receipt",
                    "description": "A receipt",
                    "properties": {},
                },
                {"type": "object", "x-aws-stickler-model-name": "Doc", "properties": {}},
                {"type": "object", "properties": {"x": {"type": "integer"}}},
            ],
        }
    )
    assert schema.schema_id == "mixed"
    assert [c.name for c in schema.classes] == ["Invoice", "Receipt", "Doc", "document"]
    assert schema.classes[1].description == "A receipt"
    assert schema.classes[0].fields == {"number": FieldSpec()}


def test_one_of_refs_to_defs_make_one_class_each():
    schema = schema_from_json_schema(
        {
            "$defs": {
                "Invoice": {
                    "type": "object",
                    "x-aws-idp-document-type": "Invoice",
                    "properties": {
                        "total": {"type": "number", "x-aws-idp-evaluation-method": "NUMERIC_EXACT"}
                    },
                },
                "Receipt": {"type": "object", "properties": {"shop": {"type": "string"}}},
            },
            "oneOf": [{"$ref": "#/$defs/Invoice"}, {"$ref": "#/$defs/Receipt"}],
        }
    )
    assert [c.name for c in schema.classes] == ["Invoice", "Receipt"]
    assert schema.classes[0].fields["total"] == FieldSpec(method="NUMERIC_EXACT")


def test_properties_without_a_method_keep_method_none():
    fields = _json_fields(
        {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "paid": {"type": "boolean"},
            "anything": {},
            "free_form": {"type": "object"},
        }
    )
    assert all(spec == FieldSpec() for spec in fields.values())
    assert fields["name"].effective_method == "EXACT"


def test_shapes_objects_arrays_of_objects_and_of_scalars():
    fields = _json_fields(
        {
            "vendor": {
                "type": "object",
                "properties": {"name": {"type": "string", "x-aws-idp-evaluation-method": "FUZZY"}},
            },
            "lines": {
                "type": "array",
                "items": {"type": "object", "properties": {"qty": {"type": "integer"}}},
            },
            "codes": {"type": "array", "items": {"type": "string"}},
            "grid": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        }
    )
    assert fields["vendor"] == FieldSpec(fields={"name": FieldSpec(method="FUZZY")})
    assert fields["lines"] == FieldSpec(
        items=FieldSpec(fields={"qty": FieldSpec()}), match_threshold=IDP_DEFAULT_MATCH_THRESHOLD
    )
    assert fields["codes"] == FieldSpec(
        items=FieldSpec(), match_threshold=IDP_DEFAULT_MATCH_THRESHOLD
    )
    assert fields["grid"].items == FieldSpec(
        items=FieldSpec(), match_threshold=IDP_DEFAULT_MATCH_THRESHOLD
    )


def test_idp_extensions_thresholds_weights_and_match_thresholds():
    fields = _json_fields(
        {
            "number": {
                "type": "string",
                "x-aws-idp-evaluation-method": "exact",
                "x-aws-idp-evaluation-weight": 2,
            },
            "total": {
                "type": "number",
                "x-aws-idp-evaluation-method": "NUMERIC_EXACT",
                "x-aws-idp-evaluation-threshold": 0.5,
            },
            "date": {"type": "string", "x-aws-idp-evaluation-method": "DATE"},
            "lines": {
                "type": "array",
                "x-aws-idp-evaluation-method": "HUNGARIAN",
                "x-aws-idp-evaluation-threshold": 0.6,
                "items": {"type": "object", "properties": {"sku": {"type": "string"}}},
            },
            "rows": {
                "type": "array",
                "x-aws-idp-evaluation-method": "HUNGARIAN",
                "x-aws-idp-evaluation-threshold": 0.6,
                "x-aws-idp-evaluation-match-threshold": 0.9,
                "items": {"type": "object", "properties": {"sku": {"type": "string"}}},
            },
        }
    )
    assert fields["number"] == FieldSpec(method="EXACT", weight=2.0)
    assert fields["total"] == FieldSpec(method="NUMERIC_EXACT", threshold=0.5)
    assert fields["date"] == FieldSpec(method="DATE")
    assert fields["lines"].match_threshold == 0.6
    assert fields["rows"].match_threshold == 0.9


def test_a_scalar_method_on_an_array_of_scalars_applies_to_its_items():
    fields = _json_fields(
        {
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "x-aws-idp-evaluation-method": "FUZZY",
                "x-aws-idp-evaluation-threshold": 0.7,
            },
            "codes": {
                "type": "array",
                "items": {"type": "string", "x-aws-idp-evaluation-method": "EXACT"},
                "x-aws-idp-evaluation-method": "FUZZY",
                "x-aws-idp-evaluation-threshold": 0.7,
            },
        }
    )
    assert fields["tags"].items == FieldSpec(method="FUZZY", threshold=0.7)
    assert fields["tags"].match_threshold == IDP_DEFAULT_MATCH_THRESHOLD
    # The items' own method wins, and brings none of the array's threshold.
    assert fields["codes"].items == FieldSpec(method="EXACT")


# --- JSON Schema: Stickler extensions -------------------------------------------------


def test_a_stickler_export_imports():
    schema = schema_from_json_schema(STICKLER_EXPORT)
    [doc] = schema.classes
    assert doc.name == "Doc"
    assert doc.fields["acct"] == FieldSpec(method="EXACT", threshold=1.0, weight=2.0)
    # Stickler's threshold on an object gates its mean score; there is no equivalent.
    assert doc.fields["addr"] == FieldSpec(
        fields={"city": FieldSpec(method="FUZZY", threshold=0.9, fuzzy_scorer="ratio")}
    )
    # The match threshold Stickler writes inside "items"; the numeric tolerance comes
    # from the comparator config, not from the score threshold 1.0.
    assert doc.fields["txs"] == FieldSpec(
        items=FieldSpec(fields={"amount": FieldSpec(method="NUMERIC_EXACT", threshold=0.01)}),
        match_threshold=0.75,
    )
    assert doc.fields["tags"] == FieldSpec(
        items=FieldSpec(method="FUZZY", threshold=0.8), match_threshold=IDP_DEFAULT_MATCH_THRESHOLD
    )


@pytest.mark.parametrize(
    ("comparator", "method"),
    [
        ("ExactComparator", "EXACT"),
        ("NumericComparator", "NUMERIC_EXACT"),
        ("FuzzyComparator", "FUZZY"),
        ("LevenshteinComparator", "LEVENSHTEIN"),
        ("SemanticComparator", "SEMANTIC"),
        ("LLMComparator", "LLM"),
        ("DateComparator", "DATE"),
        ("NormalizedComparator", "NORMALIZED"),
        ("exact", "EXACT"),
        ("numeric", "NUMERIC_EXACT"),
        ("fuzzy", "FUZZY"),
        ("levenshtein", "LEVENSHTEIN"),
        ("Semantic", "SEMANTIC"),
    ],
)
def test_stickler_comparator_names(comparator, method):
    fields = _json_fields({"v": {"type": "string", "x-aws-stickler-comparator": comparator}})
    assert fields["v"].method == method


def test_stickler_thresholds_tolerances_and_comparator_config():
    fields = _json_fields(
        {
            "name": {
                "type": "string",
                "x-aws-stickler-comparator": "FuzzyComparator",
                "x-aws-stickler-threshold": 0.85,
                "x-aws-stickler-weight": 3,
                "x-aws-stickler-comparator-config": {"method": "token_set_ratio"},
            },
            "total": {
                "type": "number",
                "x-aws-stickler-comparator": "NumericComparator",
                "x-aws-stickler-threshold": 1.0,
                "x-aws-stickler-tolerance": 0.5,
            },
            "rate": {
                "type": "number",
                "x-aws-stickler-comparator": "numeric",
                "x-aws-stickler-comparator-config": {"tolerance": 2, "relative_tolerance": 0.01},
            },
            "when": {
                "type": "string",
                "x-aws-stickler-comparator": "DateComparator",
                "x-aws-stickler-comparator-config": {"dayfirst": True},
            },
            "code": {
                "type": "string",
                "x-aws-stickler-comparator": "ExactComparator",
                "x-aws-stickler-comparator-config": {"case_sensitive": True},
            },
            "rows": {
                "type": "array",
                "x-aws-stickler-match-threshold": 0.55,
                "items": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        }
    )
    assert fields["name"] == FieldSpec(
        method="FUZZY", threshold=0.85, weight=3.0, fuzzy_scorer="token_set_ratio"
    )
    assert fields["total"] == FieldSpec(method="NUMERIC_EXACT", threshold=0.5)
    assert fields["rate"] == FieldSpec(
        method="NUMERIC_EXACT", threshold=2.0, relative_tolerance=0.01
    )
    assert fields["when"] == FieldSpec(method="DATE", date_order="day_first")
    assert fields["code"] == FieldSpec(method="EXACT", case_sensitive=True)
    assert fields["rows"].match_threshold == 0.55


def test_idp_extensions_take_precedence_over_stickler_ones():
    fields = _json_fields(
        {
            "name": {
                "type": "string",
                "x-aws-idp-evaluation-method": "LEVENSHTEIN",
                "x-aws-idp-evaluation-threshold": 0.6,
                "x-aws-idp-evaluation-weight": 2,
                "x-aws-stickler-comparator": "ExactComparator",
                "x-aws-stickler-threshold": 1.0,
                "x-aws-stickler-weight": 5,
            },
            "mixed": {
                "type": "string",
                "x-aws-idp-evaluation-method": "FUZZY",
                "x-aws-stickler-comparator": "ExactComparator",
                "x-aws-stickler-threshold": 0.9,
            },
            "rows": {
                "type": "array",
                "x-aws-idp-evaluation-match-threshold": 0.7,
                "x-aws-stickler-match-threshold": 0.2,
                "items": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        }
    )
    assert fields["name"] == FieldSpec(method="LEVENSHTEIN", threshold=0.6, weight=2.0)
    # Key by key: the Stickler threshold still fills in where no IDP threshold is given.
    assert fields["mixed"] == FieldSpec(method="FUZZY", threshold=0.9)
    assert fields["rows"].match_threshold == 0.7


# --- JSON Schema: $ref, $defs and nullable types --------------------------------------


def test_refs_are_resolved_and_keys_beside_a_ref_win():
    fields = _json_fields(
        {
            "billing": {"$ref": "#/$defs/Address", "description": "Billing address"},
            "shipping": {"$ref": "#/$defs/Address"},
            "city": {"$ref": "#/$defs/City", "x-aws-idp-evaluation-threshold": 0.95},
            "legacy": {"$ref": "#/definitions/Code"},
            "alias": {"$ref": "#/$defs/Alias"},
        },
        **{
            "$defs": {
                "Address": {
                    "type": "object",
                    "description": "An address",
                    "properties": {"city": {"$ref": "#/$defs/City"}},
                },
                "City": {
                    "type": "string",
                    "x-aws-idp-evaluation-method": "FUZZY",
                    "x-aws-idp-evaluation-threshold": 0.8,
                },
                "Alias": {"$ref": "#/$defs/City"},
            },
            "definitions": {"Code": {"type": "string", "x-aws-idp-evaluation-method": "EXACT"}},
        },
    )
    city = FieldSpec(method="FUZZY", threshold=0.8)
    assert fields["billing"] == FieldSpec(fields={"city": city}, description="Billing address")
    assert fields["shipping"] == FieldSpec(fields={"city": city}, description="An address")
    assert fields["city"] == FieldSpec(method="FUZZY", threshold=0.95)
    assert fields["legacy"] == FieldSpec(method="EXACT")
    assert fields["alias"] == city


def test_refs_in_a_class_of_the_classes_form_resolve_in_the_class_then_the_container():
    schema = schema_from_json_schema(
        {
            "$defs": {"Money": {"type": "number", "x-aws-idp-evaluation-method": "NUMERIC_EXACT"}},
            "classes": [
                {
                    "type": "object",
                    "x-aws-idp-document-type": "Invoice",
                    "$defs": {"Code": {"type": "string", "x-aws-idp-evaluation-method": "EXACT"}},
                    "properties": {
                        "code": {"$ref": "#/$defs/Code"},
                        "total": {"$ref": "#/$defs/Money"},
                    },
                }
            ],
        }
    )
    assert schema.classes[0].fields == {
        "code": FieldSpec(method="EXACT"),
        "total": FieldSpec(method="NUMERIC_EXACT"),
    }


@pytest.mark.parametrize(
    ("defs", "properties", "path", "ref"),
    [
        (
            {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
            {"root": {"$ref": "#/$defs/Node"}},
            "root.child",
            "#/$defs/Node",
        ),
        (
            {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
            {"loop": {"$ref": "#/$defs/A"}},
            "loop",
            "#/$defs/A",
        ),
        (
            {
                "Part": {
                    "type": "object",
                    "properties": {"parts": {"type": "array", "items": {"$ref": "#/$defs/Part"}}},
                }
            },
            {"assembly": {"$ref": "#/$defs/Part"}},
            "assembly.parts[]",
            "#/$defs/Part",
        ),
    ],
)
def test_ref_cycles_are_an_input_error_naming_the_ref(defs, properties, path, ref):
    schema = {"type": "object", "title": "Tree", "$defs": defs, "properties": properties}
    with pytest.raises(InputError) as exc_info:
        schema_from_json_schema(schema)
    _assert_error(exc_info, record="Tree", path=path, contains=(ref, "recursive"))


@pytest.mark.parametrize(
    ("ref", "contains"),
    [
        ("#/$defs/Missing", "does not resolve"),
        ("other.json#/$defs/Address", "not a local reference"),
        (42, "not a local reference"),
        ("#/$defs/Address/type", "does not point to a schema object"),
    ],
)
def test_bad_refs_are_an_input_error(ref, contains):
    schema = {
        "type": "object",
        "title": "Invoice",
        "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "properties": {"vendor": {"type": "object", "properties": {"address": {"$ref": ref}}}},
    }
    with pytest.raises(InputError) as exc_info:
        schema_from_json_schema(schema)
    _assert_error(
        exc_info, record="Invoice", path="vendor.address", contains=("$ref", repr(ref), contains)
    )


def test_nullable_types_are_unwrapped():
    fields = _json_fields(
        {
            "name": {"type": ["string", "null"], "x-aws-idp-evaluation-method": "FUZZY"},
            "total": {
                "anyOf": [{"type": "number"}, {"type": "null"}],
                "x-aws-idp-evaluation-method": "NUMERIC_EXACT",
                "x-aws-idp-evaluation-threshold": 0.5,
            },
            "vendor": {
                "oneOf": [{"$ref": "#/$defs/Vendor"}, {"type": "null"}],
                "description": "Who sold it",
            },
            "lines": {
                "type": ["array", "null"],
                "items": {"anyOf": [{"$ref": "#/$defs/Vendor"}, {"type": "null"}]},
            },
            "note": {"type": "null"},
            "id": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "single": {"allOf": [{"$ref": "#/$defs/Vendor"}]},
        },
        **{
            "$defs": {
                "Vendor": {
                    "type": "object",
                    "properties": {
                        "vat": {"type": "string", "x-aws-idp-evaluation-method": "EXACT"}
                    },
                }
            }
        },
    )
    vendor = FieldSpec(fields={"vat": FieldSpec(method="EXACT")})
    assert fields["name"] == FieldSpec(method="FUZZY")
    assert fields["total"] == FieldSpec(method="NUMERIC_EXACT", threshold=0.5)
    assert fields["vendor"] == FieldSpec(fields=vendor.fields, description="Who sold it")
    assert fields["lines"] == FieldSpec(items=vendor, match_threshold=IDP_DEFAULT_MATCH_THRESHOLD)
    assert fields["note"] == FieldSpec()
    assert fields["id"] == FieldSpec()
    assert fields["single"] == vendor


# --- JSON Schema: errors --------------------------------------------------------------


@pytest.mark.parametrize(
    ("properties", "path", "contains"),
    [
        (
            {"total": {"type": "number", "x-aws-stickler-comparator": "CosineComparator"}},
            "total",
            (
                "x-aws-stickler-comparator",
                "'CosineComparator'",
                "ExactComparator, NumericComparator, FuzzyComparator, LevenshteinComparator, "
                "SemanticComparator, LLMComparator, DateComparator, NormalizedComparator",
            ),
        ),
        (
            {"total": {"type": "number", "x-aws-idp-evaluation-method": "MONEY"}},
            "total",
            ("x-aws-idp-evaluation-method", "'MONEY'", IDP_METHODS),
        ),
        (
            {
                "transactions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "amount": {
                                "type": "number",
                                "x-aws-idp-evaluation-method": "FUZZY",
                                "x-aws-idp-evaluation-threshold": 1.5,
                            }
                        },
                    },
                }
            },
            "transactions[].amount",
            ("x-aws-idp-evaluation-threshold", "1.5", "out of range"),
        ),
        (
            {"name": {"type": "string", "x-aws-stickler-threshold": "close"}},
            "name",
            ("x-aws-stickler-threshold", "'close'", "not a number"),
        ),
        (
            {"name": {"type": "string", "x-aws-idp-evaluation-weight": 0}},
            "name",
            ("x-aws-idp-evaluation-weight", "out of range"),
        ),
        (
            {
                "rows": {
                    "type": "array",
                    "x-aws-idp-evaluation-match-threshold": 1.2,
                    "items": {"type": "object", "properties": {"a": {"type": "string"}}},
                }
            },
            "rows",
            ("x-aws-idp-evaluation-match-threshold", "out of range"),
        ),
        (
            {
                "rows": {
                    "type": "array",
                    "x-aws-idp-evaluation-method": "FUZZY",
                    "items": {"type": "object", "properties": {"a": {"type": "string"}}},
                }
            },
            "rows",
            ("FUZZY", "HUNGARIAN"),
        ),
        (
            {"name": {"type": "string", "x-aws-idp-evaluation-method": "HUNGARIAN"}},
            "name",
            ("x-aws-idp-evaluation-method", "HUNGARIAN", "not an array"),
        ),
        (
            {
                "vendor": {
                    "type": "object",
                    "x-aws-idp-evaluation-method": "FUZZY",
                    "properties": {"a": {"type": "string"}},
                }
            },
            "vendor",
            ("x-aws-idp-evaluation-method", "object"),
        ),
        ({"name": {"type": "text"}}, "name", ("type", "'text'")),
        ({"name": "string"}, "name", ("schema",)),
        (
            {
                "name": {
                    "type": "string",
                    "x-aws-stickler-comparator": "FuzzyComparator",
                    "x-aws-stickler-comparator-config": {"method": "jaro"},
                }
            },
            "name",
            ("x-aws-stickler-comparator-config.method", "'jaro'", "token_set_ratio"),
        ),
    ],
)
def test_json_schema_errors_name_class_property_and_key(properties, path, contains):
    schema = {"type": "object", "x-aws-idp-document-type": "Statement", "properties": properties}
    with pytest.raises(InputError) as exc_info:
        schema_from_json_schema(schema)
    _assert_error(exc_info, record="Statement", path=path, contains=contains)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "title": "Rows", "items": {"type": "string"}},
        {"classes": ["Invoice"]},
        {"classes": {"type": "object"}},
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"},
    ],
)
def test_non_object_schemas_are_an_input_error(schema):
    with pytest.raises(InputError):
        schema_from_json_schema(schema)


# --- detection and DocumentSchema entry points ----------------------------------------


def test_detection_of_the_three_forms():
    native = {"classes": [{"name": "A", "fields": {"x": {"method": "EXACT"}}}]}
    assert looks_like_idp_config(BANK_STATEMENT_CONFIG)
    assert not looks_like_json_schema(BANK_STATEMENT_CONFIG)
    assert looks_like_json_schema(BANK_STATEMENT_JSON_SCHEMA)
    assert not looks_like_idp_config(BANK_STATEMENT_JSON_SCHEMA)
    assert looks_like_json_schema({"classes": [{"type": "object", "properties": {}}]})
    assert looks_like_json_schema({"$defs": {}, "oneOf": []})
    assert not looks_like_idp_config(native)
    assert not looks_like_json_schema(native)
    assert not looks_like_idp_config(["classes"])
    assert not looks_like_json_schema("properties")


def test_from_dict_detects_the_three_forms():
    from_idp = DocumentSchema.from_dict(BANK_STATEMENT_CONFIG)
    from_json = DocumentSchema.from_dict(BANK_STATEMENT_JSON_SCHEMA)
    native = DocumentSchema.from_dict(from_idp.model_dump(mode="json"))
    assert from_idp.schema_id == "idp-config"
    assert from_json.schema_id == "json-schema"
    assert from_idp.classes == from_json.classes == native.classes
    assert DocumentSchema.from_idp_config(BANK_STATEMENT_CONFIG) == from_idp
    assert DocumentSchema.from_json_schema(BANK_STATEMENT_JSON_SCHEMA) == from_json


def test_from_dict_errors_carry_the_source():
    config = _idp({"name": "Total", "evaluation_method": "MONEY"})
    with pytest.raises(InputError) as exc_info:
        DocumentSchema.from_dict(config, source="schemas/bank.yaml")
    assert exc_info.value.source == "schemas/bank.yaml"
    assert exc_info.value.record == "Bank Statement"
    assert exc_info.value.path == "Total"
    assert str(exc_info.value).startswith("schemas/bank.yaml, record Bank Statement, at Total:")


def test_load_reads_yaml_and_json_files(tmp_path):
    idp_file = tmp_path / "bank.yaml"
    idp_file.write_text(yaml.safe_dump(BANK_STATEMENT_CONFIG, sort_keys=False), encoding="utf-8")
    json_file = tmp_path / "bank.schema.json"
    json_file.write_text(json.dumps(BANK_STATEMENT_JSON_SCHEMA), encoding="utf-8")
    from_yaml = DocumentSchema.load(idp_file)
    from_json = DocumentSchema.load(json_file)
    assert from_yaml == schema_from_idp_config(BANK_STATEMENT_CONFIG)
    assert from_json.classes == from_yaml.classes


@pytest.mark.parametrize(
    ("name", "text", "contains"),
    [
        (
            "bad_method.yaml",
            "classes:\n  - name: Invoice\n    attributes:\n      - name: Total\n"
            "        evaluation_method: MONEY\n",
            "'MONEY'",
        ),
        (
            "bad_ref.json",
            json.dumps(
                {
                    "type": "object",
                    "title": "Invoice",
                    "properties": {"a": {"$ref": "#/$defs/Nope"}},
                }
            ),
            "#/$defs/Nope",
        ),
        ("list.json", "[1, 2]", "must hold an object"),
        ("broken.yaml", "classes: [\n", "malformed YAML"),
    ],
)
def test_load_errors_name_the_file(tmp_path, name, text, contains):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as exc_info:
        DocumentSchema.load(path)
    assert exc_info.value.source == str(path)
    assert str(path) in str(exc_info.value)
    assert contains in str(exc_info.value)


# --- fingerprints ---------------------------------------------------------------------


def test_fingerprint_is_stable_across_equal_inputs():
    first = schema_from_idp_config(BANK_STATEMENT_CONFIG)
    second = schema_from_idp_config(copy.deepcopy(BANK_STATEMENT_CONFIG))
    assert first.sha256 == second.sha256
    # An integer threshold and the same float are the same schema.
    as_int = _idp({"name": "a", "evaluation_method": "NUMERIC_EXACT", "evaluation_threshold": 1})
    as_float = _idp(
        {"name": "a", "evaluation_method": "NUMERIC_EXACT", "evaluation_threshold": 1.0}
    )
    assert schema_from_idp_config(as_int).sha256 == schema_from_idp_config(as_float).sha256


def test_fingerprint_changes_when_one_threshold_changes():
    changed = copy.deepcopy(BANK_STATEMENT_CONFIG)
    item_attributes = changed["classes"][0]["attributes"][3]["listItemTemplate"]["itemAttributes"]
    item_attributes[1]["evaluation_threshold"] = 0.75
    original = schema_from_idp_config(BANK_STATEMENT_CONFIG)
    assert schema_from_idp_config(changed).sha256 != original.sha256
    hungarian = copy.deepcopy(BANK_STATEMENT_CONFIG)
    hungarian["classes"][0]["attributes"][3]["evaluation_threshold"] = 0.7
    assert schema_from_idp_config(hungarian).sha256 != original.sha256


# --- inference from ground truth ------------------------------------------------------


def test_infer_class_schema_from_two_documents():
    first = {
        "Account Number": "12345",
        "Balance": 1520.5,
        "Overdrawn": False,
        "Address": {"City": "Springfield", "ZIP": 12345},
        "Transactions": [
            {"Date": "2024-01-02", "Amount": 12.5},
            {"Date": "2024-01-03", "Amount": -4, "Memo": None},
        ],
        "Tags": [None, "fee", 3],
        "Branch": None,
        "Reference": 991,
    }
    second = {
        "Account Number": "67890",
        "Address": {"City": "Shelbyville", "State": "IL"},
        "Transactions": [],
        "Tags": [],
        "Codes": [None],
        "Reference": "R-991",
        "Statement": {"Pages": 3},
    }
    schema = infer_class_schema("Bank Statement", [first, second])
    text = FieldSpec(method="FUZZY", threshold=0.85)
    number = FieldSpec(method="NUMERIC_EXACT", threshold=0.01)
    assert schema == ClassSchema(
        name="Bank Statement",
        fields={
            "Account Number": text,
            "Balance": number,
            "Overdrawn": FieldSpec(method="EXACT"),
            "Address": FieldSpec(fields={"City": text, "ZIP": number, "State": text}),
            "Transactions": FieldSpec(
                items=FieldSpec(fields={"Date": text, "Amount": number, "Memo": text}),
                match_threshold=IDP_DEFAULT_MATCH_THRESHOLD,
            ),
            "Tags": FieldSpec(items=text, match_threshold=IDP_DEFAULT_MATCH_THRESHOLD),
            "Branch": text,
            "Reference": text,
            "Codes": FieldSpec(
                items=FieldSpec(method="EXACT"), match_threshold=IDP_DEFAULT_MATCH_THRESHOLD
            ),
            "Statement": FieldSpec(fields={"Pages": number}),
        },
    )
    # Key order is first-seen order across the examples.
    assert list(schema.fields)[-2:] == ["Codes", "Statement"]


def test_infer_list_of_scalars_takes_the_first_non_null_item_across_examples():
    schema = infer_class_schema("A", [{"ids": []}, {"ids": [None, 7, "x"]}, {"ids": ["y"]}])
    assert schema.fields["ids"] == FieldSpec(
        items=FieldSpec(method="NUMERIC_EXACT", threshold=0.01),
        match_threshold=IDP_DEFAULT_MATCH_THRESHOLD,
    )
    flags = infer_class_schema("A", [{"flags": [True, "yes"]}])
    assert flags.fields["flags"].items == FieldSpec(method="EXACT")


def test_infer_with_no_examples_and_bad_examples():
    assert infer_class_schema("Empty", []) == ClassSchema(name="Empty")
    with pytest.raises(InputError) as exc_info:
        infer_class_schema("Invoice", [{"a": 1}, ["not", "a", "document"]])
    assert exc_info.value.record == "Invoice"
    assert "example 2" in exc_info.value.message


@pytest.mark.parametrize(
    ("prop", "message"),
    [
        (
            {
                "type": "string",
                "x-aws-idp-evaluation-method": "DATE",
                "x-aws-stickler-comparator-config": {"method": "token_set_ratio"},
            },
            "x-aws-stickler-comparator-config.method applies to FUZZY only",
        ),
        (
            {
                "type": "string",
                "x-aws-idp-evaluation-method": "FUZZY",
                "x-aws-stickler-comparator-config": {"dayfirst": True},
            },
            "x-aws-stickler-comparator-config.dayfirst applies to DATE only",
        ),
        (
            {
                "type": "number",
                "x-aws-idp-evaluation-method": "EXACT",
                "x-aws-stickler-comparator-config": {"tolerance": 0.5},
            },
            "x-aws-stickler-comparator-config.tolerance applies to NUMERIC_EXACT only",
        ),
    ],
)
def test_comparator_settings_for_another_method_are_refused(
    prop: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError) as raised:
        schema_from_json_schema({"type": "object", "properties": {"f": prop}})
    assert message in str(raised.value)


def test_anls_star_on_an_object_or_array_scores_it_whole():
    # Stickler's exporter writes its ANLS* comparator on dicts and lists it scores
    # whole; their declared properties do not split them into fields.
    schema = schema_from_json_schema(
        {
            "type": "object",
            "properties": {
                "meta": {
                    "type": "object",
                    "x-aws-stickler-comparator": "AnlsStarComparator",
                    "x-aws-stickler-threshold": 0.6,
                    "properties": {"issuer": {"type": "string"}},
                },
                "tags": {
                    "type": "array",
                    "x-aws-stickler-comparator": "AnlsStarComparator",
                    "items": {"type": "object", "properties": {"b": {"type": "string"}}},
                },
            },
        }
    )
    fields = schema.classes[0].fields
    assert (fields["meta"].method, fields["meta"].threshold, fields["meta"].fields) == (
        "ANLS_STAR",
        0.6,
        None,
    )
    assert (fields["tags"].method, fields["tags"].items) == ("ANLS_STAR", None)
    # Any other method on an object is still refused.
    with pytest.raises(InputError, match="does not apply to an object"):
        schema_from_json_schema(
            {
                "type": "object",
                "properties": {
                    "meta": {
                        "type": "object",
                        "x-aws-stickler-comparator": "LevenshteinComparator",
                        "properties": {"issuer": {"type": "string"}},
                    }
                },
            }
        )
