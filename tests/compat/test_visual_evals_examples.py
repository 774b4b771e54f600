"""Every Python example of the seed document (seed ``000_…``), run through
``docevals_mlflow.compat.visual_evals`` with only the import changed. Providers are
fakes behind the adapters' ``sender=`` seam or plain functions: no network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import docevals_mlflow.compat.visual_evals as visual_evals
from docevals_mlflow.errors import DocEvalsWarning

PNG = b"\x89PNG\r\n\x1a\n"
PDF = b"%PDF-1.4\n%example\n"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def _judge_answer(request: Any, verdict: str = "correct") -> dict[str, Any]:
    """A judge answer agreeing (or not) with every claim that was sent."""
    return {
        "summary": "checked against the evidence",
        "prediction_claims": [
            {
                "claim_id": claim["claim_id"],
                "path": claim["path"],
                "verdict": verdict,
                "evidence": "visible in the source",
                "reference_id": None,
                "confidence": 0.9,
            }
            for claim in request.task["prediction_claims"]
        ],
        "reference_claims": [],
        "rubric_results": [
            {"criterion": "rubric", "verdict": "pass", "evidence": "ok", "confidence": 0.9}
        ],
    }


class _OpenAIFake:
    """A Responses API stand-in: answers with ``answer(body)`` and keeps each body."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        return {
            "model": body["model"],
            "usage": {"input_tokens": 120, "output_tokens": 30},
            "output": [
                {
                    "type": "message",
                    "content": [{"type": "output_text", "text": json.dumps(self.answer(body))}],
                }
            ],
        }


def _task(body: dict[str, Any]) -> Any:
    return json.loads(body["input"][0]["content"][0]["text"])


def test_python_api_pipeline_example(tmp_path: Path) -> None:
    invoice = tmp_path / "invoice.png"
    invoice.write_bytes(PNG)
    items = {
        "line_items": [{"quantity": 2, "unit_price": 4.25}, {"quantity": 1, "unit_price": 3.0}]
    }
    extraction = visual_evals.EvaluationCase(
        case_id="document-001",
        stage_id="extract",
        operation="parse_line_items",
        prediction=items,
        references=[
            visual_evals.artifact_from_path(invoice, authority="evidence"),
            visual_evals.artifact_from_value(
                items, authority="ground_truth", artifact_id="human-transcription"
            ),
        ],
    )
    calculation = visual_evals.EvaluationCase(
        case_id="document-001",
        stage_id="calculate-total",
        operation="sum_quantity_times_unit_price",
        input_data=extraction.prediction,
        prediction={"total": 11.50},
        depends_on=["extract"],
        rubric="Total equals the sum of quantity multiplied by unit price.",
    )

    def total_matches(stage: Any) -> bool:
        expected = sum(r["quantity"] * r["unit_price"] for r in stage.input_data["line_items"])
        return bool(stage.prediction["total"] == expected)

    pipeline = visual_evals.PipelineCase(
        pipeline_id="document-processing", stages=[extraction, calculation]
    )
    report = visual_evals.PipelineEvaluator(
        operation_metrics={
            "parse_line_items": [visual_evals.ExactStructuredMetric()],
            "sum_quantity_times_unit_price": [
                visual_evals.FunctionMetric(
                    "recalculate_total", total_matches, score_name="calculation_accuracy"
                )
            ],
        }
    ).evaluate(pipeline)
    assert report.execution_order == ["extract", "calculate-total"]
    extract, total = report.stage_reports
    assert extract.metric_results[0].basis == "authoritative_structured_ground_truth"
    assert extract.verdict == "pass"
    assert total.metric_results[0].scores == {"calculation_accuracy": 1.0}
    assert total.failure_context == "none"


def test_stage_checkpointing_example(tmp_path: Path) -> None:
    calls: list[str] = []

    def counted(stage: Any) -> bool:
        calls.append(stage.stage_id)
        return True

    evaluator = visual_evals.PipelineEvaluator(
        default_metrics=[visual_evals.FunctionMetric("counted", counted)]
    )
    pipeline = visual_evals.PipelineCase(
        pipeline_id="my-case",
        stages=[visual_evals.EvaluationCase(case_id="c", input_data={"a": 1}, prediction={"a": 1})],
    )
    options: dict[str, Any] = {
        "checkpoint_dir": tmp_path / "eval_runs" / "my-case" / "checkpoints",
        "checkpoint_context": {"judge_provider": "anthropic", "judge_model": "claude-opus-4-8"},
    }
    first = evaluator.evaluate(pipeline, **options)
    second = evaluator.evaluate(pipeline, **options)
    assert calls == ["output"]
    assert first == second
    assert second.stage_reports[0].from_checkpoint is True


def test_custom_action_and_judge_instructions_example() -> None:
    vehicle_operation = visual_evals.OperationSpec(
        spec_id="investment-vehicle",
        operation="vehicle_classification",
        version="2026-07-23",
        action_instruction="Determine the investment vehicle.",
        evaluation_spec=visual_evals.EvaluationSpec(
            spec_id="investment-vehicle-correctness",
            version="3",
            status="approved",
            objective="Choose the vehicle using the approved investment taxonomy.",
            criteria=[
                "Use fund for pooled capital managed as one portfolio.",
                "Use equity only for direct ownership in a company.",
                "Use unknown when the evidence is insufficient.",
            ],
            allowed_outputs=["fund", "equity", "bond", "unknown"],
        ),
    )
    vehicle_stage = visual_evals.EvaluationCase(
        case_id="statement-001",
        stage_id="classify-vehicle",
        operation="vehicle_classification",
        input_data={"line_items": []},
        prediction={"vehicle": "fund"},
        depends_on=["extract"],
    )
    resolved_stage = visual_evals.OperationRegistry([vehicle_operation]).resolve(vehicle_stage)
    request = visual_evals.build_judge_request(resolved_stage)
    assert request.task["action_instruction"] == "Determine the investment vehicle."
    assert request.task["evaluation_spec"]["allowed_outputs"] == [
        "fund",
        "equity",
        "bond",
        "unknown",
    ]
    assert "never treat it as truth" in request.instructions
    assert request.task["operation_spec_id"] == "investment-vehicle"


def test_direct_pdf_quick_start_example(tmp_path: Path) -> None:
    statement = tmp_path / "statement.pdf"
    statement.write_bytes(PDF)
    source = visual_evals.artifact_from_path(statement, authority="evidence")
    case = visual_evals.EvaluationCase(
        case_id="statement-001",
        operation="statement_extraction",
        prediction={"amount": "100.00", "currency": "USD"},
        producer={"provider": "anthropic", "model": "claude-sonnet-your-version"},
        references=[source],
        rubric="Every extracted value must match the visible PDF.",
    )
    fake = _OpenAIFake(lambda body: _judge_answer(visual_evals.build_judge_request(case)))
    adapter = visual_evals.OpenAIResponsesAdapter(model="gpt-4o-mini", sender=fake)
    report = visual_evals.Evaluator(
        [visual_evals.LLMJudgeMetric(visual_evals.ModelJudge(adapter))]
    ).evaluate(case)
    assert report.verdict == "pass"
    assert adapter.total_usage.model_dump()["total_tokens"] == 150
    content = fake.bodies[0]["input"][0]["content"]
    assert any(part["type"] == "input_file" for part in content)
    assert "Prediction producer" in visual_evals.report.to_markdown(report)


def test_model_agnostic_judges_example() -> None:
    openai_metric = visual_evals.LLMJudgeMetric(
        visual_evals.ModelJudge(visual_evals.OpenAIResponsesAdapter(api_key="sk-application"))
    )
    anthropic_metric = visual_evals.LLMJudgeMetric(
        visual_evals.ModelJudge(visual_evals.AnthropicMessagesAdapter(api_key="sk-anthropic"))
    )
    assert (openai_metric.name, anthropic_metric.name) == ("llm_judge", "llm_judge")

    class MyModelAdapter:
        def generate_json(
            self, *, instructions: str, task: Any, schema: Any, references: Any
        ) -> str:
            assert schema["title"] == "JudgeOutput"
            assert instructions
            return json.dumps(_judge_answer(type("R", (), {"task": task})()))

    my_model_adapter = MyModelAdapter()

    def call_model(request: Any) -> Any:
        return my_model_adapter.generate_json(
            instructions=request.instructions,
            task=request.task,
            schema=request.output_schema,
            references=request.references,
        )

    metric = visual_evals.LLMJudgeMetric(
        visual_evals.ModelJudge(call_model), name="claude-sonnet-judge"
    )
    case = visual_evals.EvaluationCase(case_id="c", input_data={"a": "1"}, prediction={"a": "1"})
    result = metric.evaluate(case)
    assert (result.name, result.verdict) == ("claude-sonnet-judge", "pass")


def test_multi_judge_voting_example() -> None:
    case = visual_evals.EvaluationCase(case_id="c", input_data={"a": "1"}, prediction={"a": "1"})
    openai_model_id, claude_model_id, local_model_id = "gpt-test", "claude-test", "local-test"
    fakes = [_OpenAIFake(lambda body: _judge_answer(type("R", (), {"task": _task(body)})()))]
    fakes.append(_OpenAIFake(fakes[0].answer))

    def call_claude_at_temperature_0(request: Any) -> dict[str, Any]:
        return _judge_answer(request)

    def call_local_model(request: Any) -> dict[str, Any]:
        return _judge_answer(request, verdict="incorrect")

    def openai_variant(name: str, temperature: float, fake: _OpenAIFake) -> Any:
        adapter = visual_evals.OpenAIResponsesAdapter(
            model=openai_model_id, temperature=temperature, api_key="sk-openai", sender=fake
        )
        return visual_evals.JudgeVariant(
            name=name,
            judge=visual_evals.ModelJudge(adapter),
            provider="openai",
            model=openai_model_id,
            temperature=temperature,
        )

    with pytest.warns(DocEvalsWarning, match="label only"):
        variants = [
            openai_variant("openai-low-temp", 0.0, fakes[0]),
            openai_variant("openai-higher-temp", 0.8, fakes[1]),
            visual_evals.JudgeVariant(
                name="claude",
                judge=visual_evals.ModelJudge(call_claude_at_temperature_0),
                provider="anthropic",
                model=claude_model_id,
                temperature=0.0,
            ),
            visual_evals.JudgeVariant(
                name="local",
                judge=visual_evals.ModelJudge(call_local_model),
                provider="local",
                model=local_model_id,
                temperature=0.2,
            ),
        ]
    panel = visual_evals.JudgePanelMetric(
        variants, vote_rule="majority", review_on_any_disagreement=True
    )
    result = panel.evaluate(case)
    # Two OpenAI samples are one group: openai and claude outvote the local model.
    assert result.verdict == "pass"
    assert (result.counts["judge_variants"], result.counts["model_voting_groups"]) == (4, 3)
    assert result.requires_human_review is True
    assert [fake.bodies[0]["temperature"] for fake in fakes] == [0.0, 0.8]
    reasons = {d["reason"] for d in result.details if d["type"] == "human_review_item"}
    assert "minority_judge_disagreement" in reasons


def test_provisional_ground_truth_example(tmp_path: Path) -> None:
    source_images = []
    for page in (1, 2):
        path = tmp_path / f"page-00{page}.png"
        path.write_bytes(PNG + bytes([page]))
        source_images.append(
            visual_evals.artifact_from_path(
                path, authority="evidence", artifact_id=f"page-00{page}", metadata={"page": page}
            )
        )
    values = {"$.currency": "USD", "$.amount": 100, "$.account_name": "Jane Doe"}

    def read(_request: Any) -> dict[str, Any]:
        claims = [
            {"path": p, "expected_value": v, "evidence": "label", "reference_id": "page-001"}
            for p, v in values.items()
        ]
        return {"summary": "read blind", "claims": claims}

    openai = visual_evals.OpenAIResponsesAdapter(api_key="sk-openai", sender=_OpenAIFake(read))
    panel = visual_evals.GroundTruthPanel(
        {"openai": openai, "claude": read, "local-model": read},
        extraction_instruction="Extract currency, amount, and account name.",
        expected_fields=list(values),
        minimum_agreement=1.0,
    )
    router = visual_evals.GroundTruthRouter(image_panel=panel)
    prepared = router.prepare(case_id="statement-001", references=source_images)
    generation = prepared.image_report
    assert generation.requires_human_review is False
    provisional = generation.provisional_reference
    assert provisional.authority == "generated"
    case = visual_evals.EvaluationCase(
        case_id="statement-001",
        operation="statement_extraction",
        prediction={"currency": "USD", "amount": 100, "account_name": "Jane Doe"},
        references=[*source_images, provisional],
    )
    report = visual_evals.Evaluator([visual_evals.ExactStructuredMetric()]).evaluate(case)
    assert report.metric_results[0].basis == "provisional_ai_generated_consensus"
    human_resolved_rows = [{"path": p, "expected": v} for p, v in values.items()]
    approved_reference = visual_evals.approve_generated_reference(
        provisional, approved_by="reviewer@example.com", resolved_content=human_resolved_rows
    )
    assert approved_reference.authority == "ground_truth"


def test_ground_truth_any_format_example(tmp_path: Path) -> None:
    notes = tmp_path / "review_notes.csv"
    notes.write_text("topic,main_point\nrisk,Moderate risk\n", encoding="utf-8")
    reference = visual_evals.artifact_from_path(
        notes, authority="ground_truth", comparison_mode="semantic"
    )
    case = visual_evals.EvaluationCase(
        case_id="c", prediction={"summary": "moderate risk"}, references=[reference]
    )
    exact = visual_evals.ExactStructuredMetric().evaluate(case)
    assert exact.verdict == "not_applicable"
    request = visual_evals.build_judge_request(case)
    assert request.task["textual_references"][0]["content"] == [
        {"topic": "risk", "main_point": "Moderate risk"}
    ]
    # The judge matches each cell by meaning; those claims are what gets scored.
    assert request.task["authoritative_structured_claims"] == request.task["reference_claims"]
    assert [c["path"] for c in request.task["reference_claims"]] == [
        "$[0].topic",
        "$[0].main_point",
    ]
