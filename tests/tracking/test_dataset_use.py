"""Using a loaded dataset: references for pipeline stages, pairs for field comparisons,
and what an evaluation run records (no MLflow store needed)."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from docevals_mlflow import EvaluationCase, PipelineCase, artifact_from_value
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.records import ApprovalRecord, ApprovedGroundTruth, content_digest
from docevals_mlflow.tracking.bundle import BundleWriter, DatasetInput
from docevals_mlflow.tracking.dataset_models import DatasetNotFoundError, GroundTruthDataset
from docevals_mlflow.tracking.dataset_use import (
    AD_HOC_INPUT,
    DATASET_INPUT,
    attach_to_pipeline,
    dataset_pairs,
    has_other_ground_truth,
    record_dataset_use,
)


def approved(case_id: str, rows: list[dict]) -> ApprovedGroundTruth:
    return ApprovedGroundTruth(
        case_id=case_id,
        rows=rows,
        record=ApprovalRecord(
            case_id=case_id,
            approved_by="ann",
            approved_at="2026-01-31T09:30:00Z",
            content_sha256=content_digest(rows),
        ),
    )


CASES = {
    "a": approved("a", [{"path": "$.total", "expected": 1}]),
    "b": approved("b", [{"path": "$.total", "expected": 2}, {"path": "$.id", "expected": "0042"}]),
}
DATASET = GroundTruthDataset(
    name="invoices",
    version=3,
    digest="d" * 32,
    run_id="r" * 32,
    experiment_id="1",
    created_at="2026-02-01T00:00:00Z",
    cases=CASES,
)


def stage(stage_id: str, case_id: str = "a", depends_on=(), references=()) -> EvaluationCase:
    return EvaluationCase(
        case_id=case_id,
        stage_id=stage_id,
        input_data="x",
        prediction={"total": 1},
        depends_on=list(depends_on),
        references=list(references),
    )


def test_references_are_made_on_demand_and_name_the_dataset():
    reference = DATASET.reference("b")
    assert DATASET.reference("b") is reference
    assert reference.authority == "ground_truth"
    assert reference.content == CASES["b"].rows
    assert reference.metadata["dataset"] == "invoices"
    assert reference.metadata["dataset_version"] == 3
    assert reference.metadata["dataset_digest"] == "d" * 32
    assert reference.metadata["approval"] == CASES["b"].record.model_dump(mode="json")
    assert sorted(DATASET.references) == ["a", "b"]


def test_the_final_stages_get_the_ground_truth_by_default():
    pipeline = PipelineCase(
        pipeline_id="p",
        stages=[
            stage("ocr"),
            stage("extract", depends_on=["ocr"]),
            stage("classify", case_id="b", depends_on=["ocr"]),
        ],
    )
    updated = attach_to_pipeline(pipeline, DATASET)
    refs = {s.stage_id: [r.id for r in s.references] for s in updated.stages}
    assert refs == {"ocr": [], "extract": ["a-ground-truth"], "classify": ["b-ground-truth"]}
    # The original pipeline is left as it was.
    assert all(not s.references for s in pipeline.stages)
    named = attach_to_pipeline(pipeline, DATASET, ["ocr"])
    assert [bool(s.references) for s in named.stages] == [True, False, False]


def test_unknown_stages_and_cases_are_errors():
    pipeline = PipelineCase(pipeline_id="p", stages=[stage("only", case_id="zzz")])
    with pytest.raises(InputError, match=r"has no stage 'nope'.*one of 'only'"):
        attach_to_pipeline(pipeline, DATASET, ["nope"])
    with pytest.raises(DatasetNotFoundError, match="invoices@3 has no case 'zzz'"):
        attach_to_pipeline(pipeline, DATASET)


def test_other_ground_truth_is_noticed():
    own = artifact_from_value({"total": 1}, authority="ground_truth", artifact_id="own")
    evidence = artifact_from_value("scan", authority="evidence", artifact_id="scan")
    assert has_other_ground_truth([stage("x", references=[own])], DATASET)
    assert not has_other_ground_truth([stage("x", references=[evidence])], DATASET)
    assert not has_other_ground_truth([stage("x", references=[DATASET.reference("a")])], DATASET)


def test_the_run_records_the_dataset_and_drops_the_derived_input():
    writer = BundleWriter()
    writer.dataset(
        DatasetInput(name="a-ground-truth", digest="x", source="a", records=AD_HOC_INPUT),
        pd.DataFrame([{"reference_id": "a-ground-truth"}]),
    )
    record_dataset_use(writer, DATASET, ["b", "a", "a"])
    assert writer.bundle.params == {
        "dataset.name": "invoices",
        "dataset.version": "3",
        "dataset.digest": "d" * 32,
    }
    (entry,) = writer.bundle.inputs
    assert (entry.name, entry.digest, entry.context) == ("invoices", "d" * 32, "ground_truth")
    assert entry.source == f"runs:/{'r' * 32}/ground_truth/records.parquet"
    assert entry.tags == {"docevals.dataset.version": "3"}
    assert AD_HOC_INPUT not in writer.files
    table = pd.read_parquet(io.BytesIO(writer.files[DATASET_INPUT]))
    assert table.to_dict("records") == [
        {"case_id": "a", "content_sha256": CASES["a"].record.content_sha256},
        {"case_id": "b", "content_sha256": CASES["b"].record.content_sha256},
    ]


def test_the_derived_input_stays_when_other_ground_truth_was_used():
    writer = BundleWriter()
    writer.dataset(
        DatasetInput(name="p-ground-truth", digest="x", source="p", records=AD_HOC_INPUT),
        pd.DataFrame([{"reference_id": "own"}]),
    )
    record_dataset_use(writer, DATASET, replace_derived_input=False)
    assert [entry.name for entry in writer.bundle.inputs] == ["p-ground-truth", "invoices"]


def test_predictions_pair_with_cases_by_id(tmp_path):
    predicted = tmp_path / "predicted.jsonl"
    predicted.write_text(
        "\n".join(
            json.dumps(record)
            for record in (
                {"id": "x", "data": {"total": 9}},
                {"id": "b", "class": "Invoice", "data": {"total": 2, "id": "42"}},
            )
        )
        + "\n",
        encoding="utf-8",
    )
    pairs, expected_only, predicted_only = dataset_pairs(DATASET, predicted)
    assert (expected_only, predicted_only) == (["a"], ["x"])
    (pair,) = list(pairs)
    assert pair.id == "b"
    assert pair.document_class == "Invoice"
    assert pair.expected == {"total": 2, "id": "0042"}
    assert pair.predicted == {"total": 2, "id": "42"}
