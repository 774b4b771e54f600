"""Starting the app with uvicorn, after the bind checks."""

from __future__ import annotations

import os
import secrets
import socket
import sys
from typing import TYPE_CHECKING, TextIO

from docevals_mlflow.reviewapp.app import create_app
from docevals_mlflow.reviewapp.security import check_bind, is_loopback

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.chain_policy import ChainPolicy
    from docevals_mlflow.groundtruth.keys import SigningKey


def review_url(host: str, port: int, token: str | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def serve(
    target: str | os.PathLike[str],
    *,
    person: str,
    role: str = "reviewer",
    host: str = "127.0.0.1",
    port: int = 8765,
    allow_remote: bool = False,
    token: str | None = None,
    residual: float = 0.02,
    required_reviewers: int = 2,
    known_people: frozenset[str] | None = None,
    policy: ChainPolicy | None = None,
    signing_key: SigningKey | None = None,
    approved_dir: str | os.PathLike[str] | None = None,
    out: TextIO = sys.stdout,
) -> None:
    """Serve until interrupted; prints the URL to open (with the token, if any).

    Raises:
        ConfigurationError: a non-loopback host without ``allow_remote`` and a token.
    """
    import uvicorn

    check_bind(host, allow_remote=allow_remote, token=token)
    app = create_app(
        target,
        person=person,
        role=role,
        token=token,
        bind=host,
        residual=residual,
        required_reviewers=required_reviewers,
        known_people=known_people,
        policy=policy,
        signing_key=signing_key,
        approved_dir=approved_dir,
    )
    if port == 0:
        port = free_port(host)
    print(f"reviewing as {person} ({role}): {review_url(host, port, token)}", file=out)
    if not is_loopback(host):
        print("served beyond this machine: every request needs the token", file=out)
    out.flush()
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)


def free_port(host: str = "127.0.0.1") -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def new_token() -> str:
    """A token for ``--allow-remote`` when none is given."""
    return secrets.token_urlsafe(24)
