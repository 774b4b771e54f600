"""Approval chains: a complete chain approves and verifies offline; every gap or
tampering is refused in one line; single-signature approvals are unchanged."""

from __future__ import annotations

import json

import pytest

from docevals_mlflow.errors import ApprovalError, InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.approval import (
    load_approved_ground_truth,
    read_approved_file,
    write_approved,
)
from docevals_mlflow.groundtruth.approval_chain import (
    approve_chain,
    check_chain,
    load_chained_ground_truth,
    verify_chain,
)
from docevals_mlflow.groundtruth.chain_policy import load_policy
from docevals_mlflow.groundtruth.chain_signing import preparer_path, sign_review
from docevals_mlflow.groundtruth.key_files import generate_keypair
from docevals_mlflow.groundtruth.review_layers import layer_path, record_answer
from tests.groundtruth.approval_fakes import APPROVED_ROWS, KEY, approved, read_json, write_json
from tests.groundtruth.chain_fakes import AGREED, answer, complete_chain, new_chain, write_policy


def refusal(chain, approver="carol", key=None) -> str:
    with pytest.raises(ApprovalError) as caught:
        approve_chain(
            chain.review, load_policy(chain.policy), approver, key or chain.keys[approver]
        )
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{chain.review}: cannot approve under the policy: ")
    return message


# --- a complete chain ---------------------------------------------------------------


@pytest.mark.parametrize("disagree", [False, True])
def test_a_complete_chain_approves_and_verifies_offline(tmp_path, disagree):
    chain = complete_chain(tmp_path, disagree=disagree)
    policy = load_policy(chain.policy)
    result = approve_chain(chain.review, policy, "carol", chain.keys["carol"])
    assert result.rows == APPROVED_ROWS
    record = result.record
    assert record.chain is not None
    roles = [(act.role, act.person) for act in record.chain.signatures]
    expected = [("preparer", "pat"), ("reviewer", "alice"), ("reviewer", "bob")]
    expected += [("adjudicator", "judy")] if disagree else []
    assert roles == [*expected, ("approver", "carol")]
    assert record.chain.disputed == (["$.amount"] if disagree else [])
    assert {act.key_id for act in record.chain.signatures} == {
        policy.key(person).key_id for _, person in roles
    }
    # Written, read back and checked from the file and the policy alone.
    target = write_approved(result, tmp_path / "approved.json")
    loaded, verification = load_chained_ground_truth(target, policy)
    assert loaded.rows == APPROVED_ROWS
    assert verification.policy_matches
    assert loaded.trusted
    # The old check still works on a chained record: it is signed by the approver.
    assert load_approved_ground_truth(target, policy.key("carol")).trusted


def test_the_review_digest_in_the_record_is_the_review_file_the_chain_signed(tmp_path):
    chain = complete_chain(tmp_path)
    policy = load_policy(chain.policy)
    report = check_chain(chain.review, policy)
    assert report.ok, report.problems
    result = approve_chain(chain.review, policy, "carol", chain.keys["carol"])
    assert result.record.review_sha256 == report.review_sha256
    assert all(act.review_sha256 == report.review_sha256 for act in result.record.chain.signatures)


# --- refusals -----------------------------------------------------------------------


def test_a_missing_reviewer_is_refused(tmp_path):
    chain = new_chain(tmp_path)
    sign_review(chain.review, "pat", "preparer", chain.keys["pat"])
    answer(chain, "alice", AGREED)
    sign_review(chain.review, "alice", "reviewer", chain.keys["alice"])
    assert "1 of 2 signed reviewer layers (alice)" in refusal(chain)


def test_an_unsigned_layer_is_refused(tmp_path):
    chain = complete_chain(tmp_path)
    # bob answers again after signing: his signature is dropped with the answer.
    record_answer(chain.review, "bob", "$.amount", "set", "12.50")
    message = refusal(chain)
    assert "bob's reviewer layer is not signed (docevals review sign REVIEW --person bob" in message
    assert "1 of 2 signed reviewer layers (alice)" in message


def test_a_disagreement_without_adjudication_is_refused_under_on_disagreement(tmp_path):
    chain = new_chain(tmp_path)
    sign_review(chain.review, "pat", "preparer", chain.keys["pat"])
    answer(chain, "alice", AGREED)
    answer(chain, "bob", {**AGREED, "$.amount": ("set", "12.05")})
    for person in ("alice", "bob"):
        sign_review(chain.review, person, "reviewer", chain.keys[person])
    message = refusal(chain)
    assert "reviewers disagree on $.amount: the policy needs an adjudicator then" in message
    assert "1 field(s) unresolved: $.amount" in message


def test_adjudication_required_needs_an_adjudicator_even_when_reviewers_agree(tmp_path):
    chain = complete_chain(tmp_path)
    policy = json.loads(chain.policy.read_text())
    chain.policy.write_text(json.dumps({**policy, "adjudication": "required"}))
    assert "the policy requires adjudication, but no adjudicator signed" in refusal(chain)


def test_one_person_as_reviewer_and_approver_is_refused(tmp_path):
    chain = new_chain(tmp_path, extra_people={"alice": ["reviewer", "approver"]})
    sign_review(chain.review, "pat", "preparer", chain.keys["pat"])
    answer(chain, "alice", AGREED)
    answer(chain, "bob", AGREED)
    for person in ("alice", "bob"):
        sign_review(chain.review, person, "reviewer", chain.keys[person])
    message = refusal(chain, approver="alice")
    assert "alice holds two roles the policy separates: reviewer and approver" in message
    # With those two roles no longer separated, the same chain is approved.
    policy = json.loads(chain.policy.read_text())
    chain.policy.write_text(json.dumps({**policy, "separate": [["preparer", "reviewer"]]}))
    approve_chain(chain.review, load_policy(chain.policy), "alice", chain.keys["alice"])


def test_a_person_or_key_outside_the_policy_is_refused(tmp_path):
    chain = complete_chain(tmp_path)
    # mallory is in nobody's policy; her layer is signed with her own key.
    private, _ = generate_keypair(tmp_path / "mallory")
    answer(chain, "mallory", AGREED)
    sign_review(chain.review, "mallory", "reviewer", private)
    assert "mallory (reviewer) is not in the policy" in refusal(chain)


def test_a_key_that_does_not_match_the_policy_is_refused(tmp_path):
    chain = complete_chain(tmp_path)
    # bob re-signs his layer with alice's key.
    sign_review(chain.review, "bob", "reviewer", chain.keys["alice"])
    message = refusal(chain)
    assert "bob's reviewer signature is made with key" in message
    assert "not the policy's key for bob" in message
    # And an approver with a key that is not theirs.
    chain2 = complete_chain(tmp_path / "two")
    assert "carol's approver signature is made with key" in refusal(chain2, key=chain2.keys["pat"])


def test_a_layer_changed_after_signing_is_refused(tmp_path):
    chain = complete_chain(tmp_path)
    file = layer_path(chain.review, "alice")
    data = read_json(file)
    data["entries"][0]["at"] = "2020-01-01T00:00:00.000000Z"  # still a valid layer
    write_json(file, data)
    message = refusal(chain)
    assert "alice's layer was changed after it was signed" in message


def test_a_review_changed_after_the_preparer_signed_makes_every_layer_stale(tmp_path):
    chain = complete_chain(tmp_path)
    data = read_json(chain.review)
    data["approval_notes"] = "edited later"
    write_json(chain.review, data)
    message = refusal(chain)
    assert "the review file changed after pat signed it as preparer" in message
    assert "alice's layer answers another version of the review file (stale)" in message


def test_a_missing_preparer_and_a_missing_approver_role(tmp_path):
    chain = complete_chain(tmp_path)
    preparer_path(chain.review).unlink()
    message = refusal(chain, approver="bob")
    assert "no preparer signature" in message
    assert "bob may not act as approver (policy roles: reviewer)" in message


def test_nothing_is_written_by_a_refusal(tmp_path):
    chain = new_chain(tmp_path)
    before = sorted(path.name for path in chain.folder.rglob("*"))
    refusal(chain)
    assert sorted(path.name for path in chain.folder.rglob("*")) == before


# --- verifying an approved file ---------------------------------------------------------


def approved_file(tmp_path, disagree=True):
    chain = complete_chain(tmp_path, disagree=disagree)
    policy = load_policy(chain.policy)
    result = approve_chain(chain.review, policy, "carol", chain.keys["carol"])
    return chain, policy, write_approved(result, tmp_path / "approved.json")


def test_a_tampered_approved_file_fails_verification(tmp_path):
    _chain, policy, target = approved_file(tmp_path)
    data = read_json(target)
    data["rows"][1]["expected"] = "99.99"
    write_json(target, data)
    with pytest.raises(ApprovalError, match="content digest mismatch"):
        load_chained_ground_truth(target, policy)


def test_a_tampered_chain_fails_verification(tmp_path):
    _chain, policy, target = approved_file(tmp_path)
    data = read_json(target)
    # Drop the adjudicator: the approver's signature covers the chain.
    data["record"]["chain"]["signatures"] = [
        act for act in data["record"]["chain"]["signatures"] if act["role"] != "adjudicator"
    ]
    write_json(target, data)
    with pytest.raises(ApprovalError, match="signature invalid") as caught:
        load_chained_ground_truth(target, policy)
    assert str(caught.value).startswith(f"{target}: ")


def test_verification_against_another_policy_names_what_fails(tmp_path):
    chain, _policy, target = approved_file(tmp_path)
    stricter = write_policy(chain.folder / "strict.json", reviewers=2, adjudication="never")
    with pytest.raises(ApprovalError) as caught:
        load_chained_ground_truth(target, load_policy(stricter))
    assert "the policy allows no adjudication, but judy adjudicated" in str(caught.value)


def test_verification_with_a_policy_of_other_keys_fails(tmp_path):
    _chain, _, target = approved_file(tmp_path)
    other = new_chain(tmp_path / "other")  # the same people with other keys
    with pytest.raises(ApprovalError, match="key mismatch: signed by key"):
        load_chained_ground_truth(target, load_policy(other.policy))


def test_a_single_signature_approval_has_no_chain_to_verify(tmp_path):
    chain = new_chain(tmp_path)
    case = approved("statement-001", APPROVED_ROWS)
    with pytest.raises(ApprovalError, match="carries no chain"):
        verify_chain(case, load_policy(chain.policy))


# --- old single-signature approvals --------------------------------------------------------


def test_old_single_signature_files_keep_their_bytes_and_verify(tmp_path):
    case = approved("statement-001", APPROVED_ROWS)
    target = write_approved(case, tmp_path / "old.json")
    text = target.read_text()
    assert '"chain"' not in text
    assert set(case.record.signed_payload()) == {
        "schema_version", "case_id", "approved_by", "approved_at", "approval_notes",
        "content_sha256", "generation_sha256", "review_sha256", "resolutions", "algorithm",
        "key_id", "public_key",
    }  # fmt: skip
    loaded = load_approved_ground_truth(target, KEY.public_key)
    assert loaded.trusted
    assert read_approved_file(target).record.chain is None
    # Rewritten from what was loaded, the file is byte for byte the same.
    assert write_approved(loaded, tmp_path / "again.json").read_text() == text


# --- policy files ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reviewers": 3}, "reviewers: 3 reviewers are needed but only 2 person(s)"),
        ({"reviewers": 0}, "reviewers: Input should be greater than or equal to 1"),
        ({"adjudication": "sometimes"}, "adjudication: Input should be 'required'"),
        ({"colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"separate": [["reviewer", "reviewer"]]}, "pairs 'reviewer' with itself"),
        (
            {"people": {"x y": {"roles": ["approver"], "public_key": "k"}}},
            "'x y' is not a person id",
        ),
    ],
)
def test_bad_policies_are_refused_in_one_line_naming_file_and_key(tmp_path, change, message):
    chain = new_chain(tmp_path)
    data = {**json.loads(chain.policy.read_text()), **change}
    chain.policy.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        load_policy(chain.policy)
    text = str(caught.value)
    assert text.startswith(f"{chain.policy}, at ")
    assert message in text
    assert "\n" not in text


def test_policy_keys_missing_shared_or_private_are_named(tmp_path):
    chain = new_chain(tmp_path)
    data = json.loads(chain.policy.read_text())
    data["people"]["bob"]["public_key"] = "keys/nobody.pub"
    chain.policy.write_text(json.dumps(data))
    with pytest.raises(InputFileNotFoundError, match=r"at people\.bob\.public_key: public key"):
        load_policy(chain.policy)
    data["people"]["bob"]["public_key"] = "keys/alice.pub"
    chain.policy.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"people\.bob\.public_key: the same key as alice's"):
        load_policy(chain.policy)
    data["people"]["bob"]["public_key"] = "keys/bob"
    chain.policy.write_text(json.dumps(data))
    with pytest.raises(InputError, match="holds a private key") as caught:
        load_policy(chain.policy)
    assert "PRIVATE" not in str(caught.value)


def test_a_yaml_policy_with_default_separation(tmp_path):
    chain = new_chain(tmp_path)
    yaml_policy = chain.folder / "policy.yaml"
    yaml_policy.write_text(
        "reviewers: 1\nadjudication: never\npeople:\n"
        "  alice: {roles: [reviewer], public_key: keys/alice.pub}\n"
        "  carol: {roles: [approver, preparer], public_key: keys/carol.pub}\n"
    )
    policy = load_policy(yaml_policy)
    assert len(policy.separated()) == 6  # every pair of the four roles
    assert policy.needs_preparer
    assert policy.fingerprint() == load_policy(yaml_policy).fingerprint()
