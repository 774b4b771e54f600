from __future__ import annotations

import pytest

from docevals_mlflow import (
    ConfigurationError,
    EvaluationCase,
    EvaluationSpec,
    Evaluator,
    ExactStructuredMetric,
    FunctionMetric,
    OperationRegistry,
    OperationSpec,
    artifact_from_value,
    sha256_json,
)

SPEC = EvaluationSpec(
    spec_id="vehicle-correctness",
    version="3",
    status="approved",
    objective="Choose the vehicle using the approved taxonomy.",
    criteria=["Use fund for pooled capital.", "Use unknown when evidence is insufficient."],
    allowed_outputs=["fund", "equity", "unknown"],
)
OPERATION = OperationSpec(
    spec_id="investment-vehicle",
    operation="vehicle_classification",
    version="2026-07-23",
    action_instruction="Determine the investment vehicle.",
    evaluation_spec=SPEC,
)


def vehicle_case(**fields):
    return EvaluationCase(
        case_id="statement-001",
        stage_id="classify-vehicle",
        operation="vehicle_classification",
        input_data={"name": "Global Fund"},
        prediction={"vehicle": "fund"},
        references=[
            artifact_from_value({"vehicle": "fund"}, authority="ground_truth", artifact_id="gt")
        ],
        **fields,
    )


def test_single_case_sets_failure_context():
    passing = Evaluator([ExactStructuredMetric()]).evaluate(vehicle_case())
    assert (passing.verdict, passing.failure_context) == ("pass", "none")
    failing = Evaluator([FunctionMetric("no", lambda case: False)]).evaluate(vehicle_case())
    assert (failing.verdict, failing.failure_context) == ("fail", "current_stage")
    unsure = Evaluator([FunctionMetric("maybe", lambda case: 0.5)]).evaluate(vehicle_case())
    assert (unsure.verdict, unsure.failure_context) == ("uncertain", "indeterminate")


def test_single_case_with_upstream_verdicts():
    case = vehicle_case(depends_on=["extract"])
    evaluator = Evaluator([FunctionMetric("no", lambda case: False)])
    given = evaluator.evaluate(case, upstream_verdicts={"extract": "fail"})
    assert given.failure_context == "upstream_or_combined"
    assert given.upstream_verdicts == {"extract": "fail"}
    unknown = evaluator.evaluate(case)
    assert unknown.failure_context == "indeterminate"
    assert unknown.upstream_verdicts == {}
    assert any("'extract'" in warning for warning in unknown.warnings)


def test_combined_verdict_precedence():
    metrics = [
        FunctionMetric("a", lambda case: True),
        FunctionMetric("b", lambda case: 0.5),
        FunctionMetric("c", lambda case: None),
    ]
    assert Evaluator(metrics).evaluate(vehicle_case()).verdict == "uncertain"
    metrics.append(FunctionMetric("d", lambda case: False))
    assert Evaluator(metrics).evaluate(vehicle_case()).verdict == "fail"


def test_operation_spec_resolution_and_fingerprints():
    report = Evaluator([ExactStructuredMetric()], operation_specs=[OPERATION]).evaluate(
        vehicle_case(judge_instruction="Check the taxonomy.")
    )
    fp = report.fingerprints
    assert report.action_instruction == "Determine the investment vehicle."
    assert report.evaluation_spec == SPEC
    assert (fp.operation_spec_id, fp.operation_spec_version) == ("investment-vehicle", "2026-07-23")
    assert (fp.evaluation_spec_id, fp.evaluation_spec_version, fp.evaluation_spec_status) == (
        "vehicle-correctness",
        "3",
        "approved",
    )
    assert fp.action_instruction_sha256 == sha256_json("Determine the investment vehicle.")
    assert fp.evaluation_spec_sha256 == sha256_json(SPEC)
    assert fp.judge_instruction_sha256 == sha256_json("Check the taxonomy.")
    assert fp.rubric_sha256 == sha256_json(report.rubric)
    assert report.warnings == []
    assert report.package_version


def test_effective_operation_spec_hash_changes_with_the_prompt():
    base = Evaluator([ExactStructuredMetric()], operation_specs=[OPERATION])
    changed = OPERATION.model_copy(update={"action_instruction": "Determine the vehicle type."})
    other = Evaluator([ExactStructuredMetric()], operation_specs=OperationRegistry([changed]))
    first = base.evaluate(vehicle_case()).fingerprints
    second = other.evaluate(vehicle_case()).fingerprints
    assert first.operation_spec_sha256 != second.operation_spec_sha256
    assert first.evaluation_spec_sha256 == second.evaluation_spec_sha256


def test_warnings_for_draft_spec_override_and_replace_mode():
    draft = SPEC.model_copy(update={"status": "draft"})
    report = Evaluator([ExactStructuredMetric()], operation_specs=[OPERATION]).evaluate(
        vehicle_case(
            action_instruction="Something else.",
            evaluation_spec=draft,
            judge_instruction="Only check the vehicle.",
            judge_instruction_mode="replace",
            allow_unsafe_judge_override=True,
        )
    )
    text = "\n".join(report.warnings)
    assert "base judge prompt was replaced" in text
    assert "is a draft" in text
    assert "action_instruction differs" in text
    assert "evaluation_spec differs" in text


def test_raising_metric_does_not_stop_other_metrics():
    def broken(case):
        raise RuntimeError("boom")

    report = Evaluator([FunctionMetric("broken", broken), ExactStructuredMetric()]).evaluate(
        vehicle_case()
    )
    assert report.verdict == "uncertain"
    assert report.requires_human_review
    assert report.metric("broken").error is not None
    assert report.metric("exact_structured").verdict == "pass"


def test_reference_summary_records_digest_not_content():
    report = Evaluator([ExactStructuredMetric()]).evaluate(vehicle_case())
    (summary,) = report.reference_summary
    assert summary.id == "gt"
    assert summary.exact_comparable
    assert summary.sha256 == sha256_json({"vehicle": "fund"})


def test_evaluator_needs_metrics():
    with pytest.raises(ConfigurationError):
        Evaluator([])


def test_an_evaluator_refuses_two_metrics_of_one_name():
    from docevals_mlflow import ConfigurationError, Evaluator, ExactStructuredMetric

    with pytest.raises(ConfigurationError, match="metric names repeat"):
        Evaluator([ExactStructuredMetric(), ExactStructuredMetric()])
