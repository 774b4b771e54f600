import pytest

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.registry import OperationRegistry
from docevals_mlflow.core.specs import EvaluationSpec, OperationSpec
from docevals_mlflow.errors import ConfigurationError

_EVAL = EvaluationSpec(spec_id="extract-eval", objective="Extract totals.", criteria=["exact"])
_SPEC = OperationSpec(
    spec_id="extract-op",
    operation="extract",
    version="3",
    action_instruction="Extract the total.",
    evaluation_spec=_EVAL,
)


def _case(**fields):
    fields.setdefault("case_id", "c1")
    fields.setdefault("operation", "extract")
    return EvaluationCase(prediction={"total": 1}, input_data="doc", **fields)


def test_registry_container_behaviour():
    registry = OperationRegistry([_SPEC])
    assert len(registry) == 1
    assert "extract" in registry
    assert "other" not in registry
    assert registry.get("extract") is _SPEC
    assert registry.get("other") is None
    assert list(registry) == [_SPEC]


def test_duplicate_operation_is_rejected():
    registry = OperationRegistry([_SPEC])
    other = OperationSpec(spec_id="other-op", operation="extract", evaluation_spec=_EVAL)
    with pytest.raises(
        ConfigurationError,
        match=r"operation 'extract' already has spec 'extract-op' v3; refusing 'other-op' v1",
    ) as info:
        registry.register(other)
    assert isinstance(info.value, ValueError)
    assert info.value.expected == "one operation spec per operation"
    assert registry.get("extract") is _SPEC
    assert len(registry) == 1


def test_duplicate_in_constructor_is_rejected():
    with pytest.raises(ConfigurationError):
        OperationRegistry([_SPEC, _SPEC])


def test_resolve_fills_and_stamps():
    registry = OperationRegistry([_SPEC])
    case = _case()
    resolved = registry.resolve(case)
    assert resolved.action_instruction == "Extract the total."
    assert resolved.evaluation_spec == _EVAL
    assert resolved.operation_spec_id == "extract-op"
    assert resolved.operation_spec_version == "3"
    assert resolved.case_id == "c1"
    assert resolved.prediction == {"total": 1}


def test_resolve_leaves_the_original_case_unchanged():
    registry = OperationRegistry([_SPEC])
    case = _case()
    before = case.model_dump()
    registry.resolve(case)
    assert case.model_dump() == before
    assert case.action_instruction is None
    assert case.evaluation_spec is None
    assert case.operation_spec_id is None
    assert case.operation_spec_version is None


def test_case_supplied_values_win():
    own_eval = EvaluationSpec(spec_id="case-eval", objective="Case rules.", criteria=["mine"])
    registry = OperationRegistry([_SPEC])
    resolved = registry.resolve(_case(action_instruction="Case prompt.", evaluation_spec=own_eval))
    assert resolved.action_instruction == "Case prompt."
    assert resolved.evaluation_spec == own_eval
    assert resolved.operation_spec_id == "extract-op"
    assert resolved.operation_spec_version == "3"


def test_case_supplied_instruction_only():
    resolved = OperationRegistry([_SPEC]).resolve(_case(action_instruction="Case prompt."))
    assert resolved.action_instruction == "Case prompt."
    assert resolved.evaluation_spec == _EVAL


def test_unknown_operation_returns_the_case_unchanged():
    registry = OperationRegistry([_SPEC])
    case = _case(operation="classify")
    assert registry.resolve(case) is case
    assert OperationRegistry().resolve(case) is case
