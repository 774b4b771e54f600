"""validate_lean: the same objects and the same errors as model_validate, without a
Python ``__init__`` call per nested record."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field, model_validator

from docevals_mlflow.core.model import (
    DocEvalsModel,
    FrozenModel,
    lean_validator,
    validate_lean,
)
from docevals_mlflow.errors import InputError


class _Leaf(FrozenModel):
    name: str
    weight: float = 1.0


class _Row(DocEvalsModel):
    path: str
    value: Any = None
    leaves: list[_Leaf] = Field(default_factory=list)

    @model_validator(mode="after")
    def _named(self) -> _Row:
        if self.path == "bad":
            raise InputError("path 'bad' is refused", path="path")
        return self


class _File(DocEvalsModel):
    case_id: str
    rows: list[_Row] = Field(default_factory=list)


class _Flat(DocEvalsModel):
    text: str


GOOD = {
    "case_id": "c1",
    "rows": [
        {"path": "$.a", "value": {"y": 1, "x": [1.5, None]}, "leaves": [{"name": "n"}]},
        {"path": "$.b", "leaves": [{"name": "m", "weight": 2}]},
    ],
}


def test_same_objects_as_model_validate():
    lean, plain = validate_lean(_File, GOOD), _File.model_validate(GOOD)
    assert lean == plain
    assert type(lean.rows[0]) is _Row
    assert type(lean.rows[0].leaves[0]) is _Leaf
    assert lean.model_fields_set == plain.model_fields_set
    assert [r.model_fields_set for r in lean.rows] == [r.model_fields_set for r in plain.rows]
    assert lean.rows[1].leaves[0].weight == 2.0
    assert type(lean.rows[1].leaves[0].weight) is float
    assert lean.model_dump_json() == plain.model_dump_json()
    with pytest.raises(Exception, match="frozen"):
        lean.rows[0].leaves[0].name = "other"  # type: ignore[misc]


def test_nested_records_are_built_without_their_init(monkeypatch):
    validate_lean(_File, GOOD)  # build the lean validator first
    calls = []
    original = DocEvalsModel.__init__

    def counting(self: Any, /, **data: Any) -> None:
        calls.append(type(self).__name__)
        original(self, **data)

    monkeypatch.setattr(DocEvalsModel, "__init__", counting)
    validate_lean(_File, GOOD)
    assert calls == []
    # The class's own validator still calls it for each nested record.
    _File.model_validate(GOOD)
    assert calls.count("_Row") == 2
    assert calls.count("_Leaf") == 2


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["rows"][1].update(path=5),
        lambda d: d["rows"][1]["leaves"][0].update(weight="heavy"),
        lambda d: d["rows"][0]["leaves"][0].update(extra=1),
        lambda d: d["rows"][1].update(path="bad"),
        lambda d: d.pop("case_id"),
        lambda d: d["rows"].append("not a row"),
    ],
)
def test_invalid_input_raises_exactly_model_validates_error(edit):
    import copy

    data = copy.deepcopy(GOOD)
    edit(data)
    with pytest.raises(InputError) as expected:
        _File.model_validate(data)
    with pytest.raises(InputError) as got:
        validate_lean(_File, data)
    assert type(got.value) is type(expected.value)
    assert str(got.value) == str(expected.value)
    assert got.value.path == expected.value.path


def test_classes_stay_complete_and_a_flat_model_needs_no_lean_validator():
    assert lean_validator(_File) is not None
    for cls in (_File, _Row, _Leaf):
        assert cls.__pydantic_complete__ is True
    # The top model's own __init__ is not what a lean validator saves: a model
    # without nested records still gets one, and both ways agree.
    assert validate_lean(_Flat, {"text": "t"}) == _Flat(text="t")
    with pytest.raises(InputError, match="text"):
        validate_lean(_Flat, {"text": 1})
