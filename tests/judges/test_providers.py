"""Judge providers as a registry and a plugin point.

A package installed in a temporary folder declares the ``echo`` provider (see
``tests/judges/echo_provider.py``: a made-up wire format, a loopback server) in the
``docevals.judge_providers`` entry-point group; it is then usable as ``--judge echo``,
in pipeline configuration files and in panel files, with no change to this package.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow import EvaluationReport, PipelineEvaluationReport, load_report
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.judges import providers
from docevals_mlflow.judges.adapters import (
    AnthropicMessagesAdapter,
    OpenAICompatibleChatAdapter,
    OpenAIResponsesAdapter,
)
from docevals_mlflow.judges.config import JudgeConfig, JudgeRuntime
from docevals_mlflow.judges.providers import (
    BUILTIN_PROVIDERS,
    AdapterSettings,
    JudgeProvider,
    ProviderRegistry,
    judge_provider,
    judge_providers,
    register_judge_provider,
)
from docevals_mlflow.judges.testing import ScriptedAdapter
from tests.helpers import assert_one_line_error, run, write_json, write_text
from tests.judges.echo_provider import KEY_VARIABLE, EchoAdapter, EchoServer

KEY = "echo-key-PLANTED-0123456789"
PREDICTION = {"invoice": "A-17", "total": 11.5}


def install_plugin(site: Path, entry_points: dict[str, str]) -> None:
    """An installed distribution in ``site`` declaring ``entry_points`` (name to
    ``module:attribute``) in the judge-provider group."""
    info = site / "echo_judge-1.0.dist-info"
    write_text(info / "METADATA", "Metadata-Version: 2.1\nName: echo-judge\nVersion: 1.0\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    write_text(info / "entry_points.txt", f"[docevals.judge_providers]\n{lines}")


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> ProviderRegistry:
    """A registry that has read no entry point yet, in place of the process's."""
    registry = ProviderRegistry()
    monkeypatch.setattr(providers, "_registry", registry)
    return registry


@pytest.fixture
def entry_point_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The groups whose entry points are read from now on."""
    reads: list[str] = []
    real = importlib.metadata.entry_points

    def counting(**selection: Any) -> Any:
        reads.append(selection.get("group", ""))
        return real(**selection)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    return reads


@pytest.fixture
def plugin(tmp_path, monkeypatch, fresh_registry) -> ProviderRegistry:
    """The ``echo`` plugin installed (its key set), and a registry yet to read it."""
    site = tmp_path / "site"
    install_plugin(site, {"echo": "tests.judges.echo_provider:PROVIDER"})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    return fresh_registry


@pytest.fixture
def echo_server():
    with EchoServer() as server:
        yield server


@pytest.fixture
def case_files(tmp_path: Path) -> tuple[Path, Path]:
    return (
        write_json(tmp_path / "prediction.json", PREDICTION),
        write_json(tmp_path / "truth.json", PREDICTION),
    )


def evaluate_case(capsys, case_files, output: Path, *options: Any) -> tuple[int, str, str]:
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


def judged(report: EvaluationReport, name: str = "llm_judge") -> Any:
    return next(result for result in report.metric_results if result.name == name)


# ----------------------------------------------------------------------------- plugins


def test_a_plugin_provider_judges_from_the_command_line(
    capsys, plugin, echo_server, case_files, tmp_path
) -> None:
    echo_server.wrong.add("$.total")
    output = tmp_path / "report.json"
    code, _, err = evaluate_case(
        capsys, case_files, output, "--judge", "echo", "--base-url", echo_server.base_url
    )
    assert code == 1, err  # the judge's fail verdict
    assert f"judging with echo:echo-1 at {echo_server.base_url}" in err
    report = load_report(output)
    assert isinstance(report, EvaluationReport)
    result = judged(report)
    # The server judged $.total wrong: the adapter's own format, read back as verdicts.
    verdicts = {
        claim["claim_id"]: claim["verdict"]
        for claim in result.details["output"]["prediction_claims"]
    }
    assert verdicts == {"p00001": "correct", "p00002": "incorrect"}
    assert result.verdict == "fail"
    assert result.details["judge"]["provider"] == "echo"
    assert result.usage["input_tokens"] == 7
    ((headers, body),) = echo_server.received
    assert headers["x-echo-key"] == KEY
    assert body["engine"] == "echo-1"
    assert body["ask"] == {"p00001": "$.invoice", "p00002": "$.total"}
    assert "heat" not in body
    assert KEY not in output.read_text(encoding="utf-8")


def test_a_plugin_provider_in_a_pipeline_file_and_a_panel_file(
    capsys, plugin, echo_server, tmp_path
) -> None:
    write_json(tmp_path / "truth.json", {"total": 3})
    write_text(
        tmp_path / "panel.yaml",
        f"""\
        name: echo_panel
        variants:
          - {{name: cold, provider: echo, base_url: "{echo_server.base_url}", temperature: 0}}
          - {{name: warm, provider: echo, base_url: "{echo_server.base_url}", temperature: 0.9}}
        """,
    )
    metrics = {
        "default": [
            {"type": "exact"},
            {
                "type": "judge",
                "provider": "echo",
                "model": "echo-2",
                "base_url": echo_server.base_url,
                "temperature": 0.5,
                "name": "echo_judge",
            },
            {"type": "panel", "panel": "panel.yaml"},
        ]
    }
    reference = {"path": "truth.json", "authority": "ground_truth"}
    config = write_json(
        tmp_path / "pipeline.json",
        {
            "pipeline_id": "p-1",
            "metrics": metrics,
            "stages": [{"stage_id": "a", "prediction": {"total": 3}, "references": [reference]}],
        },
    )
    output = tmp_path / "report.json"
    code, _, err = run(capsys, "evaluate-pipeline", config, "--output", output)
    assert code == 0, err
    report = load_report(output)
    assert isinstance(report, PipelineEvaluationReport)
    (stage,) = report.stage_reports
    assert judged(stage, "echo_judge").details["judge"]["model"] == "echo-2"
    panel = judged(stage, "echo_panel")
    assert [variant["name"] for variant in panel.details["panel"]["variants"]] == ["cold", "warm"]
    heats = sorted(body.get("heat") for _, body in echo_server.received)
    assert heats == [0, 0.5, 0.9]
    assert {headers["x-echo-key"] for headers, _ in echo_server.received} == {KEY}


def test_help_lists_plugin_providers_with_their_help(capsys, plugin) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "evaluate-case", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "--judge NAME" in text
    assert "echo: the echo verdict server (key: ECHO_JUDGE_KEY)" in text
    assert "openai-compatible: a chat-completions server" in text


def test_the_plugin_record_decides_the_command_line_checks(
    capsys, plugin, echo_server, case_files, tmp_path, monkeypatch
) -> None:
    code, _, err = evaluate_case(capsys, case_files, tmp_path / "r.json", "--judge", "echo")
    assert code == 2
    assert_one_line_error(err, "--judge echo needs --base-url", "the server's API root")
    base = ("--judge", "echo", "--base-url", echo_server.base_url)
    code, _, err = evaluate_case(
        capsys, case_files, tmp_path / "r.json", *base, "--reasoning-effort", "low"
    )
    assert code == 2
    assert_one_line_error(err, "reasoning_effort applies to openai judges only")
    monkeypatch.delenv(KEY_VARIABLE)
    code, _, err = evaluate_case(capsys, case_files, tmp_path / "r.json", *base)
    assert code == 2
    assert_one_line_error(err, "--judge echo needs an API key: set ECHO_JUDGE_KEY")
    assert not echo_server.received


def test_entry_points_are_read_once_and_only_when_needed(plugin, entry_point_reads) -> None:
    assert judge_provider("openai").name == "openai"
    JudgeConfig(provider="anthropic")
    assert entry_point_reads == []  # built-in names never read the plugins
    assert judge_provider("echo").factory == EchoAdapter.from_settings
    assert [provider.name for provider in judge_providers()] == [
        "openai",
        "anthropic",
        "openai-compatible",
        "echo",
    ]
    JudgeConfig(provider="echo", base_url="http://127.0.0.1:9/v1")
    assert entry_point_reads == ["docevals.judge_providers"]


def test_a_broken_plugin_says_why_and_spoils_nothing_else(
    capsys, tmp_path, monkeypatch, fresh_registry, case_files
) -> None:
    site = tmp_path / "site"
    install_plugin(
        site,
        {
            "broken": "no_such_module_anywhere:PROVIDER",
            "openai": "tests.judges.echo_provider:PROVIDER",  # may not take a built-in name
            "misnamed": "tests.judges.echo_provider:PROVIDER",
        },
    )
    monkeypatch.syspath_prepend(str(site))
    assert fresh_registry.names() == ("openai", "anthropic", "openai-compatible")
    assert judge_provider("openai").factory is BUILTIN_PROVIDERS[0].factory
    with pytest.raises(ConfigurationError, match="could not be loaded: ModuleNotFoundError"):
        judge_provider("broken")
    with pytest.raises(ConfigurationError, match="gives a provider named 'echo'"):
        judge_provider("misnamed")
    with pytest.raises(InputError, match=r"'broken'.*could not be loaded"):
        JudgeConfig(provider="broken")
    code, _, err = evaluate_case(capsys, case_files, tmp_path / "r.json", "--judge", "broken")
    assert code == 2
    assert_one_line_error(err, "judge provider 'broken'", "could not be loaded")


# ----------------------------------------------------------------------------- registry


def echo_provider(**changes: Any) -> JudgeProvider:
    fields: dict[str, Any] = {
        "name": "scripted-test",
        "factory": lambda settings: ScriptedAdapter([], provider="scripted-test"),
    }
    return JudgeProvider(**{**fields, **changes})


def test_registering_in_code(fresh_registry) -> None:
    seen: list[AdapterSettings] = []

    def factory(settings: AdapterSettings) -> ScriptedAdapter:
        seen.append(settings)
        return ScriptedAdapter([], provider=settings.provider, model=settings.model or "")

    register_judge_provider(
        echo_provider(
            factory=factory, default_model="s-1", key_variable="S_KEY", supported={"top_p"}
        )
    )
    config = JudgeConfig(provider="scripted-test", top_p=0.5, timeout=30, max_concurrency=2)
    judge = JudgeRuntime(environ={"S_KEY": "s-key-0123456789"}).judge(config)
    assert judge.describe()["model"] == "s-1"
    (settings,) = seen
    assert (settings.api_key, settings.top_p, settings.temperature) == (
        "s-key-0123456789",
        0.5,
        None,
    )
    assert (settings.http.timeout, settings.http.max_concurrency, settings.http.max_retries) == (
        30,
        2,
        5,
    )
    with pytest.raises(ConfigurationError, match="already registered"):
        register_judge_provider(echo_provider())
    register_judge_provider(echo_provider(default_model="s-2"), replace=True)
    assert judge_provider("scripted-test").default_model == "s-2"


def test_a_configuration_is_checked_against_its_provider(fresh_registry) -> None:
    register_judge_provider(echo_provider(required=("model", "api_key_env")))
    with pytest.raises(InputError, match="the scripted-test judge needs model and api_key_env"):
        JudgeConfig(provider="scripted-test")
    with pytest.raises(InputError, match="temperature applies to openai, anthropic and openai"):
        JudgeConfig(provider="scripted-test", model="m", api_key_env="K", temperature=0)
    with pytest.raises(InputError, match=r"should be 'openai', 'anthropic', .* or 'scripted-test'"):
        JudgeConfig(provider="gemini")


def test_a_factory_must_build_an_adapter(fresh_registry) -> None:
    register_judge_provider(echo_provider(factory=lambda settings: "not an adapter"))
    with pytest.raises(ConfigurationError, match="built a str, which is no adapter"):
        JudgeConfig(provider="scripted-test").build()


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"name": "auto"}, "reserved"),
        ({"name": "none"}, "reserved"),
        ({"name": "My Provider"}, "not a valid name"),
        ({"required": ("temperature",)}, "required names unknown settings temperature"),
        ({"supported": {"seed"}}, "supported names unknown settings seed"),
        ({"factory": "module:attribute"}, "factory is not callable"),
    ],
)
def test_invalid_provider_records(changes, fragment) -> None:
    with pytest.raises(ConfigurationError, match=fragment):
        echo_provider(**changes)


@pytest.mark.parametrize(
    ("record", "adapter"),
    [
        (BUILTIN_PROVIDERS[0], OpenAIResponsesAdapter),
        (BUILTIN_PROVIDERS[1], AnthropicMessagesAdapter),
        (BUILTIN_PROVIDERS[2], OpenAICompatibleChatAdapter),
    ],
)
def test_built_in_records_agree_with_their_adapters(record, adapter) -> None:
    # Adapters built directly (without a configuration) use their own defaults.
    assert (record.default_model, record.key_variable) == (
        adapter.default_model,
        adapter.api_key_env,
    )
    assert record.name == adapter.provider


def test_the_docs_list_every_built_in_provider() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "judges.md").read_text("utf-8")
    for record in BUILTIN_PROVIDERS:
        model = f"`{record.default_model}`" if record.default_model else "none: required"
        row = f"| `{record.name}` | {model} |"
        assert row in text, row
        if record.key_variable:
            assert f"`{record.key_variable}`" in text.split(row, 1)[1].splitlines()[0]
    assert "`--judge NAME`" in text
