"""``register-dataset`` records an approval chain in the approval run: people and roles
and key fingerprints as tags, counts as params, the whole records as an artifact."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main
from docevals_mlflow.groundtruth.approval import write_approved
from docevals_mlflow.groundtruth.approval_chain import approve_chain
from docevals_mlflow.groundtruth.chain_policy import load_policy
from tests.groundtruth.approval_fakes import APPROVED_ROWS, approved
from tests.groundtruth.chain_fakes import complete_chain


def test_register_dataset_records_the_chain(mlflow_store, tmp_path, capsys):
    chain = complete_chain(tmp_path, disagree=True)
    policy = load_policy(chain.policy)
    result = approve_chain(chain.review, policy, "carol", chain.keys["carol"])
    folder = tmp_path / "approved"
    write_approved(result, folder / "statement-001.json")

    argv = ["register-dataset", "statements", "--from", str(folder)]
    assert main([*argv, "--public-key", f"{chain.keys['carol']}.pub"]) == 0
    out = capsys.readouterr().out
    run_id = re.search(r"run: ([0-9a-f]{32})", out).group(1)
    client = MlflowClient(mlflow_store)
    run = client.get_run(run_id)
    tags, params = run.data.tags, run.data.params
    assert tags["docevals.dataset.chain.people"] == (
        "preparer: pat; reviewer: alice, bob; adjudicator: judy; approver: carol"
    )
    fingerprints = dict(
        item.split("=") for item in tags["docevals.dataset.chain.key_ids"].split("; ")
    )
    assert fingerprints == {
        person: policy.key(person).key_id for person in ("alice", "bob", "carol", "judy", "pat")
    }
    assert tags["docevals.dataset.chain.policies"] == policy.fingerprint()
    assert (params["chain.cases"], params["chain.signatures"]) == ("1", "5")
    # The whole record, every signature included, is the run's approvals artifact.
    local = client.download_artifacts(run_id, "approvals/records.json", str(tmp_path / "dl"))
    records = json.loads(Path(local).read_text(encoding="utf-8"))
    assert records == [result.record.model_dump(mode="json")]
    assert [act["role"] for act in records[0]["chain"]["signatures"]] == [
        "preparer", "reviewer", "reviewer", "adjudicator", "approver",
    ]  # fmt: skip


def test_a_single_signature_registration_gets_no_chain_tags(mlflow_store, tmp_path, capsys):
    folder = tmp_path / "approved"
    write_approved(approved("statement-001", APPROVED_ROWS), folder / "statement-001.json")
    assert main(["register-dataset", "plain", "--from", str(folder)]) == 0
    run_id = re.search(r"run: ([0-9a-f]{32})", capsys.readouterr().out).group(1)
    run = MlflowClient(mlflow_store).get_run(run_id)
    assert not [tag for tag in run.data.tags if tag.startswith("docevals.dataset.chain")]
    assert "chain.cases" not in run.data.params
