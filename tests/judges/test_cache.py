from __future__ import annotations

from docevals_mlflow import EvaluationCase, Evaluator, artifact_from_value
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.judges.cache import JudgeCache
from docevals_mlflow.judges.judge import ModelJudge
from docevals_mlflow.judges.testing import ScriptedAdapter, answer


def cases(values):
    return [
        EvaluationCase(
            case_id=f"c{index}",
            prediction={"v": value},
            references=[
                artifact_from_value({"v": value}, authority="ground_truth", artifact_id="gt")
            ],
        )
        for index, value in enumerate(values)
    ]


def test_a_cached_rerun_makes_zero_calls(tmp_path):
    adapter = ScriptedAdapter(lambda request, repair: answer(request))
    metric = LLMJudgeMetric(ModelJudge(adapter, cache=JudgeCache(tmp_path)), name="judge")
    first = Evaluator([metric]).evaluate_batch(cases([1, 2, 3]))
    assert adapter.calls == 3
    second = Evaluator([metric]).evaluate_batch(cases([1, 2, 3]))
    assert adapter.calls == 3
    assert [r.metric("judge").verdict for r in second] == [r.metric("judge").verdict for r in first]
    assert all(r.metric("judge").details["cached"] for r in second)
    assert all(r.metric("judge").usage["requests"] == 0 for r in second)


def test_the_key_covers_the_judge_and_the_request(tmp_path):
    cache = JudgeCache(tmp_path)
    one = ScriptedAdapter(lambda request, repair: answer(request), temperature=0.0)
    other = ScriptedAdapter(lambda request, repair: answer(request), temperature=0.7)
    Evaluator([LLMJudgeMetric(ModelJudge(one, cache=cache))]).evaluate(cases([1])[0])
    Evaluator([LLMJudgeMetric(ModelJudge(other, cache=cache))]).evaluate(cases([1])[0])
    assert (one.calls, other.calls) == (1, 1)  # another temperature is another judge
    Evaluator([LLMJudgeMetric(ModelJudge(one, cache=cache))]).evaluate(cases([2])[0])
    assert one.calls == 2  # another prediction is another request


def test_failures_are_not_cached_and_corrupt_entries_are_misses(tmp_path):
    cache = JudgeCache(tmp_path)
    adapter = ScriptedAdapter(lambda request, repair: "garbage")
    metric = LLMJudgeMetric(ModelJudge(adapter, cache=cache))
    Evaluator([metric]).evaluate(cases([1])[0])
    Evaluator([metric]).evaluate(cases([1])[0])
    assert adapter.calls == 4  # two attempts each time; nothing stored
    good = ScriptedAdapter(lambda request, repair: answer(request))
    judge = ModelJudge(good, cache=cache)
    Evaluator([LLMJudgeMetric(judge)]).evaluate(cases([5])[0])
    for entry in tmp_path.rglob("*.json"):
        entry.write_text("{not json", encoding="utf-8")
    Evaluator([LLMJudgeMetric(judge)]).evaluate(cases([5])[0])
    assert good.calls == 2
    assert cache.misses >= 1


def test_entries_of_the_wrong_shape_are_misses(tmp_path):
    from docevals_mlflow.judges.request import JudgeRequest

    cache = JudgeCache(tmp_path)
    request = JudgeRequest(instructions="i", task={"a": 1}, output_schema={"type": "object"})
    key = cache.key(request, {"model": "m"})
    answer_key = cache.answer_key("pairs", request, {"model": "m"})
    assert answer_key != key
    for entry in (key, answer_key):
        path = tmp_path / entry[:2] / f"{entry}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[1, 2]")  # JSON, but not an entry
    assert cache.get(key) is None
    assert cache.get_answer(answer_key) is None
    cache.put_answer(answer_key, {"results": [1]})
    assert cache.get_answer(answer_key) == {"results": [1]}
    assert (cache.hits, cache.misses) == (1, 2)
