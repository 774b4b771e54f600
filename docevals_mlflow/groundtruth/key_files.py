"""Key files: writing a new Ed25519 key pair without ever replacing an existing key."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from docevals_mlflow.errors import InputError, OutputError
from docevals_mlflow.groundtruth.keys import SigningKey


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
