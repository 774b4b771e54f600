"""Signing and approving in the page: the same chain check and the same approved file
as ``docevals review sign`` and ``docevals approve --policy``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docevals_mlflow.cli import main
from docevals_mlflow.groundtruth.approval_chain import check_chain, load_chained_ground_truth
from docevals_mlflow.groundtruth.chain_policy import load_policy
from docevals_mlflow.groundtruth.chain_signing import sign_review
from docevals_mlflow.groundtruth.key_files import generate_keypair
from docevals_mlflow.groundtruth.review_layers import layer_path, record_answer
from docevals_mlflow.groundtruth.signing import load_signing_key
from tests.reviewapp.conftest import answer

PEOPLE = {"ann": "reviewer", "ben": "reviewer", "judy": "adjudicator", "carol": "approver"}
DOC = "doc-a.review.json"


@pytest.fixture
def chain(folder: Path) -> dict[str, Path]:
    """Keys for four people and a policy naming them (no preparer)."""
    keys = {person: generate_keypair(folder.parent / "keys" / person)[0] for person in PEOPLE}
    people = {
        person: {"roles": [role], "public_key": f"keys/{person}.pub"}
        for person, role in PEOPLE.items()
    }
    policy = folder.parent / "policy.json"
    policy.write_text(
        json.dumps({"reviewers": 2, "adjudication": "on_disagreement", "people": people}),
        encoding="utf-8",
    )
    return {"policy": policy, **keys}


def _review_all(folder: Path, person: str, amount: str) -> None:
    review = folder / DOC
    record_answer(review, person, "$.currency", "accept")
    record_answer(review, person, "$.amount", "set", amount)
    record_answer(review, person, "$.account_name", "set", "ACME Ltd")


def test_a_reviewer_signs_their_layer_in_the_page(client_for, folder, chain):
    client = client_for("ann", signing_key=load_signing_key(chain["ann"]))
    refused = client.post("/api/sign", json={"document": DOC}, headers=_csrf(client))
    assert refused.status_code == 422
    assert "ann has no layer for this review: nothing to sign" in refused.json()["error"]
    page = client.get(f"/doc/{DOC}").text
    assert 'id="sign"' in page

    assert answer(client, DOC, "$.currency", "accept").json()["ok"]
    signed = client.post("/api/sign", json={"document": DOC}, headers=_csrf(client))
    assert signed.json()["ok"], signed.text
    layer = json.loads(layer_path(folder / DOC, "ann").read_text(encoding="utf-8"))
    assert layer["signature"]["signature"]
    assert "signed: ann" in client.get(f"/doc/{DOC}").text


def test_without_a_key_the_page_offers_no_signing(client_for):
    client = client_for("ann")
    assert 'id="sign"' not in client.get(f"/doc/{DOC}").text
    refused = client.post("/api/sign", json={"document": DOC}, headers=_csrf(client))
    assert "no signing key" in refused.json()["error"]


def test_the_approver_sees_what_approve_would_refuse_then_approves(client_for, folder, chain):
    policy = load_policy(chain["policy"])
    key = load_signing_key(chain["carol"])
    client = client_for("carol", role="approver", policy=policy, signing_key=key)
    _review_all(folder, "ann", "12.50")
    _review_all(folder, "ben", "12.05")
    expected = check_chain(folder / DOC, policy, approver="carol", approver_key_id=key.key_id)
    assert expected.problems  # unsigned layers, a disagreement without adjudication
    page = client.get("/").text
    for problem in expected.problems:
        assert _escaped(problem) in page
    refused = client.post("/api/approve", json={"document": DOC}, headers=_csrf(client))
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert all(problem in error for problem in expected.problems)
    assert not (folder / "approved").exists()

    record_answer(
        folder / DOC, "judy", "$.amount", "set", "12.50", role="adjudicator", reason="page"
    )
    for person, role in (("ann", "reviewer"), ("ben", "reviewer"), ("judy", "adjudicator")):
        sign_review(folder / DOC, person, role, chain[person])  # type: ignore[arg-type]
    assert "nothing" in client.get("/").text
    done = client.post("/api/approve", json={"document": DOC}, headers=_csrf(client))
    assert done.json()["ok"], done.text
    assert "wrote approved/doc-a.json" in done.json()["message"]
    approved, verified = load_chained_ground_truth(folder / "approved" / "doc-a.json", policy)
    assert verified.policy_matches
    roles = [(act.role, act.person) for act in verified.signatures]
    assert roles == [
        ("reviewer", "ann"),
        ("reviewer", "ben"),
        ("adjudicator", "judy"),
        ("approver", "carol"),
    ]
    assert {row["path"]: row["expected"] for row in approved.rows}["$.amount"] == "12.50"
    again = client.post("/api/approve", json={"document": DOC}, headers=_csrf(client))
    assert "exists already" in again.json()["error"]
    assert "approved/doc-a.json" in client.get("/").text


def test_the_approver_answers_nothing_and_needs_a_policy(client_for, chain):
    policy = load_policy(chain["policy"])
    client = client_for("carol", role="approver", policy=policy)
    reply = answer(client, DOC, "$.currency", "accept")
    assert "an approver does not answer fields" in reply.json()["error"]
    assert "no signing key" in client.get("/").text
    with pytest.raises(Exception, match="needs a policy"):
        client_for("carol", role="approver")


def test_the_command_refuses_a_key_that_is_not_the_persons_in_the_policy(folder, chain, capsys):
    argv = ["review", "serve", str(folder), "--policy", str(chain["policy"])]
    assert main([*argv, "--person", "ann", "--signing-key", str(chain["ben"])]) == 2
    assert "--signing-key is not ann's key in the policy" in capsys.readouterr().err
    assert main([*argv, "--person", "carol", "--role", "approver"]) == 2
    assert "--role approver needs --signing-key" in capsys.readouterr().err
    assert main(["review", "serve", str(folder), "--person", "carol", "--role", "approver"]) == 2
    assert "--role approver needs --policy" in capsys.readouterr().err


def _csrf(client) -> dict[str, str]:
    return {"x-docevals-csrf": client.csrf}


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("'", "&#39;").replace('"', "&#34;")
