import re

import pytest

from docevals_mlflow.core.artifacts import artifact_from_value
from docevals_mlflow.core.cases import EvaluationCase, PipelineCase, Producer
from docevals_mlflow.errors import InputError, PipelineDefinitionError


def _ref(ref_id="gt"):
    return artifact_from_value({"total": 1}, authority="ground_truth", artifact_id=ref_id)


def _case(**fields):
    fields.setdefault("case_id", "c1")
    fields.setdefault("prediction", {"total": 1})
    if "references" not in fields and "input_data" not in fields:
        fields["input_data"] = "document text"
    return EvaluationCase(**fields)


def _stage(stage_id, *depends_on):
    return _case(case_id="doc", stage_id=stage_id, depends_on=list(depends_on))


def test_case_defaults():
    case = _case(references=[_ref()])
    assert case.stage_id == "output"
    assert case.operation == "generic"
    assert case.depends_on == []
    assert case.judge_instruction_mode == "append"
    assert case.operation_spec_id is None


def test_producer_label():
    assert Producer(provider="openai", model="gpt-x").label == "openai:gpt-x"
    assert Producer(provider="local").label == "local"


def test_case_needs_references_or_input_data():
    with pytest.raises(
        InputError,
        match=re.escape("case 'inv-7' stage 'ocr': needs references or input_data"),
    ):
        EvaluationCase(case_id="inv-7", stage_id="ocr", prediction="x")


@pytest.mark.parametrize("input_data", [0, "", {}, False])
def test_falsy_input_data_is_still_input_data(input_data):
    assert _case(input_data=input_data).input_data == input_data


def test_references_alone_are_enough():
    assert _case(references=[_ref()]).references[0].id == "gt"


def test_prediction_is_required():
    with pytest.raises(InputError, match="prediction: Field required"):
        EvaluationCase(case_id="c1", input_data="x")


def test_none_prediction_is_allowed():
    assert _case(prediction=None).prediction is None


def test_unknown_field_is_rejected():
    with pytest.raises(InputError, match="predictions: Extra inputs are not permitted"):
        _case(predictions=[1])


@pytest.mark.parametrize("instruction", [None, "", "   "])
def test_replace_mode_needs_non_empty_judge_instruction(instruction):
    with pytest.raises(InputError, match="judge_instruction_mode='replace' needs a non-empty"):
        _case(
            judge_instruction_mode="replace",
            judge_instruction=instruction,
            allow_unsafe_judge_override=True,
        )


def test_replace_mode_needs_unsafe_override():
    with pytest.raises(InputError, match="needs allow_unsafe_judge_override=True"):
        _case(judge_instruction_mode="replace", judge_instruction="Judge only the total.")
    case = _case(
        judge_instruction_mode="replace",
        judge_instruction="Judge only the total.",
        allow_unsafe_judge_override=True,
    )
    assert case.judge_instruction == "Judge only the total."


def test_append_mode_accepts_any_judge_instruction():
    assert _case(judge_instruction="Also check dates.").judge_instruction_mode == "append"


def test_duplicate_reference_ids_are_rejected():
    with pytest.raises(InputError, match=re.escape("duplicate reference ids ['a']")):
        _case(references=[_ref("a"), _ref("b"), _ref("a")])


def test_duplicate_dependencies_are_rejected():
    with pytest.raises(InputError, match="depends_on lists a stage twice"):
        _case(depends_on=["ocr", "ocr"])


def test_case_is_frozen():
    case = _case()
    with pytest.raises(ValueError, match="frozen"):
        case.prediction = "other"


# --- pipelines ----------------------------------------------------------------------


def _pipeline_error(stages, match):
    with pytest.raises(PipelineDefinitionError, match=match) as info:
        PipelineCase(pipeline_id="p", stages=stages)
    assert isinstance(info.value, InputError)
    assert isinstance(info.value, ValueError)
    return info.value


def test_duplicate_stage_ids():
    error = _pipeline_error([_stage("a"), _stage("b"), _stage("a")], "duplicate stage id")
    assert error.stage == "a"
    assert str(error) == "stage 'a': pipeline 'p': duplicate stage id"


def test_unknown_dependency():
    error = _pipeline_error(
        [_stage("a"), _stage("b", "a", "zz")], re.escape("unknown dependency 'zz'")
    )
    assert error.stage == "b"
    assert error.expected == "one of a, b"


def test_self_dependency():
    error = _pipeline_error([_stage("a"), _stage("b", "b")], "stage depends on itself")
    assert error.stage == "b"


def test_three_cycle():
    error = _pipeline_error(
        [_stage("x"), _stage("b", "a"), _stage("c", "b"), _stage("a", "c", "x")],
        re.escape("dependency cycle among stages 'a', 'b', 'c'"),
    )
    assert error.stage == "a"


def test_pipeline_needs_a_stage():
    with pytest.raises(InputError, match="stages"):
        PipelineCase(pipeline_id="p", stages=[])


def _ids(stages):
    return [stage.stage_id for stage in stages]


def test_waves_are_stable_topological_layers():
    pipeline = PipelineCase(
        pipeline_id="p",
        stages=[_stage("c", "a"), _stage("a"), _stage("b"), _stage("d", "b", "c")],
    )
    assert [_ids(wave) for wave in pipeline.waves()] == [["a", "b"], ["c"], ["d"]]
    assert _ids(pipeline.ordered_stages()) == ["a", "b", "c", "d"]


def test_waves_keep_given_order_within_a_wave():
    pipeline = PipelineCase(pipeline_id="p", stages=[_stage("z"), _stage("m"), _stage("a")])
    assert [_ids(wave) for wave in pipeline.waves()] == [["z", "m", "a"]]


def test_ancestors_are_transitive_and_in_dependency_order():
    pipeline = PipelineCase(
        pipeline_id="p",
        stages=[
            _stage("d", "c"),
            _stage("c", "b"),
            _stage("b", "a"),
            _stage("a"),
            _stage("side"),
        ],
    )
    assert pipeline.ancestors("d") == ["a", "b", "c"]
    assert pipeline.ancestors("b") == ["a"]
    assert pipeline.ancestors("a") == []
    assert pipeline.ancestors("side") == []


def test_ancestors_of_a_diamond():
    pipeline = PipelineCase(
        pipeline_id="p",
        stages=[_stage("c", "a"), _stage("a"), _stage("b"), _stage("d", "b", "c")],
    )
    assert pipeline.ancestors("d") == ["a", "b", "c"]
    assert pipeline.ancestors("c") == ["a"]


def test_stage_lookup():
    pipeline = PipelineCase(pipeline_id="p", stages=[_stage("a"), _stage("b", "a")])
    assert pipeline.stage("b").depends_on == ["a"]
    with pytest.raises(KeyError):
        pipeline.stage("zz")
