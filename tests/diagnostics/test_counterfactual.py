"""Oracle-swap reruns: broken extractor + correct calculator → caused_by_upstream;
both broken → independent_failure; no way to rerun → upstream_or_combined stays."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from docevals_mlflow import (
    EvaluationCase,
    ExactStructuredMetric,
    MetricResult,
    PipelineCase,
    PipelineEvaluationReport,
    PipelineEvaluator,
    artifact_from_value,
    build_suite_report,
)
from docevals_mlflow.diagnostics import Counterfactual, RecordedRerun, default_rerun_input
from docevals_mlflow.diagnostics.oracle import RerunUnavailable, oracle_output
from docevals_mlflow.errors import ConfigurationError
from tests.diagnostics.pipelines import (
    TRUE_ITEMS,
    WRONG_ITEMS,
    broken_calculate,
    calculate,
    evaluator,
    invoice,
)


def contexts(report: PipelineEvaluationReport) -> dict[str, str]:
    return {stage.stage_id: stage.failure_context for stage in report.stage_reports}


def test_broken_extractor_and_correct_calculator_is_caused_upstream():
    counterfactual = Counterfactual(actions={"calculate": calculate})
    report = evaluator(counterfactual).evaluate(invoice("inv-1", calculate))
    assert contexts(report) == {"extract": "current_stage", "calculate": "caused_by_upstream"}
    rerun = report.stage("calculate").counterfactual
    assert rerun is not None
    assert rerun.outcome == "caused_by_upstream"
    assert rerun.verdict == "pass"
    assert rerun.original_context == "upstream_or_combined"
    assert rerun.source == "action"
    assert rerun.corrected_upstream == {"extract": "reference gt-items"}
    assert rerun.input_data == TRUE_ITEMS
    assert rerun.prediction == {"total": 15.5}
    assert [result.verdict for result in rerun.metric_results] == ["pass"]
    # The stage's own verdict is what it was: the recorded output is still wrong.
    assert report.stage("calculate").verdict == "fail"
    assert report.stage("extract").counterfactual is None


def test_both_broken_is_an_independent_failure():
    counterfactual = Counterfactual(actions={"calculate": broken_calculate})
    report = evaluator(counterfactual).evaluate(invoice("inv-2", broken_calculate))
    assert contexts(report)["calculate"] == "independent_failure"
    rerun = report.stage("calculate").counterfactual
    assert rerun is not None
    assert rerun.verdict == "fail"
    assert rerun.prediction == {"total": 16.5}


def test_without_a_counterfactual_nothing_changes():
    plain = evaluator().evaluate(invoice("inv-1", calculate))
    assert contexts(plain)["calculate"] == "upstream_or_combined"
    assert plain.stage("calculate").counterfactual is None
    with_reruns = evaluator(Counterfactual(actions={"calculate": calculate})).evaluate(
        invoice("inv-1", calculate)
    )
    # Everything but the refined attribution is the same.
    assert plain.stage("extract") == with_reruns.stage("extract")
    assert plain.stage("calculate").metric_results == with_reruns.stage("calculate").metric_results


def test_no_action_keeps_the_combined_attribution():
    report = evaluator(Counterfactual(actions={"other": calculate})).evaluate(
        invoice("inv-1", calculate)
    )
    stage = report.stage("calculate")
    assert stage.failure_context == "upstream_or_combined"
    assert stage.counterfactual is not None
    assert stage.counterfactual.outcome == "not_rerun"
    assert "no action registered" in (stage.counterfactual.reason or "")


def test_failed_upstream_without_ground_truth_cannot_be_rerun():
    pipeline = invoice("inv-1", calculate, extraction_truth=None)
    report = evaluator(Counterfactual(actions={"calculate": calculate})).evaluate(pipeline)
    # Without ground truth the extractor is not_applicable, hence indeterminate: no rerun.
    assert contexts(report)["calculate"] == "indeterminate"
    assert report.stage("calculate").counterfactual is None


def test_an_action_that_raises_stays_combined():
    def explode(_: Any) -> Any:
        raise RuntimeError("service down")

    report = evaluator(Counterfactual(actions={"calculate": explode})).evaluate(
        invoice("inv-1", calculate)
    )
    rerun = report.stage("calculate").counterfactual
    assert rerun is not None
    assert rerun.outcome == "not_rerun"
    assert rerun.reason == "the action raised RuntimeError: service down"
    assert rerun.input_data == TRUE_ITEMS
    assert report.stage("calculate").failure_context == "upstream_or_combined"


def test_async_actions_run_and_stage_ids_win_over_operations():
    async def rerun(extraction: dict[str, Any]) -> dict[str, float]:
        await asyncio.sleep(0)
        return calculate(extraction)

    report = evaluator(Counterfactual(actions={"calculate": rerun})).evaluate(
        invoice("inv-1", calculate)
    )
    assert report.stage("calculate").failure_context == "caused_by_upstream"
    chosen = Counterfactual(actions={"sum": broken_calculate, "total": calculate})
    assert chosen.action_for(_stage(stage_id="total", operation="sum")) is calculate
    assert chosen.action_for(_stage(stage_id="other", operation="sum")) is broken_calculate
    with pytest.raises(ConfigurationError):
        Counterfactual(actions={"sum": "not a function"})  # type: ignore[dict-item]


def test_the_action_cannot_change_the_ground_truth():
    def mutate(extraction: dict[str, Any]) -> dict[str, float]:
        extraction["items"].clear()
        return {"total": 0}

    pipeline = invoice("inv-1", calculate)
    evaluator(Counterfactual(actions={"calculate": mutate})).evaluate(pipeline)
    assert pipeline.stage("extract").references[0].content == TRUE_ITEMS


def test_recorded_reruns_need_no_action():
    recorded = RecordedRerun(pipeline_id="inv-1", stage_id="calculate", prediction={"total": 15.5})
    report = evaluator(Counterfactual(reruns=[recorded])).evaluate(invoice("inv-1", calculate))
    rerun = report.stage("calculate").counterfactual
    assert rerun is not None
    assert rerun.source == "recorded"
    assert rerun.outcome == "caused_by_upstream"
    assert rerun.input_data == TRUE_ITEMS  # the input the evaluator would have built
    other = evaluator(Counterfactual(reruns=[recorded])).evaluate(invoice("inv-9", calculate))
    assert other.stage("calculate").counterfactual.outcome == "not_rerun"  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError):
        Counterfactual(reruns=[recorded, recorded])


def test_an_uncertain_rerun_is_inconclusive():
    class Picky:
        name = "picky"

        def evaluate(self, case: EvaluationCase) -> MetricResult:
            if case.stage_id == "extract":
                return MetricResult(name=self.name, basis="x", verdict="fail")
            verdict = "uncertain" if case.prediction == {"total": 15.5} else "fail"
            return MetricResult(name=self.name, basis="x", verdict=verdict)

    report = PipelineEvaluator(
        default_metrics=[Picky()], counterfactual=Counterfactual(actions={"calculate": calculate})
    ).evaluate(invoice("inv-1", calculate))
    rerun = report.stage("calculate").counterfactual
    assert rerun is not None
    assert rerun.outcome == "inconclusive"
    assert rerun.verdict == "uncertain"
    assert report.stage("calculate").failure_context == "upstream_or_combined"


def test_batches_rerun_every_pipeline():
    counterfactual = Counterfactual(actions={"calculate": calculate})
    pipelines = [
        invoice("good", calculate, extracted=TRUE_ITEMS),
        invoice("bad", calculate),
    ]
    reports = evaluator(counterfactual).evaluate_batch(pipelines, max_concurrency=2)
    assert [contexts(report)["calculate"] for report in reports] == ["none", "caused_by_upstream"]
    summary = build_suite_report(reports).stages["calculate"].counterfactual
    assert summary is not None
    assert (summary.combined_failures, summary.caused_by_upstream) == (1, 1)
    assert summary.caused_by_upstream_rate == 1.0
    assert summary.coverage == 1.0


def test_counterfactual_reports_round_trip_and_old_reports_load():
    report = evaluator(Counterfactual(actions={"calculate": calculate})).evaluate(
        invoice("inv-1", calculate)
    )
    again = PipelineEvaluationReport.model_validate_json(report.model_dump_json())
    assert again == report
    old = report.model_dump(mode="json")
    for stage in old["stage_reports"]:
        del stage["counterfactual"]
    assert PipelineEvaluationReport.model_validate(old).stage("calculate").counterfactual is None


# ---------------------------------------------------------------- oracles and inputs


def _stage(**fields: Any) -> EvaluationCase:
    base: dict[str, Any] = {
        "case_id": "c",
        "stage_id": "s",
        "prediction": {"a": 1},
        "references": [artifact_from_value("notes", authority="evidence", artifact_id="e")],
    }
    return EvaluationCase(**{**base, **fields})


def test_path_tables_patch_the_prediction_in_its_own_types():
    table = [{"path": "$.total", "expected": "15.50"}, {"path": "$.paid", "expected": "true"}]
    stage = _stage(
        prediction={"total": 19.5, "paid": False, "currency": "EUR"},
        references=[artifact_from_value(table, authority="ground_truth", artifact_id="t")],
    )
    corrected, source = oracle_output(stage, passed=False)
    assert corrected == {"total": 15.5, "paid": True, "currency": "EUR"}
    assert source == "path table t"


def test_oracles_refuse_what_they_cannot_decide():
    two = _stage(
        references=[
            artifact_from_value({"a": 1}, authority="ground_truth", artifact_id="one"),
            artifact_from_value({"a": 2}, authority="ground_truth", artifact_id="two"),
        ]
    )
    with pytest.raises(RerunUnavailable, match="several ground-truth documents"):
        oracle_output(two, passed=False)
    generated = _stage(
        references=[artifact_from_value({"a": 2}, authority="generated", artifact_id="g")]
    )
    with pytest.raises(RerunUnavailable, match="no ground-truth reference"):
        oracle_output(generated, passed=False)
    assert oracle_output(generated, passed=True) == ({"a": 1}, "own prediction (passed)")


def test_default_input_rules():
    corrected = {"extract": {"x": 1}, "lookup": {"y": 2}}
    recorded = {"extract": {"x": 0}, "lookup": {"y": 0}}
    single = _stage(input_data=None, depends_on=["extract"])
    assert default_rerun_input(single, corrected, recorded) == {"x": 1}
    both = _stage(input_data=None, depends_on=["extract", "lookup"])
    assert default_rerun_input(both, corrected, recorded) == corrected
    from_one = _stage(input_data={"x": 0}, depends_on=["extract", "lookup"])
    assert default_rerun_input(from_one, corrected, recorded) == {"x": 1}
    keyed = _stage(input_data={"extract": {"x": 0}, "rate": 0.2}, depends_on=["extract"])
    assert default_rerun_input(keyed, corrected, recorded) == {"extract": {"x": 1}, "rate": 0.2}
    opaque = _stage(input_data="text", depends_on=["extract"])
    with pytest.raises(RerunUnavailable, match="build_input"):
        default_rerun_input(opaque, corrected, recorded)


def test_a_custom_input_builder_decides_the_input():
    seen: list[Any] = []

    def build(stage: EvaluationCase, corrected: dict[str, Any]) -> Any:
        seen.append((stage.stage_id, corrected))
        return {"wrapped": corrected["extract"]}

    counterfactual = Counterfactual(
        actions={"calculate": lambda data: calculate(data["wrapped"])}, build_input=build
    )
    report = PipelineEvaluator(
        default_metrics=[ExactStructuredMetric()], counterfactual=counterfactual
    ).evaluate(invoice("inv-1", calculate))
    assert seen == [("calculate", {"extract": TRUE_ITEMS})]
    assert report.stage("calculate").failure_context == "caused_by_upstream"


def test_a_passing_direct_parent_without_truth_keeps_its_output():
    # extract fails; normalise passes without ground truth; calculate fails.
    stages = [
        *invoice("p", calculate).stages[:1],
        EvaluationCase(
            case_id="p",
            stage_id="normalise",
            operation="normalise",
            input_data=WRONG_ITEMS,
            prediction=TRUE_ITEMS,
            references=[artifact_from_value(TRUE_ITEMS, authority="ground_truth", artifact_id="n")],
            depends_on=["extract"],
        ),
        EvaluationCase(
            case_id="p",
            stage_id="calculate",
            operation="calculate",
            input_data=TRUE_ITEMS,
            prediction={"total": 99},
            references=[
                artifact_from_value({"total": 15.5}, authority="ground_truth", artifact_id="t")
            ],
            depends_on=["normalise"],
        ),
    ]
    report = evaluator(Counterfactual(actions={"calculate": calculate})).evaluate(
        PipelineCase(pipeline_id="p", stages=stages)
    )
    # The rerun on normalise's (correct) output passes: the recorded 99 was not caused
    # by this input, yet the verdicts alone could not say so.
    assert report.stage("calculate").failure_context == "caused_by_upstream"
    rerun = report.stage("calculate").counterfactual
    assert rerun is not None
    assert rerun.corrected_upstream == {"normalise": "reference n"}
