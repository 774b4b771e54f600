"""``--dashboard FILE``: every command that makes a dashboard writes it locally too,
with or without MLflow, and a logged run holds the very same page."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.helpers import run, write_json, write_jsonl, write_text
from tests.split.test_seed_metrics import EXPECTED, PREDICTED
from tests.test_cli_outputs import BATCH


def _is_offline_page(path: Path, *titles: str) -> str:
    text = path.read_text(encoding="utf-8")
    assert text.lstrip().lower().startswith(("<!doctype html", "<html")), text[:80]
    assert '<script src="http' not in text  # plotly.js inline: opens offline
    for title in titles:
        assert title in text
    return text


def _field_files(folder: Path) -> tuple[Path, Path]:
    truth = [{"id": "a", "data": {"total": 1}}, {"id": "b", "data": {"total": 2}}]
    predicted = [{"id": "a", "data": {"total": 1}}, {"id": "b", "data": {"total": 3}}]
    return (
        write_jsonl(folder / "gt.jsonl", truth),
        write_jsonl(folder / "pred.jsonl", predicted),
    )


def test_fields_writes_the_dashboard_it_logs(mlflow_store, tmp_path, capsys):
    expected, predicted = _field_files(tmp_path)
    dashboard = tmp_path / "out" / "fields.html"
    (tmp_path / "out").mkdir()
    code, out, err = run(
        capsys, "fields", "--expected", expected, "--predicted", predicted,
        "--output", tmp_path / "r.json", "--dashboard", dashboard, "--experiment", "dash",
    )  # fmt: skip
    assert code == 0, err
    assert f"dashboard: {dashboard}" in out
    text = _is_offline_page(dashboard)
    client = MlflowClient(mlflow_store)
    (logged,) = client.search_runs([client.get_experiment_by_name("dash").experiment_id])
    artifact = client.download_artifacts(logged.info.run_id, "report/dashboard.html", tmp_path)
    assert Path(artifact).read_text(encoding="utf-8") == text


def test_every_dashboard_command_writes_without_mlflow(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expected, predicted = _field_files(tmp_path)
    no_mlflow = "--no-mlflow"
    write_json(tmp_path / "p.json", {"total": 1})
    write_json(tmp_path / "t.json", {"total": 2})
    write_text(tmp_path / "batch.yaml", BATCH.format(first="inv-1", second="inv-2"))
    write_json(tmp_path / "gt" / "a.json", {"sections": EXPECTED})
    write_json(tmp_path / "pred" / "a.json", {"sections": PREDICTED})
    commands = {
        "fields": ("fields", "--expected", expected, "--predicted", predicted,
                   "--output", "f.json"),
        "case": ("evaluate-case", "--prediction", "p.json", "--ground-truth", "t.json",
                 "--output", "case.json", "--fail-on", "never"),
        "pipeline": ("evaluate-pipeline", "batch.yaml", "--output", "batch.json",
                     "--fail-on", "never"),
        "suite": ("suite", "case.json", "--output", "suite.json"),
        "split": ("split", "--expected", "gt", "--predicted", "pred", "--output", "s.json"),
        "compare": ("compare", "f.json", "f.json", "--resamples", "100"),
    }  # fmt: skip
    for name, argv in commands.items():
        code, out, err = run(capsys, *argv, "--dashboard", f"{name}.html", no_mlflow)
        assert code == 0, (name, err)
        assert f"dashboard: {name}.html" in out, name
        _is_offline_page(tmp_path / f"{name}.html")
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize("where", ["the same path", "a folder"])
def test_a_dashboard_over_the_report_is_refused_before_any_work(tmp_path, capsys, where):
    expected, predicted = _field_files(tmp_path)
    dashboard = tmp_path / "r.json"
    if where == "a folder":
        dashboard = tmp_path / "d.html"
        dashboard.mkdir()
    code, _, err = run(
        capsys, "fields", "--expected", expected, "--predicted", predicted,
        "--output", tmp_path / "r.json", "--dashboard", dashboard, "--no-mlflow",
    )  # fmt: skip
    assert code == 2
    assert "--dashboard" in err
    assert not (tmp_path / "r.json").exists()
