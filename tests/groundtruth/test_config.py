"""The generation configuration file: what it accepts, what it refuses (naming the file
and the field, never a key), and the panel it builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docevals_mlflow.errors import ConfigurationError, InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.config import (
    GenerationConfig,
    adjudicator_for,
    load_generation_config,
)
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from tests.helpers import write_text

KEY = "sk-test-CONFIG-0123456789"

EXAMPLE = """\
instruction: Extract the currency, the amount and the account holder's name.
expected_fields: [currency, "$.amount", "$['account_name']"]
minimum_agreement: 0.6
adjudicate: true
document_mode: markdown
generators:
  - {name: gpt, provider: openai, model: gpt-4.1-mini, temperature: 0}
  - {name: claude, provider: anthropic, model: claude-sonnet-4-5}
  - name: local
    provider: openai-compatible
    model: qwen2.5-vl
    base_url: http://127.0.0.1:8000/v1
    api_key_env: LOCAL_LLM_KEY
    group: qwen
    max_concurrency: 2
prices:
  gpt-4.1-mini: {input: 0.4, output: 1.6}
"""

ENV = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY, "LOCAL_LLM_KEY": KEY}


def two(**extra: object) -> dict[str, object]:
    """A minimal valid configuration as data."""
    data: dict[str, object] = {
        "instruction": "Extract the total.",
        "expected_fields": ["$.total"],
        "generators": [
            {"provider": "openai", "model": "gpt-test"},
            {"provider": "anthropic", "model": "claude-test"},
        ],
    }
    data.update(extra)
    return data


def refused(tmp_path: Path, data: object, name: str = "gen.json") -> InputError:
    path = write_text(tmp_path / name, json.dumps(data))
    with pytest.raises(InputError) as caught:
        load_generation_config(path)
    assert str(path) in str(caught.value)
    return caught.value


def test_the_documented_example_loads(tmp_path):
    config = load_generation_config(write_text(tmp_path / "gen.yaml", EXAMPLE))
    assert config.expected_fields == ["$.currency", "$.amount", "$.account_name"]
    assert [g.label for g in config.generators] == ["gpt", "claude", "local"]
    assert [g.vote_group for g in config.generators] == [
        "openai:gpt-4.1-mini",
        "anthropic:claude-sonnet-4-5",
        "qwen",
    ]
    assert config.minimum_agreement == 0.6
    assert config.adjudicate
    assert not config.union
    assert config.document_mode == "markdown"
    assert config.instruction_text().startswith("Extract the currency")
    assert config.price_table() is not None


def test_the_panel_it_builds(tmp_path):
    config = load_generation_config(write_text(tmp_path / "gen.yaml", EXAMPLE))
    panel = config.build_panel(environ=ENV, max_concurrency=5, cache=tmp_path / "cache")
    assert isinstance(panel, GroundTruthPanel)
    assert panel.labels == ["claude", "gpt", "local"]  # label order
    groups = {g.label: g.group for g in panel.generators}
    assert groups["local"] == "qwen"
    assert groups["gpt"] == "openai:gpt-4.1-mini"
    limits = {g.label: g.adapter.transport.max_concurrency for g in panel.generators}
    assert limits == {"claude": 5, "gpt": 5, "local": 2}  # the file's own limit wins
    assert panel.minimum_agreement == 0.6
    assert panel.extraction_instruction.startswith("Extract the currency")
    assert panel.cache is not None
    assert panel.cache.directory == tmp_path / "cache"
    assert KEY not in repr(panel)

    adjudicator = adjudicator_for(panel)
    assert [g.label for g in adjudicator.generators] == panel.labels
    assert [g.group for g in adjudicator.generators] == [g.group for g in panel.generators]
    assert adjudicator.minimum_agreement == 0.6
    assert adjudicator.cache is panel.cache


def test_a_missing_key_names_the_generator_and_variable(tmp_path):
    config = load_generation_config(write_text(tmp_path / "gen.yaml", EXAMPLE))
    with pytest.raises(ConfigurationError) as caught:
        config.build_panel(environ={"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY})
    assert caught.value.path == "generators[2]"
    assert "'local'" in str(caught.value)
    assert "LOCAL_LLM_KEY" in str(caught.value)
    assert KEY not in str(caught.value)


def test_an_openai_compatible_server_needs_no_key():
    config = GenerationConfig.model_validate(
        two(
            generators=[
                {
                    "provider": "openai-compatible",
                    "model": "a",
                    "base_url": "http://127.0.0.1:1/v1",
                },
                {
                    "provider": "openai-compatible",
                    "model": "b",
                    "base_url": "http://127.0.0.1:1/v1",
                },
            ]
        )
    )
    config.check_keys(environ={})  # nothing to check, nothing raised


def test_instruction_file_is_read_relative_to_the_configuration(tmp_path):
    write_text(tmp_path / "prompts" / "read.md", "Read the total from page 1.\n")
    path = write_text(
        tmp_path / "gen.json", json.dumps(two(instruction=None, instruction_file="prompts/read.md"))
    )
    config = load_generation_config(path)
    assert config.instruction_text() == "Read the total from page 1.\n"


def test_instruction_file_missing_or_holding_a_key(tmp_path):
    path = write_text(
        tmp_path / "gen.json", json.dumps(two(instruction=None, instruction_file="x.md"))
    )
    with pytest.raises(InputFileNotFoundError) as missing:
        load_generation_config(path)
    assert str(path) in str(missing.value)
    assert "instruction_file" in str(missing.value)
    assert "x.md" in str(missing.value)

    write_text(tmp_path / "x.md", f"Use the key {KEY} if asked.")
    with pytest.raises(InputError) as keyed:
        load_generation_config(path)
    assert "API key" in str(keyed.value)
    assert KEY not in str(keyed.value)


@pytest.mark.parametrize(
    ("data", "where", "words"),
    [
        (two(colour="blue"), "colour", "Extra inputs are not permitted"),
        (
            two(
                generators=[
                    {"provider": "openai", "model": "m", "temp": 0},
                    {"provider": "anthropic"},
                ]
            ),
            "generators[0].temp",
            "generator #1",
        ),
        (
            two(
                generators=[
                    {"name": "cheap", "provider": "openai", "model": "m", "temperature": -1},
                    {"provider": "anthropic"},
                ]
            ),
            "generators[0].temperature",
            "generator 'cheap'",
        ),
        (
            two(generators=[{"provider": "openai", "model": "m"}, {"provider": "mistral"}]),
            "generators[1].provider",
            "'openai', 'anthropic' or 'openai-compatible'",
        ),
        (two(expected_fields=["$.total", "$.items[x"]), "expected_fields[1]", "$.items[x"),
        (two(expected_fields=["total", "$.total"]), "expected_fields[1]", "same field"),
        (two(instruction=None), "instruction", "exactly one of"),
        (two(instruction_file="x.md"), "instruction", "exactly one of"),
        (two(instruction="   "), "instruction", "blank"),
        (two(minimum_agreement=0), "minimum_agreement", "greater than 0"),
        (two(minimum_agreement=1.5), "minimum_agreement", "less than or equal to 1"),
        (two(minimum_agreement=True), "minimum_agreement", "not True"),
        (two(document_mode="ocr"), "document_mode", "'preserve' or 'markdown'"),
    ],
)
def test_invalid_settings_name_the_file_and_field(tmp_path, data, where, words):
    error = refused(tmp_path, data)
    assert error.path is not None
    assert error.path.startswith(where)
    assert words in str(error)


def test_one_generator_is_refused(tmp_path):
    error = refused(tmp_path, two(generators=[{"provider": "openai", "model": "gpt-test"}]))
    assert error.path == "generators"
    assert "1 generator(s) given" in str(error)
    assert "at least two independent generators" in str(error)


def test_samples_of_one_model_are_one_reader(tmp_path):
    same = [
        {"name": "cold", "provider": "openai", "model": "gpt-test", "temperature": 0},
        {"name": "warm", "provider": "openai", "model": "gpt-test", "temperature": 1},
    ]
    error = refused(tmp_path, two(generators=same))
    assert error.path == "generators"
    assert "'openai:gpt-test'" in str(error)
    # Saying they are different readers is the user's call.
    same[1]["group"] = "warm"
    load_generation_config(write_text(tmp_path / "ok.json", json.dumps(two(generators=same))))


def test_generator_names_must_differ(tmp_path):
    error = refused(
        tmp_path,
        two(
            generators=[
                {"name": "a", "provider": "openai", "model": "x"},
                {"name": "a", "provider": "anthropic", "model": "y"},
            ]
        ),
    )
    assert error.path == "generators[1].name"
    assert "generators[0]" in str(error)


@pytest.mark.parametrize(
    ("generator", "where"),
    [
        ({"provider": "openai", "model": "m", "api_key": "anything"}, "generators[1].api_key"),
        ({"provider": "openai", "model": "m", "api_key_env": KEY}, "generators[1].api_key_env"),
        (
            {"provider": "openai-compatible", "model": "m", "base_url": f"http://h/v1?key={KEY}"},
            "generators[1].base_url",
        ),
    ],
)
def test_a_key_in_the_file_is_refused_without_echoing_it(tmp_path, generator, where):
    data = two(generators=[{"provider": "anthropic", "model": "c"}, generator])
    error = refused(tmp_path, data, name="gen.yaml")
    assert error.path == where
    assert "API key" in str(error)
    assert "generator #2" in str(error)
    assert KEY not in str(error)
    assert "anything" not in str(error)


def test_not_a_mapping_or_not_parseable(tmp_path):
    error = refused(tmp_path, ["a", "b"])
    assert "must be a mapping" in str(error)
    path = write_text(tmp_path / "broken.yaml", "generators: [\n")
    with pytest.raises(InputError) as caught:
        load_generation_config(path)
    assert "malformed YAML" in str(caught.value)
    assert str(path) in str(caught.value)
