"""Field specs take finite numbers only (no NaN, no infinity, no booleans read as 1.0
or 0.0), and refuse an option their method never reads even when it is written with
its default value; only a field written out in full (a dumped schema) may carry
defaults that are not settings."""

from __future__ import annotations

import math

import pytest

from docevals_mlflow import DocumentSchema, FieldSpec, InputError

NUMBERS = {
    "threshold": {"method": "NUMERIC_EXACT"},
    "relative_tolerance": {"method": "NUMERIC_EXACT"},
    "match_threshold": {"items": {"method": "EXACT"}},
    "weight": {"method": "EXACT"},
}


@pytest.mark.parametrize("option", sorted(NUMBERS))
@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_not_numbers(option, value):
    with pytest.raises(InputError, match=f"{option}: a number is due here, not the boolean"):
        FieldSpec.model_validate({**NUMBERS[option], option: value})


@pytest.mark.parametrize("option", sorted(NUMBERS))
@pytest.mark.parametrize("value", [math.nan, math.inf, "inf", "1e999"])
def test_non_finite_numbers_are_refused(option, value):
    with pytest.raises(InputError, match=option):
        FieldSpec.model_validate({**NUMBERS[option], option: value})


def test_finite_numbers_and_numeric_text_still_read():
    spec = FieldSpec.model_validate({"method": "NUMERIC_EXACT", "threshold": "0.5", "weight": 2})
    assert (spec.threshold, spec.weight) == (0.5, 2.0)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"method": "DATE", "fuzzy_scorer": "ratio"}, "'fuzzy_scorer' applies to FUZZY"),
        ({"method": "FUZZY", "date_order": "month_first"}, "'date_order' applies to DATE"),
        ({"method": "EXACT", "relative_tolerance": 0}, "'relative_tolerance' applies to"),
        ({"method": "EXACT", "match_threshold": 0.5}, "'match_threshold' applies to lists"),
        ({"method": "EXACT", "pairing": "stickler"}, "'pairing' applies to lists"),
        ({"fields": {"a": {}}, "match_threshold": 0.5}, "'match_threshold' applies to lists"),
        ({"items": {}, "fuzzy_scorer": "ratio"}, "applies to scalar fields only"),
    ],
)
def test_defaults_written_by_hand_on_the_wrong_method_are_refused(spec, message):
    with pytest.raises(InputError, match=message):
        FieldSpec.model_validate(spec)


@pytest.mark.parametrize(
    "dump",
    [
        lambda spec: spec.model_dump(),
        lambda spec: spec.model_dump(exclude_none=True),
        lambda spec: spec.model_dump(exclude_defaults=True),
        lambda spec: spec.model_dump(mode="json"),
    ],
)
def test_dumped_schemas_read_back(dump):
    schema = DocumentSchema.model_validate(
        {
            "classes": [
                {
                    "name": "Invoice",
                    "fields": {
                        "date": {"method": "DATE", "date_order": "day_first"},
                        "vendor": {"method": "FUZZY", "threshold": 0.8},
                        "lines": {"items": {"fields": {"code": {}}}, "match_threshold": 0.7},
                        "party": {"fields": {"name": {"method": "NORMALIZED"}}},
                    },
                }
            ]
        }
    )
    data = schema.model_dump()
    fields = data["classes"][0]["fields"]
    spec_dumps = {name: dump(FieldSpec.model_validate(value)) for name, value in fields.items()}
    again = DocumentSchema.model_validate({"classes": [{"name": "Invoice", "fields": spec_dumps}]})
    assert again == schema
