"""Ed25519 keys and signatures for approval records.

Files written by :func:`generate_keypair` (``docevals keygen --out PREFIX``):

* ``PREFIX``: the private key, PEM PKCS#8 (``-----BEGIN PRIVATE KEY-----``, or
  ``ENCRYPTED PRIVATE KEY`` with a passphrase), file mode 0600;
* ``PREFIX.pub``: the public key as one OpenSSH line (``ssh-ed25519 AAAA... comment``).

A signing key is given as a path or as PEM/OpenSSH key text (argument, or the
``DOCEVALS_SIGNING_KEY`` environment variable), with its passphrase, if any, in
``DOCEVALS_SIGNING_KEY_PASSPHRASE``. OpenSSH Ed25519 private keys (``ssh-keygen -t
ed25519``) work too. A public key is given as a path, as PEM or OpenSSH text, or as
the base64 of its 32 raw bytes (argument, or ``DOCEVALS_PUBLIC_KEY``).

A key's id is the hex SHA-256 of its 32 raw public-key bytes. A signature is Ed25519
over the UTF-8 bytes of :func:`~docevals_mlflow.core.fingerprints.canonical_json` of
the payload, base64-encoded, so anyone can check it with any Ed25519 library.

Private key material and passphrases never appear in messages, ``repr`` or any file
but the private key file: errors describe the problem without echoing the value.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.errors import ApprovalError
from docevals_mlflow.groundtruth.key_files import generate_keypair as generate_keypair
from docevals_mlflow.groundtruth.key_loading import load_public_key as load_public_key
from docevals_mlflow.groundtruth.key_loading import load_signing_key as load_signing_key
from docevals_mlflow.groundtruth.key_loading import resolve_public_key as resolve_public_key
from docevals_mlflow.groundtruth.key_loading import resolve_signing_key as resolve_signing_key
from docevals_mlflow.groundtruth.keys import PublicKey as PublicKey
from docevals_mlflow.groundtruth.keys import PublicKeyLike, SigningKeyLike
from docevals_mlflow.groundtruth.keys import SigningKey as SigningKey

ALGORITHM = "ed25519"
_SIGNATURE_LENGTH = 64


def signing_bytes(payload: Mapping[str, Any]) -> bytes:
    """The exact bytes a signature covers: the payload's canonical JSON, UTF-8."""
    return canonical_json(payload).encode("utf-8")


def sign(payload: Mapping[str, Any], private_key: SigningKeyLike) -> tuple[str, str, str]:
    """Sign ``payload``; returns ``(signature_b64, public_key_b64, key_id)``."""
    key = load_signing_key(private_key)
    signature = key.sign(signing_bytes(payload))
    return base64.b64encode(signature).decode("ascii"), key.public_key.base64, key.key_id


def verify(payload: Mapping[str, Any], signature_b64: str, public_key: PublicKeyLike) -> None:
    """Check that ``signature_b64`` is ``public_key``'s signature of ``payload``.

    Raises:
        ApprovalError: ``reason="signature"`` when the signature is malformed or does
            not match (the payload was changed, or another key signed it).
    """
    key = load_public_key(public_key)
    signature = decode_base64(signature_b64, _SIGNATURE_LENGTH, "signature", reason="signature")
    if not key.verify(signature, signing_bytes(payload)):
        raise ApprovalError(
            f"signature invalid: it is not key {key.key_id}'s signature of these fields (they "
            "were changed after signing, or the signature was made by another key)",
            reason="signature",
        )


def decode_base64(text: str, length: int, name: str, *, reason: str) -> bytes:
    """Strict base64 of exactly ``length`` bytes, or an :class:`ApprovalError`."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != length:
        raise ApprovalError(f"{name} is not the base64 of {length} bytes", reason=reason)
    return raw
