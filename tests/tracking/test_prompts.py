"""Operation prompts in MLflow's prompt registry, linked to evaluation runs."""

from __future__ import annotations

import json

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import compare_documents, log_field_comparison
from docevals_mlflow.tracking.prompts import (
    LINKED_PROMPTS_TAG,
    WARNING_TAG,
    action_instructions,
    prompt_name,
    register_operation_prompts,
    registry_enabled,
)
from tests.tracking.evaluations import log_panel_run, panel_report

ALL_CORRECT = {"a": dict.fromkeys(("s1", "s2", "s3", "s4"), "correct")}


def prompt_versions(client: MlflowClient, name: str) -> list[tuple[int, str]]:
    return sorted(
        (int(version.version), version.template) for version in client.search_prompt_versions(name)
    )


def test_an_evaluation_run_registers_and_links_its_prompt(mlflow_store, tmp_path):
    client = MlflowClient(mlflow_store)
    first = log_panel_run(tmp_path, panel_report(ALL_CORRECT), name="v1")
    run = client.get_run(first.run_id)
    assert run.data.params["op.extract.prompt_uri"] == "prompts:/docevals-extract/1"
    assert json.loads(run.data.tags[LINKED_PROMPTS_TAG]) == [
        {"name": "docevals-extract", "version": "1"}
    ]
    assert WARNING_TAG not in run.data.tags
    assert run.info.status == "FINISHED"
    assert prompt_versions(client, "docevals-extract") == [(1, "Extract the total.")]

    # The same text again: no new version, the run points at the existing one.
    again = log_panel_run(tmp_path, panel_report(ALL_CORRECT), name="v1-again")
    params = client.get_run(again.run_id).data.params
    assert params["op.extract.prompt_uri"] == "prompts:/docevals-extract/1"
    assert len(prompt_versions(client, "docevals-extract")) == 1

    # A changed prompt is a new version; the UI can now diff 1 and 2.
    changed = log_panel_run(
        tmp_path, panel_report(ALL_CORRECT, action="Extract the total due."), name="v2"
    )
    params = client.get_run(changed.run_id).data.params
    assert params["op.extract.prompt_uri"] == "prompts:/docevals-extract/2"
    assert prompt_versions(client, "docevals-extract") == [
        (1, "Extract the total."),
        (2, "Extract the total due."),
    ]


def test_the_name_is_configurable_and_registration_can_be_off(mlflow_store, tmp_path, monkeypatch):
    client = MlflowClient(mlflow_store)
    monkeypatch.setenv("DOCEVALS_PROMPT_NAME", "team-{operation}-prompt")
    named = log_panel_run(tmp_path, panel_report(ALL_CORRECT), name="named")
    assert (
        client.get_run(named.run_id).data.params["op.extract.prompt_uri"]
        == "prompts:/team-extract-prompt/1"
    )
    monkeypatch.setenv("DOCEVALS_PROMPT_REGISTRY", "0")
    off = log_panel_run(tmp_path, panel_report(ALL_CORRECT, action="Other."), name="off")
    run = client.get_run(off.run_id)
    assert "op.extract.prompt_uri" not in run.data.params
    assert LINKED_PROMPTS_TAG not in run.data.tags
    assert len(prompt_versions(client, "team-extract-prompt")) == 1


def test_a_registry_failure_never_fails_the_run(mlflow_store, tmp_path):
    client = MlflowClient(mlflow_store)
    # A registered model (not a prompt) already holds the name.
    client.create_registered_model("docevals-extract")
    logged = log_panel_run(tmp_path, panel_report(ALL_CORRECT), name="v1")
    run = client.get_run(logged.run_id)
    assert run.info.status == "FINISHED"
    assert run.data.tags[WARNING_TAG].startswith("prompt registration skipped: ")
    assert "op.extract.prompt_uri" not in run.data.params
    assert run.data.metrics["stage/s1/pass_rate"] == 1.0  # the evaluation is all there


def test_field_runs_register_nothing(mlflow_store):
    batch = compare_documents([{"id": "a", "expected": {"x": "1"}, "predicted": {"x": "1"}}])
    logged = log_field_comparison(batch, run_name="fields")
    run = MlflowClient(mlflow_store).get_run(logged.run_id)
    assert not any(key.endswith(".prompt_uri") for key in run.data.params)
    assert LINKED_PROMPTS_TAG not in run.data.tags


def test_an_operation_with_several_prompts_links_each(mlflow_store):
    client = MlflowClient(mlflow_store)
    run = client.create_run(client.create_experiment("mixed"))
    operations = {
        "operations": {
            "extract": {
                "variants": {
                    "p": {"action_instruction": "Prompt P."},
                    "q": {"action_instruction": "Prompt Q."},
                    "p2": {"action_instruction": "Prompt P."},
                }
            },
            "judge-only": {"variants": {"x": {"action_instruction": None}}},
        }
    }
    registered = register_operation_prompts(client, run.info.run_id, operations)
    assert [(prompt.name, prompt.version, prompt.created) for prompt in registered] == [
        ("docevals-extract", 1, True),
        ("docevals-extract", 2, True),
    ]
    data = client.get_run(run.info.run_id).data
    assert data.params["op.extract.prompt_uri"] == "mixed (2 variants)"
    assert [entry["version"] for entry in json.loads(data.tags[LINKED_PROMPTS_TAG])] == ["1", "2"]


def test_names_and_switch():
    assert prompt_name("extract") == "docevals-extract"
    assert prompt_name("classify pages/2") == "docevals-classify-pages-2"
    assert prompt_name("x", "{operation}") == "x"
    assert registry_enabled({})
    assert not registry_enabled({"DOCEVALS_PROMPT_REGISTRY": "off"})
    assert registry_enabled({"DOCEVALS_PROMPT_REGISTRY": "1"})
    operations = {"operations": {"a": {"variants": {"1": {"action_instruction": "  "}}}}}
    assert action_instructions(operations) == {}


@pytest.mark.parametrize("secret", ["http://user:hunter2@mlflow.internal:5000"])
def test_warnings_hide_credentials_in_urls(secret):
    from docevals_mlflow.tracking.prompts import _warning_text

    text = _warning_text(ConnectionError(f"cannot reach {secret}"))
    assert "hunter2" not in text
    assert "://***@mlflow.internal" in text
