"""A run bundle that has not been logged is never deleted or replaced."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.tracking.bundle import MANIFEST, BundleWriter
from docevals_mlflow.tracking.bundle_folders import LOGGED, is_logged, keep_bundle, read_bundle
from docevals_mlflow.tracking.runs import (
    TrackingUnavailableError,
    kept_bundle,
    log_bundle,
    log_writer,
)

DOWN = "http://127.0.0.1:9"


def writer_for(number: int) -> BundleWriter:
    writer = BundleWriter(run_name=f"run-{number}")
    writer.param("number", number)
    writer.metric("overall/f1", number / 10)
    writer.text("report/report.md", f"# {number}\n")
    return writer


def number_in(folder: Path) -> str:
    bundle, _ = read_bundle(folder)
    return bundle.params["number"]


def test_a_second_bundle_goes_beside_the_first(tmp_path):
    destination = tmp_path / "reports" / "batch.run"
    first = keep_bundle(writer_for(1).write(tmp_path / "t1"), destination)
    second = keep_bundle(writer_for(2).write(tmp_path / "t2"), destination)
    third = keep_bundle(writer_for(3).write(tmp_path / "t3"), destination)
    assert (first, second, third) == (
        destination,
        tmp_path / "reports" / "batch.run-2",
        tmp_path / "reports" / "batch.run-3",
    )
    assert [number_in(folder) for folder in (first, second, third)] == ["1", "2", "3"]


def test_something_else_at_the_destination_is_left_alone(tmp_path):
    destination = tmp_path / "batch.run"
    destination.write_text("mine", encoding="utf-8")
    kept = keep_bundle(writer_for(1).write(tmp_path / "t1"), destination)
    assert kept == tmp_path / "batch.run-2"
    assert destination.read_text(encoding="utf-8") == "mine"


def test_a_logged_bundle_may_be_replaced(mlflow_store, tmp_path):
    destination = tmp_path / "batch.run"
    keep_bundle(writer_for(1).write(tmp_path / "t1"), destination)
    logged = log_bundle(destination)
    assert is_logged(destination)
    assert json.loads((destination / LOGGED).read_text(encoding="utf-8"))["run_id"] == (
        logged.run_id
    )
    kept = keep_bundle(writer_for(2).write(tmp_path / "t2"), destination)
    assert kept == destination
    assert number_in(destination) == "2"
    assert not is_logged(destination)
    # Nothing of the replaced one is left behind, hidden or not.
    assert [path.name for path in tmp_path.iterdir() if "batch.run" in path.name] == ["batch.run"]


def test_bundles_kept_at_once_each_get_their_own_folder(tmp_path):
    destination = tmp_path / "batch.run"
    sources = [writer_for(number).write(tmp_path / f"t{number}") for number in range(8)]
    kept: list[Path] = []
    threads = [
        threading.Thread(target=lambda source=source: kept.append(keep_bundle(source, destination)))
        for source in sources
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(kept)) == 8
    assert sorted(number_in(folder) for folder in kept) == [str(n) for n in range(8)]


def test_log_writer_says_where_each_bundle_was_kept(tmp_path):
    destination = tmp_path / "batch.run"
    kept = []
    for number in (1, 2):
        with pytest.raises(TrackingUnavailableError) as caught:
            log_writer(writer_for(number), tracking_uri=DOWN, keep_bundle_at=destination)
        kept.append(kept_bundle(caught.value))
        assert f"docevals log {kept[-1]}" in "\n".join(caught.value.__notes__)
    assert kept == [destination, tmp_path / "batch.run-2"]
    assert [number_in(folder) for folder in kept] == ["1", "2"]


def run_fields(tmp_path: Path, output: Path) -> int:
    from docevals_mlflow.cli import main

    expected = tmp_path / "expected.jsonl"
    predicted = tmp_path / "predicted.jsonl"
    expected.write_text(json.dumps({"id": "1", "data": {"total": "10"}}) + "\n", "utf-8")
    predicted.write_text(json.dumps({"id": "1", "data": {"total": "11"}}) + "\n", "utf-8")
    argv = ["fields", "--expected", str(expected), "--predicted", str(predicted)]
    return main([*argv, "--output", str(output), "--tracking-uri", DOWN])


def test_a_second_evaluation_while_the_server_is_down_keeps_both_bundles(
    mlflow_store, tmp_path, capsys
):
    # The finding: the second run to the same --output deleted the first one's bundle.
    output = tmp_path / "reports" / "batch.json"
    assert run_fields(tmp_path, output) == 0
    first = tmp_path / "reports" / "batch.run"
    before = (first / MANIFEST).read_bytes()
    capsys.readouterr()
    assert run_fields(tmp_path, output) == 0
    second = tmp_path / "reports" / "batch.run-2"
    assert (first / MANIFEST).read_bytes() == before
    assert (second / MANIFEST).is_file()

    from docevals_mlflow.cli import main

    assert main(["log", str(first)]) == 0
    assert main(["log", str(second)]) == 0
    experiment = MlflowClient(mlflow_store).get_experiment_by_name("docevals")
    assert len(MlflowClient(mlflow_store).search_runs([experiment.experiment_id])) == 2


def test_the_warning_names_the_folder_the_second_bundle_went_to(mlflow_store, tmp_path, capsys):
    output = tmp_path / "reports" / "batch.json"
    run_fields(tmp_path, output)
    capsys.readouterr()
    run_fields(tmp_path, output)
    err = capsys.readouterr().err
    assert f"docevals log {tmp_path / 'reports' / 'batch.run-2'}" in err
