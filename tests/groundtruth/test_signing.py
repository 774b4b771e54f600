"""Ed25519 keys and signatures: files, formats, refusals, and no private material leaking."""

from __future__ import annotations

import base64
import os
import pickle
import stat

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.errors import ApprovalError, InputError, InputFileNotFoundError, OutputError
from docevals_mlflow.groundtruth.signing import (
    PublicKey,
    SigningKey,
    generate_keypair,
    load_public_key,
    load_signing_key,
    resolve_public_key,
    resolve_signing_key,
    sign,
    signing_bytes,
    verify,
)

PAYLOAD = {"case_id": "c-1", "approved_by": "alice", "rows": [{"path": "$.a", "expected": 1}]}


@pytest.fixture
def keypair(tmp_path):
    return generate_keypair(tmp_path / "keys" / "alice")


def test_keygen_writes_a_private_pem_0600_and_an_openssh_public_key(keypair):
    private_path, public_path = keypair
    assert public_path.name == "alice.pub"
    assert stat.S_IMODE(private_path.stat().st_mode) == 0o600
    assert private_path.read_text().startswith("-----BEGIN PRIVATE KEY-----\n")
    line = public_path.read_text()
    assert line.startswith("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5")
    assert line.endswith(" docevals-mlflow\n")
    assert load_signing_key(private_path).key_id == load_public_key(public_path).key_id
    assert sorted(p.name for p in private_path.parent.iterdir()) == ["alice", "alice.pub"]


def test_keygen_never_overwrites_either_file(keypair, tmp_path):
    private_path, public_path = keypair
    before = private_path.read_bytes(), public_path.read_bytes()
    with pytest.raises(OutputError, match=r"alice: exists already; a key is never overwritten"):
        generate_keypair(private_path)
    public_only = tmp_path / "bob"
    public_only.with_name("bob.pub").write_text("taken")
    with pytest.raises(OutputError, match=r"bob\.pub: exists already"):
        generate_keypair(public_only)
    assert not public_only.exists()
    assert (private_path.read_bytes(), public_path.read_bytes()) == before


def test_key_id_is_the_sha256_of_the_raw_public_key(keypair):
    import hashlib

    key = load_signing_key(keypair[0])
    assert key.key_id == hashlib.sha256(key.public_key.raw).hexdigest()
    assert base64.b64decode(key.public_key.base64) == key.public_key.raw


def test_private_key_from_path_pem_text_or_environment(keypair, monkeypatch):
    private_path, _ = keypair
    expected = load_signing_key(private_path).key_id
    assert load_signing_key(str(private_path)).key_id == expected
    assert load_signing_key(private_path.read_text()).key_id == expected
    assert resolve_signing_key() is None
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY", str(private_path))
    key = resolve_signing_key()
    assert key is not None
    assert key.key_id == expected
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY", private_path.read_text())
    assert resolve_signing_key().key_id == expected  # type: ignore[union-attr]


def test_public_key_from_path_pem_openssh_base64_or_environment(keypair, monkeypatch):
    private_path, public_path = keypair
    key = load_signing_key(private_path).public_key
    pem = (
        serialization.load_pem_private_key(private_path.read_bytes(), None)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    for value in (public_path, str(public_path), public_path.read_text(), pem, key.base64):
        assert load_public_key(value) == key
    assert load_public_key(pem.encode()) == key
    assert resolve_public_key() is None
    monkeypatch.setenv("DOCEVALS_PUBLIC_KEY", str(public_path))
    assert resolve_public_key() == key
    monkeypatch.setenv("DOCEVALS_PUBLIC_KEY", key.base64)
    assert resolve_public_key() == key


def test_openssh_private_keys_work_too(tmp_path):
    key = SigningKey.generate()
    raw = serialization.load_pem_private_key(key.private_pem(), None)
    path = tmp_path / "id_ed25519"
    path.write_bytes(
        raw.private_bytes(  # type: ignore[union-attr]
            serialization.Encoding.PEM,
            serialization.PrivateFormat.OpenSSH,
            serialization.NoEncryption(),
        )
    )
    assert load_signing_key(path).key_id == key.key_id


def test_encrypted_key_needs_its_passphrase(tmp_path, monkeypatch):
    private_path, _ = generate_keypair(tmp_path / "k", passphrase="correct horse")
    assert private_path.read_text().startswith("-----BEGIN ENCRYPTED PRIVATE KEY-----")
    with pytest.raises(InputError, match="encrypted; set DOCEVALS_SIGNING_KEY_PASSPHRASE"):
        load_signing_key(private_path)
    with pytest.raises(InputError, match="cannot decrypt the signing key: wrong passphrase"):
        load_signing_key(private_path, passphrase="wrong")
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY_PASSPHRASE", "correct horse")
    assert load_signing_key(private_path).key_id


def test_a_passphrase_for_a_plain_key_is_refused(keypair):
    with pytest.raises(InputError, match="the signing key is not encrypted"):
        load_signing_key(keypair[0], passphrase="x")


def test_the_two_halves_are_not_interchangeable(keypair):
    private_path, public_path = keypair
    with pytest.raises(InputError, match=r"alice\.pub: this is a public key; signing needs"):
        load_signing_key(public_path)
    with pytest.raises(InputError, match=r"alice: this holds a private key; give the public key"):
        load_public_key(private_path)
    with pytest.raises(InputError, match=r"the public key text: this holds a private key"):
        load_public_key(private_path.read_text())


def test_other_key_types_are_refused(tmp_path):
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "ec.pem"
    path.write_bytes(pem)
    with pytest.raises(InputError, match=r"the signing key is an EC key, not Ed25519"):
        load_signing_key(path)


def test_missing_and_garbled_key_files(tmp_path):
    with pytest.raises(InputFileNotFoundError, match=r"keys/nobody: signing key file not found"):
        load_signing_key(tmp_path / "keys" / "nobody")
    with pytest.raises(InputFileNotFoundError, match=r"nobody\.pub: public key file not found"):
        load_public_key(str(tmp_path / "nobody.pub"))
    garbled = tmp_path / "garbled"
    garbled.write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    with pytest.raises(InputError, match="damaged or in an unknown format"):
        load_signing_key(garbled)
    garbled.write_text("hello")
    with pytest.raises(InputError, match="not a PEM or OpenSSH private key"):
        load_signing_key(garbled)
    with pytest.raises(InputError, match="not a public key"):
        load_public_key(garbled)


def test_sign_and_verify(keypair):
    private_path, public_path = keypair
    signature, public_b64, key_id = sign(PAYLOAD, private_path)
    assert len(base64.b64decode(signature)) == 64
    assert load_public_key(public_b64).key_id == key_id
    verify(PAYLOAD, signature, public_path)
    verify(dict(reversed(list(PAYLOAD.items()))), signature, public_path)  # key order is moot
    assert signing_bytes(PAYLOAD) == canonical_json(PAYLOAD).encode()
    # The signature is plain Ed25519 over the canonical JSON: checkable with any library.
    load_public_key(public_path).verify(base64.b64decode(signature), signing_bytes(PAYLOAD))


def test_changed_payload_wrong_key_and_garbage_are_refused(keypair, tmp_path):
    signature, _, _ = sign(PAYLOAD, keypair[0])
    with pytest.raises(ApprovalError, match="signature invalid") as caught:
        verify({**PAYLOAD, "approved_by": "mallory"}, signature, keypair[1])
    assert caught.value.reason == "signature"
    _, other_public = generate_keypair(tmp_path / "other")
    with pytest.raises(ApprovalError, match="signature invalid"):
        verify(PAYLOAD, signature, other_public)
    with pytest.raises(ApprovalError, match="signature is not the base64 of 64 bytes"):
        verify(PAYLOAD, "not base64!", keypair[1])


def test_keys_do_not_reveal_themselves(keypair):
    key = load_signing_key(keypair[0])
    assert repr(key) == f"SigningKey(key_id={key.key_id!r})"
    assert repr(key.public_key) == f"PublicKey(key_id={key.key_id!r})"
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(key)
    with pytest.raises(InputError, match="32 bytes"):
        PublicKey(b"short")


# --- private material never leaks ----------------------------------------------------


def secret_forms(private_path, passphrase=None):
    """Every spelling of a private key (and its passphrase) that must never leak."""
    key = serialization.load_pem_private_key(
        private_path.read_bytes(), passphrase.encode() if passphrase else None
    )
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    der = key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    body = "".join(private_path.read_text().splitlines()[1:-1])
    forms = {
        raw.hex(),
        base64.b64encode(raw).decode(),
        base64.b64encode(der).decode(),
        base64.b64encode(der)[:24].decode(),
        body[:24],
        body[-24:],
    }
    if passphrase:
        forms.add(passphrase)
    return {form for form in forms if form}


def test_planted_key_never_appears_in_errors_reprs_or_other_files(tmp_path, monkeypatch):
    passphrase = "planted-Passphrase-7f3a"
    private_path, public_path = generate_keypair(tmp_path / "planted", passphrase=passphrase)
    secrets = secret_forms(private_path, passphrase)
    raw_hex = next(s for s in secrets if len(s) == 64 and all(c in "0123456789abcdef" for c in s))
    raw_b64 = base64.b64encode(bytes.fromhex(raw_hex)).decode()
    texts: list[str] = []

    def record(call):
        try:
            result = call()
        except Exception as exc:
            texts.extend([str(exc), repr(exc), repr(exc.args), str(exc.__cause__ or "")])
            texts.append(repr(getattr(exc, "context", dict)()))
        else:
            texts.append(repr(result))

    record(lambda: load_signing_key(private_path))  # no passphrase
    record(lambda: load_signing_key(private_path, passphrase="wrong-" + passphrase))
    record(lambda: load_signing_key(private_path, passphrase=passphrase))
    record(lambda: load_signing_key(private_path.read_text(), passphrase=passphrase))
    record(lambda: load_signing_key(private_path.read_text()))
    record(lambda: load_signing_key(raw_hex))
    record(lambda: load_signing_key(raw_b64))
    record(lambda: load_signing_key(public_path))
    record(lambda: load_public_key(private_path))
    record(lambda: load_public_key(private_path.read_text()))
    record(lambda: load_public_key(raw_hex))
    record(lambda: sign(PAYLOAD, load_signing_key(private_path, passphrase=passphrase)))
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY", private_path.read_text())
    record(lambda: resolve_signing_key())
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY_PASSPHRASE", "bad-" + passphrase)
    record(lambda: resolve_signing_key())
    monkeypatch.setenv("DOCEVALS_PUBLIC_KEY", private_path.read_text())
    record(lambda: resolve_public_key())
    texts.append(public_path.read_text())
    assert len(texts) > 15
    leaked = sorted({secret for secret in secrets for text in texts if secret in text})
    assert leaked == [], texts
    # What the user does see is still useful.
    joined = "\n".join(texts)
    assert "wrong passphrase" in joined
    assert "not shown, in case it is key material" in joined
    assert "this holds a private key" in joined


def test_private_key_file_is_created_private_even_with_a_permissive_umask(tmp_path):
    old = os.umask(0)
    try:
        private_path, public_path = generate_keypair(tmp_path / "k")
    finally:
        os.umask(old)
    assert stat.S_IMODE(private_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(public_path.stat().st_mode) == 0o644
