"""The judge options of ``evaluate-case`` and ``evaluate-pipeline``, against the
loopback fake provider: verdicts and usage in reports, panels, the judge cache,
missing keys, configuration errors, the usage line, and keys kept out of every file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow import EvaluationReport, PipelineEvaluationReport, load_report
from tests.helpers import assert_one_line_error, run, write_json, write_text
from tests.judges.provider_server import ProviderServer, ok, status

KEY = "sk-test-PLANTED-9"
PREDICTION = {"invoice": "A-17", "total": 11.5, "items": [{"sku": "x", "qty": 2}]}


@pytest.fixture
def case_files(tmp_path: Path) -> tuple[Path, Path]:
    """A prediction and its (agreeing) ground truth."""
    return (
        write_json(tmp_path / "prediction.json", PREDICTION),
        write_json(tmp_path / "truth.json", PREDICTION),
    )


def evaluate_case(
    capsys: pytest.CaptureFixture[str],
    case_files: tuple[Path, Path],
    output: Path,
    *options: str | Path,
) -> tuple[int, str, str]:
    prediction, truth = case_files
    return run(
        capsys,
        "evaluate-case",
        "--prediction",
        prediction,
        "--ground-truth",
        truth,
        "--output",
        output,
        *options,
    )


def local_judge(server: ProviderServer, model: str = "local-vl") -> tuple[str, ...]:
    """The options of one openai-compatible judge on the fake server."""
    return ("--judge", "openai-compatible", "--base-url", server.base_url, "--model", model)


def local_variants(server: ProviderServer, *models: str) -> str:
    """YAML panel variants, one per model, all on the fake server's chat endpoint."""
    return "".join(
        f"  - {{name: {model}, provider: openai-compatible, model: {model}, "
        f'base_url: "{server.base_url}"}}\n'
        for model in models
    )


def case_report(path: Path) -> EvaluationReport:
    report = load_report(path)
    assert isinstance(report, EvaluationReport)
    return report


def result_named(report: EvaluationReport, name: str) -> Any:
    return next(result for result in report.metric_results if result.name == name)


def usage_of(line: str) -> tuple[int, int, int]:
    """The three numbers of a ``judges: N requests, X input tokens, Y output tokens``."""
    head = line.removeprefix("judges: ").split(", $")[0]
    requests, inputs, outputs = (int(part.split()[0]) for part in head.split(", "))
    return requests, inputs, outputs


def judges_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("judges: ")]
    return line


def disagreeing_answer(request_body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A judgement calling the first prediction claim incorrect."""
    return {
        "summary": "The invoice number is wrong.",
        "prediction_claims": [
            {
                "claim_id": "p00001",
                "path": "$.invoice",
                "verdict": "incorrect",
                "evidence": "the reference says otherwise",
                "reference_id": "truth",
                "confidence": 0.8,
            }
        ],
        "reference_claims": [],
        "rubric_results": [],
    }


# ----------------------------------------------------------------------------- one judge


def test_openai_compatible_judge_adds_a_metric_with_verdicts_and_usage(
    capsys, provider_server: ProviderServer, case_files, tmp_path
) -> None:
    output = tmp_path / "report.json"
    code, out, err = evaluate_case(
        capsys,
        case_files,
        output,
        *local_judge(provider_server),
        "--temperature",
        "0.2",
    )
    assert code == 0, err
    report = case_report(output)
    assert [result.name for result in report.metric_results] == [
        "exact_structured",
        "llm_judge",
    ]
    judged = result_named(report, "llm_judge")
    assert judged.verdict == "pass"
    assert judged.basis == "llm_judge"
    assert judged.details["judge"]["model"] == "local-vl"
    assert judged.details["judge"]["temperature"] == 0.2
    verdicts = {claim["verdict"] for claim in judged.details["output"]["prediction_claims"]}
    assert verdicts == {"correct"}
    assert judged.counts  # scored against the claim inventory
    (request,) = provider_server.requests_for("chat/completions")
    assert request.body["model"] == "local-vl"
    # No key variable was named, so none is sent to a non-OpenAI server.
    assert "authorization" not in request.headers
    assert judged.usage["requests"] == 1
    assert judged.usage["input_tokens"] > 0
    assert "cost_usd" not in judged.usage
    line = judges_line(out)
    assert usage_of(line) == (
        1,
        int(judged.usage["input_tokens"]),
        int(judged.usage["output_tokens"]),
    )
    assert "$" not in line
    assert out.splitlines()[-1] == line
    assert "local-vl" in err  # which judge is asked, on stderr


def test_the_usage_line_counts_failed_requests(
    capsys, provider_server: ProviderServer, case_files, tmp_path
) -> None:
    # A 429 retried, then a 400 that is not: two HTTP requests, no answer.
    provider_server.script(
        "chat/completions", status(429, retry_after="0"), status(400, message="no")
    )
    output = tmp_path / "report.json"
    code, out, err = evaluate_case(
        capsys,
        case_files,
        output,
        *local_judge(provider_server),
    )
    assert code == 0, err
    judged = result_named(case_report(output), "llm_judge")
    assert judged.verdict == "uncertain"
    assert judged.usage["requests"] == 2
    assert usage_of(judges_line(out)) == (2, 0, 0)


def test_openai_judge_uses_the_environment_key_and_reports_cost(
    capsys, provider_server: ProviderServer, case_files, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    prices = write_text(tmp_path / "prices.yaml", "gpt-test: {input: 2.0, output: 8.0}\n")
    output = tmp_path / "report.json"
    code, out, err = evaluate_case(
        capsys,
        case_files,
        output,
        "--judge",
        "openai",
        "--model",
        "gpt-test",
        "--base-url",
        provider_server.base_url,
        "--prices",
        prices,
        "--reasoning-effort",
        "low",
    )
    assert code == 0, err
    (request,) = provider_server.requests_for("responses")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["reasoning"] == {"effort": "low"}
    judged = result_named(case_report(output), "llm_judge")
    assert judged.verdict == "pass"
    usage = judged.usage
    cached = usage["cached_input_tokens"]
    expected = (
        (usage["input_tokens"] - cached) * 2.0 + cached * 2.0 + usage["output_tokens"] * 8.0
    ) / 1e6
    assert usage["cost_usd"] == pytest.approx(expected)
    line = judges_line(out)
    assert line.endswith(f", ${expected:.4f}")
    assert usage_of(line)[0] == 1
    assert KEY not in out + err


def test_auto_prefers_openai_when_both_keys_exist(
    capsys, provider_server: ProviderServer, case_files, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("VISUAL_EVAL_MODEL", "gpt-from-env")
    code, _, err = evaluate_case(
        capsys,
        case_files,
        tmp_path / "report.json",
        "--judge",
        "auto",
        "--base-url",
        provider_server.base_url,
    )
    assert code == 0, err
    (request,) = provider_server.requests
    assert request.endpoint == "responses"
    assert request.body["model"] == "gpt-from-env"


def test_auto_falls_back_to_anthropic(
    capsys, provider_server: ProviderServer, case_files, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    output = tmp_path / "report.json"
    code, _, err = evaluate_case(
        capsys, case_files, output, "--judge", "auto", "--base-url", provider_server.base_url
    )
    assert code == 0, err
    (request,) = provider_server.requests
    assert request.endpoint == "messages"
    assert request.headers["x-api-key"] == KEY
    assert result_named(case_report(output), "llm_judge").verdict == "pass"


def test_auto_without_keys_runs_only_deterministic_metrics(
    capsys, provider_server: ProviderServer, case_files, tmp_path
) -> None:
    output = tmp_path / "report.json"
    code, out, err = evaluate_case(capsys, case_files, output, "--judge", "auto")
    assert code == 0
    assert [result.name for result in case_report(output).metric_results] == ["exact_structured"]
    assert "only deterministic metrics run" in err
    assert "judges:" not in out
    assert provider_server.requests == []


def test_no_judge_by_default(
    capsys, provider_server: ProviderServer, case_files, tmp_path, monkeypatch
) -> None:
    # Keys in the environment do not make an evaluation go online by themselves.
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    output = tmp_path / "report.json"
    code, out, err = evaluate_case(capsys, case_files, output)
    assert (code, err) == (0, "")
    assert len(case_report(output).metric_results) == 1
    assert "judges:" not in out
    assert provider_server.requests == []


# ----------------------------------------------------------------------------- panels


def test_panel_of_two_models_votes_by_group(
    capsys, provider_server: ProviderServer, case_files, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    panel = write_text(
        tmp_path / "panel.yaml",
        f"""\
        name: invoice_panel
        variants:
          - {{name: gpt, provider: openai, model: gpt-a, base_url: "{provider_server.base_url}"}}
          - name: local
            provider: openai-compatible
            model: local-b
            base_url: "{provider_server.base_url}"
        """,
    )
    # The local model dissents: one group each way is a tie, which goes to review.
    provider_server.script("chat/completions", ok(disagreeing_answer()))
    output = tmp_path / "report.json"
    code, out, err = evaluate_case(
        capsys, case_files, output, "--panel", panel, "--fail-on", "never"
    )
    assert code == 0, err
    report = case_report(output)
    assert [result.name for result in report.metric_results] == [
        "exact_structured",
        "invoice_panel",
    ]
    voted = result_named(report, "invoice_panel")
    assert voted.basis == "judge_panel"
    assert voted.details["group_votes"] == {
        "openai:gpt-a": "pass",
        "openai-compatible:local-b": "fail",
    }
    assert voted.verdict == "uncertain"
    assert voted.requires_human_review
    assert {variant["name"]: variant["model"] for variant in voted.details["variants"]} == {
        "gpt": "gpt-a",
        "local": "local-b",
    }
    assert voted.counts["groups"] == 2
    assert len(provider_server.requests_for("responses")) == 1
    assert len(provider_server.requests_for("chat/completions")) == 1
    assert voted.usage["requests"] == 2
    assert usage_of(judges_line(out))[0] == 2
    assert "invoice_panel" in err


def test_panel_prices_give_a_cost(
    capsys, provider_server: ProviderServer, case_files, tmp_path
) -> None:
    panel = write_text(
        tmp_path / "panel.yaml",
        "variants:\n"
        + local_variants(provider_server, "m1", "m2")
        + "prices:\n  m1: {input: 1.0, output: 1.0}\n",
    )
    output = tmp_path / "report.json"
    code, out, err = evaluate_case(capsys, case_files, output, "--panel", panel)
    assert code == 0, err
    voted = result_named(case_report(output), "judge_panel")
    assert voted.verdict == "pass"
    variants = {variant["name"]: variant["usage"] for variant in voted.details["variants"]}
    assert "cost_usd" in variants["m1"]
    assert "cost_usd" not in variants["m2"]
    line = judges_line(out)
    assert f"${voted.usage['cost_usd']:.4f}" in line


# ----------------------------------------------------------------------------- cache


def test_judge_cache_makes_the_second_run_free(
    capsys, provider_server: ProviderServer, case_files, tmp_path
) -> None:
    options = (
        *local_judge(provider_server),
        "--judge-cache",
        tmp_path / "cache",
    )
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    code, out, _ = evaluate_case(capsys, case_files, first, *options)
    assert code == 0
    assert usage_of(judges_line(out))[0] == 1
    assert len(provider_server.requests) == 1

    code, out, _ = evaluate_case(capsys, case_files, second, *options)
    assert code == 0
    assert len(provider_server.requests) == 1  # nothing new reached the server
    assert usage_of(judges_line(out)) == (0, 0, 0)
    before = result_named(case_report(first), "llm_judge")
    after = result_named(case_report(second), "llm_judge")
    assert after.details["cached"] is True
    assert after.details["output"] == before.details["output"]
    assert after.verdict == before.verdict == "pass"


def test_judge_cache_serves_panels_too(
    capsys, provider_server: ProviderServer, case_files, tmp_path
) -> None:
    panel = write_text(
        tmp_path / "panel.yaml", "variants:\n" + local_variants(provider_server, "m1", "m2")
    )
    options = ("--panel", panel, "--judge-cache", tmp_path / "cache")
    evaluate_case(capsys, case_files, tmp_path / "a.json", *options)
    assert len(provider_server.requests) == 2
    code, out, _ = evaluate_case(capsys, case_files, tmp_path / "b.json", *options)
    assert code == 0
    assert len(provider_server.requests) == 2
    assert usage_of(judges_line(out))[0] == 0


# ----------------------------------------------------------------------------- pipelines


def write_pipeline(tmp_path: Path, metrics: dict[str, Any] | None = None) -> Path:
    """Three independent stages (one wave) plus one, ``d``, that depends on ``a``."""
    write_json(tmp_path / "truth.json", {"total": 3})
    reference = {"path": "truth.json", "authority": "ground_truth"}
    stages: list[dict[str, Any]] = [
        {"stage_id": stage, "prediction": {"total": 3}, "references": [reference]}
        for stage in ("a", "b", "c")
    ]
    stages.append(
        {
            "stage_id": "d",
            "operation": "route",
            "input_from": "a",
            "prediction": {"total": 3},
            "references": [reference],
            "depends_on": ["a"],
        }
    )
    config: dict[str, Any] = {"pipeline_id": "p-1", "stages": stages}
    if metrics is not None:
        config["metrics"] = metrics
    return write_json(tmp_path / "pipeline.json", config)


def pipeline_report(path: Path) -> PipelineEvaluationReport:
    report = load_report(path)
    assert isinstance(report, PipelineEvaluationReport)
    return report


def test_pipeline_judge_is_added_to_every_stage(
    capsys, provider_server: ProviderServer, tmp_path, isolated_sys_path
) -> None:
    write_text(tmp_path / "checks.py", "def always(case):\n    return 1.0\n")
    config = write_pipeline(
        tmp_path, {"operations": {"route": [{"type": "function", "callable": "checks:always"}]}}
    )
    output = tmp_path / "report.json"
    code, out, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        output,
        *local_judge(provider_server),
    )
    assert code == 0, err
    report = pipeline_report(output)
    names = {
        stage.stage_id: [result.name for result in stage.metric_results]
        for stage in report.stage_reports
    }
    # The configured metrics stay; the judge comes on top of them.
    assert names == {
        "a": ["exact_structured", "llm_judge"],
        "b": ["exact_structured", "llm_judge"],
        "c": ["exact_structured", "llm_judge"],
        "d": ["always", "llm_judge"],
    }
    assert len(provider_server.requests) == 4
    total = sum(
        result.usage.get("input_tokens", 0)
        for stage in report.stage_reports
        for result in stage.metric_results
    )
    assert usage_of(judges_line(out))[:2] == (4, int(total))


def test_pipeline_concurrency_limits_requests_in_flight(
    capsys, provider_server: ProviderServer, tmp_path
) -> None:
    config = write_pipeline(tmp_path)
    options = ("--judge", "openai-compatible", "--base-url", provider_server.base_url)
    code, _, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "one.json",
        *options,
        "--model",
        "serial",
        "--concurrency",
        "1",
    )
    assert code == 0, err
    assert provider_server.max_in_flight == 1
    provider_server.reset()
    code, _, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "many.json",
        *options,
        "--model",
        "parallel",
    )
    assert code == 0, err
    # Stages a, b and c are independent and judged at once by default.
    assert provider_server.max_in_flight == 3


def test_pipeline_config_names_its_own_judges(
    capsys, provider_server: ProviderServer, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    write_text(
        tmp_path / "panels" / "route.yaml",
        "variants:\n"
        "  - {name: gpt, provider: openai, model: gpt-a, "
        f'base_url: "{provider_server.base_url}"}}\n' + local_variants(provider_server, "m"),
    )
    config = write_pipeline(
        tmp_path,
        {
            "default": [
                {"type": "exact"},
                {
                    "type": "judge",
                    "provider": "openai",
                    "model": "gpt-b",
                    "base_url": provider_server.base_url,
                },
            ],
            "operations": {
                "route": [{"type": "panel", "panel": "panels/route.yaml", "name": "route_panel"}]
            },
        },
    )
    prices = write_text(tmp_path / "prices.yaml", "gpt-b: {input: 1, output: 1}\n")
    output = tmp_path / "report.json"
    code, out, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        output,
        "--judge-cache",
        tmp_path / "cache",
        "--prices",
        prices,
    )
    assert code == 0, err
    report = pipeline_report(output)
    by_stage = {stage.stage_id: stage for stage in report.stage_reports}
    assert [result.name for result in by_stage["d"].metric_results] == ["route_panel"]
    assert by_stage["d"].metric_results[0].details["group_votes"] == {
        "openai:gpt-a": "pass",
        "openai-compatible:m": "pass",
    }
    judged = result_named(by_stage["a"], "llm_judge")
    assert judged.details["judge"]["model"] == "gpt-b"
    assert "cost_usd" in judged.usage  # --prices reaches judges the file names
    assert len(provider_server.requests) == 5
    assert usage_of(judges_line(out))[0] == 5
    assert any(path.suffix == ".json" for path in (tmp_path / "cache").rglob("*"))


def test_pipeline_judge_name_clash_is_refused(
    capsys, provider_server: ProviderServer, tmp_path
) -> None:
    judge = {
        "type": "judge",
        "provider": "openai-compatible",
        "model": "m",
        "base_url": provider_server.base_url,
    }
    config = write_pipeline(tmp_path, {"default": [judge]})
    code, _, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "report.json",
        *local_judge(provider_server, "m"),
    )
    assert code == 2
    assert_one_line_error(err, "'llm_judge'")
    assert provider_server.requests == []


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_missing_key_exits_2_with_one_line(
    capsys, case_files, tmp_path, provider, variable, monkeypatch
) -> None:
    # The other provider's key is set: it must not be used, or printed.
    other = "ANTHROPIC_API_KEY" if provider == "openai" else "OPENAI_API_KEY"
    monkeypatch.setenv(other, KEY)
    output = tmp_path / "report.json"
    code, out, err = evaluate_case(capsys, case_files, output, "--judge", provider)
    assert code == 2
    assert_one_line_error(err, f"set {variable}", f"--judge {provider}")
    assert KEY not in err + out
    assert not output.exists()


def test_missing_key_of_a_named_variable(capsys, case_files, tmp_path) -> None:
    code, _, err = evaluate_case(
        capsys,
        case_files,
        tmp_path / "report.json",
        "--judge",
        "openai-compatible",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--api-key-env",
        "LOCAL_LLM_KEY",
    )
    assert code == 2
    assert_one_line_error(err, "set LOCAL_LLM_KEY")


def test_missing_key_in_a_pipeline(capsys, tmp_path) -> None:
    config = write_pipeline(tmp_path)
    code, _, err = run(
        capsys, "evaluate-pipeline", config, "--output", tmp_path / "r.json", "--judge", "openai"
    )
    assert code == 2
    assert_one_line_error(err, "set OPENAI_API_KEY")


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        (("--judge", "openai-compatible"), ["--base-url", "--model"]),
        (("--judge", "openai-compatible", "--base-url", "http://127.0.0.1:9/v1"), ["--model"]),
        (("--judge", "openai", "--panel", "panel.yaml"), ["--panel", "cannot be combined"]),
        (("--panel", "panel.yaml", "--model", "m"), ["--model only applies to --judge"]),
        (
            ("--panel", "panel.yaml", "--model", "m", "--base-url", "u", "--temperature", "0"),
            ["--model, --base-url and --temperature only apply to --judge"],
        ),
        (("--judge", "anthropic", "--reasoning-effort", "low"), ["openai judges only"]),
        (("--judge", "openai", "--concurrency", "0"), ["--concurrency 0"]),
        (("--judge", "openai", "--prices", "absent.yaml"), ["absent.yaml"]),
        (("--judge", "openai", "--temperature", "-1"), ["temperature"]),
    ],
)
def test_bad_judge_options_exit_2(
    capsys, case_files, tmp_path, options, fragments, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    write_text(tmp_path / "panel.yaml", "variants: [{provider: openai}]\n")
    code, out, err = evaluate_case(capsys, case_files, tmp_path / "report.json", *options)
    assert code == 2
    assert_one_line_error(err, *fragments)
    assert KEY not in err + out


def test_unknown_judge_choice_is_a_usage_error(capsys, case_files, tmp_path) -> None:
    with pytest.raises(SystemExit) as raised:
        evaluate_case(capsys, case_files, tmp_path / "r.json", "--judge", "gemini")
    assert raised.value.code == 2
    assert "invalid choice: 'gemini'" in capsys.readouterr().err


def test_panel_with_unknown_provider_names_file_and_variant(capsys, case_files, tmp_path) -> None:
    panel = write_text(
        tmp_path / "panel.yaml",
        """\
        variants:
          - {name: fine, provider: openai-compatible, model: m, base_url: "http://127.0.0.1:9/v1"}
          - {name: mystery, provider: gemini}
        """,
    )
    code, _, err = evaluate_case(capsys, case_files, tmp_path / "r.json", "--panel", panel)
    assert code == 2
    assert_one_line_error(err, str(panel), "variant 'mystery'", "provider")


def test_panel_with_a_key_in_it_is_refused_without_echoing_it(
    capsys, case_files, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    panel = write_text(
        tmp_path / "panel.yaml",
        f"""\
        variants:
          - {{name: careless, provider: openai, api_key: {KEY}}}
        """,
    )
    code, out, err = evaluate_case(capsys, case_files, tmp_path / "r.json", "--panel", panel)
    assert code == 2
    assert_one_line_error(err, str(panel), "variant 'careless'", "environment variable")
    assert KEY not in err + out


def test_panel_variant_without_its_key_names_the_variable(capsys, case_files, tmp_path) -> None:
    panel = write_text(
        tmp_path / "panel.yaml",
        "variants:\n  - {name: claude, provider: anthropic}\n",
    )
    code, _, err = evaluate_case(capsys, case_files, tmp_path / "r.json", "--panel", panel)
    assert code == 2
    assert_one_line_error(err, str(panel), "variant 'claude'", "set ANTHROPIC_API_KEY")


def test_pipeline_config_with_a_key_is_refused(capsys, tmp_path) -> None:
    config = write_pipeline(
        tmp_path, {"default": [{"type": "judge", "provider": "openai", "model": KEY}]}
    )
    code, out, err = run(capsys, "evaluate-pipeline", config, "--output", tmp_path / "r.json")
    assert code == 2
    assert_one_line_error(err, str(config), "metrics.default[0].model", "environment variable")
    assert KEY not in err + out


# ----------------------------------------------------------------------------- secrets


def test_the_key_is_in_no_file_written(
    capsys, provider_server: ProviderServer, tmp_path, mlflow_store, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # One request is rejected by a server that echoes the key it was sent, as real
    # providers do; the error it leaves in the report must not carry the key.
    provider_server.script("responses", status(401, message="Incorrect API key: {key}"))
    config = write_pipeline(tmp_path)
    output = tmp_path / "reports" / "pipeline.json"
    markdown = tmp_path / "reports" / "pipeline.md"
    code, out, err = run(
        capsys,
        "evaluate-pipeline",
        config,
        "--output",
        output,
        "--markdown",
        markdown,
        "--judge",
        "openai",
        "--model",
        "gpt-test",
        "--base-url",
        provider_server.base_url,
        "--judge-cache",
        tmp_path / "cache",
        "--checkpoint-dir",
        tmp_path / "checkpoints",
        "--fail-on",
        "never",
    )
    assert code == 0, err
    # The key did go out, on the wire, to the one header that needs it.
    assert {request.headers["authorization"] for request in provider_server.requests} == {
        f"Bearer {KEY}"
    }
    report = pipeline_report(output)
    notes = [
        note
        for stage in report.stage_reports
        for result in stage.metric_results
        for note in result.notes
    ]
    assert any("[REDACTED]" in note for note in notes)

    # A case whose tracking server is unreachable keeps its run as a bundle next to
    # the report; logging that bundle later is a second way into the store.
    case_prediction = write_json(tmp_path / "case" / "prediction.json", PREDICTION)
    code, out2, err2 = run(
        capsys,
        "evaluate-case",
        "--prediction",
        case_prediction,
        "--ground-truth",
        case_prediction,
        "--output",
        tmp_path / "reports" / "case.json",
        "--judge",
        "openai",
        "--base-url",
        provider_server.base_url,
        "--judge-cache",
        tmp_path / "cache",
        "--tracking-uri",
        "http://127.0.0.1:9",
    )
    assert code == 0, err2
    bundle = tmp_path / "reports" / "case.run"
    assert (bundle / "run.json").is_file()
    code, out3, err3 = run(capsys, "log", bundle)
    assert code == 0, err3

    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert tmp_path / "mlflow.db" in files
    assert any(path.suffix == ".md" for path in files)
    assert any("cache" in path.parts for path in files)
    assert any("checkpoints" in path.parts for path in files)
    assert any("mlruns" in path.parts for path in files)  # the runs' artifacts
    assert len(files) > 20
    planted = KEY.encode()
    leaking = [path for path in files if planted in path.read_bytes()]
    assert leaking == []
    assert KEY not in out + err + out2 + err2 + out3 + err3
