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
import contextlib
import hashlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from docevals_mlflow.core.datafiles import check_file
from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.errors import ApprovalError, InputError, InputFileNotFoundError, OutputError

SIGNING_KEY_VARIABLE = "DOCEVALS_SIGNING_KEY"
"""Environment variable: path (or PEM text) of the private key used to sign approvals."""
PASSPHRASE_VARIABLE = "DOCEVALS_SIGNING_KEY_PASSPHRASE"
"""Environment variable: passphrase of an encrypted signing key."""
PUBLIC_KEY_VARIABLE = "DOCEVALS_PUBLIC_KEY"
"""Environment variable: the trusted public key (path, PEM/OpenSSH text or base64)."""

ALGORITHM = "ed25519"
_RAW_PUBLIC_LENGTH = 32
_SIGNATURE_LENGTH = 64
_PRIVATE_MARKERS = ("PRIVATE KEY-----",)
_NOT_SHOWN = "(the value is not shown, in case it is key material)"


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An Ed25519 public key: what a verifier trusts."""

    raw: bytes
    """The 32 raw key bytes."""

    def __post_init__(self) -> None:
        if len(self.raw) != _RAW_PUBLIC_LENGTH:
            raise InputError(
                f"an Ed25519 public key has {_RAW_PUBLIC_LENGTH} bytes, got {len(self.raw)}"
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
            encryption = serialization.BestAvailableEncryption(_passphrase_bytes(passphrase))
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


def _passphrase_bytes(passphrase: str | bytes) -> bytes:
    return passphrase.encode("utf-8") if isinstance(passphrase, str) else passphrase


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
    password = _passphrase_bytes(passphrase) if passphrase else None
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
            f"{_RAW_PUBLIC_LENGTH} bytes {_NOT_SHOWN}"
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
    return raw if len(raw) == _RAW_PUBLIC_LENGTH else None


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


# --- signatures -------------------------------------------------------------------


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


# --- key files --------------------------------------------------------------------


def generate_keypair(
    prefix: str | os.PathLike[str],
    *,
    passphrase: str | bytes | None = None,
    comment: str = "docevals-mlflow",
) -> tuple[Path, Path]:
    """Write a new key pair: ``PREFIX`` (private, mode 0600) and ``PREFIX.pub``.

    Neither file may exist already (an existing key is never replaced). Each file
    appears complete or not at all; if the public key cannot be written, the new
    private key is removed again.

    Returns:
        ``(private_path, public_path)``.

    Raises:
        OutputError: a file exists already or cannot be written.
    """
    private_path = Path(prefix).expanduser()
    public_path = private_path.with_name(private_path.name + ".pub")
    if not private_path.name:
        raise InputError("the key prefix names no file", expected="a path such as keys/alice")
    for path in (private_path, public_path):
        if path.exists() or path.is_symlink():
            raise OutputError("exists already; a key is never overwritten", source=str(path))
    if "\n" in comment:
        raise InputError("the key comment must be one line")
    key = SigningKey.generate()
    _create_file(private_path, key.private_pem(passphrase), mode=0o600)
    try:
        _create_file(public_path, (key.public_key.openssh(comment) + "\n").encode("ascii"))
    except BaseException:
        with contextlib.suppress(OSError):
            private_path.unlink()
        raise
    return private_path, public_path


def _create_file(target: Path, data: bytes, *, mode: int | None = None) -> None:
    # Like core.atomic, but the file must not exist yet (link() refuses to replace,
    # so there is no window in which a concurrent writer is overwritten) and the
    # private key file is 0600 from its first byte (mkstemp creates it so).
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}", source=str(target)) from None
    try:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o644 & ~umask
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp_name, target)
        except FileExistsError:
            raise OutputError(
                "exists already; a key is never overwritten", source=str(target)
            ) from None
        except OSError:
            # Filesystems without hard links: check, then rename.
            if target.exists():
                raise OutputError(
                    "exists already; a key is never overwritten", source=str(target)
                ) from None
            os.replace(tmp_name, target)
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}", source=str(target)) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
