"""Requests, answers and scores: what a judge sees and how its answer counts."""

from __future__ import annotations

import json
import re

import pytest

from docevals_mlflow import (
    EvaluationCase,
    EvaluationSpec,
    Evaluator,
    artifact_from_path,
    artifact_from_value,
    sha256_json,
)
from docevals_mlflow.core.cases import Producer
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric, producer_relationship
from docevals_mlflow.judges.judge import AdapterReply, ModelJudge
from docevals_mlflow.judges.output import OutputParseError, parse_judge_output
from docevals_mlflow.judges.request import BASE_INSTRUCTIONS, build_judge_request
from docevals_mlflow.judges.scoring import score_judgement
from docevals_mlflow.judges.testing import ScriptedAdapter, answer


def png(path):
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 8)
    return path


def make_case(tmp_path, **fields):
    return EvaluationCase(
        case_id="statement-1",
        stage_id="extract",
        operation="extract",
        action_instruction="Extract the total.",
        evaluation_spec=EvaluationSpec(spec_id="e", objective="o", criteria=["c"]),
        prediction={"total": 12.5, "currency": "EUR"},
        references=[
            artifact_from_path(png(tmp_path / "page-1.png"), authority="evidence"),
            artifact_from_value({"total": 12.5}, authority="ground_truth", artifact_id="gt"),
            artifact_from_value("Total due: 12.50 EUR", authority="evidence", artifact_id="ocr"),
        ],
        **fields,
    )


def test_request_lists_every_reference_and_numbers_claims(tmp_path):
    request = build_judge_request(make_case(tmp_path))
    task = request.task
    assert [ref["id"] for ref in task["references"]] == ["page-1", "gt", "ocr"]
    image = task["references"][0]
    assert (image["authority"], image["kind"], image["attached"]) == ("evidence", "image", True)
    assert image["name"] == "page-1.png"
    assert str(tmp_path) not in json.dumps(task)  # no local path leaves the machine
    assert task["references"][2]["content"] == "Total due: 12.50 EUR"
    assert task["prediction_claims"] == [
        {"claim_id": "p00001", "path": "$.total", "value": 12.5},
        {"claim_id": "p00002", "path": "$.currency", "value": "EUR"},
    ]
    assert task["reference_claims"] == [
        {
            "claim_id": "r00001",
            "path": "$.total",
            "expected_value": 12.5,
            "reference_id": "gt",
            "authority": "ground_truth",
        }
    ]
    assert task["action_instruction_sha256"] == sha256_json("Extract the total.")
    assert [ref.id for ref in request.attachments] == ["page-1"]
    assert request.instructions == BASE_INSTRUCTIONS


def test_judge_instruction_append_and_replace(tmp_path):
    appended = build_judge_request(make_case(tmp_path, judge_instruction="Totals include VAT."))
    assert appended.instructions.startswith(BASE_INSTRUCTIONS)
    assert appended.instructions.endswith("Totals include VAT.")
    replaced = build_judge_request(
        make_case(
            tmp_path,
            judge_instruction="Only check the total.",
            judge_instruction_mode="replace",
            allow_unsafe_judge_override=True,
        )
    )
    assert replaced.instructions == "Only check the total."
    assert appended.instructions_sha256 != replaced.instructions_sha256


def test_fingerprint_covers_attachment_bytes(tmp_path):
    first = build_judge_request(make_case(tmp_path)).fingerprint
    (tmp_path / "page-1.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\1" * 8)
    case = make_case(tmp_path)
    (tmp_path / "page-1.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\2" * 8)
    assert build_judge_request(case).fingerprint != first


def test_parse_tolerates_fences_and_prose_but_not_garbage():
    body = {"summary": "s", "prediction_claims": [{"claim_id": "p00001", "verdict": "correct"}]}
    text = "Here you go:\n```json\n" + json.dumps(body) + "\n```"
    assert parse_judge_output(text).prediction_claims[0].verdict == "correct"
    assert parse_judge_output("Sure! " + json.dumps(body) + " Done.").summary == "s"
    with pytest.raises(OutputParseError, match="not valid JSON"):
        parse_judge_output("{broken")
    with pytest.raises(OutputParseError, match="verdict"):
        parse_judge_output({"prediction_claims": [{"claim_id": "p1", "verdict": "maybe"}]})


def test_scores_count_against_the_inventory_sent(tmp_path):
    request = build_judge_request(make_case(tmp_path))
    output = parse_judge_output(
        {
            "prediction_claims": [
                {"claim_id": "p00001", "verdict": "correct"},
                {"claim_id": "p00001", "verdict": "incorrect"},
                {"claim_id": "p00077", "verdict": "incorrect"},
            ],
            "reference_claims": [],
            "rubric_results": [{"criterion": "c", "verdict": "pass"}],
        }
    )
    scored = score_judgement(request, output)
    assert scored.prediction_inventory.skipped == ["p00002"]
    assert scored.prediction_inventory.invented == ["p00077"]
    assert scored.prediction_inventory.repeated == ["p00001"]
    assert scored.reference_inventory.skipped == ["r00001"]
    assert scored.counts["correct"] == 1  # the first answer for p00001 counts
    assert scored.counts["incorrect"] == 0  # invented ids never count
    assert scored.scores["claim_verification_coverage"] == 0.5
    assert scored.scores["reference_recall"] == 0.0  # skipped is not matched
    assert scored.scores["reference_coverage"] == 0.0
    assert scored.scores["rubric_pass_rate"] == 1.0
    assert scored.verdict == "uncertain"


@pytest.mark.parametrize(
    ("prediction", "reference", "rubric", "verdict"),
    [
        ("correct", "matched", {"c": "pass"}, "pass"),
        ({"p00002": "incorrect"}, "matched", {}, "fail"),
        ("correct", "missing", {}, "fail"),
        ("correct", "matched", {"c": "fail"}, "fail"),
        ({"p00002": "not_verifiable"}, "matched", {}, "uncertain"),
        ("correct", "matched", {"c": "uncertain"}, "uncertain"),
    ],
)
def test_verdicts(tmp_path, prediction, reference, rubric, verdict):
    request = build_judge_request(make_case(tmp_path))
    output = parse_judge_output(
        answer(request, prediction=prediction, reference=reference, rubric=rubric)
    )
    assert score_judgement(request, output).verdict == verdict


def test_metric_reports_prompt_hash_usage_and_relationship(tmp_path):
    adapter = ScriptedAdapter(
        lambda request, repair: answer(request), provider="openai", model="gpt-x"
    )
    case = make_case(tmp_path, producer={"provider": "anthropic", "model": "claude"})
    report = Evaluator([LLMJudgeMetric(ModelJudge(adapter), name="judge")]).evaluate(case)
    result = report.metric("judge")
    assert result.verdict == "pass"
    assert result.details["instructions_sha256"] == sha256_json(BASE_INSTRUCTIONS)
    assert result.details["instructions"] == BASE_INSTRUCTIONS
    assert result.details["judge"]["producer_relationship"] == "independent"
    assert result.usage["requests"] == 1
    assert result.usage["input_tokens"] == 100


def test_malformed_answer_gets_one_repair(tmp_path):
    seen = []

    def respond(request, repair):
        seen.append(repair)
        return "not json" if repair is None else answer(request)

    adapter = ScriptedAdapter(respond)
    result = LLMJudgeMetric(ModelJudge(adapter)).evaluate(make_case(tmp_path))
    assert result.verdict == "pass"
    assert adapter.calls == 2
    assert seen[1] is not None
    assert "not valid JSON" in seen[1].problem
    assert any("repaired" in note for note in result.notes)
    assert result.usage["requests"] == 2


def test_malformed_twice_is_uncertain_with_raw_text(tmp_path):
    adapter = ScriptedAdapter(lambda request, repair: "still { not json")
    result = LLMJudgeMetric(ModelJudge(adapter)).evaluate(make_case(tmp_path))
    assert result.verdict == "uncertain"
    assert result.requires_human_review
    assert result.details["raw_text"] == "still { not json"
    assert result.notes[0].startswith("judge malformed:")


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (AdapterReply(status="refused", refusal="policy"), "refused"),
        (AdapterReply(text='{"summary": "cut', status="truncated"), "truncated"),
    ],
)
def test_refusals_and_truncation_are_reported_not_parsed(tmp_path, reply, status):
    adapter = ScriptedAdapter(lambda request, repair: reply)
    result = LLMJudgeMetric(ModelJudge(adapter)).evaluate(make_case(tmp_path))
    assert result.verdict == "uncertain"
    assert result.details["status"] == status
    assert adapter.calls == 1


def test_adapter_exception_never_aborts(tmp_path):
    def explode(request, repair):
        raise ConnectionError("server gone")

    report = Evaluator([LLMJudgeMetric(ScriptedAdapter(explode), name="judge")]).evaluate(
        make_case(tmp_path)
    )
    assert report.verdict == "uncertain"
    assert re.search("server gone", report.metric("judge").notes[0])


def test_plain_function_judges_work(tmp_path):
    def call_model(request):
        return json.dumps(answer(request))

    result = LLMJudgeMetric(ModelJudge(call_model)).evaluate(make_case(tmp_path))
    assert result.verdict == "pass"


@pytest.mark.parametrize(
    ("producer", "expected"),
    [
        (None, "unknown"),
        (Producer(provider="anthropic", model="claude"), "independent"),
        (Producer(provider="openai", model="other"), "same_provider"),
        (Producer(provider="OpenAI", model="GPT-X"), "same_model"),
    ],
)
def test_producer_relationship(producer, expected):
    assert producer_relationship(producer, {"provider": "openai", "model": "gpt-x"}) == expected


def test_a_fail_that_skipped_claims_needs_review(tmp_path):
    def skips_the_reference(request, repair):
        judged = answer(request, prediction={"p00001": "incorrect"})
        judged["reference_claims"] = []  # r00001 is never answered
        return judged

    result = LLMJudgeMetric(ScriptedAdapter(skips_the_reference)).evaluate(make_case(tmp_path))
    assert result.verdict == "fail"
    assert result.requires_human_review
    (item,) = result.details["review_items"]
    assert item["reason"] == "incomplete answer"
    assert "skipped 1 reference claim(s): r00001" in item["detail"]

    def clean_fail(request, repair):
        return answer(request, prediction={"p00001": "incorrect"})

    clean = LLMJudgeMetric(ScriptedAdapter(clean_fail)).evaluate(make_case(tmp_path))
    assert clean.verdict == "fail"
    assert not clean.requires_human_review
    assert clean.details["review_items"] == []


def test_single_judge_review_items_say_why(tmp_path):
    unsure = LLMJudgeMetric(
        ScriptedAdapter(lambda request, repair: answer(request, prediction="not_verifiable"))
    ).evaluate(make_case(tmp_path))
    assert unsure.details["review_items"] == [
        {"reason": "uncertain verdict", "detail": "2 prediction claim(s) not verifiable"}
    ]

    own = ScriptedAdapter(lambda request, repair: answer(request), provider="openai", model="g")
    case = make_case(tmp_path, producer={"provider": "openai", "model": "g"})
    selfie = LLMJudgeMetric(own).evaluate(case)
    assert selfie.details["review_items"] == [{"reason": "self-judging", "detail": "openai:g"}]

    refused = LLMJudgeMetric(
        ScriptedAdapter(lambda request, repair: AdapterReply(status="refused", refusal="no"))
    ).evaluate(make_case(tmp_path))
    assert refused.details["review_items"] == [
        {"reason": "judge failed", "detail": "no verdict: the model refused: no"}
    ]
    assert refused.details["raw_text"] == "no"
