"""``register-dataset``, ``datasets`` and ``--ground-truth-dataset`` on the evaluation commands."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main
from docevals_mlflow.groundtruth.approval import write_approved
from docevals_mlflow.groundtruth.signing import generate_keypair
from docevals_mlflow.tracking.datasets import register_ground_truth_dataset
from tests.groundtruth.approval_fakes import KEY, approved
from tests.helpers import write_json

CASES = [
    approved(
        "inv-a", [{"path": "$.number", "expected": "0123"}, {"path": "$.total", "expected": 10}]
    ),
    approved("inv-b", [{"path": "$.number", "expected": "7"}], by="bob"),
]


def run_id_from(output: str) -> str:
    match = re.search(r"MLflow run ([0-9a-f]{32})", output)
    assert match, output
    return match.group(1)


def test_register_dataset_from_approved_files(mlflow_store, tmp_path, capsys):
    private, public = generate_keypair(tmp_path / "keys" / "ann")
    folder = tmp_path / "approved"
    for case in CASES:
        write_approved(case, folder / f"{case.case_id}.json")
    unsigned = approved("inv-c", [{"path": "$.number", "expected": "9"}], key=None)
    write_approved(unsigned, tmp_path / "inv-c.json")
    base = ["register-dataset", "invoices", "--from", str(folder)]

    assert main([*base, "--description", "first batch"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "invoices@1"
    run_id = re.fullmatch(r"run: ([0-9a-f]{32}) \(sqlite:.*\)", lines[1]).group(1)
    assert lines[2].startswith("digest: ")
    assert lines[2].endswith("2 cases, 3 rows; approved by ann, bob; signatures unpinned")
    run = MlflowClient(mlflow_store).get_run(run_id)
    assert run.data.tags["docevals.dataset.description"] == "first batch"

    assert main(base) == 0
    out = capsys.readouterr().out
    assert out.startswith("invoices@1\n")
    assert "unchanged: version 1 already holds" in out

    # An unsigned approval needs --allow-unsigned; a pinned key must have signed all.
    with_unsigned = [*base, "--from", str(tmp_path / "inv-c.json")]
    assert main(with_unsigned) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"docevals: error: {tmp_path / 'inv-c.json'}")
    assert "unsigned" in err
    assert main([*with_unsigned, "--allow-unsigned"]) == 0
    assert capsys.readouterr().out.startswith("invoices@2\n")
    assert main([*base, "--public-key", str(public)]) == 2
    assert "key mismatch" in capsys.readouterr().err
    assert private.exists()  # the private key stays where keygen put it
    assert main([*base, "--public-key", KEY.public_key.openssh(), "--force"]) == 0
    assert capsys.readouterr().out.splitlines()[2].endswith("signatures trusted")

    assert main([*base, "--public-key", str(tmp_path / "nope.pub")]) == 2
    assert "public key file not found" in capsys.readouterr().err
    assert main(["register-dataset", "bad@name", "--from", str(folder)]) == 2
    assert "invalid dataset name 'bad@name'" in capsys.readouterr().err
    assert main(["register-dataset", "x", "--from", str(tmp_path / "missing.json")]) == 2
    assert "approved file not found" in capsys.readouterr().err


def test_datasets_lists_versions(mlflow_store, capsys):
    assert main(["datasets"]) == 0
    assert capsys.readouterr().out.startswith("no ground-truth datasets registered (sqlite:")
    first = register_ground_truth_dataset("invoices", CASES)
    register_ground_truth_dataset("invoices", CASES[:1])
    assert main(["datasets", "invoices"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("|")[1:-1] == [
        " name ",
        " version ",
        " cases ",
        " rows ",
        " digest ",
        " approvers ",
        " created ",
        " run ",
    ]
    assert f"| invoices | 1 | 2 | 3 | {first.digest} | ann, bob |" in lines[2]
    assert lines[3].startswith("| invoices | 2 | 1 | 2 |")
    assert main(["datasets", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(entry["name"], entry["version"]) for entry in listed] == [
        ("invoices", 1),
        ("invoices", 2),
    ]
    assert main(["datasets", "nope"]) == 2
    assert capsys.readouterr().err == "docevals: error: no ground-truth dataset named 'nope'\n"


def test_evaluate_case_against_a_registered_dataset(mlflow_store, tmp_path, capsys):
    version = register_ground_truth_dataset("invoices", CASES)
    prediction = write_json(tmp_path / "inv-a.json", {"number": "0123", "total": 11})
    code = main(
        [
            "evaluate-case",
            "--prediction",
            str(prediction),
            "--ground-truth-dataset",
            "invoices@1",
            "--output",
            str(tmp_path / "case.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1  # the total is wrong
    assert f"ground truth: invoices@1 (2 cases, digest {version.digest}" in out
    run = MlflowClient(mlflow_store).get_run(run_id_from(out))
    params = run.data.params
    assert params["dataset.name"] == "invoices"
    assert params["dataset.version"] == "1"
    assert params["dataset.digest"] == version.digest
    # One ground_truth input: the registered dataset, with the digest of its approval run.
    (dataset_input,) = run.inputs.dataset_inputs
    assert (dataset_input.dataset.name, dataset_input.dataset.digest) == (
        "invoices",
        version.digest,
    )
    report = json.loads((tmp_path / "case.json").read_text(encoding="utf-8"))
    (reference,) = report["reference_summary"]
    assert reference["id"] == "inv-a-ground-truth"
    assert reference["authority"] == "ground_truth"
    assert reference["sha256"] == CASES[0].record.content_sha256


def test_evaluate_case_errors_are_one_line(mlflow_store, tmp_path, capsys):
    register_ground_truth_dataset("invoices", CASES)
    prediction = write_json(tmp_path / "unknown-case.json", {"number": "7"})
    truth = write_json(tmp_path / "truth.json", {"number": "1"})
    base = ["evaluate-case", "--prediction", str(prediction), "--output", str(tmp_path / "c.json")]
    assert main([*base, "--ground-truth-dataset", "invoices"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "docevals: error: dataset invoices@1 has no case 'unknown-case' "
        "(expected one of 'inv-a', 'inv-b')\n"
    )
    assert main([*base, "--ground-truth-dataset", "invoices", "--case-id", "inv-b"]) == 0
    capsys.readouterr()
    args = [*base, "--ground-truth-dataset", "invoices", "--ground-truth", str(truth)]
    assert main(args) == 2
    assert "both give ground truth" in capsys.readouterr().err
    assert main([*base, "--ground-truth-dataset", "invoices@9"]) == 2
    assert capsys.readouterr().err.endswith("has no version 9 (expected one of 1)\n")
    assert main([*base, "--ground-truth-dataset", "invoices@x"]) == 2
    assert "invalid dataset version" in capsys.readouterr().err


def test_evaluate_pipeline_gives_the_dataset_to_the_final_stage(mlflow_store, tmp_path, capsys):
    version = register_ground_truth_dataset("invoices", CASES)
    config = write_json(
        tmp_path / "pipeline.json",
        {
            "pipeline_id": "inv-a",
            "stages": [
                {"stage_id": "ocr", "input_data": "scan", "prediction": "No 0123 total 10"},
                {
                    "stage_id": "extract",
                    "input_from": "ocr",
                    "prediction": {"number": "0123", "total": 10},
                    "depends_on": ["ocr"],
                },
            ],
        },
    )
    output = tmp_path / "pipeline-report.json"
    assert main(["evaluate-pipeline", str(config), "--ground-truth-dataset", "invoices",
                 "--output", str(output)]) == 0  # fmt: skip
    run = MlflowClient(mlflow_store).get_run(run_id_from(capsys.readouterr().out))
    assert run.data.params["dataset.digest"] == version.digest
    report = json.loads(output.read_text(encoding="utf-8"))
    stages = {stage["stage_id"]: stage for stage in report["stage_reports"]}
    assert stages["ocr"]["reference_summary"] == []
    assert [ref["id"] for ref in stages["extract"]["reference_summary"]] == ["inv-a-ground-truth"]
    assert stages["extract"]["verdict"] == "pass"
    assert main(["evaluate-pipeline", str(config), "--ground-truth-dataset", "invoices",
                 "--dataset-stage", "nope", "--output", str(output)]) == 2  # fmt: skip
    assert "has no stage 'nope'" in capsys.readouterr().err
    assert main(["evaluate-pipeline", str(config), "--dataset-stage", "ocr",
                 "--output", str(output)]) == 2  # fmt: skip
    assert "--dataset-stage needs --ground-truth-dataset" in capsys.readouterr().err


def test_fields_against_a_registered_dataset(mlflow_store, tmp_path, capsys):
    version = register_ground_truth_dataset("invoices", CASES)
    predicted = tmp_path / "predicted.jsonl"
    predicted.write_text(
        json.dumps({"id": "inv-a", "data": {"number": "0123", "total": 10}})
        + "\n"
        + json.dumps({"id": "stray", "data": {"number": "1"}})
        + "\n",
        encoding="utf-8",
    )
    output = tmp_path / "fields.json"
    argv = ["fields", "--ground-truth-dataset", "invoices", "--predicted", str(predicted)]
    assert main([*argv, "--output", str(output)]) == 0
    out = capsys.readouterr().out
    report = json.loads(output.read_text(encoding="utf-8"))
    assert report["overall"]["documents"] == 1
    assert report["overall"]["counts"]["tp"] == 2
    assert report["unpaired"] == {"expected_only": ["inv-b"], "predicted_only": ["stray"]}
    run = MlflowClient(mlflow_store).get_run(run_id_from(out))
    assert run.data.params["dataset.version"] == "1"
    (dataset_input,) = run.inputs.dataset_inputs
    assert dataset_input.dataset.digest == version.digest
    used = pd.read_parquet(
        MlflowClient(mlflow_store).download_artifacts(
            run.info.run_id, "inputs/ground_truth_dataset.parquet", str(tmp_path)
        )
    )
    assert used["case_id"].tolist() == ["inv-a"]


def test_fields_needs_exactly_one_source_of_ground_truth(tmp_path, capsys):
    argv = ["fields", "--predicted", "p.jsonl", "--output", str(tmp_path / "o.json")]
    with pytest.raises(SystemExit) as caught:
        main([*argv, "--expected", "e.jsonl", "--ground-truth-dataset", "invoices"])
    assert caught.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(argv)
    assert "one of the arguments --expected --ground-truth-dataset is required" in (
        capsys.readouterr().err
    )
