"""The README's flow in one store, in the order a new user takes it: the quickstart
(as a command, then as a recipe), the evaluate-fields recipe, the compare recipe.
Experiments agree, runs have names a person can tell apart, the prompt versions and
the evaluation datasets (the quickstart's, the recipe's) are there, and compare finds
prompt-v1 and prompt-v2 by name."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main
from tests.conftest import ModuleWriter
from tests.test_cli import write_pipeline
from tests.test_recipes import RECIPES, all_runs, mlflow_run, project_runs

SCHEMA_ID = "quickstart-invoices"


def named(client: MlflowClient, experiment: str) -> dict[str, list[object]]:
    found = client.get_experiment_by_name(experiment)
    assert found is not None, experiment
    runs: dict[str, list[object]] = {}
    for run in client.search_runs([found.experiment_id], order_by=["attributes.start_time"]):
        runs.setdefault(run.info.run_name, []).append(run)
    return runs


def test_quickstart_then_recipes_then_compare_in_one_store(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = MlflowClient(mlflow_store)

    # 1. The README quickstart: `docevals quickstart`.
    assert main(["quickstart", "--documents", "12", "--seed", "3"]) == 0
    capsys.readouterr()

    # 2. The same as a recipe (project run in MLflow's Default experiment): its prompt
    # runs join the quickstart's experiment instead of a second copy in Default.
    done = mlflow_run(tmp_path, "quickstart", "documents=12", "seed=3")
    assert done.returncode == 0, done.stderr[-3000:]
    (project,) = project_runs(client, "quickstart")
    assert project.info.run_name == "quickstart"
    assert project.info.status == "FINISHED"
    quickstart = named(client, "docevals-quickstart")
    assert sorted(quickstart) == ["prompt-v1", "prompt-v2"]
    assert [len(runs) for runs in quickstart.values()] == [2, 2]
    latest = {name: runs[-1] for name, runs in quickstart.items()}
    assert project.data.tags["docevals.runs"].split(",") == [
        latest["prompt-v1"].info.run_id,  # type: ignore[attr-defined]
        latest["prompt-v2"].info.run_id,  # type: ignore[attr-defined]
    ]
    for number, name in enumerate(["prompt-v1", "prompt-v2"], start=1):
        for run in quickstart[name]:  # both invocations link the same two versions
            assert run.data.params["prompt.uri"] == (  # type: ignore[attr-defined]
                f"prompts:/docevals-quickstart-extract/{number}"
            )
    assert len(client.search_prompt_versions("docevals-quickstart-extract")) == 2
    experiment = client.get_experiment_by_name("docevals-quickstart")
    (dataset,) = client.search_datasets(experiment_ids=[experiment.experiment_id])
    assert dataset.name == "docevals-quickstart-invoices"
    assert json.loads(dataset.profile)["num_records"] == 12

    # 3. evaluate-fields: the project run is the evaluation run, named after its schema.
    done = mlflow_run(
        tmp_path,
        "evaluate-fields",
        "predicted=docevals-quickstart/predictions_v2.jsonl",
        "expected=docevals-quickstart/ground_truth.jsonl",
        "schema=docevals-quickstart/schema.yaml",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (fields,) = project_runs(client, "evaluate-fields")
    assert fields.info.run_name == f"fields {SCHEMA_ID}"
    assert fields.data.tags["docevals.kind"] == "evaluation"
    assert fields.data.params["schema.id"] == SCHEMA_ID
    report = json.loads((tmp_path / "docevals-output" / "fields.json").read_text("utf-8"))
    reported = json.loads(
        (tmp_path / "docevals-quickstart" / "reports" / "prompt-v2.json").read_text("utf-8")
    )
    assert report["overall"]["metrics"] == reported["overall"]["metrics"]
    # Its ground truth is an MLflow evaluation dataset (Default's Datasets page) and the
    # run's dataset input, with the digest the quickstart's runs record for that file.
    (used,) = fields.inputs.dataset_inputs  # type: ignore[attr-defined]
    assert used.dataset.name == "ground_truth"
    (quickstart_input,) = latest["prompt-v1"].inputs.dataset_inputs  # type: ignore[attr-defined]
    assert used.dataset.digest == quickstart_input.dataset.digest
    (published,) = client.search_datasets(experiment_ids=["0"])
    assert published.name == "ground_truth"
    assert json.loads(published.profile)["num_records"] == 12

    # 4. compare by bare names: one experiment holds them, the newest of each wins.
    done = mlflow_run(
        tmp_path, "compare", "baseline=prompt-v1", "candidate=prompt-v2", "resamples=200"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "several experiments" not in done.stderr
    (comparison,) = project_runs(client, "compare")
    assert comparison.info.run_name == "compare prompt-v2 vs prompt-v1"
    assert comparison.data.tags["docevals.kind"] == "comparison"
    assert comparison.data.tags["docevals.compare.baseline"] == (
        latest["prompt-v1"].info.run_id  # type: ignore[attr-defined]
    )
    written = (tmp_path / "docevals-output" / "compare" / "comparison.md").read_text("utf-8")
    assert "prompt-v2" in written
    assert "prompt-v1" in written

    # Where everything is: 4 quickstart runs, 3 project runs (Default), no strays.
    assert len(all_runs(mlflow_store)) == 7
    assert not (RECIPES / "docevals-quickstart").exists()


def test_docevals_warnings_print_as_one_line_without_a_source_path(
    tmp_path: Path, checks_module: ModuleWriter
) -> None:
    config = write_pipeline(tmp_path / "config", checks_module)
    checkpoints = tmp_path / "checkpoints"
    checkpoints.mkdir()
    (checkpoints / "01-extract.json").write_text("not json", encoding="utf-8")
    # A subprocess: pytest records warnings in process instead of printing them.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "docevals_mlflow",
            "evaluate-pipeline",
            str(config),
            "--output",
            str(tmp_path / "pipeline.json"),
            "--checkpoint-dir",
            str(checkpoints),
            "--no-mlflow",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # the pipeline fails its gate, as built
    assert done.stderr.splitlines() == [
        f"docevals: warning: checkpoint {checkpoints / '01-extract.json'} for stage "
        "'extract' is corrupt: JSONDecodeError: Expecting value: line 1 column 1 (char 0); "
        "recomputing the stage"
    ]
