"""``docevals review sign``, ``approve --policy`` and ``verify --policy``: the approval
chain from the command line; refusals are one line, exit 2, and write nothing."""

from __future__ import annotations

import json

import pytest

from docevals_mlflow.cli import main
from docevals_mlflow.groundtruth.review_layers import layer_path
from tests.groundtruth.approval_fakes import APPROVED_ROWS, KEY, approved, read_json, write_json
from tests.groundtruth.chain_fakes import AGREED, answer, new_chain


def run(capsys, *argv):
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def sign(capsys, chain, person, role):
    return run(
        capsys,
        "review", "sign", chain.review, "--person", person, "--role", role,
        "--signing-key", chain.keys[person], "--policy", chain.policy,
    )  # fmt: skip


def approve(capsys, chain, approver="carol", *extra):
    return run(
        capsys,
        "approve", chain.review, "--policy", chain.policy, "--approved-by", approver,
        "--signing-key", chain.keys[approver], "--output", chain.folder / "approved.json", *extra,
    )  # fmt: skip


@pytest.fixture
def chain(tmp_path):
    return new_chain(tmp_path)


def test_sign_approve_and_verify_a_whole_chain(capsys, chain):
    code, out, _ = sign(capsys, chain, "pat", "preparer")
    assert code == 0
    assert out.splitlines()[1] == f"wrote {chain.folder / 'statement.review.preparer.json'}"
    for person in ("alice", "bob"):
        answer(chain, person, AGREED)
        code, out, _ = sign(capsys, chain, person, "reviewer")
        assert code == 0
        assert out.startswith(f"signed {chain.review} as reviewer {person} with key ")
        assert read_json(layer_path(chain.review, person))["signature"]["key_id"] in out

    code, out, _ = approve(capsys, chain)
    assert code == 0, out
    assert "chain: preparer pat, reviewer alice, reviewer bob, approver carol" in out
    target = chain.folder / "approved.json"
    assert read_json(target)["rows"] == APPROVED_ROWS

    code, out, err = run(capsys, "verify", target, "--policy", chain.policy)
    assert (code, err) == (0, "")
    assert out.startswith(f"OK {target}: case statement-001, 4 row(s), approved by carol at ")
    assert out.rstrip().endswith(
        f"chain verified against {chain.policy}: preparer pat, reviewer alice, reviewer bob, "
        "approver carol"
    )
    # The old form still verifies the approver's signature of a chained record.
    code, out, _ = run(capsys, "verify", target, "--public-key", f"{chain.keys['carol']}.pub")
    assert code == 0
    assert "signed by the trusted key" in out


def test_sign_refuses_a_key_the_policy_does_not_give_that_person(capsys, chain):
    answer(chain, "alice", AGREED)
    before = layer_path(chain.review, "alice").read_text()
    code, _, err = run(
        capsys,
        "review", "sign", chain.review, "--person", "alice", "--role", "reviewer",
        "--signing-key", chain.keys["bob"], "--policy", chain.policy,
    )  # fmt: skip
    assert code == 2
    assert err.startswith(f"docevals: error: {chain.policy}: not signed: alice's reviewer ")
    assert "not the policy's key for alice" in err
    assert err.count("\n") == 1
    assert layer_path(chain.review, "alice").read_text() == before


def test_sign_without_a_layer_says_answer_first(capsys, chain):
    code, _, err = sign(capsys, chain, "alice", "reviewer")
    assert code == 2
    assert "alice has no layer for this review: nothing to sign" in err


def test_approve_refuses_an_incomplete_chain_in_one_line_and_writes_nothing(capsys, chain):
    answer(chain, "alice", AGREED)
    sign(capsys, chain, "alice", "reviewer")
    before = sorted(chain.folder.rglob("*"))
    code, out, err = approve(capsys, chain)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith(f"docevals: error: {chain.review}: cannot approve under the policy: ")
    assert "no preparer signature" in err
    assert "1 of 2 signed reviewer layers (alice)" in err
    assert sorted(chain.folder.rglob("*")) == before


def test_approve_refuses_the_reviewer_as_approver(capsys, tmp_path):
    chain = new_chain(tmp_path, extra_people={"bob": ["reviewer", "approver"]})
    sign(capsys, chain, "pat", "preparer")
    for person in ("alice", "bob"):
        answer(chain, person, AGREED)
        sign(capsys, chain, person, "reviewer")
    code, _, err = approve(capsys, chain, "bob")
    assert code == 2
    assert "bob holds two roles the policy separates: reviewer and approver" in err
    assert not (chain.folder / "approved.json").exists()


def test_approve_policy_needs_the_approver_and_refuses_unsigned(capsys, chain):
    code, _, err = run(
        capsys,
        "approve",
        chain.review,
        "--policy",
        chain.policy,
        "--output",
        chain.folder / "a.json",
    )
    assert code == 2
    assert "--policy needs --approved-by NAME" in err
    code, _, err = approve(capsys, chain, "carol", "--unsigned")
    assert code == 2


def test_verify_policy_refuses_a_tampered_file_and_an_old_single_signature_one(capsys, chain):
    old = write_json(
        chain.folder / "old.json",
        approved("statement-001", APPROVED_ROWS).model_dump(mode="json"),
    )
    code, out, err = run(capsys, "verify", old, "--policy", chain.policy)
    assert (code, out) == (2, "")
    assert "carries no chain (a single-signature approval: verify it with --public-key)" in err
    # The old form is unchanged.
    code, out, _ = run(capsys, "verify", old, "--public-key", KEY.public_key.base64)
    assert code == 0
    assert out.startswith(f"OK {old}: case statement-001, 4 row(s), approved by ann at ")

    tampered = json.loads(old.read_text())
    tampered["rows"][0]["expected"] = "Evil Ltd"
    write_json(old, tampered)
    code, _, err = run(capsys, "verify", old, "--public-key", KEY.public_key.base64)
    assert code == 2
    assert "content digest mismatch" in err
