"""The embedded SQLite tracking store, shared safely between processes.

MLflow creates and migrates a SQLite store the first time a client opens it. Two
processes opening a new file at once both run the migrations, and the file is left
half-migrated: nothing can be logged into it afterwards. So, for ``sqlite:///``
stores:

* creating and migrating the file is serialized across processes by an exclusive
  lock on ``<file>.lock`` beside it (:mod:`~docevals_mlflow.tracking.store_lock`);
* before MLflow opens an existing file, its schema is checked (the Alembic version
  against the tables): a half-migrated, outdated or newer store is refused with a
  one-line :class:`TrackingError` naming the fix, and never changed
  (:mod:`~docevals_mlflow.tracking.store_schema`);
* once the store is ready, logging proceeds concurrently; a store call that SQLite
  answers with ``database is locked`` is retried (:func:`retrying`, in
  :mod:`~docevals_mlflow.tracking.busy_retries`).

Other stores (servers, PostgreSQL, ...) are left to MLflow.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from docevals_mlflow.core.datafiles import check_file
from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking.busy_retries import BUSY_RETRY_SECONDS, is_busy, retry_busy, retrying
from docevals_mlflow.tracking.errors import TrackingError
from docevals_mlflow.tracking.store_lock import LOCK_SUFFIX, LOCK_WAIT_SECONDS, store_lock
from docevals_mlflow.tracking.store_schema import (
    check_schema,
    expected_tables,
    migration_revisions,
    not_a_database,
    read_state,
)
from docevals_mlflow.tracking.uris import public_uri, scrub_credentials


def sqlite_database(uri: str) -> Path | None:
    """The file a ``sqlite:///`` tracking URI names (absolute), else ``None``.

    In-memory databases and ``file:`` URIs (SQLite's own URI syntax) are left alone.
    """
    if not uri.startswith("sqlite:"):
        return None
    from sqlalchemy.engine import make_url

    try:
        database = make_url(uri).database
    except Exception:  # a malformed URI is MLflow's to report
        return None
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    path = Path(database)
    # SQLite opens a relative path against the working directory, as this does.
    return path if path.is_absolute() else Path.cwd() / path


def prepare_store(uri: str) -> None:
    """Make an SQLite store ready for MLflow: create and migrate a new one under the
    file lock, check an existing one. Does nothing for other stores.

    Raises:
        TrackingError: the file is not an SQLite database, is half-migrated, or has
            a schema this MLflow cannot use; the file is left as it is.
        OutputError: the store's folder or lock file cannot be created.
    """
    path = sqlite_database(uri)
    if path is None:
        return
    _refuse_special_file(path)
    _refuse_foreign_file(path)
    # Everything slow (imports, reading migration scripts) before taking the lock:
    # every process that logs holds it, if only for the check.
    head, known = migration_revisions()
    expected = expected_tables()
    with store_lock(path):
        state = read_state(path)
        if state.fresh:
            _create(uri, path)
            return
        check_schema(state, head, known, expected, path, uri)


def open_client(uri: str) -> Any:
    """A retrying ``MlflowClient`` for ``uri``, once the store is ready
    (:func:`prepare_store`).

    Raises:
        TrackingError: as :func:`prepare_store`, or MLflow has no store for the URI
            (an unknown scheme); the message never shows the URI's credentials.
    """
    prepare_store(uri)
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    try:
        client = MlflowClient(tracking_uri=uri)
    except MlflowException as exc:
        raise TrackingError(
            f"MLflow cannot use this tracking URI: {scrub_credentials(exc.message.strip(), uri)}",
            source=public_uri(uri),
        ) from None
    return retrying(client)


def _refuse_special_file(path: Path) -> None:
    """Refuse an existing store path that is not a regular file, before SQLite opens
    it (or a lock is taken beside it): a named pipe would block the open forever, a
    folder reads as a disk I/O error."""
    if not path.exists() or path.is_file():
        return
    try:
        check_file(path, what="MLflow store")
    except InputError as exc:
        raise TrackingError(
            exc.message,
            source=str(path),
            expected="an MLflow SQLite store, or the name of a file to create",
        ) from None


def _refuse_foreign_file(path: Path) -> None:
    """Refuse a file that is no SQLite database before the lock is taken beside it,
    so that nothing in its folder is touched. A store that is busy or being made by
    another process is left to the check under the lock."""
    if not path.exists():
        return
    try:
        with contextlib.closing(
            sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
        ) as connection:
            connection.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError:
        return
    except sqlite3.DatabaseError as exc:
        raise not_a_database(path, exc) from None


def _create(uri: str, path: Path) -> None:
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient
    from sqlalchemy.exc import SQLAlchemyError

    try:
        # Opening a client's store runs MLflow's own creation and migrations (and
        # makes the Default experiment); holding the lock, this process is the only one.
        MlflowClient(tracking_uri=uri).search_experiments(max_results=1)
    except (MlflowException, SQLAlchemyError) as exc:
        message = exc.message if isinstance(exc, MlflowException) else str(exc)
        raise TrackingError(
            f"could not create the MLflow store: {message.splitlines()[0] if message else exc}",
            source=str(path),
        ) from None


__all__ = [
    "BUSY_RETRY_SECONDS",
    "LOCK_SUFFIX",
    "LOCK_WAIT_SECONDS",
    "is_busy",
    "open_client",
    "prepare_store",
    "retry_busy",
    "retrying",
    "sqlite_database",
]
