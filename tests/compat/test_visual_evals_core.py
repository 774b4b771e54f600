"""The seed ``visual_evals`` 0.1.0 API through ``docevals_mlflow.compat.visual_evals``:
its public names, the keywords of models, specs, artifacts, metrics, evaluators, suite
and report, and the report shapes seed code reads. Written from the seed's documented
API; the examples of the seed document are in ``test_visual_evals_examples.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import docevals_mlflow.compat.visual_evals as visual_evals
from docevals_mlflow.errors import ConfigurationError, DocEvalsWarning, InputError

# The seed package's public names (its ``__all__``), as its API documents them.
SEED_NAMES = {
    *("AnthropicMessagesAdapter", "ComparisonMode", "DocumentMarkdownConverter"),
    *("DocumentMarkdownReport", "EvaluationCase", "EvaluationReport", "EvaluationSpec"),
    *("EvaluationSuiteCase", "EvaluationSuiteReport", "Evaluator", "EvaluatorRollup"),
    *("ExactStructuredMetric", "FailureContext", "FunctionMetric", "GeneratedClaim"),
    *("GeneratedGroundTruthOutput", "GroundTruthAdjudicationReport", "GroundTruthAdjudicator"),
    *("GroundTruthGenerationReport", "GroundTruthGenerationRequest", "GroundTruthPanel"),
    *("GroundTruthPreparationReport", "GroundTruthReviewFile", "GroundTruthReviewItem"),
    *("GroundTruthRouter", "Judge", "JudgeAdapter", "JudgeOutput", "JudgePanelMetric"),
    *("JudgeRequest", "JudgeVariant", "LLMJudgeMetric", "MarkdownConversionOutput"),
    *("MetricResult", "ModelJudge", "OpenAIResponsesAdapter", "OperationRegistry"),
    *("OperationSpec", "PipelineCase", "PipelineEvaluationReport", "PipelineEvaluator"),
    *("ProducerInfo", "PyMuPDF4LLMConverter", "ReferenceArtifact", "TokenUsage"),
    *("UsageLedger", "UsageSummary", "Verdict", "approve_generated_reference"),
    *("approved_reference_from_review", "artifact_from_path", "artifact_from_value"),
    *("build_judge_request", "build_suite_report", "ground_truth_review_from_generation"),
    *("load_ground_truth_review", "load_prediction", "resolve_ground_truth_union"),
    "write_ground_truth_review",
}

# Names seed code imports from the submodules rather than the package.
SEED_SUBMODULE_NAMES = {
    "report": ("to_markdown", "write_json_report", "write_markdown_report"),
    "artifacts": ("flatten_leaves", "structured_claims", "exact_structured_claims", "json_value"),
    "metrics": ("Metric",),
    "specs": ("OperationRegistry",),
    "models": ("ProducerInfo", "EvaluationCase"),
    "evaluator": ("Evaluator", "PipelineEvaluator"),
    "suite": ("build_suite_report",),
    "judge": ("ModelJudge", "build_judge_request"),
    "usage": ("TokenUsage",),
    "conversion": ("PyMuPDF4LLMConverter",),
    "ground_truth": ("GroundTruthPanel",),
}


def _passing(_case: Any) -> bool:
    return True


def test_the_package_exports_exactly_the_seed_names() -> None:
    assert set(visual_evals.__all__) == SEED_NAMES
    assert len(visual_evals.__all__) == len(SEED_NAMES)
    for name in SEED_NAMES:
        assert getattr(visual_evals, name) is not None, name


def test_the_submodules_keep_the_seed_names() -> None:
    for module, names in SEED_SUBMODULE_NAMES.items():
        submodule = getattr(visual_evals, module)
        for name in names:
            assert callable(getattr(submodule, name)), f"{module}.{name}"


def test_models_take_every_seed_keyword(tmp_path: Path) -> None:
    spec = visual_evals.EvaluationSpec(
        spec_id="s",
        version="2",
        status="approved",
        objective="Totals are sums.",
        criteria=["Sum every row."],
        allowed_outputs=["a number"],
        examples=[{"input": 1}],
        metadata={"owner": "qa"},
    )
    operation = visual_evals.OperationSpec(
        spec_id="op",
        operation="sum",
        version="3",
        action_instruction="Add the rows.",
        evaluation_spec=spec,
        metadata={"team": "x"},
    )
    reference = visual_evals.ReferenceArtifact(
        id="truth",
        path="inline://truth",
        kind="structured",
        authority="ground_truth",
        comparison_mode="exact",
        media_type="application/json",
        content={"total": 3},
        metadata={"source": "human"},
    )
    case = visual_evals.EvaluationCase(
        case_id="c",
        stage_id="total",
        operation="sum",
        action_instruction=None,
        evaluation_spec=None,
        input_data={"rows": [1, 2]},
        prediction={"total": 3},
        prediction_name="answer",
        producer=visual_evals.ProducerInfo(provider="acme", model="m1"),
        references=[reference],
        depends_on=[],
        metadata={"batch": 1},
        rubric="The total is the sum.",
        judge_instruction="Check the arithmetic.",
        judge_instruction_mode="append",
        allow_unsafe_judge_override=False,
    )
    pipeline = visual_evals.PipelineCase(pipeline_id="p", stages=[case], metadata={"m": 1})
    result = visual_evals.MetricResult(
        name="n",
        basis="b",
        verdict="pass",
        scores={"s": 1.0},
        counts={"c": 1},
        details=[{"d": 1}],
        notes=["note"],
        requires_human_review=False,
    )
    resolved = visual_evals.OperationRegistry({"sum": operation}).resolve(case)
    assert resolved.action_instruction == "Add the rows."
    assert resolved.operation_spec_id == "op"
    assert resolved.operation_spec_version == "3"
    assert len(resolved.action_instruction_hash or "") == 64
    assert len(resolved.evaluation_spec_hash or "") == 64
    assert resolved.has_ground_truth
    assert not resolved.has_generated_reference
    assert pipeline.ordered_stages() == [case]
    assert result.details == [{"d": 1}]
    with pytest.raises(ConfigurationError, match="spec is for operation 'sum'"):
        visual_evals.OperationRegistry({"other": operation})


def test_artifact_helpers_keep_the_seed_keywords(tmp_path: Path) -> None:
    table = tmp_path / "truth.csv"
    table.write_text("field_path,expected_value\n$.a,1\n", encoding="utf-8")
    reference = visual_evals.artifact_from_path(
        table, authority="ground_truth", artifact_id="t", comparison_mode="auto", metadata={"k": 1}
    )
    value = visual_evals.artifact_from_value(
        {"b": {"c": 2}}, authority="generated", artifact_id="v", metadata={"k": 2}
    )
    prediction = tmp_path / "prediction.json"
    prediction.write_text(json.dumps({"a": "1"}), encoding="utf-8")
    artifacts = visual_evals.artifacts
    assert (reference.id, reference.metadata) == ("t", {"k": 1})
    assert value.path == "inline://v"
    assert visual_evals.load_prediction(prediction) == {"a": "1"}
    assert artifacts.exact_structured_claims(reference) == [("$.a", "1")]
    assert artifacts.structured_claims(value) == [("$.b.c", 2)]
    assert artifacts.flatten_leaves({"b": 1, "a": {"x.y": 2}}) == [("$.a['x.y']", 2), ("$.b", 1)]
    assert artifacts.json_value({"b": 1, "a": "é"}) == '{"a": "é", "b": 1}'
    notes = tmp_path / "notes.txt"
    notes.write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="JSON"):
        visual_evals.load_prediction(notes)


def test_function_metric_takes_the_seed_keywords() -> None:
    case = visual_evals.EvaluationCase(case_id="c", input_data={"a": 1}, prediction={"a": 1})
    metric = visual_evals.FunctionMetric(
        "same", function=_passing, score_name="agreement", basis="approved_spec"
    )
    default = visual_evals.FunctionMetric("number", lambda _case: 0.5)
    result = metric.evaluate(case)
    assert (result.basis, result.verdict, result.scores) == (
        "approved_spec",
        "pass",
        {"agreement": 1.0},
    )
    assert metric.function is _passing
    number = default.evaluate(case)
    assert (number.basis, number.verdict) == ("user_defined", "uncertain")


def test_exact_metric_has_the_seed_result_shape(tmp_path: Path) -> None:
    truth = tmp_path / "truth.csv"
    truth.write_text("path,expected\n$.a,x\n$.b,2\n$.c,3\n", encoding="utf-8")
    case = visual_evals.EvaluationCase(
        case_id="c",
        prediction={"a": "X", "b": 5},
        references=[visual_evals.artifact_from_path(truth, authority="ground_truth")],
    )
    result = visual_evals.ExactStructuredMetric(
        relative_tolerance=0.0, absolute_tolerance=0.0
    ).evaluate(case)
    assert result.basis == "authoritative_structured_ground_truth"
    assert result.counts == {"expected_fields": 3, "correct": 1, "incorrect": 1, "missing": 1}
    assert result.scores["ground_truth_recall"] == result.scores["field_accuracy"] == 1 / 3
    assert [(d["path"], d["actual"], d["verdict"], d["outcome"]) for d in result.details] == [
        ("$.a", "X", "correct", "TP"),
        ("$.b", 5, "incorrect", "FD"),
        ("$.c", None, "missing", "FN"),
    ]
    generated = case.model_copy(
        update={"references": [case.references[0].model_copy(update={"authority": "generated"})]}
    )
    provisional = visual_evals.ExactStructuredMetric().evaluate(generated)
    assert provisional.basis == "provisional_ai_generated_consensus"
    assert "not accuracy" in provisional.notes[-1]
    native = visual_evals.ExactStructuredMetric().native_evaluate(case)
    assert native.counts["fd"] == 1
    assert native.basis == "ground_truth"


def _answer(verdict: str = "correct") -> dict[str, Any]:
    return {
        "summary": "checked",
        "prediction_claims": [
            {
                "claim_id": "p00001",
                "path": "$.amount",
                "verdict": verdict,
                "evidence": "seen",
                "reference_id": None,
                "confidence": 0.9,
            }
        ],
        "reference_claims": [],
        "rubric_results": [
            {"criterion": "c", "verdict": "pass", "evidence": "e", "confidence": 0.9}
        ],
    }


def _amount_case(**options: Any) -> Any:
    return visual_evals.EvaluationCase(
        case_id="amount", input_data={"amount": "100"}, prediction={"amount": "100"}, **options
    )


def test_judge_panel_takes_the_mapping_form_and_the_seed_keywords() -> None:
    panel = visual_evals.JudgePanelMetric(
        judges={
            "provider-a": visual_evals.ModelJudge(lambda _r: _answer()),
            "provider-b": visual_evals.ModelJudge(lambda _r: _answer()),
        },
        name="panel",
        vote_rule="unanimous",
        minimum_agreement=None,
        review_on_any_disagreement=True,
    )
    result = panel.evaluate(_amount_case(producer={"provider": "provider-a", "model": "m"}))
    assert result.verdict == "pass"
    # A label is not a provider: a function judge's relation to the producer is unknown.
    assert result.counts["unknown_relationship_model_groups"] == 2
    assert result.counts["self_judging_model_groups"] == 0
    providers = [d for d in result.details if d["type"] == "provider_result"]
    assert {d["provider"]: d["producer_relationship"] for d in providers} == {
        "provider-a": "unknown",
        "provider-b": "unknown",
    }
    assert result.details[0]["type"] == "panel_vote"


def test_a_function_judge_temperature_is_a_label_that_was_not_sent() -> None:
    with pytest.warns(DocEvalsWarning, match="label only"):
        variant = visual_evals.JudgeVariant(
            name="local",
            judge=visual_evals.ModelJudge(lambda _r: _answer()),
            provider="local",
            model="m",
            temperature=0.2,
            sample_group="local",
        )
    assert variant.temperature == 0.2
    assert variant.spec()["temperature_sent"] is False


def test_a_metric_without_a_name_is_accepted() -> None:
    class Seedlike:
        def evaluate(self, case: Any) -> Any:
            return visual_evals.MetricResult(name="seedlike", basis="test", verdict="pass")

    report = visual_evals.Evaluator([Seedlike()]).evaluate(_amount_case())
    assert [r.name for r in report.metric_results] == ["seedlike"]
    pipeline = visual_evals.PipelineCase(pipeline_id="p", stages=[_amount_case()])
    assert (
        visual_evals.PipelineEvaluator(default_metrics=[Seedlike()]).evaluate(pipeline).verdict
        == "pass"
    )


def test_reports_have_the_seed_attributes_and_markdown(tmp_path: Path) -> None:
    operation = visual_evals.OperationSpec(
        spec_id="check",
        operation="check_amount",
        version="7",
        action_instruction="Copy the amount exactly.",
        evaluation_spec=visual_evals.EvaluationSpec(
            spec_id="check-rules", objective="Amounts match.", criteria=["Digits match."]
        ),
    )
    stage = _amount_case(
        stage_id="copy", operation="check_amount", metadata={"batch": "b"}, depends_on=[]
    )
    evaluator = visual_evals.Evaluator(
        [visual_evals.FunctionMetric("f", _passing)], operation_specs={"check_amount": operation}
    )
    report = evaluator.evaluate(stage)
    assert (report.operation_spec_id, report.operation_spec_version) == ("check", "7")
    assert (
        report.action_instruction_hash
        == stage.model_copy(
            update={"action_instruction": "Copy the amount exactly."}
        ).action_instruction_hash
    )
    assert report.metadata == {"batch": "b"}
    assert report.allow_unsafe_judge_override is False
    markdown = visual_evals.report.to_markdown(report)
    assert "Copy the amount exactly." in markdown
    pipeline = visual_evals.PipelineCase(pipeline_id="p", stages=[stage])
    pipeline_report = visual_evals.PipelineEvaluator(
        default_metrics=[visual_evals.FunctionMetric("f", _passing)],
        operation_specs=[operation],
    ).evaluate(pipeline)
    assert "## Stage: copy" in visual_evals.report.to_markdown(pipeline_report)
    json_path = visual_evals.report.write_json_report(pipeline_report, tmp_path / "r.json")
    md_path = visual_evals.report.write_markdown_report(pipeline_report, tmp_path / "r.md")
    assert json.loads(json_path.read_text(encoding="utf-8"))["pipeline_id"] == "p"
    assert "## Stage: copy" in md_path.read_text(encoding="utf-8")


def test_suite_takes_the_seed_keywords() -> None:
    single = visual_evals.Evaluator([visual_evals.FunctionMetric("f", _passing)])
    report = single.evaluate(_amount_case())
    usage = visual_evals.TokenUsage(
        provider="openai", model="m", input_tokens=3, output_tokens=2, total_tokens=5
    )
    case = visual_evals.EvaluationSuiteCase(
        case_id="amount",
        evaluations={"single": report},
        ground_truth_generation=None,
        usage=[usage],
        metadata={"m": 1},
        notes=["n"],
    )
    suite = visual_evals.build_suite_report(
        suite_id="s", cases=[case], usage=[], metadata={"run": 1}, notes=["extra"]
    )
    rollup = suite.evaluator_rollups["single"]
    assert (rollup.evaluated_cases, rollup.verdict_counts["pass"]) == (1, 1)
    assert suite.usage_summary.total_tokens == 5
    assert "not accuracy" in visual_evals.report.to_markdown(suite)


def test_producer_and_case_hashes_are_identity_and_computed() -> None:
    with pytest.raises(InputError, match="metadata"):
        visual_evals.ProducerInfo(provider="acme", model="m", metadata={"run": 1})
    with pytest.raises(InputError, match="action_instruction_hash"):
        visual_evals.EvaluationCase(
            case_id="c", input_data={}, prediction={}, action_instruction_hash="0" * 64
        )
    case = visual_evals.EvaluationCase(
        case_id="c", input_data={}, prediction={}, action_instruction="Do it."
    )
    report = visual_evals.Evaluator([visual_evals.FunctionMetric("f", _passing)]).evaluate(case)
    assert case.action_instruction_hash == report.action_instruction_hash
    assert case.evaluation_spec_hash is None
