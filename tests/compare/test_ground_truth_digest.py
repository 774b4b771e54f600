"""``docevals compare`` decides "same ground truth" by content digest, through real
logged field runs: renaming the expected file is not a change, editing it is."""

from __future__ import annotations

from pathlib import Path

from docevals_mlflow import compare_documents, compare_runs, load_run_snapshot, log_field_comparison
from tests.tracking.invoices import SCHEMA

DOCUMENTS = [
    {
        "id": "a",
        "class": "Invoice",
        "expected": {"number": "1", "total": "10.00", "lines": [{"sku": "X"}]},
        "predicted": {"number": "1", "total": 10, "lines": [{"sku": "X"}]},
    },
    {
        "id": "b",
        "class": "Invoice",
        "expected": {"number": "2", "total": "5.00", "lines": [{"sku": "Y"}]},
        "predicted": {"number": "3", "total": 5, "lines": [{"sku": "Y"}]},
    },
]


def logged(name: str, ground_truth: Path) -> str:
    batch = compare_documents(DOCUMENTS, SCHEMA)
    return log_field_comparison(
        batch, run_name=name, experiment="truths", ground_truth=ground_truth
    ).run_id


def test_a_renamed_ground_truth_file_is_the_same_ground_truth(mlflow_store, tmp_path):
    content = '{"id": "a", "data": {"number": "1"}}\n'
    first = tmp_path / "expected.jsonl"
    first.write_text(content, encoding="utf-8")
    renamed = tmp_path / "ground-truth-2026.jsonl"
    renamed.write_text(content, encoding="utf-8")
    edited = tmp_path / "edited.jsonl"
    edited.write_text(content.replace('"1"', '"7"'), encoding="utf-8")
    baseline = load_run_snapshot(logged("v1", first))
    same = load_run_snapshot(logged("v2", renamed))
    other = load_run_snapshot(logged("v3", edited))
    assert list(same.datasets) == ["ground-truth-2026"]

    pair, changed = compare_runs(baseline, same, other, resamples=200).pairs
    assert pair.changes.datasets == []
    assert not any("different ground truth" in note for note in pair.notes)
    assert [entry.name for entry in changed.changes.datasets] == ["edited", "expected"]
    assert any("different ground truth (edited, expected)" in note for note in changed.notes)
