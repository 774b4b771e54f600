"""Judges and panels described as data: ``JudgeConfig``, ``PanelConfig``, panel and
price files, ``auto_judge``, and ``judge``/``panel`` metrics in pipeline configs.

Nothing here sends a request: judges are built and inspected, never asked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow import ExactStructuredMetric, LLMJudgeMetric
from docevals_mlflow.errors import ConfigurationError, InputError, InputFileNotFoundError
from docevals_mlflow.evaluation.config import load_pipeline_config
from docevals_mlflow.evaluation.judge_metrics import (
    judge_panel_metric,
    llm_judge_metric,
    load_judge_panel_metric,
)
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric
from docevals_mlflow.judges.adapters import (
    AnthropicMessagesAdapter,
    OpenAICompatibleChatAdapter,
    OpenAIResponsesAdapter,
)
from docevals_mlflow.judges.cache import JudgeCache
from docevals_mlflow.judges.config import (
    JudgeConfig,
    JudgeRuntime,
    PanelConfig,
    auto_judge,
    find_api_key,
    load_panel_config,
    load_prices,
)
from docevals_mlflow.judges.usage import Price, PriceTable, Usage
from tests.helpers import write_text

KEY = "sk-test-PLANTED-9"
ENV = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY + "a"}


def panel_error(path: Path, text: str) -> InputError:
    write_text(path, text)
    with pytest.raises(InputError) as raised:
        load_panel_config(path)
    return raised.value


# ----------------------------------------------------------------------------- JudgeConfig


@pytest.mark.parametrize(
    ("provider", "adapter_type", "wire_provider"),
    [
        ("openai", OpenAIResponsesAdapter, "openai"),
        ("anthropic", AnthropicMessagesAdapter, "anthropic"),
        ("openai-compatible", OpenAICompatibleChatAdapter, "openai-compatible"),
    ],
)
def test_each_provider_builds_its_adapter(provider, adapter_type, wire_provider) -> None:
    config = JudgeConfig(
        provider=provider,
        model="m-1",
        base_url="http://127.0.0.1:9/v1",
        temperature=0.3,
        top_p=0.9,
        max_output_tokens=500,
        timeout=12,
        max_retries=1,
        max_concurrency=3,
        requests_per_minute=60,
        name="my-judge",
    )
    judge = config.build(environ=ENV)
    assert isinstance(judge.adapter, adapter_type)
    assert judge.name == "my-judge"
    described = judge.describe()
    assert described["provider"] == wire_provider
    assert (described["model"], described["temperature"], described["top_p"]) == ("m-1", 0.3, 0.9)
    assert described["max_output_tokens"] == 500
    transport = judge.adapter.transport
    assert transport.policy.max_retries == 1
    assert (transport.max_concurrency, transport.requests_per_minute) == (3, 60)
    assert transport.timeout.read == 12
    assert KEY not in json.dumps(described)


def test_hosted_providers_have_default_models_and_keys() -> None:
    openai = JudgeConfig(provider="openai").build(environ=ENV)
    anthropic = JudgeConfig(provider="anthropic").build(environ=ENV)
    assert openai.adapter.api_key == KEY
    assert anthropic.adapter.api_key == KEY + "a"
    assert openai.describe()["model"]
    assert anthropic.describe()["base_url"].startswith("https://api.anthropic.com")


def test_openai_compatible_sends_no_key_unless_a_variable_is_named() -> None:
    config = JudgeConfig(provider="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1")
    assert config.key_variable is None
    assert config.build(environ=ENV).adapter.api_key is None
    named = config.model_copy(update={"api_key_env": "LOCAL_KEY"})
    assert named.build(environ={"LOCAL_KEY": "local-secret"}).adapter.api_key == "local-secret"


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="set ANTHROPIC_API_KEY in the environment"):
        JudgeConfig(provider="anthropic").build(environ={"OPENAI_API_KEY": KEY})
    custom = JudgeConfig(provider="openai", api_key_env="TEAM_OPENAI_KEY")
    with pytest.raises(ConfigurationError, match="set TEAM_OPENAI_KEY"):
        custom.build(environ=ENV)
    with pytest.raises(ConfigurationError, match="set OPENAI_API_KEY"):
        JudgeConfig(provider="openai").build(environ={"OPENAI_API_KEY": ""})


def test_prices_cache_and_client_reach_the_judge(tmp_path: Path) -> None:
    prices = PriceTable(prices={"m-1": Price(input=1.0, output=2.0)})
    cache = JudgeCache(tmp_path / "cache")
    judge = JudgeConfig(provider="openai", model="m-1").build(prices, cache=cache, environ=ENV)
    assert judge.cache is cache
    usage = judge.adapter.with_cost(Usage(input_tokens=1_000_000, output_tokens=500_000))
    assert usage.cost_usd == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("settings", "fragment"),
    [
        ({"provider": "gemini"}, "provider"),
        ({"provider": "openai-compatible", "model": "m"}, "needs base_url"),
        ({"provider": "openai-compatible", "base_url": "http://x/v1"}, "needs model"),
        ({"provider": "anthropic", "reasoning_effort": "low"}, "openai judges only"),
        ({"provider": "openai", "api_key_env": "not a name"}, "name of an environment variable"),
        ({"provider": "openai", "temperature": -1}, "temperature"),
        ({"provider": "openai", "top_p": 2}, "top_p"),
        ({"provider": "openai", "max_concurrency": 0}, "max_concurrency"),
        ({"provider": "openai", "api_key": "x"}, "api_key"),
    ],
)
def test_invalid_judge_settings(settings, fragment) -> None:
    with pytest.raises(InputError, match=fragment):
        JudgeConfig.model_validate(settings)


# ----------------------------------------------------------------------------- auto


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}, "openai"),
        ({"OPENAI_API_KEY": KEY}, "openai"),
        ({"ANTHROPIC_API_KEY": KEY}, "anthropic"),
        ({"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": KEY}, "anthropic"),
        ({}, None),
        ({"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}, None),
    ],
)
def test_auto_prefers_openai_then_anthropic(environ, expected) -> None:
    chosen = auto_judge(environ)
    assert (chosen.provider if chosen else None) == expected


def test_auto_takes_model_and_reasoning_effort_from_the_environment() -> None:
    environ = {
        "OPENAI_API_KEY": KEY,
        "VISUAL_EVAL_MODEL": "gpt-x",
        "VISUAL_EVAL_REASONING_EFFORT": "low",
    }
    chosen = auto_judge(environ)
    assert chosen is not None
    assert (chosen.model, chosen.reasoning_effort) == ("gpt-x", "low")
    # The reasoning effort is OpenAI's; Anthropic ignores it instead of failing.
    anthropic = auto_judge({**environ, "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": KEY})
    assert anthropic is not None
    assert (anthropic.provider, anthropic.model, anthropic.reasoning_effort) == (
        "anthropic",
        "gpt-x",
        None,
    )


def test_auto_reads_the_process_environment_by_default(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    chosen = auto_judge()
    assert chosen is not None
    assert chosen.provider == "anthropic"


# ----------------------------------------------------------------------------- secrets


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"api_key": "anything"}, "api_key"),
        ({"variants": [{"provider": "openai"}, {"API-Key": ""}]}, "variants[1].API-Key"),
        ({"variants": [{"base_url": f"http://h/v1?key={KEY}"}]}, "variants[0].base_url"),
        ({"headers": {"authorization": "Bearer x"}}, "headers.authorization"),
        ({"notes": ["ok", "sk-ant-api03-abcdefgh"]}, "notes[1]"),
        ({"prices": {KEY: {"input": 1}}}, "prices"),
    ],
)
def test_api_keys_are_found_by_place(data, where) -> None:
    assert find_api_key(data) == where


@pytest.mark.parametrize(
    "data",
    [
        {"api_key_env": "OPENAI_API_KEY"},
        {"stage": "task-123456", "sku": "disk-0001234"},
        {"model": "gpt-4.1-mini", "temperature": 0.2},
        ["sk-1"],
    ],
)
def test_ordinary_settings_are_not_keys(data) -> None:
    assert find_api_key(data) is None


# ----------------------------------------------------------------------------- panels

PANEL = """\
    name: invoice_panel
    vote_rule: unanimous
    minimum_agreement: 0.6
    review_on_any_disagreement: false
    variants:
      - {name: gpt-cold, provider: openai, model: gpt-a, temperature: 0}
      - {name: gpt-warm, provider: openai, model: gpt-a, temperature: 0.8}
      - {name: claude, provider: anthropic, model: claude-b, sample_group: claudes}
      - name: local
        provider: openai-compatible
        model: local-c
        base_url: http://127.0.0.1:9/v1
        max_concurrency: 2
    prices:
      gpt-a: {input: 1.0, output: 4.0, cached_input: 0.5}
"""


def test_panel_file_builds_a_panel_metric(tmp_path: Path) -> None:
    config = load_panel_config(write_text(tmp_path / "panel.yaml", PANEL))
    panel = judge_panel_metric(config, JudgeRuntime(environ=ENV))
    assert isinstance(panel, JudgePanelMetric)
    assert panel.name == "invoice_panel"
    assert (panel.vote_rule, panel.minimum_agreement) == ("unanimous", 0.6)
    assert panel.review_on_any_disagreement is False
    groups = {variant.name: variant.group for variant in panel.variants}
    assert groups == {
        "gpt-cold": "openai:gpt-a",
        "gpt-warm": "openai:gpt-a",
        "claude": "claudes",
        "local": "openai-compatible:local-c",
    }
    temperatures = {variant.name: variant.temperature for variant in panel.variants}
    assert temperatures["gpt-warm"] == 0.8
    adapter = panel.variants[0].judge.adapter
    assert adapter.prices.prices["gpt-a"].cached_input == 0.5


def test_panel_json_file_and_prices_from_outside_win(tmp_path: Path) -> None:
    data = {
        "variants": [{"provider": "openai", "model": "gpt-a"}],
        "prices": {"gpt-a": {"input": 1.0, "output": 4.0}},
    }
    path = tmp_path / "panel.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    config = load_panel_config(path)
    assert config.name == "judge_panel"
    assert config.variants[0].label == "openai:gpt-a"
    extra = PriceTable(prices={"gpt-a": Price(input=9.0, output=9.0)})
    table = config.price_table(extra)
    assert table is not None
    assert table.prices["gpt-a"].input == 9.0
    assert PanelConfig(variants=config.variants).price_table() is None


def test_unknown_provider_names_the_file_and_the_variant(tmp_path: Path) -> None:
    path = tmp_path / "panel.yaml"
    error = panel_error(
        path,
        """\
        variants:
          - {name: fine, provider: openai}
          - {name: odd-one, provider: gemini, model: g}
        """,
    )
    assert error.source == str(path)
    assert str(path) in str(error)
    assert "variant 'odd-one'" in str(error)
    assert "provider" in str(error)


def test_unnamed_variant_is_named_by_position(tmp_path: Path) -> None:
    error = panel_error(
        tmp_path / "panel.yaml",
        """\
        variants:
          - {provider: openai}
          - {provider: openai-compatible, model: m}
        """,
    )
    assert "variant #2" in str(error)
    assert "needs base_url" in str(error)


@pytest.mark.parametrize(
    ("entry", "where"),
    [
        (f"{{name: leaky, provider: openai, api_key: {KEY}}}", "variants[0].api_key"),
        (f"{{name: leaky, provider: openai, model: {KEY}}}", "variants[0].model"),
        (f"{{name: leaky, provider: openai, api_key_env: {KEY}}}", "variants[0].api_key_env"),
    ],
)
def test_a_key_in_a_panel_file_is_refused_without_echoing_it(tmp_path, entry, where) -> None:
    path = tmp_path / "panel.yaml"
    error = panel_error(path, f"variants:\n  - {entry}\n")
    message = str(error)
    assert KEY not in message
    assert "PLANTED" not in message
    assert str(path) in message
    assert "variant 'leaky'" in message
    assert error.path == where
    assert "environment variable" in message


def test_repeated_variant_names_are_refused(tmp_path: Path) -> None:
    error = panel_error(
        tmp_path / "panel.yaml",
        """\
        variants:
          - {provider: openai, model: gpt-a, temperature: 0}
          - {provider: openai, model: gpt-a, temperature: 1}
        """,
    )
    assert "openai:gpt-a" in str(error)
    assert "distinct 'name'" in str(error)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("- just a list\n", "must be a mapping"),
        ("variants: []\n", "variants"),
        ("variants: [{provider: openai}]\nvote_rule: plurality\n", "vote_rule"),
        ("variants: [{provider: openai}]\nextra_setting: 1\n", "extra_setting"),
        ("variants: [{provider: openai}]\nminimum_agreement: 1.5\n", "minimum_agreement"),
        ("variants: [{provider: openai\n", "malformed YAML"),
    ],
)
def test_malformed_panel_files(tmp_path, text, fragment) -> None:
    path = tmp_path / "panel.yaml"
    error = panel_error(path, text)
    assert fragment in str(error)
    assert str(path) in str(error)


def test_missing_panel_file(tmp_path: Path) -> None:
    with pytest.raises(InputFileNotFoundError):
        load_panel_config(tmp_path / "absent.yaml")


def test_building_a_variant_without_its_key_names_file_and_variant(tmp_path: Path) -> None:
    path = write_text(tmp_path / "panel.yaml", PANEL)
    runtime = JudgeRuntime(environ={"OPENAI_API_KEY": KEY})
    with pytest.raises(ConfigurationError) as raised:
        load_judge_panel_metric(path, runtime)
    message = str(raised.value)
    assert str(path) in message
    assert "variant 'claude'" in message
    assert "set ANTHROPIC_API_KEY" in message
    assert KEY not in message


# ----------------------------------------------------------------------------- runtime


def test_runtime_concurrency_fills_only_unset_limits(tmp_path: Path) -> None:
    runtime = JudgeRuntime(max_concurrency=1, environ=ENV)
    config = load_panel_config(write_text(tmp_path / "panel.yaml", PANEL))
    panel = judge_panel_metric(config, runtime, name="p")
    limits = {variant.name: variant.judge.adapter.transport for variant in panel.variants}
    assert panel.name == "p"
    # The file's own max_concurrency (2) is more specific than the command line's.
    assert limits["local"].max_concurrency == 2
    assert limits["gpt-cold"].max_concurrency == 1
    metric = llm_judge_metric(JudgeConfig(provider="anthropic"), runtime, name="claude_judge")
    assert isinstance(metric, LLMJudgeMetric)
    assert metric.name == "claude_judge"
    assert metric.judge.adapter.transport.max_concurrency == 1


# ----------------------------------------------------------------------------- price files


def test_price_file(tmp_path: Path) -> None:
    table = load_prices(
        write_text(
            tmp_path / "prices.yaml",
            """\
            gpt-a: {input: 1.0, output: 4.0}
            "anthropic:claude-b": {input: 3, output: 15, cached_input: 0.3}
            """,
        )
    )
    assert table.cost("openai", "gpt-a", Usage(input_tokens=10**6)) == pytest.approx(1.0)
    assert table.cost("anthropic", "claude-b", Usage(output_tokens=10**6)) == pytest.approx(15)


@pytest.mark.parametrize(
    "text", ["gpt-a: 3\n", "gpt-a: {input: -1, output: 1}\n", "gpt-a: {input: 1}\n"]
)
def test_bad_price_files_name_the_file(tmp_path, text) -> None:
    path = write_text(tmp_path / "prices.yaml", text)
    with pytest.raises(InputError) as raised:
        load_prices(path)
    assert str(path) in str(raised.value)


# ----------------------------------------------------------------------------- pipelines

PIPELINE = """\
    pipeline_id: p-1
    metrics:
      default:
        - {type: exact}
        - {type: judge, provider: openai, model: gpt-a, temperature: 0.1, name: gpt_judge}
      operations:
        total:
          - {type: panel, panel: panels/panel.yaml, name: total_panel}
    stages:
      - stage_id: extract
        prediction: {code: sk-not-a-secret-but-data}
        references: [{value: {code: x}, id: truth, authority: ground_truth}]
      - stage_id: sum
        operation: total
        prediction: {total: 3}
        input_from: extract
        depends_on: [extract]
"""


def test_pipeline_config_names_judges_and_panels(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    write_text(tmp_path / "panels" / "panel.yaml", PANEL)
    config = write_text(tmp_path / "pipeline.yaml", PIPELINE)
    pipeline, evaluator = load_pipeline_config(config, judges=JudgeRuntime(max_concurrency=2))
    exact, judge = evaluator.default_metrics
    assert isinstance(exact, ExactStructuredMetric)
    assert isinstance(judge, LLMJudgeMetric)
    assert judge.name == "gpt_judge"
    assert judge.config()["judge"]["temperature"] == 0.1
    assert judge.judge.adapter.transport.max_concurrency == 2
    (panel,) = evaluator.operation_metrics["total"]
    assert isinstance(panel, JudgePanelMetric)
    assert panel.name == "total_panel"
    assert len(panel.variants) == 4
    # Predictions may hold any text; only the metrics section is checked for keys.
    assert pipeline.stages[0].prediction == {"code": "sk-not-a-secret-but-data"}


def test_pipeline_judges_build_without_a_runtime(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    config = write_text(
        tmp_path / "pipeline.yaml",
        """\
        pipeline_id: p
        metrics: {default: [{type: judge, provider: openai}]}
        stages: [{stage_id: s, prediction: {a: 1}, input_data: {a: 1}}]
        """,
    )
    _, evaluator = load_pipeline_config(config)
    (metric,) = evaluator.default_metrics
    assert metric.name == "llm_judge"


@pytest.mark.parametrize(
    ("metric", "fragments"),
    [
        ("{type: judge, provider: gemini}", ["metrics.default[0]", "provider"]),
        ("{type: judge}", ["provider"]),
        ("{type: jduge}", ["'exact' or 'function'", "'judge' or 'panel'", "'jduge'"]),
        ("{type: panel}", ["needs 'panel'"]),
        ("{type: exact, panel: p.yaml}", ["only applies to type 'panel'"]),
        ("{type: exact, provider: openai}", ["provider"]),
        ("{type: exact, judge: {provider: openai}}", ["only applies to type 'judge'"]),
        ("{type: judge, provider: openai, callable: 'm:f'}", ["only applies to type 'function'"]),
    ],
)
def test_bad_judge_metrics_in_pipelines(tmp_path, metric, fragments) -> None:
    config = write_text(
        tmp_path / "pipeline.yaml",
        f"pipeline_id: p\nmetrics: {{default: [{metric}]}}\n"
        "stages: [{stage_id: s, prediction: {a: 1}, input_data: {a: 1}}]\n",
    )
    with pytest.raises(InputError) as raised:
        load_pipeline_config(config)
    message = str(raised.value)
    assert str(config) in message
    for fragment in fragments:
        assert fragment in message


def test_a_key_in_a_pipeline_metric_is_refused(tmp_path: Path) -> None:
    config = write_text(
        tmp_path / "pipeline.yaml",
        f"""\
        pipeline_id: p
        metrics:
          stages:
            s: [{{type: judge, provider: openai, api_key: {KEY}}}]
        stages: [{{stage_id: s, prediction: {{a: 1}}, input_data: {{a: 1}}}}]
        """,
    )
    with pytest.raises(InputError) as raised:
        load_pipeline_config(config)
    message = str(raised.value)
    assert KEY not in message
    assert str(config) in message
    assert "metrics.stages.s[0].api_key" in message


def test_a_missing_key_for_a_pipeline_judge_names_the_file(tmp_path: Path) -> None:
    config = write_text(
        tmp_path / "pipeline.yaml",
        """\
        pipeline_id: p
        metrics: {default: [{type: judge, provider: anthropic}]}
        stages: [{stage_id: s, prediction: {a: 1}, input_data: {a: 1}}]
        """,
    )
    with pytest.raises(ConfigurationError) as raised:
        load_pipeline_config(config)
    assert str(config) in str(raised.value)
    assert "set ANTHROPIC_API_KEY" in str(raised.value)


def test_panel_errors_name_the_panel_file(tmp_path: Path) -> None:
    panel = write_text(tmp_path / "panels" / "bad.yaml", "variants: [{provider: nope}]\n")
    config = write_text(
        tmp_path / "pipeline.yaml",
        """\
        pipeline_id: p
        metrics: {default: [{type: panel, panel: panels/bad.yaml}]}
        stages: [{stage_id: s, prediction: {a: 1}, input_data: {a: 1}}]
        """,
    )
    with pytest.raises(InputError) as raised:
        load_pipeline_config(config)
    assert raised.value.source == str(panel)
    assert "variant #1" in str(raised.value)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"base_url": "ftp://models.example/v1"}, "base_url must be an http:// or https:// URL"),
        ({"base_url": "localhost:8000/v1"}, "base_url must be an http:// or https:// URL"),
        ({"base_url": "file:///etc/passwd"}, "no host"),
        ({"reasoning_effort": "turbo"}, "reasoning_effort"),
        ({"temperature": True}, "not the boolean true"),
        ({"temperature": float("inf")}, "temperature"),
        ({"timeout": float("nan")}, "timeout"),
        ({"requests_per_minute": float("inf")}, "requests_per_minute"),
        ({"max_retries": True}, "not the boolean true"),
        ({"max_output_tokens": False}, "not the boolean false"),
        ({"top_p": True}, "not the boolean true"),
    ],
)
def test_judge_settings_that_cannot_work_are_refused(setting: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as raised:
        JudgeConfig.model_validate({"provider": "openai", **setting})
    assert message in str(raised.value)


def test_a_refused_base_url_is_not_echoed() -> None:
    # The user-info of a URL may hold credentials: the message names the problem only.
    with pytest.raises(InputError) as raised:
        JudgeConfig.model_validate({"provider": "openai", "base_url": "ftp://user:s3cretpw@h/v1"})
    assert "s3cretpw" not in str(raised.value)


def test_known_reasoning_efforts_are_accepted() -> None:
    for effort in ("none", "minimal", "low", "medium", "high", "xhigh"):
        assert JudgeConfig(provider="openai", reasoning_effort=effort).reasoning_effort == effort
