"""Approval records: what they hold, what verification catches, and the seed's API."""

from __future__ import annotations

import base64
import datetime as dt
import re

import pytest

from docevals_mlflow.errors import ApprovalError, InputError, OutputError
from docevals_mlflow.groundtruth.approval import (
    approve_review,
    approved_from_reference,
    approved_reference,
    load_approved_ground_truth,
    sign_record,
    utc_timestamp,
    verify_approval,
    write_approved,
)
from docevals_mlflow.groundtruth.promotion import (
    approve_generated_reference,
    approved_reference_from_review,
)
from docevals_mlflow.groundtruth.records import ApprovalRecord, content_digest
from docevals_mlflow.groundtruth.review import (
    apply_decisions,
    load_review,
    review_digest,
    write_ground_truth_review,
)
from docevals_mlflow.groundtruth.signing import generate_keypair, load_signing_key
from tests.groundtruth.approval_fakes import (
    APPROVED_ROWS,
    DECISIONS,
    generation_report,
    read_json,
    write_json,
)

NOW = dt.datetime(2026, 3, 1, 9, 30, 15, 999, tzinfo=dt.timezone(dt.timedelta(hours=1)))


@pytest.fixture
def keys(tmp_path):
    return generate_keypair(tmp_path / "keys" / "alice")


@pytest.fixture
def other_keys(tmp_path):
    return generate_keypair(tmp_path / "keys" / "mallory")


@pytest.fixture
def decided_path(tmp_path):
    """A review file with every item decided (the reviewer's work, on disk)."""
    path = write_ground_truth_review(generation_report(), tmp_path / "review.json")
    edited = apply_decisions(load_review(path), set=DECISIONS, omit=["$.iban"], notes="page 1")
    return write_ground_truth_review(edited, path)


@pytest.fixture
def approved_path(decided_path, keys, tmp_path):
    approved = approve_review(decided_path, "alice@example.com", signing_key=keys[0], now=NOW)
    return write_approved(approved, tmp_path / "approved.json")


# --- the record ---------------------------------------------------------------------


def test_round_trip_review_edit_approve_verify_load(decided_path, keys, tmp_path):
    review = load_review(decided_path)
    approved = approve_review(
        review, approved_by="  alice@example.com ", signing_key=keys[0], notes="ok", now=NOW
    )
    record = approved.record
    assert approved.rows == APPROVED_ROWS
    assert record.case_id == approved.case_id == "statement-001"
    assert record.approved_by == "alice@example.com"
    assert record.approved_at == "2026-03-01T08:30:15Z"
    assert record.approval_notes == "ok"
    assert record.content_sha256 == content_digest(APPROVED_ROWS)
    assert record.generation_sha256 == generation_report().digest
    assert record.review_sha256 == review_digest(review)
    assert [(r.path, r.decision, r.expected, r.notes) for r in record.resolutions] == [
        ("$.amount", "set", "12.50", "page 1"),
        ("$.account_name", "set", "ACME Ltd", "page 1"),
        ("$.iban", "omit", None, "page 1"),
    ]
    key = load_signing_key(keys[0])
    assert (record.algorithm, record.key_id) == ("ed25519", key.key_id)
    assert record.public_key == key.public_key.base64
    assert record.signed

    path = write_approved(approved, tmp_path / "approved.json")
    verification = verify_approval(record, APPROVED_ROWS, keys[1])
    assert (verification.signed, verification.trusted) == (True, True)
    loaded = load_approved_ground_truth(path, keys[1])
    assert loaded == approved
    assert loaded.trusted is True
    assert loaded.verification is not None
    assert loaded.verification.key_id == key.key_id


def test_approving_writes_nothing(decided_path, keys, tmp_path):
    before = sorted(tmp_path.rglob("*"))
    approve_review(decided_path, "alice", signing_key=keys[0])
    assert sorted(tmp_path.rglob("*")) == before


def test_approval_time_is_utc_with_z():
    assert utc_timestamp(NOW) == "2026-03-01T08:30:15Z"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", utc_timestamp())
    with pytest.raises(InputError, match="the approval time has no time zone"):
        utc_timestamp(dt.datetime(2026, 3, 1, 9, 30))


@pytest.mark.parametrize("approver", ["", "   ", None])
def test_an_approver_is_required(decided_path, approver):
    with pytest.raises(InputError) as caught:
        approve_review(decided_path, approver)
    assert str(caught.value).startswith(f"{decided_path}, at approved_by: no approver")


def test_unresolved_items_are_listed(tmp_path):
    path = write_ground_truth_review(generation_report(), tmp_path / "review.json")
    path = write_ground_truth_review(
        apply_decisions(load_review(path), set={"$.amount": "12.50"}), path
    )
    with pytest.raises(InputError) as caught:
        approve_review(path, "alice")
    message = str(caught.value)
    assert message.startswith(f"{path}: 2 review item(s) unresolved: ")
    assert "review_items[1] $.account_name (omitted_by_some)" in message
    assert "review_items[2] $.iban (omitted_by_all)" in message


def test_the_files_approver_is_used_and_must_match(decided_path):
    data = read_json(decided_path)
    data.update(status="approved", approved_by="alice")
    write_json(decided_path, data)
    assert approve_review(decided_path).record.approved_by == "alice"
    with pytest.raises(InputError, match="status mismatch: the file is approved by 'alice'"):
        approve_review(decided_path, "bob")


def test_a_record_with_a_blank_approver_or_local_time_is_invalid():
    base = {"case_id": "c", "approved_at": "2026-03-01T08:30:15Z", "content_sha256": "0" * 64}
    with pytest.raises(InputError, match="approved_by: must name the approver"):
        ApprovalRecord(approved_by=" ", **base)
    with pytest.raises(InputError, match="is not a UTC time in ISO 8601 with a Z suffix"):
        ApprovalRecord(approved_by="a", **{**base, "approved_at": "2026-03-01T09:30:15+01:00"})
    with pytest.raises(InputError, match="a signature needs algorithm, key_id, public_key"):
        ApprovalRecord(approved_by="a", signature="AA==", **base)


# --- tampering ----------------------------------------------------------------------


def _tampered(approved_path, change):
    data = read_json(approved_path)
    change(data)
    return write_json(approved_path.with_name("tampered.json"), data)


def _resign(data, private_path):
    """Replace the whole signing identity: what an attacker with their own key can do."""
    record = ApprovalRecord.model_validate(data["record"])
    data["record"] = sign_record(record, private_path).model_dump(mode="json")


def _flip_byte(data):
    raw = bytearray(base64.b64decode(data["record"]["signature"]))
    raw[10] ^= 0x01
    data["record"]["signature"] = base64.b64encode(bytes(raw)).decode()


@pytest.mark.parametrize(
    ("change", "reason", "message"),
    [
        (
            lambda d: d["rows"][1].update(expected="12.05"),
            "content_digest",
            "content digest mismatch: the rows hash to ",
        ),
        (
            lambda d: d["rows"].append({"path": "$.iban", "expected": "DE89"}),
            "content_digest",
            "(the content was changed after approval)",
        ),
        (
            lambda d: d["record"].update(approved_by="mallory"),
            "signature",
            "signature invalid: it is not key ",
        ),
        (
            lambda d: d["record"].update(approved_at="2026-03-02T08:30:15Z"),
            "signature",
            "signature invalid",
        ),
        (
            lambda d: d["record"]["resolutions"][0].update(expected="12.05"),
            "signature",
            "signature invalid",
        ),
        (_flip_byte, "signature", "signature invalid"),
        (
            lambda d: d["record"].update(signature=None),
            "unsigned",
            "unsigned record: the approval carries no signature",
        ),
        (
            lambda d: d["record"].update(key_id="0" * 64),
            "record",
            "is not the id of its public_key",
        ),
        (
            lambda d: d["record"].update(signature="c2hvcnQ="),
            "signature",
            "signature is not the base64 of 64 bytes",
        ),
    ],
)
def test_tampered_files_are_refused_naming_the_file(approved_path, change, reason, message):
    path = _tampered(approved_path, change)
    with pytest.raises(ApprovalError) as caught:
        load_approved_ground_truth(path)
    assert caught.value.reason == reason
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_another_keys_signature_is_refused(approved_path, other_keys):
    other = read_json(_tampered(approved_path, lambda d: _resign(d, other_keys[0])))
    # Only the signature swapped in; the record still names the original key.
    path = _tampered(
        approved_path, lambda d: d["record"].update(signature=other["record"]["signature"])
    )
    with pytest.raises(ApprovalError, match="signature invalid") as caught:
        load_approved_ground_truth(path)
    assert caught.value.reason == "signature"


def test_a_resigned_record_is_caught_only_with_a_pinned_key(approved_path, keys, other_keys):
    path = _tampered(
        approved_path,
        lambda d: (d["record"].update(approved_by="mallory"), _resign(d, other_keys[0])),
    )
    # Self-consistent: integrity holds, but it is not the trusted signer's.
    unpinned = load_approved_ground_truth(path)
    assert unpinned.trusted is False
    assert unpinned.record.approved_by == "mallory"
    with pytest.raises(ApprovalError) as caught:
        load_approved_ground_truth(path, keys[1])
    assert caught.value.reason == "key_mismatch"
    assert str(caught.value).startswith(f"{path}: key mismatch: signed by key ")
    assert "but the trusted key is " + load_signing_key(keys[0]).key_id in str(caught.value)


def test_wrong_trusted_key_is_refused(approved_path, other_keys, monkeypatch):
    with pytest.raises(ApprovalError, match="key mismatch") as caught:
        load_approved_ground_truth(approved_path, other_keys[1])
    assert caught.value.reason == "key_mismatch"
    monkeypatch.setenv("DOCEVALS_PUBLIC_KEY", str(other_keys[1]))
    with pytest.raises(ApprovalError, match="key mismatch"):
        load_approved_ground_truth(approved_path)


def test_trusted_key_from_the_environment(approved_path, keys, monkeypatch):
    assert load_approved_ground_truth(approved_path).trusted is False
    monkeypatch.setenv("DOCEVALS_PUBLIC_KEY", str(keys[1]))
    assert load_approved_ground_truth(approved_path).trusted is True


def test_outer_case_id_is_bound_to_the_record(approved_path):
    path = _tampered(approved_path, lambda d: d.update(case_id="statement-999"))
    with pytest.raises(InputError) as caught:
        load_approved_ground_truth(path)
    assert str(caught.value).startswith(f"{path}")
    assert "case_id 'statement-999' differs from the approval record's 'statement-001'" in str(
        caught.value
    )


def test_a_review_file_is_not_approved_ground_truth(decided_path):
    with pytest.raises(InputError, match="this is a review file, not approved ground truth"):
        load_approved_ground_truth(decided_path)


# --- unsigned approvals -------------------------------------------------------------


def test_without_a_key_the_record_is_unsigned_and_refused_by_default(decided_path, tmp_path, keys):
    approved = approve_review(decided_path, "alice")
    assert not approved.record.signed
    assert approved.record.key_id is None
    path = write_approved(approved, tmp_path / "unsigned.json")
    with pytest.raises(ApprovalError, match="unsigned record") as caught:
        load_approved_ground_truth(path)
    assert caught.value.reason == "unsigned"
    loaded = load_approved_ground_truth(path, require_signature=False)
    assert loaded.verification is not None
    assert (loaded.verification.signed, loaded.trusted) == (False, False)
    # Pinning a key means a signature is expected, whatever require_signature says.
    with pytest.raises(ApprovalError, match=r"a trusted public key .* was given, but the approval"):
        load_approved_ground_truth(path, keys[1], require_signature=False)
    # The content is still checked.
    tampered = _tampered(path, lambda d: d["rows"][0].update(expected="x"))
    with pytest.raises(ApprovalError, match="content digest mismatch"):
        load_approved_ground_truth(tampered, require_signature=False)


def test_signing_key_from_the_environment_and_sign_false(decided_path, keys, monkeypatch):
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY", str(keys[0]))
    assert approve_review(decided_path, "alice").record.signed
    assert not approve_review(decided_path, "alice", sign=False).record.signed


# --- writing ------------------------------------------------------------------------


def test_write_approved_never_replaces_silently(approved_path, decided_path, keys):
    before = approved_path.read_bytes()
    again = approve_review(decided_path, "alice", signing_key=keys[0])
    with pytest.raises(OutputError, match="exists already; an approval is never replaced"):
        write_approved(again, approved_path)
    assert approved_path.read_bytes() == before
    write_approved(again, approved_path, overwrite=True)
    assert load_approved_ground_truth(approved_path).record == again.record


def test_write_approved_refuses_inconsistent_content(decided_path, keys, tmp_path):
    approved = approve_review(decided_path, "alice", signing_key=keys[0])
    approved.rows[0]["expected"] = "changed in memory"
    with pytest.raises(ApprovalError, match="content digest mismatch"):
        write_approved(approved, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


# --- references ---------------------------------------------------------------------


def test_approved_reference_is_ground_truth_with_the_record(approved_path, keys):
    approved = load_approved_ground_truth(approved_path, keys[1])
    reference = approved_reference(approved)
    assert reference.id == "statement-001-ground-truth"
    assert reference.authority == "ground_truth"
    assert reference.content_format == "path_table"
    assert reference.content == APPROVED_ROWS
    metadata = reference.metadata
    assert metadata["approved_by"] == "alice@example.com"
    assert metadata["approved_at"] == "2026-03-01T08:30:15Z"
    assert metadata["content_sha256"] == content_digest(APPROVED_ROWS)
    assert metadata["key_id"] == load_signing_key(keys[0]).key_id
    assert metadata["signed"] is True
    assert metadata["approval"] == approved.record.model_dump(mode="json")
    again = approved_from_reference(reference, keys[1])
    assert again == approved
    assert again.trusted


def test_a_reference_with_changed_content_fails_verification(approved_path):
    reference = approved_reference(load_approved_ground_truth(approved_path))
    changed = reference.model_copy(update={"content": [*reference.content[:-1]]})
    with pytest.raises(ApprovalError, match="content digest mismatch") as caught:
        approved_from_reference(changed)
    assert str(caught.value).startswith("inline://statement-001-ground-truth: ")


def test_approve_generated_reference_without_disputes(keys):
    report = generation_report().model_copy(update={"disagreements": []})
    generated = report.provisional_reference
    reference = approve_generated_reference(generated, "alice", notes="fine", signing_key=keys[0])
    assert reference.authority == "ground_truth"
    assert reference.content == [
        {"path": "$.currency", "expected": "EUR"},
        {"path": "$.items[0].sku", "expected": "A-1"},
    ]
    record = ApprovalRecord.model_validate(reference.metadata["approval"])
    assert record.case_id == "statement-001"
    assert record.generation_sha256 == report.digest
    assert record.resolutions == []
    assert record.approval_notes == "fine"
    assert reference.metadata["generated_reference_id"] == "statement-001-generated"
    assert approved_from_reference(reference, keys[1]).trusted


def test_approve_generated_reference_needs_resolved_content_when_disputed():
    generated = generation_report().provisional_reference
    with pytest.raises(InputError, match="requires human review"):
        approve_generated_reference(generated, "alice")
    reference = approve_generated_reference(
        generated,
        "alice",
        resolved_content=[
            {"field_path": "$.currency", "value": "EUR"},
            {"path": "amount", "expected_value": "12.50"},
        ],
    )
    record = ApprovalRecord.model_validate(reference.metadata["approval"])
    assert not record.signed  # recorded as unsigned: no key given or configured
    assert [(r.path, r.decision, r.expected) for r in record.resolutions] == [
        ("$.amount", "set", "12.50"),
        ("$.items[0].sku", "omit", None),
    ]
    assert approved_from_reference(reference, require_signature=False).rows == [
        {"path": "$.amount", "expected": "12.50"},
        {"path": "$.currency", "expected": "EUR"},
    ]


def test_approve_generated_reference_signs_with_the_environment_key(keys, monkeypatch):
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY", str(keys[0]))
    generated = generation_report().model_copy(update={"disagreements": []}).provisional_reference
    assert approve_generated_reference(generated, "alice").metadata["signed"] is True


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"approved_by": " "}, "no approver"),
        ({"resolved_content": {"$.a": 1}}, "resolved_content is not path-table rows"),
        ({"resolved_content": [{"name": "x"}]}, "resolved_content: row 1 has keys ['name']"),
        (
            {"resolved_content": [{"path": "a", "expected": 1}, {"path": "$.a", "expected": 2}]},
            "field '$.a' also appears at rows[0]",
        ),
    ],
)
def test_approve_generated_reference_refusals(kwargs, message):
    generated = generation_report().provisional_reference
    arguments = {"approved_by": "alice", **kwargs}
    with pytest.raises(InputError, match=re.escape(message)):
        approve_generated_reference(generated, **arguments)


def test_only_generated_references_are_approved(approved_path):
    reference = approved_reference(load_approved_ground_truth(approved_path))
    with pytest.raises(InputError, match="only a generated reference can be approved"):
        approve_generated_reference(reference, "alice")


def test_approved_reference_from_a_review_marked_approved(decided_path, keys):
    data = read_json(decided_path)
    data.update(status="approved", approved_by="alice")
    write_json(decided_path, data)
    reference = approved_reference_from_review(decided_path, signing_key=keys[0])
    assert reference.authority == "ground_truth"
    assert reference.content == APPROVED_ROWS
    assert reference.metadata["approved_by"] == "alice"
    assert approved_from_reference(reference, keys[1]).trusted


def test_approved_reference_from_review_refusals(tmp_path, decided_path):
    with pytest.raises(InputError) as caught:
        approved_reference_from_review(decided_path)
    assert str(caught.value).startswith(f"{decided_path}, at status: status is 'needs_review'")

    path = write_ground_truth_review(generation_report(), tmp_path / "fresh.json")
    data = read_json(path)
    data.update(status="approved", approved_by="alice")
    write_json(path, data)
    with pytest.raises(
        InputError, match=r"3 review item\(s\) unresolved: review_items\[0\] \$\.amount"
    ):
        approved_reference_from_review(path)

    data.update(approved_by=None)
    write_json(path, data)
    with pytest.raises(InputError, match="status is 'approved' but no approver is named"):
        approved_reference_from_review(path)


def test_approved_reference_from_an_approved_file(approved_path, keys, other_keys):
    reference = approved_reference_from_review(approved_path, keys[1])
    assert reference.metadata["content_sha256"] == content_digest(APPROVED_ROWS)
    with pytest.raises(ApprovalError, match="key mismatch"):
        approved_reference_from_review(approved_path, other_keys[1])
    tampered = _tampered(approved_path, lambda d: d["rows"][0].update(expected="x"))
    with pytest.raises(ApprovalError, match="content digest mismatch"):
        approved_reference_from_review(tampered)


def test_an_approved_file_verifies_with_plain_json_and_cryptography(approved_path, keys):
    """The documented recipe: no docevals needed to check an approval."""
    import hashlib
    import json

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    def canonical(value):
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode()

    data = json.loads(approved_path.read_text(encoding="utf-8"))
    rows, record = data["rows"], data["record"]
    assert hashlib.sha256(canonical(rows)).hexdigest() == record["content_sha256"]
    public = base64.b64decode(record["public_key"])
    assert hashlib.sha256(public).hexdigest() == record["key_id"]
    payload = {key: value for key, value in record.items() if key != "signature"}
    Ed25519PublicKey.from_public_bytes(public).verify(
        base64.b64decode(record["signature"]), canonical(payload)
    )


def test_the_guides_python_examples_run(tmp_path, monkeypatch):
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "ground-truth.md"
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    generate_keypair("keys/alice")
    namespace = {"__name__": "guide", "generation": generation_report()}
    for block in blocks:
        exec(compile(block, str(guide), "exec"), namespace)
    assert namespace["reference"].authority == "ground_truth"
    assert namespace["truth"].rows == APPROVED_ROWS


def test_approval_error_is_a_value_error_that_keeps_its_reason_when_located():
    from docevals_mlflow.errors import DocEvalsError

    error = ApprovalError("signature invalid", reason="signature")
    assert isinstance(error, DocEvalsError)
    assert isinstance(error, ValueError)
    located = error.located(source="approved.json")
    assert isinstance(located, ApprovalError)
    assert str(located) == "approved.json: signature invalid"
    assert located.reason == "signature"
    assert located.context()["reason"] == "signature"
