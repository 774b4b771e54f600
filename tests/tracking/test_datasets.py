"""Registered ground-truth datasets: approval runs, versions, loading, tampering."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.errors import ApprovalError, InputError
from docevals_mlflow.groundtruth.records import content_digest
from docevals_mlflow.groundtruth.signing import SigningKey
from docevals_mlflow.tracking import datasets as datasets_module
from docevals_mlflow.tracking.approval_runs import claim_version, public_uri
from docevals_mlflow.tracking.dataset_content import DatasetIntegrityError, dataset_digest
from docevals_mlflow.tracking.datasets import (
    DatasetNotFoundError,
    list_ground_truth_datasets,
    load_ground_truth,
    parse_dataset_spec,
    register_ground_truth_dataset,
)
from docevals_mlflow.tracking.genai_mirror import mirror_dataset
from tests.groundtruth.approval_fakes import KEY, approved

OTHER_KEY = SigningKey.generate()


INVOICE_A = approved(
    "inv-a",
    [
        {"path": "$.number", "expected": "0123"},
        {"path": "$.total", "expected": 10.5},
        {"path": "$.lines[0].sku", "expected": "X"},
    ],
)
INVOICE_B = approved("inv-b", [{"path": "$.number", "expected": "7"}], by="bob")
INVOICE_B2 = approved("inv-b", [{"path": "$.number", "expected": "8"}], by="bob")
RECEIPT = approved("rec-1", [{"path": "$.total", "expected": 3}], by="cy")


def artifact_root(uri: str, run_id: str) -> Path:
    from mlflow.utils.file_utils import local_file_uri_to_path

    return Path(local_file_uri_to_path(MlflowClient(uri).get_run(run_id).info.artifact_uri))


def test_versions_per_name_resolve_by_name_version_and_latest(mlflow_store, tmp_path):
    first = register_ground_truth_dataset("invoices", [INVOICE_A, INVOICE_B], description="Q1")
    store = MlflowClient(mlflow_store)._tracking_client.store
    before = {
        record.inputs["case_id"]: record.dataset_record_id
        for record in store._load_dataset_records(first.genai_dataset_id, max_results=None)[0]
    }
    receipts = register_ground_truth_dataset("receipts", RECEIPT)
    again = register_ground_truth_dataset("invoices", [INVOICE_B, INVOICE_A])
    second = register_ground_truth_dataset("invoices", [INVOICE_A, INVOICE_B2])
    forced = register_ground_truth_dataset("invoices", [INVOICE_A, INVOICE_B2], force=True)

    assert (first.version, receipts.version, second.version, forced.version) == (1, 1, 2, 3)
    assert first.spec == "invoices@1"
    assert first.digest == dataset_digest([INVOICE_A, INVOICE_B])
    assert len(first.digest) == 32
    assert (first.cases, first.records, first.approvers) == (2, 4, ["ann", "bob"])
    assert first.created_at.endswith("Z")
    assert first.tracking_uri == mlflow_store
    # The same content again is the same version, and nothing new is logged.
    assert again.already_registered
    assert again.run_id == first.run_id
    assert again.version == 1
    assert forced.digest == second.digest
    assert not forced.already_registered

    latest = load_ground_truth("invoices")
    assert (latest.version, latest.run_id, latest.digest) == (3, forced.run_id, forced.digest)
    assert load_ground_truth("invoices", 2).run_id == second.run_id
    old = load_ground_truth("invoices@1")
    assert old.description == "Q1"
    assert old.case_ids == ["inv-a", "inv-b"]
    assert old.cases["inv-b"].rows == INVOICE_B.rows
    assert old.cases["inv-a"].record == INVOICE_A.record
    assert old.document("inv-a") == {"number": "0123", "total": 10.5, "lines": [{"sku": "X"}]}
    assert old.signatures == "unpinned"
    reference = old.reference("inv-a")
    assert reference.id == "inv-a-ground-truth"
    assert reference.authority == "ground_truth"
    assert reference.content == INVOICE_A.rows
    assert reference.metadata["content_sha256"] == INVOICE_A.record.content_sha256
    assert reference.metadata["dataset"] == "invoices"
    assert reference.metadata["dataset_version"] == 1
    assert old.run_params() == {
        "dataset.name": "invoices",
        "dataset.version": "1",
        "dataset.digest": first.digest,
    }
    assert load_ground_truth("receipts", "latest").case_ids == ["rec-1"]

    listed = list_ground_truth_datasets()
    assert [(v.name, v.version) for v in listed] == [
        ("invoices", 1),
        ("invoices", 2),
        ("invoices", 3),
        ("receipts", 1),
    ]
    assert [v.version for v in list_ground_truth_datasets("receipts")] == [1]

    # The approval run: tags, params, artifacts and the ground_truth input.
    client = MlflowClient(mlflow_store)
    run = client.get_run(first.run_id)
    tags, params = run.data.tags, run.data.params
    assert tags["docevals.kind"] == "approval"
    assert tags["docevals.dataset.name"] == "invoices"
    assert tags["docevals.dataset.version"] == "1"
    assert tags["docevals.dataset.approvers"] == "ann, bob"
    assert tags["docevals.dataset.signatures"] == "unpinned"
    assert tags["docevals.dataset.key_ids"] == KEY.key_id
    assert tags["mlflow.note.content"].startswith(
        "**docevals ground truth** `invoices` version **1**"
    )
    assert run.info.run_name == "invoices v1"
    assert client.get_experiment(run.info.experiment_id).name == "docevals-ground-truth"
    assert params["dataset.digest"] == first.digest
    assert (params["dataset.cases"], params["dataset.records"]) == ("2", "4")
    (dataset_input,) = run.inputs.dataset_inputs
    assert dataset_input.dataset.name == "invoices"
    assert dataset_input.dataset.digest == first.digest
    assert {tag.key: tag.value for tag in dataset_input.tags}[
        "mlflow.data.context"
    ] == "ground_truth"
    root = artifact_root(mlflow_store, first.run_id)
    records = pd.read_parquet(root / "ground_truth" / "records.parquet")
    assert list(records.columns[:4]) == ["case_id", "row", "path", "expected"]
    assert records["expected"].tolist() == ['"0123"', "10.5", '"X"', '"7"']
    assert records["approved_by"].tolist() == ["ann", "ann", "ann", "bob"]
    approvals = json.loads((root / "approvals" / "records.json").read_text(encoding="utf-8"))
    assert [record["case_id"] for record in approvals] == ["inv-a", "inv-b"]

    # The GenAI evaluation dataset mirrors the latest version exactly.
    assert first.genai_dataset_id is not None
    assert first.genai_dataset_id == forced.genai_dataset_id
    mirrored = client.get_dataset(forced.genai_dataset_id)
    assert mirrored.name == "invoices"
    assert mirrored.tags["docevals.dataset.version"] == "3"
    assert mirrored.tags["docevals.dataset.digest"] == forced.digest
    stored, _ = store._load_dataset_records(forced.genai_dataset_id, max_results=None)
    by_case = {record.inputs["case_id"]: record for record in stored}
    assert sorted(by_case) == ["inv-a", "inv-b"]
    assert by_case["inv-b"].expectations == {"number": "8"}
    assert by_case["inv-b"].tags["docevals.content_sha256"] == INVOICE_B2.record.content_sha256
    # The unchanged case kept its record; the changed one was written anew, not merged.
    assert by_case["inv-a"].dataset_record_id == before["inv-a"]
    assert by_case["inv-b"].dataset_record_id != before["inv-b"]
    # Without the mirror, the run says nothing about it.
    quiet = register_ground_truth_dataset("receipts", [RECEIPT, INVOICE_A], genai_dataset=False)
    assert quiet.genai_dataset_id is None
    assert quiet.warnings == []


def test_unknown_names_and_versions_say_what_exists(mlflow_store):
    register_ground_truth_dataset("invoices", [INVOICE_A])
    with pytest.raises(
        DatasetNotFoundError, match=r"no ground-truth dataset named 'nope'.*'invoices'"
    ):
        load_ground_truth("nope")
    with pytest.raises(DatasetNotFoundError, match=r"has no version 4 \(expected one of 1\)"):
        load_ground_truth("invoices", 4)
    with pytest.raises(DatasetNotFoundError, match=r"no case 'zzz' \(expected one of 'inv-a'\)"):
        load_ground_truth("invoices").reference("zzz")
    with pytest.raises(InputError, match="not both"):
        load_ground_truth("invoices@1", 1)


def test_tampered_artifacts_are_refused(mlflow_store):
    version = register_ground_truth_dataset("invoices", [INVOICE_A, INVOICE_B])
    root = artifact_root(mlflow_store, version.run_id)
    approved_file = root / "ground_truth" / "approved.json"
    records_file = root / "ground_truth" / "records.parquet"
    approvals_file = root / "approvals" / "records.json"
    originals = {path: path.read_bytes() for path in (approved_file, records_file, approvals_file)}

    def tampered(path: Path, edit) -> ApprovalError:
        path.write_bytes(edit(originals[path]))
        try:
            with pytest.raises(DatasetIntegrityError) as caught:
                load_ground_truth("invoices")
        finally:
            path.write_bytes(originals[path])
        return caught.value

    # A value changed in the approved cases: the rows no longer match their record.
    error = tampered(approved_file, lambda data: data.replace(b'"0123"', b'"0124"'))
    assert error.reason == "content_digest"
    assert error.record == "inv-a"
    assert "changed after approval" in str(error)
    # ... and the record's digest changed to match: the signature no longer verifies.
    document = json.loads(originals[approved_file])
    document["cases"][0]["rows"][0]["expected"] = "0124"
    document["cases"][0]["record"]["content_sha256"] = content_digest(document["cases"][0]["rows"])
    error = tampered(approved_file, lambda _: json.dumps(document).encode())
    assert error.reason == "signature"
    # A case dropped.
    document = json.loads(originals[approved_file])
    del document["cases"][1]
    tampered(approved_file, lambda _: json.dumps(document).encode())
    # The Parquet table edited.
    frame = pd.read_parquet(records_file)
    frame.loc[3, "expected"] = '"8"'
    error = tampered(records_file, lambda _: frame.to_parquet(index=False))
    assert "first difference: case 'inv-b', path $.number" in str(error)
    tampered(records_file, lambda data: data[:100])
    # The audit copy of the approval records edited.
    tampered(approvals_file, lambda data: data.replace(b'"bob"', b'"eve"'))
    # A file removed from the store.
    approvals_file.unlink()
    with pytest.raises(DatasetIntegrityError, match="approvals"):
        load_ground_truth("invoices")
    approvals_file.write_bytes(originals[approvals_file])
    # Everything restored: loads again.
    assert load_ground_truth("invoices").version == 1


def test_cases_that_do_not_match_their_approval_are_not_registered(mlflow_store):
    edited = INVOICE_A.model_copy(update={"rows": [{"path": "$.number", "expected": "9"}]})
    with pytest.raises(DatasetIntegrityError, match="changed after approval"):
        register_ground_truth_dataset("invoices", [edited])
    with pytest.raises(InputError, match=r"item 2: case 'inv-a' is given twice \(also in item 1\)"):
        register_ground_truth_dataset("invoices", [INVOICE_A, INVOICE_A])
    with pytest.raises(InputError, match="nothing to register"):
        register_ground_truth_dataset("invoices", [])
    with pytest.raises(InputError, match="invalid dataset name"):
        register_ground_truth_dataset("in'voices", [INVOICE_A])
    with pytest.raises(InputError, match="cannot register a dict"):
        register_ground_truth_dataset("invoices", [{"case_id": "x"}])
    assert list_ground_truth_datasets() == []


def test_a_failed_registration_frees_its_version(mlflow_store, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    with monkeypatch.context() as patched:
        patched.setattr(datasets_module, "log_bundle", broken)
        with pytest.raises(OSError, match="disk full"):
            register_ground_truth_dataset("invoices", [INVOICE_A])
    failed = MlflowClient(mlflow_store).search_runs(
        [MlflowClient(mlflow_store).get_experiment_by_name("docevals-ground-truth").experiment_id]
    )
    assert [run.info.status for run in failed] == ["FAILED"]
    assert "docevals.dataset.version" not in failed[0].data.tags
    assert register_ground_truth_dataset("invoices", [INVOICE_A]).version == 1


def test_a_version_claimed_by_an_earlier_run_moves_the_later_one_on(mlflow_store):
    client = MlflowClient(mlflow_store)
    experiment_id = client.create_experiment("race")
    tags = {"docevals.kind": "approval", "docevals.dataset.name": "invoices"}
    earlier = client.create_run(experiment_id, tags=tags, start_time=1000)
    later = client.create_run(experiment_id, tags=tags, start_time=2000)
    client.set_tag(earlier.info.run_id, "docevals.dataset.version", "1")
    assert claim_version(client, "invoices", later, 1) == 2
    # The earlier run keeps its number even when it checks last.
    assert claim_version(client, "invoices", earlier, 1) == 1


def test_a_foreign_genai_dataset_of_the_same_name_is_left_alone(mlflow_store):
    client = MlflowClient(mlflow_store)
    foreign = client.create_dataset(name="invoices", experiment_id=["0"], tags={"team": "qa"})
    version = register_ground_truth_dataset("invoices", [INVOICE_A])
    assert version.genai_dataset_id is None
    assert "did not create" in version.warnings[0]
    run = client.get_run(version.run_id)
    assert "did not create" in run.data.tags["docevals.warning.genai_dataset"]
    assert client.get_dataset(foreign.dataset_id).tags.get("docevals.managed") is None
    assert load_ground_truth("invoices").version == 1


def test_a_store_without_genai_datasets_gives_a_warning_not_an_error():
    class FileStoreClient:
        def search_datasets(self, **_):
            raise NotImplementedError("FileStore does not support evaluation datasets")

    dataset_id, warning = mirror_dataset(
        FileStoreClient(),
        name="invoices",
        version=1,
        digest="0" * 32,
        run_id="r",
        experiment_id="1",
        cases=[INVOICE_A],
    )
    assert dataset_id is None
    assert warning == (
        "GenAI evaluation dataset not updated (NotImplementedError: FileStore does not "
        "support evaluation datasets)"
    )


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("invoices", ("invoices", "latest")),
        ("invoices@latest", ("invoices", "latest")),
        ("invoices@12", ("invoices", 12)),
        (" bank statements.v2@3 ", ("bank statements.v2", 3)),
    ],
)
def test_dataset_specs(spec, parsed):
    assert parse_dataset_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["", "@3", "invoices@0", "invoices@x", "a@b@c", "in'voices"])
def test_bad_dataset_specs(spec):
    with pytest.raises(InputError):
        parse_dataset_spec(spec)


def test_shown_uris_carry_no_credentials():
    assert public_uri("sqlite:////tmp/mlflow.db") == "sqlite:////tmp/mlflow.db"
    assert public_uri("https://me:secret@mlflow.example:5000/") == "https://mlflow.example:5000/"
    assert public_uri("postgresql://u:p@db/mlflow?sslkey=x") == "postgresql://db/mlflow"


def test_a_pinned_public_key_must_have_signed_every_case(mlflow_store, monkeypatch):
    version = register_ground_truth_dataset(
        "invoices", [INVOICE_A, INVOICE_B], public_key=KEY.public_key
    )
    assert version.signatures == "trusted"
    assert load_ground_truth("invoices", public_key=KEY.public_key).signatures == "trusted"
    with pytest.raises(DatasetIntegrityError, match="key mismatch") as caught:
        load_ground_truth("invoices", public_key=OTHER_KEY.public_key)
    assert caught.value.reason == "key_mismatch"
    monkeypatch.setenv("DOCEVALS_PUBLIC_KEY", OTHER_KEY.public_key.base64)
    with pytest.raises(DatasetIntegrityError, match="key mismatch"):
        load_ground_truth("invoices")
    with pytest.raises(DatasetIntegrityError, match="key mismatch"):
        register_ground_truth_dataset("receipts", [RECEIPT])
    monkeypatch.setenv("DOCEVALS_PUBLIC_KEY", KEY.public_key.base64)
    assert load_ground_truth("invoices").signatures == "trusted"


def test_unsigned_approvals_only_when_allowed(mlflow_store):
    unsigned = approved("inv-u", [{"path": "$.number", "expected": "1"}], key=None)
    with pytest.raises(DatasetIntegrityError, match="unsigned record") as caught:
        register_ground_truth_dataset("invoices", [INVOICE_A, unsigned])
    assert caught.value.reason == "unsigned"
    version = register_ground_truth_dataset(
        "invoices", [INVOICE_A, unsigned], require_signature=False
    )
    assert version.signatures == "unsigned"
    assert load_ground_truth("invoices").signatures == "unsigned"
    # A pinned key still refuses the unsigned case when loading.
    with pytest.raises(DatasetIntegrityError, match="unsigned record"):
        load_ground_truth("invoices", public_key=KEY.public_key)
    # Without a signature, rows and record edited together are caught by the digest
    # the run was registered with (params cannot change).
    path = artifact_root(mlflow_store, version.run_id) / "ground_truth" / "approved.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    case = document["cases"][1]
    case["rows"][0]["expected"] = "2"
    case["record"]["content_sha256"] = content_digest(case["rows"])
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(DatasetIntegrityError, match="was registered with") as caught:
        load_ground_truth("invoices")
    assert caught.value.reason == "content_digest"


def test_a_record_changed_after_signing_is_refused(mlflow_store):
    version = register_ground_truth_dataset("invoices", [INVOICE_A, INVOICE_B])
    root = artifact_root(mlflow_store, version.run_id)
    for relative, edit in (
        ("ground_truth/approved.json", lambda d: d["cases"][1]["record"].update(approved_by="eve")),
        ("approvals/records.json", lambda d: d[1].update(approved_by="eve")),
    ):
        path = root / relative
        document = json.loads(path.read_text(encoding="utf-8"))
        edit(document)
        path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(DatasetIntegrityError, match="signature invalid") as caught:
        load_ground_truth("invoices")
    assert caught.value.reason == "signature"
    assert caught.value.record == "inv-b"


def test_reading_never_creates_a_store(tmp_path):
    uri = f"sqlite:///{tmp_path / 'typo.db'}"
    with pytest.raises(DatasetNotFoundError, match=r"no tracking store: .*typo\.db does not exist"):
        load_ground_truth("invoices", tracking_uri=uri)
    assert list_ground_truth_datasets(tracking_uri=uri) == []
    assert not (tmp_path / "typo.db").exists()
