"""``docevals text``: figures, reports, warnings, exit codes and the MLflow run."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import text as text_cli
from docevals_mlflow.docmetrics.inputs import KindChoice, read_text_pairs
from docevals_mlflow.docmetrics.normalize import UnicodeForm
from docevals_mlflow.docmetrics.report import TextMetricsReport, evaluate_text_inputs
from docevals_mlflow.docmetrics.tables import score_tables
from docevals_mlflow.docmetrics.text import score_texts
from tests.docmetrics.test_report import PREDICTED_TABLE, TABLE, varied_pairs, write_folders
from tests.helpers import assert_one_line_error, run, write_jsonl


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    expected, predicted = write_folders(tmp_path, varied_pairs())
    (expected / "tables").mkdir()
    (predicted / "tables").mkdir()
    (expected / "tables" / "t.html").write_text(TABLE, encoding="utf-8")
    (predicted / "tables" / "t.html").write_text(PREDICTED_TABLE, encoding="utf-8")
    (expected / "only-expected.txt").write_text("nobody read me", encoding="utf-8")
    (predicted / "only-predicted.txt").write_text("no truth", encoding="utf-8")
    return expected, predicted


def test_the_parser_choices_equal_their_sources() -> None:
    assert typing.get_args(KindChoice) == text_cli.KINDS
    assert typing.get_args(UnicodeForm) == text_cli.UNICODE_FORMS


def test_logs_a_run_with_the_figures_of_the_docmetrics_functions(
    capsys: pytest.CaptureFixture[str],
    mlflow_store: str,
    tmp_path: Path,
    folders: tuple[Path, Path],
) -> None:
    expected, predicted = folders
    code, out, err = run(
        capsys, "text", expected, predicted, "--output", tmp_path / "r.json",
        "--markdown", tmp_path / "r.md", "--experiment", "ocr", "--worst", "3",
        "--casefold", "--param", "model=tesseract-5",
    )  # fmt: skip
    assert code == 0, err
    assert "worst pages by CER:" in out
    assert "worst tables by TEDS:" in out
    assert "only-expected.txt (no prediction)" in out
    warnings = [line for line in err.splitlines() if line.startswith("docevals: warning:")]
    assert warnings == [
        "docevals: warning: 1 expected page has no prediction and is scored as an empty "
        "prediction (CER 1, TEDS 0): 'only-expected.txt'",
        "docevals: warning: 1 prediction has no expected page and is not scored: "
        "'only-predicted.txt'",
    ]

    pairs = {**varied_pairs(), "only-expected.txt": ("nobody read me", "")}
    names = sorted(pairs)
    from docevals_mlflow.docmetrics.normalize import TextNormalization

    batch = score_texts(
        [pairs[n][0] for n in names],
        [pairs[n][1] for n in names],
        names=names,
        normalization=TextNormalization(casefold=True),
    )
    tables = score_tables([("t", TABLE, PREDICTED_TABLE)])

    client = MlflowClient(mlflow_store)
    (found,) = client.search_runs([client.get_experiment_by_name("ocr").experiment_id])
    metrics = found.data.metrics
    assert found.info.run_name == "r"
    assert metrics["text/cer"] == pytest.approx(batch.micro_cer, abs=1e-12)
    assert metrics["Summary/cer"] == metrics["text/cer"]
    assert metrics["text/wer"] == pytest.approx(batch.micro_wer, abs=1e-12)
    assert metrics["Summary/wer"] == metrics["text/wer"]
    assert metrics["text/ned"] == pytest.approx(batch.micro_edit_distance, abs=1e-12)
    assert metrics["text/macro/cer"] == pytest.approx(batch.macro_cer, abs=1e-12)
    assert metrics["text/macro/token_f1"] == pytest.approx(batch.macro_token_f1, abs=1e-12)
    assert metrics["table/teds"] == pytest.approx(tables.teds, abs=1e-12)
    assert metrics["table/teds_s"] == pytest.approx(tables.teds_structure, abs=1e-12)
    assert metrics["Summary/teds"] == metrics["table/teds"]
    assert metrics["Summary/documents"] == len(names) + 1
    assert metrics["text/missing_predictions"] == 1
    assert metrics["inputs/extra_predictions"] == 1
    assert {"text/token_f1", "Summary/token_f1", "text/macro/wer", "text/macro/ned"} <= set(metrics)
    assert {"table/macro/teds", "table/macro/teds_s", "table/tables", "text/pages"} <= set(metrics)
    params = found.data.params
    assert params["text.casefold"] == "true"
    assert params["text.unicode_form"] == "NFC"
    assert params["text.input_form"] == "folders"
    assert params["model"] == "tesseract-5"
    assert found.data.tags["docevals.report_kind"] == "text"
    assert found.inputs.dataset_inputs[0].dataset.name == "gt"

    artifacts = {a.path for a in client.list_artifacts(found.info.run_id, "report")}
    assert artifacts == {"report/report.json", "report/report.md"}
    report_json = Path(client.download_artifacts(found.info.run_id, "report/report.json"))
    assert report_json.read_text(encoding="utf-8") == (tmp_path / "r.json").read_text("utf-8")
    markdown = Path(client.download_artifacts(found.info.run_id, "report/report.md"))
    assert markdown.read_text(encoding="utf-8") == (tmp_path / "r.md").read_text("utf-8")
    worst = json.loads(
        Path(client.download_artifacts(found.info.run_id, "tables/worst_pages.json")).read_text(
            encoding="utf-8"
        )
    )
    rows = [dict(zip(worst["columns"], row, strict=True)) for row in worst["data"]]
    text_rows = [row for row in rows if row["kind"] == "text"]
    assert [row["page"] for row in text_rows] == [i.name for i in batch.worst(3)]
    assert [row["cer"] for row in text_rows] == [round(i.cer, 4) for i in batch.worst(3)]
    assert [row["page"] for row in rows if row["kind"] == "table"] == ["tables/t.html"]
    logged = json.loads(found.data.tags["mlflow.loggedArtifacts"])
    assert {"path": "tables/worst_pages.json", "type": "table"} in logged


def test_the_report_equals_the_pure_evaluation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folders: tuple[Path, Path]
) -> None:
    expected, predicted = folders
    code, _, err = run(
        capsys, "text", expected, predicted, "--output", tmp_path / "r.json", "--no-mlflow"
    )
    assert code == 0, err
    assert TextMetricsReport.load(tmp_path / "r.json") == evaluate_text_inputs(
        read_text_pairs(expected, predicted)
    )
    assert not (tmp_path / "mlflow.db").exists()


def _scored(expected: Path, predicted: Path) -> TextMetricsReport:
    return evaluate_text_inputs(read_text_pairs(expected, predicted))


@pytest.mark.parametrize(
    ("option", "passing", "failing", "line"),
    [
        ("--max-cer", "0.9", "0.001", "CER {value:.4f} is above --max-cer 0.001 by {by:.4f}"),
        ("--max-wer", "0.99", "0.01", "WER {value:.4f} is above --max-wer 0.01 by {by:.4f}"),
        ("--min-teds", "0.5", "0.99", "TEDS {value:.4f} is below --min-teds 0.99 by {by:.4f}"),
    ],
)
def test_each_gate_says_which_failed_and_by_how_much(
    capsys: pytest.CaptureFixture[str],
    folders: tuple[Path, Path],
    option: str,
    passing: str,
    failing: str,
    line: str,
) -> None:
    expected, predicted = folders
    base = ("text", expected, predicted, "--no-mlflow", option)
    code, _, err = run(capsys, *base, passing)
    assert code == 0, err
    assert "threshold" not in err
    code, _, err = run(capsys, *base, failing)
    assert code == 1
    report = _scored(expected, predicted)
    value = {"--max-cer": report.text.cer, "--max-wer": report.text.wer}.get(  # type: ignore[union-attr]
        option,
        report.table.teds,  # type: ignore[union-attr]
    )
    by = abs(value - float(failing))
    thresholds = [line for line in err.splitlines() if "threshold" in line]
    assert thresholds == ["docevals: threshold: " + line.format(value=value, by=by)]


def test_every_failed_gate_is_printed_in_order(
    capsys: pytest.CaptureFixture[str], folders: tuple[Path, Path]
) -> None:
    expected, predicted = folders
    code, _, err = run(
        capsys, "text", expected, predicted, "--no-mlflow",
        "--min-teds", "1", "--max-wer", "0", "--max-cer", "0",
    )  # fmt: skip
    assert code == 1
    thresholds = [line.split(":")[2].split()[0] for line in err.splitlines() if "threshold" in line]
    assert thresholds == ["CER", "WER", "TEDS"]


def test_a_tiny_breach_still_shows_its_margin(tmp_path: Path) -> None:
    expected, predicted = write_folders(tmp_path, {"t.html": (TABLE, PREDICTED_TABLE)})
    report = _scored(expected, predicted)
    teds = report.table.teds  # type: ignore[union-attr]
    (line,) = text_cli.gate_breaches(report, [(text_cli.GATES[2], teds + 2e-6)])
    assert line.endswith(f"is below --min-teds {teds + 2e-6:g} by 2.0e-06")
    assert text_cli.gate_breaches(report, [(text_cli.GATES[2], teds)]) == []


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (("--max-cer", "nan"), "--max-cer nan"),
        (("--max-wer", "-0.1"), "--max-wer -0.1"),
        (("--min-teds", "1.5"), "--min-teds 1.5 (expected a number from 0 to 1)"),
        (("--min-teds", "90"), "--min-teds 90"),
    ],
)
def test_bad_gate_values_exit_2(
    capsys: pytest.CaptureFixture[str],
    folders: tuple[Path, Path],
    argv: tuple[str, ...],
    fragment: str,
) -> None:
    expected, predicted = folders
    code, _, err = run(capsys, "text", expected, predicted, "--no-mlflow", *argv)
    assert code == 2
    assert_one_line_error(err, fragment)


@pytest.mark.parametrize(
    ("pages", "gate", "fragment"),
    [
        (
            {"a.txt": ("the quick fox", "the quick box")},
            ("--min-teds", "0.9"),
            "--min-teds 0.9: the inputs have no tables to score (expected tables in EXPECTED",
        ),
        (
            {"t.html": (TABLE, PREDICTED_TABLE)},
            ("--max-cer", "0.1"),
            "--max-cer 0.1: the inputs have no text pages to score",
        ),
        (
            {"t.html": (TABLE, PREDICTED_TABLE)},
            ("--max-wer", "0.1"),
            "--max-wer 0.1: the inputs have no text pages to score",
        ),
    ],
)
def test_a_gate_on_a_kind_without_pages_is_an_error_not_a_pass(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    pages: dict[str, tuple[str, str]],
    gate: tuple[str, str],
    fragment: str,
) -> None:
    expected, predicted = write_folders(tmp_path, pages)
    output = tmp_path / "r.json"
    code, out, err = run(
        capsys, "text", expected, predicted, "--output", output, "--no-mlflow", *gate
    )
    assert code == 2
    assert_one_line_error(err, fragment)
    assert out == ""
    assert not output.exists()


def test_the_run_verdict_follows_the_gates(
    capsys: pytest.CaptureFixture[str], mlflow_store: str, folders: tuple[Path, Path]
) -> None:
    expected, predicted = folders
    cases = {
        "ungated": (),
        "passed": ("--max-cer", "0.9", "--max-wer", "0.99", "--min-teds", "0.5"),
        "teds-failed": ("--max-cer", "0.9", "--min-teds", "0.99"),
        "wer-failed": ("--max-wer", "0.01"),
    }
    for name, gates in cases.items():
        code, _, err = run(
            capsys, "text", expected, predicted, "--experiment", "gates", "--run-name", name, *gates
        )
        assert code == (1 if name.endswith("failed") else 0), err
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("gates")
    assert experiment is not None
    verdicts = {
        found.info.run_name: found.data.tags.get("docevals.verdict")
        for found in client.search_runs([experiment.experiment_id])
    }
    assert verdicts == {
        "ungated": None,
        "passed": "pass",
        "teds-failed": "fail",
        "wer-failed": "fail",
    }


def test_jsonl_pages_without_output_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rtl = "שלום עולם مرحبا بالعالم"
    write_jsonl(
        tmp_path / "gt.jsonl",
        [
            {"id": "d1", "page": 1, "text": rtl},
            {"id": "d1", "page": 2, "text": ""},
            {"id": "d2", "page": 1, "text": "東京都の天気"},
        ],
    )
    write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"id": "d1", "page": 1, "text": rtl},
            {"id": "d1", "page": 2, "text": ""},
            {"id": "d2", "page": 1, "text": "東京の天気"},
        ],
    )
    code, out, err = run(
        capsys, "text", tmp_path / "gt.jsonl", tmp_path / "pred.jsonl", "--no-mlflow"
    )
    assert code == 0, err
    assert err == ""
    assert "text: 2 documents, 3 pages; CER 0.0345" in out
    assert "d2 page 1" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gt.jsonl", "pred.jsonl"]


@pytest.mark.parametrize(
    ("build", "fragments"),
    [
        (lambda p: (p / "gt", p / "empty"), ("folder has no .txt, .md or .html files",)),
        (lambda p: (p / "gt", p / "nope"), ("predicted input not found",)),
        (lambda p: (p / "gt", p / "pred", p / "gt" / "r.json"), ("is inside EXPECTED",)),
    ],
)
def test_bad_inputs_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    build: typing.Any,
    fragments: tuple[str, ...],
) -> None:
    write_folders(tmp_path, {"a.txt": ("x", "y")})
    (tmp_path / "empty").mkdir()
    expected, predicted, *output = build(tmp_path)
    code, _, err = run(
        capsys,
        "text",
        expected,
        predicted,
        "--output",
        (output or [tmp_path / "r.json"])[0],
        "--no-mlflow",
    )
    assert code == 2
    assert_one_line_error(err, *fragments)
