"""``register-dataset --policy``: every approved file's chain is checked against the
policy first (one line and nothing registered when one fails), and the approval run
records the policy's fingerprint; ``--reviews`` adds the reviewers' agreement."""

from __future__ import annotations

import re

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main
from docevals_mlflow.groundtruth.approval import write_approved
from docevals_mlflow.groundtruth.approval_chain import approve_chain
from docevals_mlflow.groundtruth.chain_policy import load_policy
from docevals_mlflow.groundtruth.key_files import generate_keypair
from docevals_mlflow.groundtruth.review import write_ground_truth_review
from docevals_mlflow.tracking.approval_runs import POLICY_TAG
from tests.groundtruth.approval_fakes import APPROVED_ROWS, approved, generation_report
from tests.groundtruth.chain_fakes import complete_chain, write_policy


@pytest.fixture
def chain_approved(tmp_path):
    chain = complete_chain(tmp_path, disagree=True)
    result = approve_chain(chain.review, load_policy(chain.policy), "carol", chain.keys["carol"])
    folder = tmp_path / "approved"
    write_approved(result, folder / "statement-001.json")
    return chain, folder


def registered_runs(uri: str) -> list:
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("docevals-ground-truth")
    if experiment is None:
        return []
    return client.search_runs([experiment.experiment_id], "tags.`docevals.kind` = 'approval'")


def test_policy_checked_chains_are_registered_with_the_fingerprint(
    mlflow_store, chain_approved, capsys
):
    chain, folder = chain_approved
    argv = ["register-dataset", "statements", "--from", str(folder), "--policy", str(chain.policy)]
    assert main([*argv, "--reviews", str(chain.review)]) == 0
    out = capsys.readouterr().out
    fingerprint = load_policy(chain.policy).fingerprint()
    assert f"fingerprint {fingerprint}" in out
    assert "reviewer agreement of 1 review(s)" in out
    run_id = re.search(r"run: ([0-9a-f]{32})", out).group(1)
    run = MlflowClient(mlflow_store).get_run(run_id)
    assert run.data.tags[POLICY_TAG] == fingerprint
    metrics = run.data.metrics
    assert metrics["Summary/reviewed_documents"] == 1
    assert metrics["Summary/fields_adjudicated"] == 1
    # alice and bob answered five fields and differed on one: 4/5.
    assert metrics["Summary/reviewer_agreement"] == pytest.approx(0.8)
    assert metrics["agreement/amount/observed_agreement"] == 0


def test_a_chain_failing_the_policy_registers_nothing(mlflow_store, chain_approved, capsys):
    chain, folder = chain_approved
    # A stricter policy: three reviewers (dave has the role but never reviewed).
    people = {
        "pat": ["preparer"],
        "alice": ["reviewer"],
        "bob": ["reviewer"],
        "dave": ["reviewer"],
        "judy": ["adjudicator"],
        "carol": ["approver"],
    }
    generate_keypair(chain.folder / "keys" / "dave")
    strict = write_policy(chain.folder / "strict.json", people=people, reviewers=3)
    argv = ["register-dataset", "statements", "--from", str(folder), "--policy", str(strict)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "statement-001.json" in err[0]
    assert "reviewer" in err[0]
    assert registered_runs(mlflow_store) == []


def test_a_single_signature_approval_fails_the_policy(mlflow_store, chain_approved, capsys):
    chain, folder = chain_approved
    write_approved(approved("statement-002", APPROVED_ROWS), folder / "statement-002.json")
    argv = ["register-dataset", "statements", "--from", str(folder), "--policy", str(chain.policy)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "statement-002.json" in err
    assert "carries no chain" in err
    assert registered_runs(mlflow_store) == []


def test_policy_refuses_a_pinned_key_or_unsigned(mlflow_store, chain_approved, capsys):
    chain, folder = chain_approved
    argv = ["register-dataset", "statements", "--from", str(folder), "--policy", str(chain.policy)]
    assert main([*argv, "--allow-unsigned"]) == 2
    assert "leave out --public-key and --allow-unsigned" in capsys.readouterr().err
    assert registered_runs(mlflow_store) == []


def test_reviews_behind_no_approved_case_are_refused(
    mlflow_store, chain_approved, tmp_path, capsys
):
    _chain, folder = chain_approved
    other = write_ground_truth_review(generation_report("other"), tmp_path / "other.review.json")
    argv = ["register-dataset", "statements", "--from", str(folder), "--reviews", str(other)]
    assert main(argv) == 2
    assert "no review file here is behind an approved case" in capsys.readouterr().err
    assert registered_runs(mlflow_store) == []
