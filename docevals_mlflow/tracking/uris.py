"""Tracking URIs as they may be shown: without the credentials some of them carry.

``postgresql://user:secret@db/mlflow`` or ``https://token@host`` hold secrets, and
messages, terminal lines and run fields must never repeat them.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from docevals_mlflow.core.datafiles import safe_file_name

_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s]+@")


def public_uri(uri: str) -> str:
    """``uri`` without user name, password or query (which may hold tokens)."""
    parts = urlsplit(uri)
    if "@" not in parts.netloc and not parts.query:
        return uri
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", parts.fragment))


def scrub_credentials(text: str, uri: str | None = None) -> str:
    """``text`` with ``uri`` shown as :func:`public_uri` and any other
    ``scheme://user:password@`` prefix reduced to ``scheme://``."""
    if uri:
        text = text.replace(uri, public_uri(uri))
    return _USERINFO.sub(r"\g<scheme>", text)


def experiment_artifact_location(tracking_uri: str, experiment: str) -> str | None:
    """Where a new experiment's artifacts go: next to a SQLite store's file.

    MLflow's default for a database store is ``./mlruns`` of whatever folder the
    command ran in, which scatters one store's artifacts over every folder it was
    used from. ``None`` (MLflow's choice) for servers and other stores.
    """
    if not tracking_uri.startswith("sqlite:///"):
        return None
    database = Path(tracking_uri.removeprefix("sqlite:///").split("?", 1)[0])
    if not database.is_absolute():
        database = Path.cwd() / database
    folder = safe_file_name(experiment, fallback="experiment")
    return (database.parent / "mlruns" / folder).as_uri()
