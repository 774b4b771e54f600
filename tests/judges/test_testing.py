"""The public scripted judge (``docevals_mlflow.judges.testing``) and its docs."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from docevals_mlflow import EvaluationCase, LLMJudgeMetric, ModelJudge, artifact_from_value
from docevals_mlflow.judges.judge import AdapterReply, RepairHint
from docevals_mlflow.judges.request import JudgeRequest, build_judge_request
from docevals_mlflow.judges.testing import ScriptedAdapter, answer
from docevals_mlflow.judges.usage import Usage

DOCS = Path(__file__).resolve().parents[2] / "docs" / "judges.md"


def make_case() -> EvaluationCase:
    return EvaluationCase(
        case_id="c1",
        prediction={"total": 3, "currency": "EUR"},
        references=[artifact_from_value({"total": 3}, authority="ground_truth", artifact_id="t")],
    )


def request() -> JudgeRequest:
    return build_judge_request(make_case())


def test_the_documented_example_prints_what_the_page_says(capsys) -> None:
    section = DOCS.read_text(encoding="utf-8").split("## Testing with a scripted judge", 1)[1]
    source, printed = re.search(r"```python\n(.*?)```\s*```text\n(.*?)```", section, re.S).groups()
    exec(compile(source, str(DOCS), "exec"), {"__name__": "docs_judges"})
    assert capsys.readouterr().out == printed


def test_answer_decides_every_claim_sent() -> None:
    sent = request()
    written = answer(sent, prediction={"p00002": "not_verifiable"}, rubric={"complete": "pass"})
    assert written["prediction_claims"] == [
        {"claim_id": "p00001", "verdict": "correct"},
        {"claim_id": "p00002", "verdict": "not_verifiable"},
    ]
    assert written["reference_claims"] == [{"claim_id": "r00001", "verdict": "matched"}]
    assert written["rubric_results"] == [{"criterion": "complete", "verdict": "pass"}]


def test_a_two_argument_function_sees_the_repair_hint() -> None:
    def respond(sent: JudgeRequest, repair: RepairHint | None) -> object:
        return "garbage" if repair is None else answer(sent)

    adapter = ScriptedAdapter(respond, provider="openai", model="gpt-x")
    result = ModelJudge(adapter).judge(request())
    assert (result.status, adapter.calls) == ("repaired", 2)
    assert adapter.repairs[0] is None
    assert isinstance(adapter.repairs[1], RepairHint)
    assert adapter.requests[0] is adapter.requests[1]
    assert result.judge == {"provider": "openai", "model": "gpt-x", "temperature": 0.0}
    assert result.usage.requests == 2
    assert result.usage.input_tokens == 200


def test_a_list_is_answered_in_order_and_running_out_is_an_error() -> None:
    refused = AdapterReply(status="refused", refusal="no")
    adapter = ScriptedAdapter([refused], usage=Usage(requests=1, input_tokens=5))
    judge = ModelJudge(adapter)
    assert judge.judge(request()).status == "refused"
    second = judge.judge(request())
    assert second.status == "error"
    assert "called 2 times but scripts 1 answer(s)" in (second.error or "")


def test_exceptions_in_a_list_are_raised_from_the_call() -> None:
    adapter = ScriptedAdapter([TimeoutError("slow"), answer(request())])
    with pytest.raises(TimeoutError):
        asyncio.run(adapter.agenerate(request()))
    reply = asyncio.run(adapter.agenerate(request()))
    assert reply.data["summary"] == "scripted"


def test_concurrent_calls_are_counted(tmp_path) -> None:
    adapter = ScriptedAdapter(lambda sent: answer(sent), delay=0.05)
    metric = LLMJudgeMetric(adapter)

    async def judge_five() -> None:
        await asyncio.gather(*(metric.aevaluate(make_case()) for _ in range(5)))

    asyncio.run(judge_five())
    assert (adapter.calls, adapter.max_in_flight, adapter.in_flight) == (5, 5, 0)
