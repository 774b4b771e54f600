"""Ed25519 key values: the public key a verifier trusts and the private key a
signer holds (see :mod:`~docevals_mlflow.groundtruth.signing` for the formats)."""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from typing import NoReturn

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from docevals_mlflow.errors import InputError

RAW_PUBLIC_KEY_LENGTH = 32
"""Bytes of a raw Ed25519 public key."""


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An Ed25519 public key: what a verifier trusts."""

    raw: bytes
    """The 32 raw key bytes."""

    def __post_init__(self) -> None:
        if len(self.raw) != RAW_PUBLIC_KEY_LENGTH:
            raise InputError(
                f"an Ed25519 public key has {RAW_PUBLIC_KEY_LENGTH} bytes, got {len(self.raw)}"
            )

    @property
    def key_id(self) -> str:
        """Hex SHA-256 of the raw key bytes."""
        return hashlib.sha256(self.raw).hexdigest()

    @property
    def base64(self) -> str:
        """The raw key bytes, base64-encoded (as approval records carry it)."""
        return base64.b64encode(self.raw).decode("ascii")

    def openssh(self, comment: str = "") -> str:
        """The key as one OpenSSH line (``ssh-ed25519 AAAA... comment``)."""
        line = (
            Ed25519PublicKey.from_public_bytes(self.raw)
            .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
            .decode("ascii")
        )
        return f"{line} {comment}".rstrip()

    def verify(self, signature: bytes, data: bytes) -> bool:
        """Whether ``signature`` is this key's Ed25519 signature of ``data``."""
        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, data)
        except InvalidSignature:
            return False
        return True

    def __repr__(self) -> str:
        return f"PublicKey(key_id={self.key_id!r})"


class SigningKey:
    """An Ed25519 private key. Its ``repr`` shows only the key id; it cannot be pickled."""

    __slots__ = ("_key", "public_key")

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public_key = PublicKey(
            key.public_key().public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw
            )
        )

    @classmethod
    def generate(cls) -> SigningKey:
        """A new random key."""
        return cls(Ed25519PrivateKey.generate())

    @property
    def key_id(self) -> str:
        """The id of the matching public key."""
        return self.public_key.key_id

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``data``."""
        return self._key.sign(data)

    def private_pem(self, passphrase: str | bytes | None = None) -> bytes:
        """PEM PKCS#8 bytes, encrypted when a passphrase is given (for the key file only)."""
        encryption: serialization.KeySerializationEncryption
        if passphrase:
            encryption = serialization.BestAvailableEncryption(passphrase_bytes(passphrase))
        else:
            encryption = serialization.NoEncryption()
        return self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
        )

    def __repr__(self) -> str:
        return f"SigningKey(key_id={self.key_id!r})"

    def __reduce__(self) -> NoReturn:
        raise TypeError("a SigningKey cannot be pickled (it would copy the private key)")


SigningKeyLike = SigningKey | str | os.PathLike[str]
PublicKeyLike = PublicKey | SigningKey | str | bytes | os.PathLike[str]


def passphrase_bytes(passphrase: str | bytes) -> bytes:
    """A passphrase as the bytes the key file is encrypted with (UTF-8 for text)."""
    return passphrase.encode("utf-8") if isinstance(passphrase, str) else passphrase
