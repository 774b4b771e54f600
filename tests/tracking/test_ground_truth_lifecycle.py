"""The whole ground-truth lifecycle, end to end, with in-process fake providers:
generate → log the generation → review file → edit → approve (signed) → register →
load → evaluate against the registered dataset."""

from __future__ import annotations

import json
import re

from mlflow.tracking import MlflowClient

from docevals_mlflow import (
    GroundTruthPanel,
    apply_decisions,
    approve_review,
    artifact_from_value,
    generate_keypair,
    load_ground_truth,
    load_review,
    log_generation,
    write_approved,
    write_ground_truth_review,
)
from docevals_mlflow.cli import main
from tests.groundtruth.generation_fakes import reader

FIELDS = ["$.currency", "$.amount", "$.account_name"]


def test_generate_review_approve_register_load_evaluate(mlflow_store, tmp_path, capsys):
    # 1. Two providers read the statement; they disagree on the amount.
    panel = GroundTruthPanel(
        {
            "openai": reader(
                {"$.currency": "EUR", "$.amount": 12.5, "$.account_name": "Ann"}, model="gpt"
            ),
            "claude": reader(
                {"$.currency": "EUR", "$.amount": 12.05, "$.account_name": "Ann"}, model="sonnet"
            ),
        },
        extraction_instruction="Extract currency, amount and account name.",
        expected_fields=FIELDS,
    )
    evidence = artifact_from_value("EUR 12.50, Ann", authority="evidence", artifact_id="ocr")
    report = panel.generate("statement-001", [evidence])
    assert report.requires_human_review

    # 2. Review file, logged with the generation as a generation run.
    review_path = write_ground_truth_review(report, tmp_path / "review" / "statement-001.json")
    generation = log_generation(report, review_files=[review_path])
    run = MlflowClient(mlflow_store).get_run(generation.run_id)
    assert run.data.tags["docevals.kind"] == "generation"
    assert run.data.metrics["generation/fields_disputed"] == 1
    assert run.data.metrics["generation/fields_agreed"] == 2

    # 3. A person decides the disputed amount and approves with a signature.
    decided = apply_decisions(load_review(review_path), set={"$.amount": 12.5})
    write_ground_truth_review(decided, review_path, overwrite=True)
    private, public = generate_keypair(tmp_path / "keys" / "ann")
    approved = approve_review(review_path, "ann@example.com", signing_key=private)
    write_approved(approved, tmp_path / "approved" / "statement-001.json")

    # 4. Registered from the folder of approved files, against the pinned key.
    argv = ["register-dataset", "statements", "--from", str(tmp_path / "approved")]
    assert main([*argv, "--public-key", str(public)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "statements@1"
    assert out.splitlines()[2].endswith("approved by ann@example.com; signatures trusted")

    # 5. Loaded back and verified against the same key.
    dataset = load_ground_truth("statements", public_key=public)
    assert dataset.signatures == "trusted"
    assert dataset.document("statement-001") == {
        "currency": "EUR",
        "amount": 12.5,
        "account_name": "Ann",
    }
    assert dataset.cases["statement-001"].record.generation_sha256 == report.digest

    # 6. An extraction evaluated against it: the run names the dataset version.
    prediction = tmp_path / "statement-001.json"
    prediction.write_text(
        json.dumps({"currency": "EUR", "amount": 12.5, "account_name": "Ann"}), encoding="utf-8"
    )
    code = main(
        [
            "evaluate-case",
            "--prediction",
            str(prediction),
            "--ground-truth-dataset",
            "statements@1",
            "--public-key",
            str(public),
            "--output",
            str(tmp_path / "case.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "signatures trusted" in out
    run_id = re.search(r"MLflow run ([0-9a-f]{32})", out).group(1)
    params = MlflowClient(mlflow_store).get_run(run_id).data.params
    assert (params["dataset.name"], params["dataset.version"]) == ("statements", "1")
    assert params["dataset.digest"] == dataset.digest
