"""``--repeats N``: every judge asked N times per stage, repeats 2..N past the judge
cache, flip rate and pass^N (per judge and per panel member) in the report, Markdown,
console and MLflow, and a run without repeats exactly as before."""

from __future__ import annotations

import asyncio
import json

import pytest

from docevals_mlflow.cli.judge_repeats import repeat_lines
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.repeat_figures import judge_repeat_section
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.evaluation.judge_repeats import RepeatedJudgeMetric, judge_repeat_figures
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.judges import judge as judge_module
from docevals_mlflow.judges.cache import JudgeCache
from docevals_mlflow.judges.judge import ModelJudge
from docevals_mlflow.judges.repeats import cache_bypassed, fresh_answers
from docevals_mlflow.judges.testing import ScriptedAdapter, answer
from tests.helpers import one_error_line, run
from tests.judges.provider_server import ProviderServer, ok
from tests.judges.test_cli_judges import (
    case_files,
    case_report,
    disagreeing_answer,
    evaluate_case,
    judges_line,
    local_judge,
    pipeline_report,
    usage_of,
    write_pipeline,
)

__all__ = ["case_files"]  # the fixture, shared with the judge option tests


def _case() -> EvaluationCase:
    from docevals_mlflow.core.artifacts import artifact_from_value

    truth = artifact_from_value({"total": 3}, artifact_id="truth", authority="ground_truth")
    return EvaluationCase(case_id="c1", prediction={"total": 3}, references=[truth])


# ----------------------------------------------------------------------- in memory


def test_fresh_answers_is_scoped_to_its_block_and_tasks() -> None:
    assert not cache_bypassed()

    async def inside() -> bool:
        return cache_bypassed()

    async def main() -> tuple[bool, bool]:
        with fresh_answers():
            task = asyncio.ensure_future(inside())
        return await task, await inside()

    assert asyncio.run(main()) == (True, False)
    assert not cache_bypassed()


def test_each_repeat_is_a_real_call_and_the_cache_keeps_the_first_answer(tmp_path) -> None:
    cache = JudgeCache(tmp_path / "cache")
    adapter = ScriptedAdapter(lambda request: answer(request))
    metric = LLMJudgeMetric(ModelJudge(adapter, cache=cache))
    first = metric.evaluate(_case())
    assert adapter.calls == 1
    repeated = RepeatedJudgeMetric(metric, 3)
    result = repeated.evaluate(_case())
    # Repeat 1 came from the cache; repeats 2 and 3 reached the judge.
    assert adapter.calls == 3
    assert result.details["cached"] is True
    assert result.details["repeats"] == {"verdicts": ["pass"] * 3, "flipped": False}
    assert result.verdict == first.verdict == "pass"
    # The repeats stored nothing: a later ordinary run is still answered from the cache.
    metric.evaluate(_case())
    assert adapter.calls == 3


def test_without_a_cache_the_judge_sees_n_calls_and_usage_adds_up() -> None:
    adapter = ScriptedAdapter(lambda request: answer(request))
    result = RepeatedJudgeMetric(LLMJudgeMetric(ModelJudge(adapter)), 4).evaluate(_case())
    assert adapter.calls == 4
    assert result.usage["requests"] == 4


def test_the_first_repeat_gives_the_verdict_and_a_flip_asks_for_review() -> None:
    calls = []

    def respond(request):
        calls.append(request)
        return answer(request, prediction="correct" if len(calls) == 1 else "incorrect")

    metric = RepeatedJudgeMetric(LLMJudgeMetric(ModelJudge(ScriptedAdapter(respond))), 3)
    result = metric.evaluate(_case())
    assert result.verdict == "pass"
    assert result.details["repeats"] == {"verdicts": ["pass", "fail", "fail"], "flipped": True}
    assert result.requires_human_review
    assert "flipped across 3 repeats (pass, fail, fail)" in result.notes[-1]


def _stage(stage_id: str, verdicts: list[str] | None) -> object:
    from docevals_mlflow.core.reports import EvaluationReport, SpecFingerprints

    details = {} if verdicts is None else {"repeats": {"verdicts": verdicts}}
    results = [MetricResult(name="llm_judge", basis="llm_judge", verdict="pass", details=details)]
    return EvaluationReport(
        case_id="p",
        stage_id=stage_id,
        operation="generic",
        rubric="r",
        fingerprints=SpecFingerprints(rubric_sha256="r", operation_spec_sha256="o"),
        verdict="pass",
        failure_context="none",
        metric_results=results,
    )


def test_figures_by_hand() -> None:
    stages = [
        _stage("a", ["pass", "pass", "pass"]),
        _stage("b", ["pass", "fail", "pass"]),
        _stage("c", ["fail", "fail", "fail"]),
        _stage("d", ["pass", "pass", "pass"]),
        _stage("e", None),  # not repeated: left out
    ]
    figures = judge_repeat_figures(stages)  # type: ignore[arg-type]
    assert figures is not None
    assert (figures.repeats, figures.units) == (3, 4)
    assert figures.flip_rate == pytest.approx(1 / 4)
    assert figures.pass_all == pytest.approx(2 / 4)
    assert figures.flipping == ["p/b: llm_judge"]
    assert figures.summary_line() == (
        "judge repeats (3): 1 of 4 stage judgements flipped (25.0%), pass^3 50.0%"
    )
    assert judge_repeat_figures([_stage("a", None)]) is None  # type: ignore[list-item]


# ----------------------------------------------------------------------- the commands


def test_case_repeats_report_flip_rate_and_pass_all(
    capsys, provider_server: ProviderServer, case_files, tmp_path
) -> None:
    provider_server.script(
        "chat/completions", ok(), ok(disagreeing_answer()), ok(disagreeing_answer())
    )
    output, markdown = tmp_path / "report.json", tmp_path / "report.md"
    code, out, err = evaluate_case(
        capsys,
        case_files,
        output,
        *local_judge(provider_server),
        "--repeats",
        "3",
        "--markdown",
        markdown,
    )
    assert code == 0, err  # the first repeat's pass stands
    assert len(provider_server.requests_for("chat/completions")) == 3
    report = case_report(output)
    assert report.verdict == "pass"
    figures = report.judge_repeats
    assert figures is not None
    assert (figures.repeats, figures.units, figures.flip_rate, figures.pass_all) == (3, 1, 1, 0)
    assert [judge.metric for judge in figures.judges] == ["llm_judge"]
    assert "judge repeats (3): 1 of 1 stage judgement flipped (100.0%), pass^3 0.0%" in out
    assert "judge llm_judge: 1 of 1 flipped" in out
    assert usage_of(judges_line(out))[0] == 3  # the cost line counts every repeat
    text = markdown.read_text(encoding="utf-8")
    assert "## Judge repeats" in text
    assert "| llm_judge | 1 | 1 | 100.0% | 0.0% |" in text


def test_repeats_bypass_the_judge_cache(
    capsys, provider_server: ProviderServer, case_files, tmp_path
) -> None:
    cache = ("--judge-cache", tmp_path / "cache")
    judge = local_judge(provider_server)
    evaluate_case(capsys, case_files, tmp_path / "a.json", *judge, *cache)
    assert len(provider_server.requests) == 1
    code, _, err = evaluate_case(
        capsys, case_files, tmp_path / "b.json", *judge, *cache, "--repeats", "3"
    )
    assert code == 0, err
    assert len(provider_server.requests) == 3  # repeat 1 cached, 2 and 3 real


def test_repeats_of_one_leave_the_report_as_it_was(
    capsys, provider_server: ProviderServer, case_files, tmp_path, monkeypatch
) -> None:
    # Latency is the one figure that differs between two identical runs.
    monkeypatch.setattr(judge_module.time, "perf_counter", lambda: 1.0)
    judge = local_judge(provider_server)
    outputs = []
    for name, extra in (("before", ()), ("after", ("--repeats", "1"))):
        output, markdown = tmp_path / f"{name}.json", tmp_path / f"{name}.md"
        code, _, err = evaluate_case(
            capsys, case_files, output, *judge, "--markdown", markdown, *extra
        )
        assert code == 0, err
        outputs.append((output.read_bytes(), markdown.read_bytes()))
    assert outputs[0] == outputs[1]
    assert b"judge_repeats" not in outputs[0][0]
    assert b'"repeats"' not in outputs[0][0]


def test_pipeline_repeats_every_stage_judge(
    capsys, provider_server: ProviderServer, tmp_path
) -> None:
    config = write_pipeline(tmp_path)
    output = tmp_path / "report.json"
    code, out, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        output,
        *local_judge(provider_server),
        "--repeats",
        "2",
    )
    assert code == 0, err
    assert len(provider_server.requests) == 8
    report = pipeline_report(output)
    figures = report.judge_repeats
    assert figures is not None
    assert (figures.repeats, figures.units, figures.flip_rate, figures.pass_all) == (2, 4, 0, 1)
    assert "judge repeats (2): 0 of 4 stage judgements flipped (0.0%), pass^2 100.0%" in out
    data = json.loads(output.read_text(encoding="utf-8"))
    assert data["judge_repeats"]["judges"][0]["metric"] == "llm_judge"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--repeats", "0"), "--repeats 0 (expected a whole number from 1 to 100)"),
        (("--repeats", "3"), "--repeats 3 needs an LLM judge to repeat (expected --judge or"),
    ],
)
def test_bad_repeats_exit_2(capsys, case_files, tmp_path, extra, message) -> None:
    code, _, err = evaluate_case(capsys, case_files, tmp_path / "r.json", *extra)
    assert code == 2
    assert message in one_error_line(err)
    assert not (tmp_path / "r.json").exists()


def test_repeat_metrics_are_logged(
    capsys, provider_server: ProviderServer, case_files, tmp_path, mlflow_store
) -> None:
    from mlflow.tracking import MlflowClient

    code, _, err = evaluate_case(
        capsys, case_files, tmp_path / "r.json", *local_judge(provider_server), "--repeats", "2"
    )
    assert code == 0, err
    (run_,) = MlflowClient(mlflow_store).search_runs(["0", "1"])
    metrics = run_.data.metrics
    assert metrics["repeats/flip_rate"] == 0
    assert metrics["repeats/pass_all"] == 1
    assert metrics["repeats/n"] == 2
    assert metrics["judge/llm_judge/flip_rate"] == 0
    assert not [key for key in metrics if key.startswith("repeats/") and key.count("/") > 1]


def test_configured_judges_and_panels_are_repeated_too(
    capsys, provider_server: ProviderServer, tmp_path
) -> None:
    from tests.helpers import write_text
    from tests.judges.test_cli_judges import local_variants

    write_text(
        tmp_path / "panels" / "route.yaml",
        "variants:\n" + local_variants(provider_server, "m1", "m2"),
    )
    judge = {"type": "judge", "provider": "openai-compatible", "model": "j"}
    judge["base_url"] = provider_server.base_url
    config = write_pipeline(
        tmp_path,
        {
            "default": [{"type": "exact"}, judge],
            "operations": {
                "route": [{"type": "panel", "panel": "panels/route.yaml", "name": "route_panel"}]
            },
        },
    )
    output = tmp_path / "report.json"
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", output, "--repeats", "3")
    assert code == 0, err
    # Stages a, b, c: one judge; stage d: a panel of two; each asked 3 times.
    assert len(provider_server.requests) == (3 * 1 + 2) * 3
    figures = pipeline_report(output).judge_repeats
    assert figures is not None
    assert {judge.metric: judge.stages for judge in figures.judges} == {
        "llm_judge": 3,
        "route_panel": 1,
    }


def test_a_batch_reports_repeats_per_pipeline_and_on_the_console(
    capsys, provider_server: ProviderServer, tmp_path
) -> None:
    from tests.helpers import write_json

    reference = {"id": "t", "value": {"total": 3}, "authority": "ground_truth"}
    config = write_json(
        tmp_path / "batch.json",
        {
            "pipelines": [
                {
                    "pipeline_id": name,
                    "stages": [
                        {"stage_id": "s", "prediction": {"total": 3}, "references": [reference]}
                    ],
                }
                for name in ("p1", "p2")
            ]
        },
    )
    output = tmp_path / "batch-report.json"
    code, out, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        output,
        *local_judge(provider_server),
        "--repeats",
        "2",
    )
    assert code == 0, err
    assert len(provider_server.requests) == 4
    assert "judge repeats (2): 0 of 2 stage judgements flipped (0.0%), pass^2 100.0%" in out
    for name in ("p1", "p2"):
        report = pipeline_report(tmp_path / "batch-report.pipelines" / f"{name}.json")
        assert report.judge_repeats is not None
        assert report.judge_repeats.units == 1


# ----------------------------------------------------------------------- panel members


def _flaky_panel(repeats: int = 3) -> RepeatedJudgeMetric:
    """A panel of three scripted members: ``steady`` always passes, ``strict`` always
    fails, ``flaky`` passes case c1 only on its first call and always passes c2."""
    from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric, JudgeVariant
    from tests.judges.test_calibration import FAIL, PASS

    flaky_calls: dict[str, int] = {}

    def flaky(request):
        case = request.task["case_id"]
        flaky_calls[case] = flaky_calls.get(case, 0) + 1
        return answer(request, prediction=PASS if case == "c2" or flaky_calls[case] == 1 else FAIL)

    scripts = {
        "steady": lambda request: answer(request, prediction=PASS),
        "strict": lambda request: answer(request, prediction=FAIL),
        "flaky": flaky,
    }
    panel = JudgePanelMetric(
        [
            JudgeVariant(name=name, judge=ScriptedAdapter(script, provider=name, model=name))
            for name, script in scripts.items()
        ],
        name="route_panel",
    )
    return RepeatedJudgeMetric(panel, repeats)


def _panel_stages(repeats: int = 3) -> list:
    from docevals_mlflow.evaluation.evaluator import Evaluator
    from tests.judges.test_calibration import make_case

    return Evaluator([_flaky_panel(repeats)]).evaluate_batch([make_case("c1"), make_case("c2")])


def test_a_repeated_panel_keeps_each_members_verdicts() -> None:
    stages = _panel_stages()
    entry = stages[0].metric_results[0].details["repeats"]
    assert entry["members"]["steady"] == ["pass"] * 3
    assert entry["members"]["strict"] == ["fail"] * 3
    # Which repeat the flaky member's first call landed in depends on the schedule.
    assert sorted(entry["members"]["flaky"]) == ["fail", "fail", "pass"]
    # steady + flaky pass once, steady alone the other times: the panel's vote moves.
    assert stages[1].metric_results[0].details["repeats"]["members"]["flaky"] == ["pass"] * 3


def test_member_figures_by_hand() -> None:
    figures = judge_repeat_figures(_panel_stages())
    assert figures is not None
    (judge,) = figures.judges
    assert judge.metric == "route_panel"
    members = {member.member: member for member in judge.members or ()}
    assert sorted(members) == ["flaky", "steady", "strict"]
    # flaky: c1 flipped, c2 passed all 3 -> flip 1/2, pass^3 1/2.
    assert (members["flaky"].stages, members["flaky"].flipped) == (2, 1)
    assert members["flaky"].flip_rate == pytest.approx(0.5)
    assert members["flaky"].pass_all == pytest.approx(0.5)
    assert (members["steady"].flip_rate, members["steady"].pass_all) == (0, 1)
    assert (members["strict"].flip_rate, members["strict"].pass_all) == (0, 0)

    lines = repeat_lines(figures)
    assert "judge route_panel/flaky: 1 of 2 flipped (50.0%), pass^3 50.0%" in lines
    assert not [line for line in lines if "steady" in line or "strict" in line]
    section = "\n".join(judge_repeat_section(figures))
    assert "| Panel | Member | Stages | Flipped | Flip rate | pass^3 |" in section
    assert "| route_panel | flaky | 2 | 1 | 50.0% | 50.0% |" in section
    assert "| route_panel | steady | 2 | 0 | 0.0% | 100.0% |" in section
    assert "| route_panel | strict | 2 | 0 | 0.0% | 0.0% |" in section


def test_single_judges_have_no_members_in_the_json() -> None:
    figures = judge_repeat_figures([_stage("a", ["pass", "fail"])])  # type: ignore[list-item]
    assert figures is not None
    assert figures.judges[0].members is None
    assert "members" not in figures.model_dump_json()
    assert "Member" not in "\n".join(judge_repeat_section(figures))


def test_panel_members_reach_the_report_the_console_and_mlflow(
    capsys, provider_server: ProviderServer, case_files, tmp_path, mlflow_store
) -> None:
    from mlflow.tracking import MlflowClient

    from tests.helpers import write_text
    from tests.judges.test_cli_judges import local_variants

    panel = write_text(
        tmp_path / "panel.yaml",
        "name: route_panel\nvariants:\n" + local_variants(provider_server, "m1", "m2"),
    )
    output, markdown = tmp_path / "r.json", tmp_path / "r.md"
    code, out, err = evaluate_case(
        capsys, case_files, output, "--panel", panel, "--repeats", "2", "--markdown", markdown
    )
    assert code == 0, err
    assert len(provider_server.requests) == 2 * 2
    figures = case_report(output).judge_repeats
    assert figures is not None
    (judge,) = [judge for judge in figures.judges if judge.metric == "route_panel"]
    assert [(m.member, m.stages, m.flip_rate, m.pass_all) for m in judge.members or ()] == [
        ("m1", 1, 0, 1),
        ("m2", 1, 0, 1),
    ]
    data = json.loads(output.read_text(encoding="utf-8"))
    assert [m["member"] for m in data["judge_repeats"]["judges"][0]["members"]] == ["m1", "m2"]
    assert "| route_panel | m2 | 1 | 0 | 0.0% | 100.0% |" in markdown.read_text("utf-8")
    assert "route_panel/m" not in out  # no member flipped: no member line
    (run_,) = MlflowClient(mlflow_store).search_runs(["0", "1"])
    # One flip-rate key per member, beside the panel's (the panel's own judge/ figures aside).
    flip_keys = sorted(key for key in run_.data.metrics if key.endswith("/flip_rate"))
    assert flip_keys == [
        "judge/route_panel/flip_rate",
        "judge/route_panel/m1/flip_rate",
        "judge/route_panel/m2/flip_rate",
        "repeats/flip_rate",
    ]
    assert run_.data.metrics["judge/route_panel/m2/flip_rate"] == 0
