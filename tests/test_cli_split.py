"""``docevals split``: inputs, reports written, thresholds, exit codes and MLflow."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.split.report import SplitReport
from tests.helpers import assert_one_line_error, run, write_json
from tests.split.test_seed_metrics import EXPECTED, PREDICTED


def split(
    capsys: pytest.CaptureFixture[str],
    expected: Path,
    predicted: Path,
    output: Path,
    *options: str | Path,
) -> tuple[int, str, str]:
    """``docevals split --expected E --predicted P --output O OPTIONS...``."""
    argv = ["split", "--expected", expected, "--predicted", predicted, "--output", output]
    return run(capsys, *argv, *options)


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    write_json(tmp_path / "gt" / "a.json", {"sections": EXPECTED})
    write_json(tmp_path / "gt" / "b.json", {"sections": EXPECTED})
    write_json(tmp_path / "pred" / "a.json", {"sections": PREDICTED})
    write_json(tmp_path / "pred" / "b.json", EXPECTED)
    return tmp_path / "gt", tmp_path / "pred"


def test_writes_json_markdown_and_heatmap(capsys, tmp_path, folders):
    expected, predicted = folders
    code, out, err = split(
        capsys,
        expected,
        predicted,
        tmp_path / "out" / "split.json",
        "--markdown",
        tmp_path / "out" / "split.md",
        "--heatmap",
        tmp_path / "out" / "split.html",
        "--no-mlflow",
    )
    assert code == 0, err
    assert "packets: 2; page-level accuracy 0.8667 (13/15)" in out
    report = SplitReport.load(tmp_path / "out" / "split.json")
    assert [packet.id for packet in report.packets] == ["a", "b"]
    assert report.split_accuracy_with_order.correct_sections == 4
    markdown = (tmp_path / "out" / "split.md").read_text(encoding="utf-8")
    assert markdown.startswith("# Document Split Classification Evaluation")
    assert "### Packet `a`" in markdown
    assert (
        (tmp_path / "out" / "split.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    )
    assert not (tmp_path / "mlflow.db").exists()


def test_single_files_pair_whatever_their_names(capsys, tmp_path):
    code, out, _ = run(
        capsys,
        "split",
        "--expected",
        write_json(tmp_path / "truth.json", {"sections": EXPECTED}),
        "--predicted",
        write_json(
            tmp_path / "model.json", {"pages": ["Invoice", "Invoice", "Invoice", "W2", "W2"]}
        ),
        "--output",
        tmp_path / "r.json",
    )
    assert code == 0
    assert "packets: 1" in out


def test_invalid_packet_is_one_line_naming_file_record_and_place(capsys, tmp_path, folders):
    expected, predicted = folders
    write_json(
        predicted / "b.json",
        {"sections": [{"section_id": "x", "document_class": "W2", "page_indices": [0, 0]}]},
    )
    code, _, err = split(
        capsys,
        expected,
        predicted,
        tmp_path / "r.json",
    )
    assert code == 2
    assert_one_line_error(
        err,
        str(predicted / "b.json"),
        "record b",
        "sections[0].page_indices[1]",
        "page 0 appears twice",
    )
    assert not (tmp_path / "r.json").exists()


def test_no_common_packet_is_bad_input(capsys, tmp_path, folders):
    expected, _ = folders
    other = tmp_path / "other"
    write_json(other / "zzz.json", EXPECTED)
    code, _, err = split(
        capsys,
        expected,
        other,
        tmp_path / "r.json",
    )
    assert code == 2
    assert_one_line_error(err, "no packet is on both sides (2 expected, 1 predicted)")


def test_fail_under_gates(capsys, tmp_path, folders):
    expected, predicted = folders
    gate = (capsys, expected, predicted, tmp_path / "r.json", "--fail-under")
    code, _, err = split(*gate, "page_accuracy=0.8")
    assert code == 0, err
    code, _, err = split(*gate, "accuracy_with_order=0.9", "--fail-under", "section_f1=0.5")
    assert code == 1
    assert "docevals: threshold: accuracy_with_order 0.6667 is below 0.9" in err
    assert "section_f1" not in err
    code, _, err = split(*gate, "page_accuracy=90")
    assert code == 2
    assert_one_line_error(err, "a VALUE between 0 and 1")
    code, _, err = split(*gate, "recall=0.5")
    assert code == 2
    assert_one_line_error(err, "METRIC one of page_accuracy")


def test_missing_input(capsys, tmp_path, folders):
    expected, _ = folders
    code, _, err = split(
        capsys,
        expected,
        tmp_path / "nope",
        tmp_path / "r.json",
    )
    assert code == 2
    assert_one_line_error(err, "predicted input not found")


def test_logs_a_run(capsys, mlflow_store, tmp_path, folders):
    expected, predicted = folders
    code, out, err = split(
        capsys,
        expected,
        predicted,
        tmp_path / "split.json",
        "--experiment",
        "packets",
        "--fail-under",
        "page_accuracy=0.5",
    )
    assert code == 0, err
    assert "MLflow run" in out
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("packets")
    (found,) = client.search_runs([experiment.experiment_id])
    assert found.info.run_name == "split"
    assert found.data.metrics["Summary/page_accuracy"] == pytest.approx(13 / 15)
    assert found.data.tags["docevals.verdict"] == "pass"
    assert found.inputs.dataset_inputs[0].dataset.name == "gt"
    report_json = Path(client.download_artifacts(found.info.run_id, "report/report.json"))
    assert report_json.read_text(encoding="utf-8") == (tmp_path / "split.json").read_text(
        encoding="utf-8"
    )
