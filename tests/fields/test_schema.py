"""Field specs refuse settings their method never reads."""

from __future__ import annotations

import pytest

from docevals_mlflow import FieldSpec, InputError


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"method": "FUZZY", "date_order": "day_first"},
            "'date_order' applies to DATE fields only",
        ),
        ({"method": "EXACT", "fuzzy_scorer": "token_set_ratio"}, "'fuzzy_scorer' applies to FUZZY"),
        ({"method": "DATE", "relative_tolerance": 0.01}, "'relative_tolerance' applies to NUMERIC"),
        ({"method": "FUZZY", "case_sensitive": True}, "'case_sensitive' applies to EXACT and"),
        ({"method": "EXACT", "match_threshold": 0.7}, "'match_threshold' applies to lists"),
        ({"fields": {"a": {}}, "date_order": "day_first"}, "applies to scalar fields only"),
    ],
)
def test_options_a_method_never_reads_are_refused(spec, message):
    with pytest.raises(InputError, match=message):
        FieldSpec.model_validate(spec)


def test_defaults_written_out_are_not_settings():
    spec = FieldSpec.model_validate({"method": "FUZZY", "threshold": 0.8})
    assert FieldSpec.model_validate(spec.model_dump()) == spec
