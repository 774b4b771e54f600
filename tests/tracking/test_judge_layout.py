"""What judges and panels become in a run: params, the review queue, panel files."""

from __future__ import annotations

import json
from typing import Any

from docevals_mlflow import EvaluationCase, Evaluator, artifact_from_value
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric, JudgeVariant
from docevals_mlflow.judges.judge import AdapterReply
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.layout import layout_evaluation
from tests.judges.fakes import ScriptedAdapter, answer


def case(**fields: Any) -> EvaluationCase:
    return EvaluationCase(
        case_id="c1",
        prediction={"total": 1},
        references=[artifact_from_value({"total": 1}, authority="ground_truth", artifact_id="gt")],
        **fields,
    )


class DescribedAdapter(ScriptedAdapter):
    """A fake adapter that also reports a reasoning effort, as OpenAI's does."""

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "reasoning_effort": "low"}


def layout(*metrics: Any, **fields: Any) -> BundleWriter:
    report = Evaluator(list(metrics)).evaluate(case(**fields))
    writer = BundleWriter()
    layout_evaluation(writer, report, markdown="", dashboard="")
    return writer


def artifact(writer: BundleWriter, path: str) -> Any:
    return json.loads(writer.files[path])


def test_a_single_judge_is_logged_as_params():
    adapter = DescribedAdapter(
        lambda request, repair: answer(request), provider="openai", model="gpt-x", temperature=0.2
    )
    params = layout(LLMJudgeMetric(adapter)).bundle.params
    assert params["judge.provider"] == "openai"
    assert params["judge.model"] == "gpt-x"
    assert params["judge.temperature"] == "0.2"
    assert params["judge.reasoning_effort"] == "low"


def test_unset_settings_are_not_logged_and_several_judges_are_logged_apart():
    first = ScriptedAdapter(
        lambda request, repair: answer(request), provider="openai", model="a", temperature=None
    )
    second = ScriptedAdapter(lambda request, repair: answer(request), provider="x", model="b")
    params = layout(
        LLMJudgeMetric(first, name="gpt"), LLMJudgeMetric(second, name="other")
    ).bundle.params
    assert "judge.provider" not in params
    assert params["judge.gpt.provider"] == "openai"
    assert params["judge.gpt.model"] == "a"
    assert "judge.gpt.temperature" not in params
    assert params["judge.other.model"] == "b"
    assert params["judge.other.temperature"] == "0.0"


def test_single_judge_reviews_go_to_the_queue():
    unsure = ScriptedAdapter(
        lambda request, repair: answer(request, prediction="not_verifiable"),
        provider="openai",
        model="gpt-x",
    )
    writer = layout(
        LLMJudgeMetric(unsure, name="judge"), producer={"provider": "openai", "model": "gpt-x"}
    )
    queue = artifact(writer, "review/queue.json")
    assert [(item["metric"], item["reason"]) for item in queue] == [
        ("judge", "uncertain verdict"),
        ("judge", "self-judging"),
    ]
    assert queue[0]["case_id"] == "c1"
    assert queue[0]["detail"] == "1 prediction claim(s) not verifiable"


def test_failed_requests_reach_the_usage_metrics():
    from docevals_mlflow.errors import ProviderError
    from docevals_mlflow.judges.usage import Usage

    def fails(request, repair):
        error = ProviderError("HTTP 500", provider="x", status_code=500, attempts=3)
        error.usage = Usage(requests=3)
        raise error

    writer = layout(LLMJudgeMetric(ScriptedAdapter(fails), name="judge"))
    assert writer.bundle.metrics["usage/requests"] == 3.0
    assert artifact(writer, "review/queue.json")[0]["reason"] == "judge failed"


def panel(name: str, *verdicts: str) -> JudgePanelMetric:
    def member(index: int, verdict: str) -> JudgeVariant:
        def respond(request, repair):
            return answer(request, prediction=verdict)

        adapter = ScriptedAdapter(respond, provider=f"p{index}", model="m")
        return JudgeVariant(name=f"{name}-{index}", judge=adapter)

    return JudgePanelMetric(
        [member(index, verdict) for index, verdict in enumerate(verdicts)], name=name
    )


def test_every_panel_of_a_run_is_described():
    first, second = panel("cheap", "correct", "correct"), panel("strong", "correct")
    second.vote_rule = "unanimous"
    writer = layout(first, second)
    params = writer.bundle.params
    assert params["judge.panel"] == "2 panels: cheap, strong"
    assert params["judge.vote_rule"] == "mixed"
    assert params["judge.panel.cheap"] == "cheap-0=p0:m@0.0, cheap-1=p1:m@0.0"
    assert params["judge.panel.cheap.sha256"] == first.panel_sha256
    assert params["judge.panel.cheap.vote_rule"] == "majority"
    assert params["judge.panel.strong"] == "strong-0=p0:m@0.0"
    assert params["judge.panel.strong.vote_rule"] == "unanimous"
    assert len(params["judge.panel_sha256"]) == 64
    panels = artifact(writer, "judges/panel.json")
    assert sorted(panels) == ["cheap", "strong"]
    assert panels["strong"]["sha256"] == second.panel_sha256


def test_one_panel_keeps_the_short_params():
    one = panel("only", "correct")
    params = layout(one).bundle.params
    assert params["judge.panel"] == "only-0=p0:m@0.0"
    assert params["judge.panel_sha256"] == one.panel_sha256
    assert not any(key.startswith("judge.panel.") for key in params)


def test_refusals_are_queued_with_their_reason():
    refusing = ScriptedAdapter(lambda request, repair: AdapterReply(status="refused", refusal="no"))
    queue = artifact(layout(LLMJudgeMetric(refusing, name="judge")), "review/queue.json")
    assert queue == [
        {
            "case_id": "c1",
            "stage_id": "output",
            "metric": "judge",
            "reason": "judge failed",
            "detail": "no verdict: the model refused: no",
        }
    ]


def test_field_runs_log_the_undecided_count():
    from docevals_mlflow import compare_documents
    from docevals_mlflow.tracking.layout import layout_fields

    report = compare_documents([({"a": "x"}, {"a": "x"})]).to_report()
    writer = BundleWriter()
    layout_fields(writer, report, markdown="", dashboard="")
    assert writer.bundle.metrics["overall/undecided"] == 0.0
    report["overall"]["undecided"] = 3
    writer = BundleWriter()
    layout_fields(writer, report, markdown="", dashboard="")
    assert writer.bundle.metrics["overall/undecided"] == 3.0
