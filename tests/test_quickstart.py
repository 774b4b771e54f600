"""``docevals quickstart``: a deterministic document set, two prompt versions, two runs."""

from __future__ import annotations

import io
import json
import statistics
from pathlib import Path

import pymupdf
import pytest

from docevals_mlflow.cli.progress import ProgressDisplay
from docevals_mlflow.fields.numbers import parse_number
from docevals_mlflow.quickstart import PROMPTS, generate_invoices, run_quickstart
from docevals_mlflow.quickstart.run import simulate_extraction
from tests.helpers import run

# Small sets keep the suite fast; the generator does not depend on the set's size.
DOCUMENTS = 6
WRITTEN = [
    "ground_truth.jsonl",
    "schema.yaml",
    "predictions_v1.jsonl",
    "predictions_v2.jsonl",
    "reports/prompt-v1.json",
    "reports/prompt-v1.md",
    "reports/prompt-v2.json",
    "reports/prompt-v2.md",
]


def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_generation_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    first = run_quickstart(tmp_path / "a", documents=DOCUMENTS, seed=7)
    second = run_quickstart(tmp_path / "b", documents=DOCUMENTS, seed=7)
    for name in ("ground_truth.jsonl", "predictions_v1.jsonl", "predictions_v2.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert [invoice.id for invoice in first.documents.invoices] == [
        invoice.id for invoice in second.documents.invoices
    ]

    records = read_jsonl(tmp_path / "a" / "ground_truth.jsonl")
    assert len(records) == DOCUMENTS
    for record in records:
        assert record["class"] == "Invoice"
        data = record["data"]
        assert isinstance(data, dict)
        assert 2 <= len(data["line_items"]) <= 8
        pdf = tmp_path / "a" / "documents" / f"{record['id']}.pdf"
        # Fixed metadata and no random file id: the PDFs are reproducible too.
        assert pdf.read_bytes() == (tmp_path / "b" / "documents" / pdf.name).read_bytes()
        with pymupdf.open(pdf) as document:
            assert document.page_count == 1
            text = document[0].get_text()
        assert data["invoice_number"] in text
        assert data["vendor"]["vat_id"] in text


def test_another_seed_gives_other_invoices_and_size_does_not_change_them() -> None:
    assert [i.truth() for i in generate_invoices(3, seed=7)] == [
        i.truth() for i in generate_invoices(DOCUMENTS, seed=7)[:3]
    ]
    assert [i.truth() for i in generate_invoices(3, seed=7)] != [
        i.truth() for i in generate_invoices(3, seed=8)
    ]


def test_prompt_v2_scores_higher_than_v1(tmp_path: Path) -> None:
    result = run_quickstart(tmp_path, documents=DOCUMENTS, seed=7)
    v1, v2 = result.versions
    assert (v1.prompt.run_name, v2.prompt.run_name) == ("prompt-v1", "prompt-v2")
    f1_v1, f1_v2 = v1.metrics["f1"], v2.metrics["f1"]
    assert f1_v1 is not None
    assert f1_v2 is not None
    assert f1_v2 > f1_v1
    assert len(v1.weakest_fields()) == 3


def test_confidence_is_lower_on_misread_totals() -> None:
    # Simulation only (no files): enough invoices for the rates to show.
    v1 = PROMPTS[0]
    right, wrong = [], []
    for invoice in generate_invoices(200, seed=7):
        data, confidence = simulate_extraction(invoice, v1, 7)
        misread = parse_number(data["total"]) != invoice.truth()["total"]
        (wrong if misread else right).append(confidence["$.total"])
    assert wrong
    assert right
    assert statistics.mean(wrong) < statistics.mean(right) - 0.2


def test_cli_without_mlflow_writes_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The flag alone must turn logging off, not the suite's environment variable.
    monkeypatch.delenv("DOCEVALS_NO_MLFLOW")
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "qs"
    code, out, err = run(
        capsys, "quickstart", "--output-dir", output, "--documents", DOCUMENTS, "--no-mlflow"
    )
    assert code == 0, err
    for name in WRITTEN:
        assert (output / name).is_file(), name
    assert len(list((output / "documents").glob("*.pdf"))) == DOCUMENTS
    assert not (tmp_path / "mlflow.db").exists()
    assert "prompt-v1  micro F1 " in out
    assert "prompt-v2  micro F1 " in out
    assert out.count("weakest fields: ") == 2
    assert "MLflow logging is off" in out
    assert f"open the Markdown reports in {output}/reports/" in out
    # Not a terminal: milestone lines, no carriage returns.
    assert "\r" not in err
    assert "docevals quickstart: generating invoices: done (6/6)" in err.splitlines()


def test_cli_logs_two_prompt_runs(mlflow_store: str, capsys: pytest.CaptureFixture[str]) -> None:
    from mlflow.tracking import MlflowClient

    code, out, err = run(capsys, "quickstart", "--documents", DOCUMENTS)
    assert code == 0, err
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("docevals-quickstart")
    assert experiment is not None
    runs = {run.info.run_name: run for run in client.search_runs([experiment.experiment_id])}
    assert sorted(runs) == ["prompt-v1", "prompt-v2"]
    v1, v2 = runs["prompt-v1"], runs["prompt-v2"]
    assert (v1.data.params["prompt.version"], v2.data.params["prompt.version"]) == ("v1", "v2")
    assert v1.data.params["prompt.sha256"] != v2.data.params["prompt.sha256"]
    assert v1.data.tags["docevals.quickstart"] == v2.data.tags["docevals.quickstart"] == "true"
    assert v2.data.metrics["Summary/f1"] > v1.data.metrics["Summary/f1"]
    # The default output folder, relative to the working directory (tmp_path here).
    assert (Path("docevals-quickstart") / "reports" / "prompt-v2.md").is_file()
    assert f"prompt-v1  run {v1.info.run_id}" in out
    assert f"prompt-v2  run {v2.info.run_id}" in out
    assert f"mlflow ui --backend-store-uri {mlflow_store}" in out


def test_zero_documents_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "qs"
    code, out, err = run(capsys, "quickstart", "--output-dir", output, "--documents", "0")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("docevals: error: --documents 0 is out of range")
    assert not output.exists()


def test_progress_redraws_in_place_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = ProgressDisplay(stream, command="quickstart", interval=0)
    for done in range(5):
        progress("generating invoices", done, 4)
    text = stream.getvalue()
    assert text.count("\r") == 5
    assert text.endswith("[" + "#" * ProgressDisplay.WIDTH + "] 4/4\n")
    assert text.count("\n") == 1
    # Throttled: between the first and the last call nothing is redrawn.
    throttled = Terminal()
    progress = ProgressDisplay(throttled, command="quickstart", interval=60)
    for done in range(5):
        progress("generating invoices", done, 4)
    assert throttled.getvalue().count("\r") == 2


# --- the prompt registry and the evaluation dataset ---------------------------------


def quickstart_runs(client: object, name: str = "docevals-quickstart") -> dict[str, object]:
    experiment = client.get_experiment_by_name(name)  # type: ignore[attr-defined]
    found = client.search_runs([experiment.experiment_id])  # type: ignore[attr-defined]
    # The latest run of each name (search_runs lists the newest first).
    runs: dict[str, object] = {}
    for entry in found:
        runs.setdefault(entry.info.run_name, entry)
    return runs


def test_both_prompt_versions_are_registered_and_linked_to_their_runs(
    mlflow_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(mlflow_store)
    for _ in range(2):  # run again: the same texts keep their version numbers
        code, out, err = run(capsys, "quickstart", "--documents", DOCUMENTS)
        assert code == 0, err
        runs = quickstart_runs(client)
        for number, prompt in enumerate(PROMPTS, start=1):
            logged = runs[prompt.run_name]
            uri = f"prompts:/docevals-quickstart-extract/{number}"
            assert logged.data.params["prompt.uri"] == uri  # type: ignore[attr-defined]
            linked = json.loads(logged.data.tags["mlflow.linkedPrompts"])  # type: ignore[attr-defined]
            assert linked == [{"name": "docevals-quickstart-extract", "version": str(number)}]
            assert client.load_prompt(uri).template == prompt.text
        assert "prompt-v1 = version 1, prompt-v2 = version 2" in out
    versions = client.search_prompt_versions("docevals-quickstart-extract")
    assert sorted(int(version.version) for version in versions) == [1, 2]


def test_the_ground_truth_is_an_evaluation_dataset_and_the_runs_input(
    mlflow_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlflow.tracking import MlflowClient

    code, out, err = run(capsys, "quickstart", "--documents", DOCUMENTS)
    assert code == 0, err
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("docevals-quickstart")
    (dataset,) = client.search_datasets(experiment_ids=[experiment.experiment_id])
    assert dataset.name == "docevals-quickstart-invoices"
    records = dataset.to_df()
    truth = read_jsonl(Path("docevals-quickstart") / "ground_truth.jsonl")
    assert sorted(entry["document_id"] for entry in records["inputs"]) == sorted(
        str(record["id"]) for record in truth
    )
    first = truth[0]
    (expected,) = [
        row["expectations"]
        for _, row in records.iterrows()
        if row["inputs"]["document_id"] == first["id"]
    ]
    assert expected == first["data"]
    for logged in quickstart_runs(client).values():
        (entry,) = logged.inputs.dataset_inputs  # type: ignore[attr-defined]
        assert entry.dataset.name == "docevals-quickstart-invoices"
        assert json.loads(entry.dataset.profile) == {"num_rows": DOCUMENTS}
        assert {tag.key: tag.value for tag in entry.tags}["mlflow.data.context"] == ("ground_truth")
    assert f"'docevals-quickstart-invoices' (Datasets tab): {DOCUMENTS} records" in out
    # Another seed changes the ground truth: the records are replaced, not added to.
    code, out, err = run(capsys, "quickstart", "--documents", "3", "--seed", "11")
    assert code == 0, err
    (dataset,) = client.search_datasets(experiment_ids=[experiment.experiment_id])
    assert len(dataset.to_df()) == 3


def test_registry_trouble_is_a_warning_and_the_runs_are_logged(
    mlflow_store: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(mlflow_store)
    # A dataset of that name docevals did not make is left alone.
    client.create_dataset(name="docevals-quickstart-invoices")
    monkeypatch.setenv("DOCEVALS_PROMPT_REGISTRY", "0")
    code, out, err = run(capsys, "quickstart", "--documents", DOCUMENTS)
    assert code == 0, err
    assert "docevals: warning: a GenAI evaluation dataset named" in err
    assert "Prompts page" not in out
    assert "Datasets tab" not in out
    runs = quickstart_runs(client)
    assert sorted(runs) == ["prompt-v1", "prompt-v2"]
    assert "mlflow.linkedPrompts" not in runs["prompt-v1"].data.tags  # type: ignore[attr-defined]
    assert client.search_prompts() == []
