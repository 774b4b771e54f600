"""Model-balanced panels: one vote per provider/model, review queue, per-item votes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow import ConfigurationError, EvaluationCase, artifact_from_value
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric, JudgeVariant
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.testing import ScriptedAdapter, answer
from docevals_mlflow.judges.voting import decide, group_vote


def case(**fields):
    return EvaluationCase(
        case_id="c",
        prediction={"total": 5, "name": "ACME"},
        references=[artifact_from_value({"total": 5}, authority="ground_truth", artifact_id="gt")],
        **fields,
    )


def variant(name, provider, model, verdict="correct", *, temperature=0.0, delay=0.0):
    def respond(request, repair):
        return answer(request, prediction=verdict)

    adapter = ScriptedAdapter(
        respond, provider=provider, model=model, temperature=temperature, delay=delay
    )
    return JudgeVariant(name=name, judge=adapter, temperature=temperature)


def test_group_vote_needs_a_strict_majority():
    assert group_vote(["pass", "pass", "fail"]) == "pass"
    assert group_vote(["pass", "fail"]) == "uncertain"
    assert group_vote([None, None, "pass"]) == "uncertain"
    assert group_vote([]) == "uncertain"


def test_decide_rules():
    votes = {"a": "pass", "b": "pass", "c": "fail"}
    majority = decide(votes)
    assert (majority.answer, majority.consensus, majority.dissent) == ("pass", True, True)
    assert majority.agreement == pytest.approx(2 / 3)
    assert decide(votes, rule="unanimous").answer == "uncertain"
    assert decide({"a": "pass", "b": "fail"}).answer == "uncertain"  # tie
    assert decide(votes, minimum_agreement=0.8).answer == "uncertain"
    assert decide(votes, minimum_agreement=0.6).answer == "pass"
    assert decide({"a": "uncertain", "b": "uncertain", "c": "pass"}).answer == "uncertain"


@given(st.dictionaries(st.text(min_size=1, max_size=3), st.sampled_from(["pass", "fail"])))
def test_decide_is_independent_of_group_order(votes):
    forward = decide(votes)
    backward = decide(dict(reversed(list(votes.items()))))
    assert forward == backward or (forward.answer, forward.agreement) == (
        backward.answer,
        backward.agreement,
    )


def test_samples_of_one_model_cast_one_vote():
    # Five samples of one model say fail; two other models say pass: pass wins 2:1.
    variants = [
        variant(f"openai-{index}", "openai", "gpt", "incorrect", temperature=0.2 * index)
        for index in range(5)
    ] + [variant("claude", "anthropic", "claude", "correct"), variant("local", "local", "llama")]
    result = JudgePanelMetric(variants).evaluate(case())
    assert result.verdict == "pass"
    assert result.details["group_votes"] == {
        "openai:gpt": "fail",
        "anthropic:claude": "pass",
        "local:llama": "pass",
    }
    assert result.scores["group_agreement"] == pytest.approx(2 / 3)
    assert result.scores["sample_agreement"] == pytest.approx(2 / 7)
    reasons = [item["reason"] for item in result.details["review_items"]]
    assert reasons == ["minority dissent"]
    assert result.requires_human_review


def test_tie_is_uncertain_and_queued():
    result = JudgePanelMetric(
        [variant("a", "openai", "gpt", "correct"), variant("b", "anthropic", "claude", "incorrect")]
    ).evaluate(case())
    assert result.verdict == "uncertain"
    assert result.details["review_items"][0]["reason"] == "no consensus"


def test_per_item_votes_give_the_panel_scores():
    def respond_for(model):
        def respond(request, repair):
            verdicts = {"p00002": "incorrect"} if model == "bad" else "correct"
            return answer(request, prediction=verdicts)

        return respond

    variants = [
        JudgeVariant(name=name, judge=ScriptedAdapter(respond_for(name), provider=name, model=name))
        for name in ("good", "also-good", "bad")
    ]
    result = JudgePanelMetric(variants, review_on_any_disagreement=False).evaluate(case())
    items = result.details["items"]["prediction_claims"]
    assert items["p00002"]["answer"] == "correct"
    assert items["p00002"]["group_votes"] == {
        "good:good": "correct",
        "also-good:also-good": "correct",
        "bad:bad": "incorrect",
    }
    assert result.scores["claim_precision"] == 1.0
    assert result.verdict == "pass"


def test_no_independent_judge_and_self_judging_are_queued():
    variants = [variant("a", "openai", "gpt"), variant("b", "openai", "gpt-mini")]
    result = JudgePanelMetric(variants).evaluate(
        case(producer={"provider": "openai", "model": "gpt"})
    )
    reasons = [item["reason"] for item in result.details["review_items"]]
    assert "no independent judge" in reasons
    assert {"reason": "self-judging", "detail": "a"} in result.details["review_items"]


def test_failed_judge_is_queued_and_usage_is_summed():
    def explode(request, repair):
        raise TimeoutError("slow provider")

    variants = [
        variant("a", "openai", "gpt"),
        variant("b", "anthropic", "claude"),
        JudgeVariant(name="c", judge=ScriptedAdapter(explode, provider="local", model="llama")),
    ]
    result = JudgePanelMetric(variants).evaluate(case())
    assert result.verdict == "pass"  # two of three groups agree; the failed one is uncertain
    assert result.counts["failed_variants"] == 1
    assert any(item["reason"] == "judge failed" for item in result.details["review_items"])
    assert result.usage["requests"] == 2
    assert result.usage["input_tokens"] == 200


def test_variants_run_concurrently():
    shared = ScriptedAdapter(lambda request, repair: answer(request), delay=0.05)
    variants = [
        JudgeVariant(name=str(index), judge=shared, provider=f"p{index}", model="m")
        for index in range(5)
    ]
    JudgePanelMetric(variants).evaluate(case())
    assert (shared.calls, shared.max_in_flight) == (5, 5)  # all at once, not in a row


def test_panel_spec_and_fingerprint_change_with_members():
    first = JudgePanelMetric([variant("a", "openai", "gpt")])
    second = JudgePanelMetric([variant("a", "openai", "gpt", temperature=0.7)])
    assert first.panel_sha256 != second.panel_sha256
    assert first.panel_spec()["variants"][0] == {
        "name": "a",
        "provider": "openai",
        "model": "gpt",
        "temperature": 0.0,
        "group": "openai:gpt",
    }


def test_bad_panels_are_refused():
    with pytest.raises(ConfigurationError, match="at least one"):
        JudgePanelMetric([])
    with pytest.raises(ConfigurationError, match="repeat"):
        JudgePanelMetric([variant("a", "x", "y"), variant("a", "z", "w")])
    with pytest.raises(ConfigurationError, match="vote rule"):
        JudgePanelMetric([variant("a", "x", "y")], vote_rule="plurality")  # type: ignore[arg-type]


# -- declared identity, temperature and cost (review fixes) -----------------------------


def test_a_plain_function_variant_takes_the_declared_identity():
    def says_correct(request):
        return answer(request)

    declared = JudgeVariant("gpt", says_correct, provider="openai", model="gpt-x")
    assert declared.judge.describe() == {"provider": "openai", "model": "gpt-x"}
    result = JudgePanelMetric([declared]).evaluate(
        case(producer={"provider": "openai", "model": "gpt-x"})
    )
    (member,) = result.details["variants"]
    assert member["producer_relationship"] == "same_model"
    reasons = [item["reason"] for item in result.details["review_items"]]
    assert "self-judging" in reasons
    assert "no independent judge" in reasons


def test_the_declared_identity_wins_over_what_the_judge_reports():
    # The adapter calls itself "fake"; the variant says it is the producing model.
    adapter = ScriptedAdapter(lambda request, repair: answer(request), provider="fake", model="m")
    declared = JudgeVariant("claude", adapter, provider="anthropic", model="claude-x")
    independent = variant("local", "local", "llama")
    result = JudgePanelMetric([declared, independent]).evaluate(
        case(producer={"provider": "anthropic", "model": "claude-x"})
    )
    relationships = {
        member["name"]: member["producer_relationship"] for member in result.details["variants"]
    }
    assert relationships == {"claude": "same_model", "local": "independent"}
    assert {"reason": "self-judging", "detail": "claude"} in result.details["review_items"]


def chat_adapter_capturing(bodies: list[dict], **options):
    import json

    import httpx

    from docevals_mlflow.judges.adapters import OpenAICompatibleChatAdapter

    def handle(http_request: httpx.Request) -> httpx.Response:
        body = json.loads(http_request.content)
        bodies.append(body)
        task = json.loads(body["messages"][1]["content"][0]["text"])
        claims = [
            {"claim_id": claim["claim_id"], "verdict": "correct"}
            for claim in task["prediction_claims"]
        ]
        matched = [
            {"claim_id": claim["claim_id"], "verdict": "matched"}
            for claim in task.get("reference_claims", [])
        ]
        content = json.dumps(
            {"prediction_claims": claims, "reference_claims": matched, "rubric_results": []}
        )
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10},
            },
        )

    client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    return OpenAICompatibleChatAdapter(
        model="local",
        base_url="http://127.0.0.1:9/v1",
        http=TransportSettings(client=client),
        **options,
    )


def test_variant_temperature_is_sent_to_the_provider():
    bodies: list[dict] = []
    adapter = chat_adapter_capturing(bodies)
    warm = JudgeVariant("warm", adapter, temperature=0.8)
    result = JudgePanelMetric([warm]).evaluate(case())
    assert result.verdict == "pass"
    assert [body.get("temperature") for body in bodies] == [0.8]
    assert warm.judge.describe()["temperature"] == 0.8
    assert adapter.temperature is None  # the caller's adapter is left as it was
    assert warm.spec()["temperature"] == 0.8


def test_variant_temperature_matching_the_adapter_keeps_the_judge():
    adapter = chat_adapter_capturing([], temperature=0.3)
    kept = JudgeVariant("same", adapter, temperature=0.3)
    assert kept.judge.adapter is adapter


def test_a_temperature_a_judge_cannot_take_is_refused():
    def says_correct(request):
        return answer(request)

    with pytest.raises(ConfigurationError, match=r"temperature=0\.7 cannot be sent"):
        JudgeVariant("fn", says_correct, provider="openai", model="gpt", temperature=0.7)


def priced_variant(name, provider, cost):
    from docevals_mlflow.judges.judge import AdapterReply
    from docevals_mlflow.judges.usage import Usage

    def respond(request, repair):
        usage = Usage(requests=1, input_tokens=100, output_tokens=10, cost_usd=cost)
        return AdapterReply(data=answer(request), usage=usage)

    return JudgeVariant(name, ScriptedAdapter(respond, provider=provider, model="m"))


def test_panel_cost_is_partial_when_a_variant_has_no_price():
    from docevals_mlflow.cli.judging import usage_line
    from docevals_mlflow.core.reports import EvaluationReport

    panel = JudgePanelMetric(
        [priced_variant("a", "openai", 0.25), priced_variant("b", "local", None)]
    )
    result = panel.evaluate(case())
    assert result.usage["cost_usd"] == 0.25
    assert result.usage["unpriced_requests"] == 1
    report = EvaluationReport.model_construct(metric_results=[result])
    line = usage_line([report])
    assert line is not None
    assert line.endswith("$0.2500 (some models have no price)")

    priced = JudgePanelMetric(
        [priced_variant("a", "openai", 0.25), priced_variant("b", "anthropic", 0.5)]
    ).evaluate(case())
    assert "unpriced_requests" not in priced.usage
    line = usage_line([EvaluationReport.model_construct(metric_results=[priced])])
    assert line is not None
    assert line.endswith("$0.7500")
