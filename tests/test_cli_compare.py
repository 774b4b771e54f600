"""``docevals compare``: the quickstart's two runs end to end, outputs and exit codes."""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main
from tests.helpers import assert_one_line_error, run


def test_the_quickstart_runs_compare_end_to_end(mlflow_store, tmp_path, capsys):
    code, _, _ = run(capsys, "quickstart", "--documents", "40", "--output-dir", tmp_path / "qs")
    assert code == 0
    code, out, err = run(
        capsys,
        "compare",
        "docevals-quickstart/prompt-v1",
        "docevals-quickstart/prompt-v2",
        "--resamples",
        "500",
        "--output-dir",
        tmp_path / "out",
        "--fail-on-regression",
    )
    assert code == 0, err
    assert "prompt-v2 (" in out
    assert "40 matched documents; micro F1" in out
    assert "▲ improvement" in out
    assert "0 regression(s)" in out
    (changed,) = [line for line in out.splitlines() if line.strip().startswith("changed:")]
    # The prompt's text, fingerprint and version changed (its registry URI too, when
    # the quickstart registers it); the ground truth did not.
    assert changed.strip().startswith("changed: texts specs/prompt.txt; params prompt.sha256")
    assert "prompt.version" in changed
    assert "ground truth" not in changed
    written = {path.name for path in (tmp_path / "out").iterdir()}
    assert {"comparison.md", "comparison.html", "effects.csv", "flips.csv"} <= written
    markdown = (tmp_path / "out" / "comparison.md").read_text(encoding="utf-8")
    assert "+- The vendor is the company that issues the invoice" in markdown
    # Logged next to the runs it compares.
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("docevals-quickstart")
    (logged,) = client.search_runs(
        [experiment.experiment_id], filter_string="tags.`docevals.kind` = 'comparison'"
    )
    assert logged.data.tags["docevals.verdict"] == "pass"
    assert logged.info.run_id in out

    # The other way round, the new prompt is the baseline: a regression, exit 1.
    code, out, err = run(
        capsys,
        "compare",
        "docevals-quickstart/prompt-v2",
        "docevals-quickstart/prompt-v1",
        "--resamples",
        "500",
        "--no-mlflow",
        "--fail-on-regression",
    )
    assert code == 1
    assert "▼ regression" in out
    assert "docevals: regression: prompt-v1: overall all documents f1" in err
    # Without --fail-on-regression the same comparison only reports.
    code, _, _ = run(
        capsys,
        "compare",
        "docevals-quickstart/prompt-v2",
        "docevals-quickstart/prompt-v1",
        "--resamples",
        "200",
        "--no-mlflow",
    )
    assert code == 0


def test_reports_compare_without_mlflow(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, "quickstart", "--documents", "12", "--no-mlflow")
    assert code == 0
    reports = tmp_path / "docevals-quickstart" / "reports"
    code, out, err = run(
        capsys,
        "compare",
        reports / "prompt-v1.json",
        reports / "prompt-v2.json",
        reports / "prompt-v1.json",
        "--resamples",
        "200",
        "--metric",
        "recall",
    )
    assert code == 0, err
    assert "metric recall" in out
    assert "leaderboard: 1. prompt-v2" in out
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        (["--alpha", "2"], ["--alpha 2", "between 0 and 1"]),
        (["--confidence", "95"], ["--confidence 95"]),
        (["--resamples", "10"], ["--resamples 10", "at least 100"]),
        (["--metric", "auc"], ["unknown metric 'auc'"]),
    ],
)
def test_bad_options_exit_2(tmp_path, capsys, options, fragments):
    report = tmp_path / "r.json"
    report.write_text(
        '{"kind": "fields", "schema": {"id": "s", "version": "1", "sha256": "x"}, '
        '"overall": {"counts": {}, "metrics": {}, "macro_f1": null, "documents": 0}, '
        '"unpaired": {"expected_only": [], "predicted_only": []}, "fields": [], '
        '"classes": {}, "lists": [], "documents": []}',
        encoding="utf-8",
    )
    code, _, err = run(capsys, "compare", report, report, *options)
    assert code == 2
    assert_one_line_error(err, *fragments)


def test_unknown_runs_exit_2(mlflow_store, capsys):
    code, _, err = run(capsys, "compare", "prompt-v1", "prompt-v2")
    assert code == 2
    assert_one_line_error(err, "run prompt-v1", "no run of that id or name")
    with pytest.raises(SystemExit) as exited:
        main(["compare", "only-one"])
    assert exited.value.code == 2
    assert "the following arguments are required: candidate" in capsys.readouterr().err


def _log_named(name: str, experiment: str, *, wrong: bool) -> str:
    from docevals_mlflow import compare_documents, log_field_comparison
    from tests.tracking.invoices import SCHEMA

    documents = [
        {
            "id": f"d{index}",
            "class": "Invoice",
            "expected": {"number": str(index), "total": "10.00"},
            "predicted": {"number": "0" if wrong and index % 2 else str(index), "total": 10},
        }
        for index in range(6)
    ]
    batch = compare_documents(documents, SCHEMA)
    return log_field_comparison(batch, run_name=name, experiment=experiment).run_id


def test_bare_names_resolve_in_the_experiment_the_user_means(mlflow_store, capsys, monkeypatch):
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)
    quick_v1 = _log_named("prompt-v1", "docevals-quickstart", wrong=True)
    _log_named("prompt-v2", "docevals-quickstart", wrong=False)
    other_v1 = _log_named("prompt-v1", "Default", wrong=False)
    compare = ("compare", "prompt-v1", "prompt-v2", "--resamples", "200", "--no-mlflow")
    # Only one experiment holds a prompt-v2: the prompt-v1 meant is the one beside it.
    code, out, err = run(capsys, *compare)
    assert code == 0, err
    assert quick_v1 in out
    assert other_v1 not in out

    other_v2 = _log_named("prompt-v2", "Default", wrong=False)
    code, out, err = run(capsys, *compare)
    assert code == 2
    assert_one_line_error(
        err,
        "run prompt-v1: runs named 'prompt-v1' exist in several experiments: "
        f"Default (run {other_v1}), docevals-quickstart (run {quick_v1}); "
        "say which with --experiment NAME (or EXPERIMENT/prompt-v1) or give a run id",
    )
    # Each way the message offers works.
    code, out, err = run(capsys, *compare, "--experiment", "docevals-quickstart")
    assert code == 0, err
    assert quick_v1 in out
    code, out, err = run(capsys, *compare[:1], "Default/prompt-v1", *compare[2:])
    assert code == 0, err
    assert other_v1 in out
    assert other_v2 in out
    code, out, err = run(capsys, "compare", quick_v1, *compare[2:])
    assert code == 0, err
    assert other_v2 not in out  # prompt-v2 is looked for beside the run named by id
    # The current default experiment (MLflow's variable) says which is meant.
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "Default")
    code, out, err = run(capsys, *compare)
    assert code == 0, err
    assert other_v1 in out
    assert quick_v1 not in out
    # ... and so does its id, as `mlflow run` passes it to a recipe.
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME")
    quickstart = MlflowClient(mlflow_store).get_experiment_by_name("docevals-quickstart")
    monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", quickstart.experiment_id)
    code, out, err = run(capsys, *compare)
    assert code == 0, err
    assert quick_v1 in out
    assert other_v2 not in out
