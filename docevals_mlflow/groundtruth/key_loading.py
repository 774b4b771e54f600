"""Loading Ed25519 keys from paths, PEM or OpenSSH text, base64 or the environment,
without ever echoing key material in a message."""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from docevals_mlflow.core.datafiles import check_file
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.keys import (
    RAW_PUBLIC_KEY_LENGTH,
    PublicKey,
    PublicKeyLike,
    SigningKey,
    SigningKeyLike,
    passphrase_bytes,
)

SIGNING_KEY_VARIABLE = "DOCEVALS_SIGNING_KEY"
"""Environment variable: path (or PEM text) of the private key used to sign approvals."""
PASSPHRASE_VARIABLE = "DOCEVALS_SIGNING_KEY_PASSPHRASE"
"""Environment variable: passphrase of an encrypted signing key."""
PUBLIC_KEY_VARIABLE = "DOCEVALS_PUBLIC_KEY"
"""Environment variable: the trusted public key (path, PEM/OpenSSH text or base64)."""

_PRIVATE_MARKERS = ("PRIVATE KEY-----",)
_NOT_SHOWN = "(the value is not shown, in case it is key material)"


# --- private keys -----------------------------------------------------------------


def load_signing_key(key: SigningKeyLike, *, passphrase: str | bytes | None = None) -> SigningKey:
    """Load a private key from a path or from PEM / OpenSSH key text.

    The passphrase of an encrypted key comes from ``passphrase`` or, when that is
    ``None``, from ``DOCEVALS_SIGNING_KEY_PASSPHRASE``.

    Raises:
        InputFileNotFoundError: the path does not exist.
        InputError: not an Ed25519 private key, wrong or missing passphrase.
    """
    if isinstance(key, SigningKey):
        return key
    if passphrase is None:
        passphrase = os.environ.get(PASSPHRASE_VARIABLE) or None
    if isinstance(key, str) and "-----BEGIN" in key:
        return _parse_private(key.encode("utf-8"), passphrase, source="the signing key text")
    path = _key_path(key, what="signing key")
    return _parse_private(_read_key_file(path, "signing key"), passphrase, source=str(path))


def resolve_signing_key(
    key: SigningKeyLike | None = None, *, passphrase: str | bytes | None = None
) -> SigningKey | None:
    """The key given, else the one named by ``DOCEVALS_SIGNING_KEY``, else ``None``."""
    if key is None:
        key = os.environ.get(SIGNING_KEY_VARIABLE) or None
        if key is None:
            return None
        try:
            return load_signing_key(key, passphrase=passphrase)
        except InputError as exc:
            raise type(exc)(f"{SIGNING_KEY_VARIABLE}: {exc}") from None
    return load_signing_key(key, passphrase=passphrase)


def _key_path(key: str | os.PathLike[str], *, what: str) -> Path:
    text = os.fspath(key)
    path = Path(text).expanduser()
    if path.is_file():
        return path
    if path.exists():  # a folder, a named pipe, a device: named as what it is
        check_file(path, what=f"{what} file")
    if _looks_like_key_material(text):
        raise InputError(f"the {what} is neither an existing file nor PEM key text {_NOT_SHOWN}")
    raise InputFileNotFoundError(f"{what} file not found", source=str(path))


def _looks_like_key_material(text: str) -> bool:
    # A mistyped path should be echoed; a pasted key must not be.
    stripped = text.strip()
    if any(char.isspace() for char in stripped) or "BEGIN" in stripped:
        return True
    try:
        raw = base64.b64decode(stripped, validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    try:
        raw_hex = bytes.fromhex(stripped)
    except ValueError:
        raw_hex = b""
    # 32: a raw seed or public key; 48: Ed25519 PKCS#8 DER; 64: seed + public key.
    return len(raw) in (32, 48, 64) or len(raw_hex) in (32, 48, 64)


def _read_key_file(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"cannot read the {what}: {exc.strerror or exc}", source=str(path)
        ) from None


def _parse_private(data: bytes, passphrase: str | bytes | None, *, source: str) -> SigningKey:
    password = passphrase_bytes(passphrase) if passphrase else None
    text = data.lstrip()
    openssh = text.startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    if not openssh and not (
        text.startswith(b"-----BEGIN") and b"PRIVATE KEY-----" in text.split(b"\n", 1)[0]
    ):
        if text.startswith((b"ssh-", b"-----BEGIN PUBLIC KEY-----")):
            raise InputError(
                "this is a public key; signing needs the private key (PREFIX, not PREFIX.pub)",
                source=source,
            )
        raise InputError(
            "not a PEM or OpenSSH private key",
            source=source,
            expected="a file written by docevals keygen",
        )
    key: Any
    try:
        if openssh:
            key = serialization.load_ssh_private_key(data, password)
        else:
            key = serialization.load_pem_private_key(data, password)
    except TypeError:
        # cryptography: a password was given for an unencrypted key, or none for an
        # encrypted one. Its message never holds the passphrase, but ours is clearer.
        if password is None:
            raise InputError(
                f"the signing key is encrypted; set {PASSPHRASE_VARIABLE}", source=source
            ) from None
        raise InputError(
            f"the signing key is not encrypted; unset {PASSPHRASE_VARIABLE}", source=source
        ) from None
    except (ValueError, UnsupportedAlgorithm):
        if password is not None:
            raise InputError(
                "cannot decrypt the signing key: wrong passphrase, or a damaged key",
                source=source,
            ) from None
        raise InputError(
            "the signing key is damaged or in an unknown format", source=source
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(
            f"the signing key is {_key_type(key)}, not Ed25519",
            source=source,
            expected="an Ed25519 key (docevals keygen, or ssh-keygen -t ed25519)",
        )
    return SigningKey(key)


def _key_type(key: object) -> str:
    name = type(key).__name__.replace("PrivateKey", "").replace("PublicKey", "").lstrip("_")
    return f"an {name} key" if name[:1] in "AEIOU" else f"a {name} key"


# --- public keys ------------------------------------------------------------------


def load_public_key(key: PublicKeyLike) -> PublicKey:
    """Load a public key from a path, PEM or OpenSSH text, or base64 of the raw bytes.

    Raises:
        InputFileNotFoundError: a path that does not exist.
        InputError: not an Ed25519 public key (a private key is refused without
            being echoed).
    """
    if isinstance(key, PublicKey):
        return key
    if isinstance(key, SigningKey):
        return key.public_key
    if isinstance(key, bytes):
        return _parse_public(key, source="the public key")
    text = os.fspath(key)
    stripped = text.strip()
    if isinstance(key, str) and (stripped.startswith(("-----BEGIN", "ssh-ed25519 "))):
        return _parse_public(stripped.encode("utf-8"), source="the public key text")
    path = Path(text).expanduser()
    if path.is_file():
        return _parse_public(_read_key_file(path, "public key"), source=str(path))
    if path.exists():  # a folder, a named pipe, a device: named as what it is
        check_file(path, what="public key file")
    raw = _raw_base64(stripped)
    if raw is not None:
        return PublicKey(raw)
    if _looks_like_key_material(text):
        raise InputError(
            f"the public key is neither a file, PEM or OpenSSH text, nor the base64 of "
            f"{RAW_PUBLIC_KEY_LENGTH} bytes {_NOT_SHOWN}"
        )
    raise InputFileNotFoundError("public key file not found", source=str(path))


def resolve_public_key(key: PublicKeyLike | None = None) -> PublicKey | None:
    """The key given, else the one in ``DOCEVALS_PUBLIC_KEY``, else ``None``."""
    if key is None:
        key = os.environ.get(PUBLIC_KEY_VARIABLE) or None
        if key is None:
            return None
        try:
            return load_public_key(key)
        except InputError as exc:
            raise type(exc)(f"{PUBLIC_KEY_VARIABLE}: {exc}") from None
    return load_public_key(key)


def _raw_base64(text: str) -> bytes | None:
    try:
        raw = base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        return None
    return raw if len(raw) == RAW_PUBLIC_KEY_LENGTH else None


def _parse_public(data: bytes, *, source: str) -> PublicKey:
    text = data.strip()
    if any(marker.encode("ascii") in text for marker in _PRIVATE_MARKERS):
        raise InputError(
            "this holds a private key; give the public key (PREFIX.pub), and keep the "
            "private key to yourself",
            source=source,
        )
    if not text.startswith((b"-----BEGIN", b"ssh-")):
        raw = _raw_base64(text.decode("ascii", "replace"))
        if raw is None:
            raise InputError(
                "not a public key",
                source=source,
                expected="PEM, an OpenSSH line or the base64 of 32 raw bytes",
            )
        return PublicKey(raw)
    key: Any
    try:
        if text.startswith(b"-----BEGIN"):
            key = serialization.load_pem_public_key(text)
        else:
            key = serialization.load_ssh_public_key(b" ".join(text.split()[:2]))
    except (ValueError, UnsupportedAlgorithm):
        raise InputError(
            "the public key is damaged or in an unknown format", source=source
        ) from None
    if not isinstance(key, Ed25519PublicKey):
        raise InputError(f"the public key is {_key_type(key)}, not Ed25519", source=source)
    return PublicKey(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
