"""``recipes/MLproject``: every entry point is a valid docevals command, the recipes
run through the real ``mlflow run``, and the run ``mlflow run`` creates is the
docevals run (or the parent of the runs that cannot share it)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import build_parser
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.project_runs import several_runs
from docevals_mlflow.tracking.runs import log_bundle

REPO = Path(__file__).resolve().parents[1]
RECIPES = REPO / "recipes"
ENTRY_POINTS = {
    "quickstart",
    "evaluate-fields",
    "evaluate-pipeline",
    "evaluate-case",
    "split",
    "generate-references",
    "approve",
    "register-dataset",
    "compare",
}
PREFIX = "cd {workdir} && python -m docevals_mlflow "
GATE = "$([ {fail_on_regression} = true ] && echo --fail-on-regression)"
PER_CONFIG = """{checkpoint_dir}/"$(basename {config} | sed 's/[.][^.]*$//')\""""
"""evaluate-pipeline's checkpoints: one folder per configuration file."""


def load_entry_points() -> dict[str, dict[str, object]]:
    project = yaml.safe_load((RECIPES / "MLproject").read_text(encoding="utf-8"))
    assert project["name"] == "docevals"
    entry_points: dict[str, dict[str, object]] = project["entry_points"]
    return entry_points


# --- the MLproject file ----------------------------------------------------------


def test_the_recipes_the_docs_promise_exist() -> None:
    assert set(load_entry_points()) == ENTRY_POINTS


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_each_command_parses_as_a_docevals_command(name: str) -> None:
    entry = load_entry_points()[name]
    parameters: dict[str, dict[str, object]] = entry["parameters"]  # type: ignore[assignment]
    command: str = entry["command"]  # type: ignore[assignment]
    placeholders = set(re.findall(r"\{(\w+)\}", command))
    # MLflow formats the command with the parameters: an unknown placeholder fails
    # every run, an unused parameter is silently ignored.
    assert placeholders == set(parameters), name
    for parameter in parameters.values():
        assert parameter["type"] in {"string", "float", "path", "uri"}
    assert parameters["workdir"] == {"type": "path", "default": "."}
    assert command.startswith(PREFIX), command

    variants = [command]
    if GATE in command:
        variants = [command.replace(GATE, ""), command.replace(GATE, "--fail-on-regression")]
    # The shell works out the per-configuration folder; any folder parses alike.
    variants = [variant.replace(PER_CONFIG, "{checkpoint_dir}") for variant in variants]
    for variant in variants:
        filled = variant.removeprefix(PREFIX)
        for key, parameter in parameters.items():
            # Defaults must be valid as they are; required values are placeholders.
            value = str(parameter.get("default", f"value-of-{key}"))
            filled = filled.replace("{" + key + "}", shlex.quote(value))
        # A usage error would exit 2 (SystemExit) instead of returning arguments.
        arguments = build_parser().parse_args(shlex.split(filled))
        assert arguments.command == filled.split()[0]


def test_compare_gates_only_when_asked() -> None:
    command: str = load_entry_points()["compare"]["command"]  # type: ignore[assignment]
    gate = GATE.removeprefix("$(").removesuffix(")")
    for value, expected in (("true", "--fail-on-regression\n"), ("false", "")):
        shell = gate.replace("{fail_on_regression}", shlex.quote(value))
        printed = subprocess.run(
            ["bash", "-c", shell], capture_output=True, text=True, check=False
        ).stdout
        assert printed == expected, (value, command)


def test_each_pipeline_configuration_has_its_own_checkpoints() -> None:
    command: str = load_entry_points()["evaluate-pipeline"]["command"]  # type: ignore[assignment]
    assert PER_CONFIG in command
    # As MLflow fills it in: every value quoted.
    for config, folder in (
        ("configs/invoice.yaml", "invoice"),
        ("a b/receipts.v2.yml", "receipts.v2"),
    ):
        shell = "printf %s " + PER_CONFIG.format(
            checkpoint_dir=shlex.quote("docevals-output/checkpoints"), config=shlex.quote(config)
        )
        printed = subprocess.run(
            ["bash", "-c", shell], capture_output=True, text=True, check=True
        ).stdout
        assert printed == f"docevals-output/checkpoints/{folder}"


# --- logging under `mlflow run` (in process: MLFLOW_RUN_ID set by hand) -----------


def bundle(tmp_path: Path, name: str, **params: str) -> Path:
    writer = BundleWriter(run_name=name)
    writer.param("docevals.version", "test")
    for key, value in params.items():
        writer.param(key, value)
    writer.metric("overall/f1", 0.75)
    writer.tag("docevals.kind", "evaluation")
    writer.text("report/report.md", "# report\n")
    return writer.write(tmp_path / name)


def project_run(uri: str, monkeypatch: pytest.MonkeyPatch, **params: str) -> str:
    """A run as `mlflow run` leaves it for its command: RUNNING, params logged, id in
    MLFLOW_RUN_ID."""
    client = MlflowClient(uri)
    run = client.create_run("0", tags={"mlflow.project.entryPoint": "evaluate-fields"})
    for key, value in params.items():
        client.log_param(run.info.run_id, key, value)
    monkeypatch.setenv("MLFLOW_RUN_ID", run.info.run_id)
    return str(run.info.run_id)


def all_runs(uri: str) -> list[object]:
    client = MlflowClient(uri)
    ids = [experiment.experiment_id for experiment in client.search_experiments()]
    return list(client.search_runs(ids))


def test_the_project_run_is_the_docevals_run(mlflow_store, tmp_path, monkeypatch):
    project = project_run(mlflow_store, monkeypatch, predicted="p.jsonl")
    logged = log_bundle(bundle(tmp_path, "fields", **{"schema.id": "invoices"}))
    assert logged.run_id == project
    assert logged.experiment_name == "Default"  # the project's, not "docevals"
    run = MlflowClient(mlflow_store).get_run(project)
    assert run.data.metrics == {"overall/f1": 0.75}
    assert run.data.params == {
        "predicted": "p.jsonl",
        "docevals.version": "test",
        "schema.id": "invoices",
    }
    assert run.data.tags["docevals.kind"] == "evaluation"
    assert run.data.tags["mlflow.project.entryPoint"] == "evaluate-fields"
    # `mlflow run` ends its run by the command's exit code; docevals leaves it open.
    assert run.info.status == "RUNNING"
    assert len(all_runs(mlflow_store)) == 1


def test_a_second_run_becomes_a_linked_child(mlflow_store, tmp_path, monkeypatch):
    project = project_run(mlflow_store, monkeypatch)
    log_bundle(bundle(tmp_path, "first"))
    second = log_bundle(bundle(tmp_path, "second"), experiment="ignored")
    assert second.run_id != project
    client = MlflowClient(mlflow_store)
    child = client.get_run(second.run_id)
    assert child.info.run_name == "second"
    assert child.info.experiment_id == "0"  # nested runs show under their parent
    assert child.info.status == "FINISHED"
    assert child.data.tags["mlflow.parentRunId"] == project
    assert child.data.tags["docevals.project_run_id"] == project
    assert client.get_run(project).data.tags["docevals.runs"] == second.run_id


def test_several_runs_are_all_children(mlflow_store, tmp_path, monkeypatch):
    project = project_run(mlflow_store, monkeypatch, documents="20")
    with several_runs():
        first = log_bundle(bundle(tmp_path, "prompt-v1", **{"prompt.version": "1"}))
        second = log_bundle(bundle(tmp_path, "prompt-v2", **{"prompt.version": "2"}))
    client = MlflowClient(mlflow_store)
    assert client.get_run(project).data.tags["docevals.runs"] == (f"{first.run_id},{second.run_id}")
    assert "docevals.kind" not in client.get_run(project).data.tags
    for logged in (first, second):
        assert client.get_run(logged.run_id).data.tags["mlflow.parentRunId"] == project
    # Outside the block, the project run is free to be the docevals run again.
    assert log_bundle(bundle(tmp_path, "later")).run_id == project


def test_a_param_the_project_run_holds_otherwise_makes_a_child(mlflow_store, tmp_path, monkeypatch):
    project = project_run(mlflow_store, monkeypatch, **{"schema.id": "from-the-recipe"})
    logged = log_bundle(bundle(tmp_path, "fields", **{"schema.id": "invoices"}))
    assert logged.run_id != project
    client = MlflowClient(mlflow_store)
    assert client.get_run(project).data.params == {"schema.id": "from-the-recipe"}
    assert client.get_run(logged.run_id).data.params["schema.id"] == "invoices"


def test_an_explicit_run_is_linked_not_taken_over(mlflow_store, tmp_path, monkeypatch):
    project = project_run(mlflow_store, monkeypatch)
    client = MlflowClient(mlflow_store)
    approval = client.create_run(client.create_experiment("docevals-ground-truth"))
    logged = log_bundle(bundle(tmp_path, "approval"), run_id=approval.info.run_id)
    assert logged.run_id == approval.info.run_id
    tags = client.get_run(logged.run_id).data.tags
    assert tags["docevals.project_run_id"] == project
    assert "mlflow.parentRunId" not in tags  # another experiment: linked, not nested
    assert client.get_run(project).data.tags["docevals.runs"] == logged.run_id


def test_a_run_id_of_another_store_is_ignored(mlflow_store, tmp_path, monkeypatch):
    # A copy of the empty, migrated store: a second store without migrating again.
    shutil.copy(mlflow_store.removeprefix("sqlite:///"), tmp_path / "other.db")
    project_run(mlflow_store, monkeypatch)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    logged = log_bundle(bundle(tmp_path, "elsewhere"), tracking_uri=other)
    run = MlflowClient(other).get_run(logged.run_id)
    assert run.info.run_name == "elsewhere"
    assert "mlflow.parentRunId" not in run.data.tags


def test_a_stale_run_id_is_a_clear_error(mlflow_store, tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_RUN_ID", "0123456789abcdef0123456789abcdef")
    with pytest.raises(ConfigurationError, match="MLFLOW_RUN_ID names run '0123456789abcdef"):
        log_bundle(bundle(tmp_path, "fields"))
    assert all_runs(mlflow_store) == []


# --- the real `mlflow run` ----------------------------------------------------------


def mlflow_run(cwd: Path, entry_point: str, *parameters: str) -> subprocess.CompletedProcess[str]:
    """``mlflow run recipes -e ENTRY_POINT -P ... --env-manager local`` from ``cwd``.

    The recipes call ``python`` from PATH: this interpreter's folder goes first.
    """
    environment = dict(os.environ)
    environment.pop("MLFLOW_RUN_ID", None)  # in case the suite itself runs under `mlflow run`
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environment["PATH"]])
    arguments = [sys.executable, "-m", "mlflow", "run", str(RECIPES), "-e", entry_point]
    for parameter in parameters:
        arguments += ["-P", parameter]
    return subprocess.run(
        [*arguments, "--env-manager", "local"],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def project_runs(client: MlflowClient, entry_point: str) -> list[object]:
    return list(
        client.search_runs(
            ["0"], filter_string=f"tags.`mlflow.project.entryPoint` = '{entry_point}'"
        )
    )


def test_quickstart_under_a_project_run_names_the_project_experiment(
    mlflow_store, tmp_path, monkeypatch, capsys
):
    from docevals_mlflow.cli import main

    project_run(mlflow_store, monkeypatch)
    code = main(["quickstart", "--documents", "2", "--output-dir", str(tmp_path / "qs")])
    out = capsys.readouterr().out
    assert code == 0
    assert "MLflow experiment 'Default'" in out  # where the runs really are


def test_the_project_run_takes_the_docevals_name_unless_the_user_gave_one(
    mlflow_store, tmp_path, monkeypatch
):
    client = MlflowClient(mlflow_store)
    project = project_run(mlflow_store, monkeypatch)
    assert client.get_run(project).info.run_name != "fields invoices"  # MLflow's own
    log_bundle(bundle(tmp_path, "fields invoices"))
    assert client.get_run(project).info.run_name == "fields invoices"
    named = project_run(mlflow_store, monkeypatch)
    client.set_tag(named, "mlflow.runName", "my evaluation")  # mlflow run --run-name
    log_bundle(bundle(tmp_path, "fields other"))
    assert client.get_run(named).info.run_name == "my evaluation"


def test_under_mlflow_run_a_fields_run_is_named_after_its_schema(
    mlflow_store, tmp_path, monkeypatch, capsys
):
    from docevals_mlflow.cli import main

    assert main(["quickstart", "--documents", "2", "--output-dir", "qs", "--no-mlflow"]) == 0
    project = project_run(mlflow_store, monkeypatch)
    arguments = ["--expected", "qs/ground_truth.jsonl", "--schema", "qs/schema.yaml"]
    code = main(
        ["fields", "--predicted", "qs/predictions_v1.jsonl", *arguments, "--output", "f.json"]
    )
    assert code == 0, capsys.readouterr().err
    assert MlflowClient(mlflow_store).get_run(project).info.run_name == (
        "fields quickstart-invoices"
    )
    # --run-name wins; outside `mlflow run` the default stays the report's name.
    monkeypatch.delenv("MLFLOW_RUN_ID")
    main(
        [
            "fields",
            "--predicted",
            "qs/predictions_v1.jsonl",
            *arguments,
            "--output",
            "m.json",
            "--run-name",
            "mine",
        ]
    )
    main(["fields", "--predicted", "qs/predictions_v2.jsonl", *arguments, "--output", "v2.json"])
    names = {run.info.run_name for run in all_runs(mlflow_store)}
    assert {"mine", "v2"} <= names


def test_quickstart_in_the_default_experiment_logs_to_its_own(
    mlflow_store, tmp_path, monkeypatch, capsys
):
    from docevals_mlflow.cli import main

    project = project_run(mlflow_store, monkeypatch)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", "0")  # as `mlflow run` sets it
    code = main(["quickstart", "--documents", "2", "--output-dir", str(tmp_path / "qs")])
    out = capsys.readouterr().out
    assert code == 0
    assert "MLflow experiment 'docevals-quickstart'" in out
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("docevals-quickstart")
    runs = client.search_runs([experiment.experiment_id], order_by=["attributes.start_time"])
    assert [run.info.run_name for run in runs] == ["prompt-v1", "prompt-v2"]
    for run in runs:
        assert run.data.tags["docevals.project_run_id"] == project
        assert "mlflow.parentRunId" not in run.data.tags
    linked = client.get_run(project)
    assert linked.data.tags["docevals.runs"] == ",".join(run.info.run_id for run in runs)
    assert linked.info.run_name == "quickstart"
    assert os.environ["MLFLOW_RUN_ID"] == project  # given back after logging


def _recipe_arguments(entry_point: str, **values: str) -> list[str]:
    """An entry point's docevals arguments as ``mlflow run`` fills them in (every value
    quoted; defaults where ``values`` gives none)."""
    entry = load_entry_points()[entry_point]
    parameters: dict[str, dict[str, object]] = entry["parameters"]  # type: ignore[assignment]
    filled: str = entry["command"]  # type: ignore[assignment]
    filled = filled.removeprefix(PREFIX)
    for key, parameter in parameters.items():
        value = values.get(key, parameter.get("default"))
        filled = filled.replace("{" + key + "}", shlex.quote(str(value)))
    return shlex.split(filled)


def test_the_evaluate_fields_recipe_uses_its_ground_truth_as_an_evaluation_dataset(
    mlflow_store, monkeypatch, capsys
):
    from docevals_mlflow.cli import main
    from docevals_mlflow.core.fingerprints import sha256_file

    assert main(["quickstart", "--documents", "3", "--output-dir", "qs", "--no-mlflow"]) == 0
    project = project_run(mlflow_store, monkeypatch)
    arguments = _recipe_arguments(
        "evaluate-fields",
        workdir=".",
        predicted="qs/predictions_v2.jsonl",
        expected="qs/ground_truth.jsonl",
        schema="qs/schema.yaml",
    )
    assert main(arguments) == 0
    assert "evaluation dataset 'ground_truth' (Datasets tab): 3 records" in capsys.readouterr().out
    client = MlflowClient(mlflow_store)
    # The run's one ground-truth input is the evaluation dataset, with the digest
    # `docevals fields --expected` records for the file (so compare sees one ground truth).
    (used,) = client.get_run(project).inputs.dataset_inputs
    assert used.dataset.name == "ground_truth"
    assert used.dataset.digest == sha256_file(Path("qs/ground_truth.jsonl"))[:32]
    (published,) = client.search_datasets(experiment_ids=["0"])  # the Datasets page
    assert published.name == "ground_truth"
    assert json.loads(published.profile)["num_records"] == 3
    records = {record["inputs"]["document_id"] for record in published.to_df().to_dict("records")}
    expected_ids = {
        json.loads(line)["id"]
        for line in Path("qs/ground_truth.jsonl").read_text("utf-8").splitlines()
    }
    assert records == expected_ids


def test_an_evaluation_dataset_from_a_folder_of_documents_by_name(mlflow_store, capsys):
    from docevals_mlflow.cli import main

    folder = Path("truth")
    folder.mkdir()
    for doc, total in (("a", 1), ("b", 2)):
        (folder / f"{doc}.json").write_text(json.dumps({"total": total}), encoding="utf-8")
    predicted = Path("predicted.jsonl")
    predicted.write_text('{"id": "a", "data": {"total": 1}}\n', encoding="utf-8")
    argv = ["fields", "--expected", "truth", "--predicted", str(predicted)]
    assert main([*argv, "--output", "r.json", "--evaluation-dataset", "invoices"]) == 0
    assert "evaluation dataset 'invoices' (Datasets tab): 2 records" in capsys.readouterr().out
    client = MlflowClient(mlflow_store)
    (run,) = all_runs(mlflow_store)
    (used,) = run.inputs.dataset_inputs  # type: ignore[attr-defined]
    assert used.dataset.name == "invoices"
    from docevals_mlflow.tracking.fields_layout import fields_dataset

    assert used.dataset.digest == fields_dataset(folder)[0].digest
    (published,) = client.search_datasets(experiment_ids=[run.info.experiment_id])  # type: ignore[attr-defined]
    assert json.loads(published.profile)["num_records"] == 2


def test_an_evaluation_dataset_needs_the_expected_file(mlflow_store, capsys):
    from docevals_mlflow.cli import main

    Path("p.jsonl").write_text('{"id": "a", "data": {}}\n', encoding="utf-8")
    argv = ["fields", "--ground-truth-dataset", "invoices", "--predicted", "p.jsonl"]
    assert main([*argv, "--output", "r.json", "--evaluation-dataset"]) == 2
    assert "--evaluation-dataset: --evaluation-dataset publishes the --expected file" in (
        capsys.readouterr().err
    )
