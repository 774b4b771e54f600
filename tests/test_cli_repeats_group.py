"""``--repeat-group``: runs tagged as repeats of each other, found by ``docevals
repeats --group``, refused when their inputs differ, and ``--log`` logging the
repeat report as a run linked to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docevals_mlflow.tracking.repeat_runs import REPEAT_GROUP_TAG, RUNS_TAG
from tests.helpers import one_error_line, run, write_json

TRUTH = {"invoice": "A-17", "total": 11.5}


def evaluate(capsys, tmp_path: Path, name: str, prediction: dict, *extra: str) -> None:
    predicted = write_json(tmp_path / f"{name}.prediction.json", prediction)
    truth = tmp_path / "truth.json"
    if not truth.exists():
        write_json(truth, TRUTH)
    code, _, err = run(
        capsys,
        "evaluate-case",
        "--prediction",
        predicted,
        "--ground-truth",
        truth,
        "--case-id",
        "invoice-1",
        "--output",
        tmp_path / f"{name}.json",
        "--run-name",
        name,
        "--fail-on",
        "never",
        *extra,
    )
    assert code == 0, err


def client(uri: str):
    from mlflow.tracking import MlflowClient

    return MlflowClient(uri)


def test_a_group_is_found_by_its_tag_and_reported(capsys, tmp_path, mlflow_store) -> None:
    wrong = {**TRUTH, "total": 12.0}
    for index, prediction in enumerate((TRUTH, wrong, TRUTH)):
        evaluate(capsys, tmp_path, f"rep-{index}", prediction, "--repeat-group", "nightly")
    evaluate(capsys, tmp_path, "other", TRUTH)  # not in the group
    runs = client(mlflow_store).search_runs(["1"], filter_string="")
    tagged = [r for r in runs if r.data.tags.get(REPEAT_GROUP_TAG) == "nightly"]
    assert len(tagged) == 3

    output = tmp_path / "repeats.json"
    code, out, err = run(capsys, "repeats", "--group", "nightly", "--output", output)
    assert code == 0, err
    assert out.splitlines()[0] == "1 case over 3 repeats: 100.0% flip, pass^3 0.0%, pass^1 66.7%"
    report = json.loads(output.read_text(encoding="utf-8"))
    assert report["runs"] == ["rep-0", "rep-1", "rep-2"]  # oldest first
    assert report["per_unit"][0]["outcomes"] == ["pass", "fail", "pass"]


def test_log_writes_the_repeat_report_as_a_linked_run(capsys, tmp_path, mlflow_store) -> None:
    for index in range(2):
        evaluate(capsys, tmp_path, f"rep-{index}", TRUTH, "--repeat-group", "g")
    code, out, err = run(capsys, "repeats", "--group", "g", "--log")
    assert code == 0, err
    assert "MLflow run" in out
    store = client(mlflow_store)
    members = {
        r.info.run_id
        for r in store.search_runs(["1"], filter_string=f"tags.`{REPEAT_GROUP_TAG}` = 'g'")
    }
    (logged,) = store.search_runs(["1"], filter_string="tags.`docevals.report_kind` = 'repeats'")
    assert logged.info.run_name == "repeats g"
    assert set(logged.data.tags[RUNS_TAG].split(",")) == members
    assert logged.data.tags["docevals.repeats.group"] == "g"
    assert REPEAT_GROUP_TAG not in logged.data.tags  # the report is no repeat itself
    metrics = logged.data.metrics
    assert metrics["Summary/flip_rate"] == 0
    assert metrics["Summary/pass_all"] == 1
    assert metrics["repeats/pass_hat_1"] == metrics["repeats/pass_hat_2"] == 1
    assert metrics["repeats/units"] == 1
    listed = {item.path for item in store.list_artifacts(logged.info.run_id, "repeats")}
    assert listed == {"repeats/repeats.json", "repeats/repeats.md"}
    # Running it again still finds exactly the two repeats, not the logged report.
    code, out, _ = run(capsys, "repeats", "--group", "g")
    assert code == 0
    assert "over 2 repeats" in out


def test_a_group_of_one_run_is_refused(capsys, tmp_path, mlflow_store) -> None:
    evaluate(capsys, tmp_path, "only", TRUTH, "--repeat-group", "lonely")
    code, _, err = run(capsys, "repeats", "--group", "lonely")
    assert code == 2
    assert "repeat group 'lonely' has 1 run(s)" in one_error_line(err)
    code, _, err = run(capsys, "repeats", "--group", "lonely", "--experiment", "nope")
    assert code == 2
    assert "no experiment named 'nope'" in one_error_line(err)


def test_runs_of_different_inputs_are_refused(capsys, tmp_path, mlflow_store) -> None:
    evaluate(capsys, tmp_path, "a", TRUTH, "--repeat-group", "mixed")
    predicted = write_json(tmp_path / "b.prediction.json", TRUTH)
    code, _, err = run(
        capsys,
        "evaluate-case",
        "--prediction",
        predicted,
        "--ground-truth",
        tmp_path / "truth.json",
        "--case-id",
        "invoice-2",
        "--output",
        tmp_path / "b.json",
        "--run-name",
        "b",
        "--repeat-group",
        "mixed",
    )
    assert code == 0, err
    code, _, err = run(capsys, "repeats", "--group", "mixed")
    assert code == 2
    line = one_error_line(err)
    assert "the runs are not repeats of the same inputs" in line
    assert "case.id differs between a and b (invoice-1 vs invoice-2)" in line


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["repeats", "--group", "g", "x.json"], "--group g and 1 listed run(s)"),
        (["repeats", "--group", "g", "--max-flip-rate", "3"], "--max-flip-rate 3"),
    ],
)
def test_bad_group_options_exit_2(capsys, argv, message) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err


def test_runs_against_different_ground_truth_are_refused(capsys, tmp_path, mlflow_store) -> None:
    evaluate(capsys, tmp_path, "a", TRUTH, "--repeat-group", "truths")
    other = tmp_path / "other"
    other.mkdir()
    write_json(other / "truth.json", {**TRUTH, "total": 99.0})
    evaluate(capsys, other, "b", TRUTH, "--repeat-group", "truths")
    code, _, err = run(capsys, "repeats", "--group", "truths")
    assert code == 2
    assert "the ground-truth digest differs between a and b" in one_error_line(err)


def test_a_blank_group_name_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        run(capsys, "evaluate-case", "--repeat-group", " ")
    assert exited.value.code == 2
    assert "--repeat-group: invalid value ' '" in capsys.readouterr().err
