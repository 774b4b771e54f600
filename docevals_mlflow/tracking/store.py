"""The embedded SQLite tracking store, shared safely between processes.

MLflow creates and migrates a SQLite store the first time a client opens it. Two
processes opening a new file at once both run the migrations, and the file is left
half-migrated: nothing can be logged into it afterwards. So, for ``sqlite:///``
stores:

* creating and migrating the file is serialized across processes by an exclusive
  lock on ``<file>.lock`` beside it (``fcntl.flock``; ``msvcrt.locking`` on Windows).
  The holder removes the lock file as it lets go (a waiter that then holds a removed
  file notices and tries again), so none is left beside the store; on Windows, where
  an open file cannot be removed, it stays;
* before MLflow opens an existing file, its schema is checked (the Alembic version
  against the tables): a half-migrated, outdated or newer store is refused with a
  one-line :class:`TrackingError` naming the fix, and never changed;
* once the store is ready, logging proceeds concurrently; a store call that SQLite
  answers with ``database is locked`` is retried (:func:`retrying`).

Other stores (servers, PostgreSQL, ...) are left to MLflow.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from docevals_mlflow.core.datafiles import check_file
from docevals_mlflow.errors import InputError, OutputError
from docevals_mlflow.tracking.errors import TrackingError
from docevals_mlflow.tracking.uris import public_uri, scrub_credentials

LOCK_SUFFIX = ".lock"
LOCK_WAIT_SECONDS = 120.0
"""How long to wait for another process creating or migrating the store."""
BUSY_RETRY_SECONDS = 60.0
"""How long to keep retrying a store call that SQLite answers with "database is locked"."""

_BUSY_MESSAGES = ("database is locked", "database table is locked", "database is busy")
_T = TypeVar("_T")
_retrying_here = threading.local()


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
    head, known = _revisions()
    expected = _expected_tables()
    with _store_lock(path):
        state = _read_state(path)
        if state.fresh:
            _create(uri, path)
            return
        _check(state, head, known, expected, path, uri)


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
        raise _not_a_database(path, exc) from None


def _not_a_database(path: Path, exc: sqlite3.Error) -> TrackingError:
    return TrackingError(
        f"not an SQLite database ({exc})",
        source=str(path),
        expected="an MLflow SQLite store, or the name of a file to create",
    )


# ------------------------------------------------------------------- schema check


@dataclass(frozen=True)
class _State:
    tables: frozenset[str]
    revisions: tuple[str, ...]

    @property
    def mlflow_tables(self) -> frozenset[str]:
        internal = ("alembic_", "_alembic_", "sqlite_")
        return frozenset(name for name in self.tables if not name.startswith(internal))

    @property
    def leftovers(self) -> list[str]:
        # Alembic's batch migrations on SQLite copy a table to _alembic_tmp_<table>
        # and rename it back; one still there is a migration that stopped halfway.
        return sorted(name for name in self.tables if name.startswith("_alembic_tmp_"))

    @property
    def fresh(self) -> bool:
        return not self.mlflow_tables and not self.revisions and not self.leftovers


@functools.cache
def _revisions() -> tuple[str, frozenset[str]]:
    """The head revision this MLflow migrates to, and every revision it knows (an
    older store can be upgraded; an unknown revision was made by a newer MLflow)."""
    return _scanned_revisions() or _loaded_revisions()


_REVISION = re.compile(r"^revision(?:\s*:[^=\n]*)?\s*=\s*['\"](\w+)['\"]", re.MULTILINE)
_DOWN_REVISION = re.compile(r"^down_revision(?:\s*:[^=\n]*)?\s*=\s*(.+)$", re.MULTILINE)


def _scanned_revisions() -> tuple[str, frozenset[str]] | None:
    # Alembic imports every migration script to find the head, about 2 s of CPU; with
    # several processes starting at once that is most of their time. The two
    # assignments are read from the text instead; anything unexpected falls back to
    # Alembic itself.
    import mlflow

    folder = Path(mlflow.__file__).parent / "store" / "db_migrations" / "versions"
    revisions: set[str] = set()
    parents: set[str] = set()
    try:
        for script in folder.glob("*.py"):
            text = script.read_text(encoding="utf-8")
            found = _REVISION.search(text)
            if found is None:
                continue
            revisions.add(found.group(1))
            down = _DOWN_REVISION.search(text)
            if down is not None:
                parents.update(re.findall(r"['\"](\w+)['\"]", down.group(1)))
    except OSError:
        return None
    heads = revisions - parents
    if len(heads) != 1 or not parents <= revisions:
        return None
    return heads.pop(), frozenset(revisions)


def _loaded_revisions() -> tuple[str, frozenset[str]]:
    from alembic.script import ScriptDirectory
    from mlflow.store.db.utils import _get_alembic_config

    config = _get_alembic_config(db_url="")  # type: ignore[no-untyped-call]
    script = ScriptDirectory.from_config(config)
    heads = script.get_heads()
    known = frozenset(revision.revision for revision in script.walk_revisions())
    return (heads[0] if len(heads) == 1 else ",".join(sorted(heads))), known


@functools.cache
def _expected_tables() -> frozenset[str]:
    from mlflow.store.db.base_sql_model import Base

    # The models register their tables on import, as MLflow's own check relies on.
    from mlflow.store.db.utils import _all_tables_exist  # noqa: F401

    return frozenset(Base.metadata.tables)


def _read_state(path: Path) -> _State:
    if not path.exists():
        return _State(frozenset(), ())
    try:
        # Read-only: checking must never create or change the file.
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error as exc:
        raise TrackingError(f"cannot open the MLflow store: {exc}", source=str(path)) from None
    try:
        with contextlib.closing(connection):
            tables = frozenset(
                row[0]
                for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
            )
            revisions: tuple[str, ...] = ()
            if "alembic_version" in tables:
                revisions = tuple(
                    str(row[0])
                    for row in connection.execute("SELECT version_num FROM alembic_version")
                )
    except sqlite3.DatabaseError as exc:
        raise _not_a_database(path, exc) from None
    return _State(tables, revisions)


def _runs_in(path: Path, state: _State) -> int:
    # Only for the message of a refused store: counting a large table takes a while.
    if "runs" not in state.tables:
        return 0
    try:
        with contextlib.closing(
            sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
        ) as connection:
            return int(connection.execute("SELECT count(*) FROM runs").fetchone()[0])
    except sqlite3.Error:
        return 0


def _runs_text(count: int) -> str:
    return "1 run" if count == 1 else f"{count} runs"


def _check(
    state: _State,
    head: str,
    known: frozenset[str],
    expected: frozenset[str],
    path: Path,
    uri: str,
) -> None:
    shown = public_uri(uri)
    detail = _half_migrated(state, head, expected)
    if detail is not None:
        runs = _runs_in(path, state)
        if runs:
            fix = (
                f"it holds {_runs_text(runs)}: restore it from a backup, or back it up and "
                f"try `mlflow db upgrade {shown}`"
            )
        else:
            fix = f"it holds no runs: delete {path.name} and run again to create a new store"
        raise TrackingError(
            f"the MLflow store is half-migrated ({detail}); it was left as it is and "
            f"nothing was logged. Fix: {fix}",
            source=str(path),
        )
    (revision,) = state.revisions
    if revision == head:
        return
    if revision in known:
        empty = (
            "" if _runs_in(path, state) else f" (it holds no runs: deleting {path.name} also works)"
        )
        raise TrackingError(
            f"the MLflow store has schema version {revision}, older than this MLflow's "
            f"({head}); nothing was logged. Fix: back it up, then run "
            f"`mlflow db upgrade {shown}`{empty}",
            source=str(path),
        )
    import mlflow

    raise TrackingError(
        f"the MLflow store has schema version {revision}, unknown to MLflow "
        f"{mlflow.__version__} (a newer MLflow made it); nothing was logged. Fix: use "
        "that MLflow version, or another store",
        source=str(path),
    )


def _half_migrated(state: _State, head: str, expected: frozenset[str]) -> str | None:
    if state.leftovers:
        return f"leftover tables {', '.join(state.leftovers)} of an interrupted migration"
    if not state.revisions:
        return "MLflow tables but no schema version"
    if len(state.revisions) > 1:
        return f"several schema versions ({', '.join(state.revisions)})"
    if not state.mlflow_tables:
        return f"schema version {state.revisions[0]} but no MLflow tables"
    if state.revisions[0] == head:
        missing = sorted(expected - state.tables)
        if missing:
            shown = ", ".join(missing[:3]) + (" ..." if len(missing) > 3 else "")
            return f"schema version {head} but tables {shown} missing"
    return None


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


# --------------------------------------------------------------------------- lock


@contextlib.contextmanager
def _store_lock(path: Path) -> Iterator[None]:
    lock_path = path.with_name(path.name + LOCK_SUFFIX)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _acquire(lock_path)
    except OSError as exc:
        if path.exists():
            # A read-only folder: nothing can be created or migrated there, so there
            # is nothing to serialize; the check still runs.
            yield
            return
        raise OutputError(
            f"cannot create the store's lock file: {exc.strerror or exc}", source=str(lock_path)
        ) from exc
    try:
        yield
    finally:
        _release(fd, lock_path)


def _acquire(lock_path: Path) -> int:
    """An open descriptor of ``lock_path``, exclusively locked."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    delay = 0.002
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            if _try_lock(fd):
                if _still_named(fd, lock_path):
                    return fd
                # The holder before us removed the file as it let go; a newcomer may
                # lock a new file of that name, so this one means nothing any more.
                _unlock(fd)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        if time.monotonic() > deadline:
            raise TrackingError(
                f"another process has held the store's lock for {LOCK_WAIT_SECONDS:.0f} s "
                "(creating or migrating the store); nothing was logged",
                source=str(lock_path),
                expected="that process to finish, or to be stopped",
            )
        time.sleep(delay)
        # Short pauses: the lock is mostly held for milliseconds (a check), and a
        # waiter asleep for long would leave it free while others queue.
        delay = min(delay * 2, 0.05)


def _release(fd: int, lock_path: Path) -> None:
    try:
        if _REMOVE_WHEN_DONE:
            # Removed while still held, so that no lock file is left beside the store;
            # _acquire's name check keeps a waiter on the removed file from going on.
            with contextlib.suppress(OSError):
                os.unlink(lock_path)
        _unlock(fd)
    finally:
        os.close(fd)


def _still_named(fd: int, lock_path: Path) -> bool:
    try:
        named = os.stat(lock_path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)


if sys.platform == "win32":
    import msvcrt

    # An open file cannot be removed on Windows: the lock file stays.
    _REMOVE_WHEN_DONE = False

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    _REMOVE_WHEN_DONE = True

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


# ----------------------------------------------------------------- busy retries


def is_busy(error: BaseException) -> bool:
    """Whether ``error`` is SQLite saying another connection holds the lock it needs
    (a retry succeeds once that connection commits)."""
    text = str(error).lower()
    return any(message in text for message in _BUSY_MESSAGES)


def retry_busy(call: Callable[[], _T], *, seconds: float = BUSY_RETRY_SECONDS) -> _T:
    """``call()``, retried with growing, jittered pauses while SQLite answers "database
    is locked", for at most ``seconds``.

    Safe for store calls: a statement SQLite refused this way rolled its transaction
    back, so nothing of the failed attempt was written.
    """
    deadline = time.monotonic() + seconds
    delay = 0.02
    _install_busy_filter()
    _retrying_here.active = getattr(_retrying_here, "active", 0) + 1
    try:
        while True:
            try:
                return call()
            except Exception as error:
                if not is_busy(error) or time.monotonic() > deadline:
                    raise
            # Jitter keeps processes that collided once from colliding again.
            time.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, 1.0)
    finally:
        _retrying_here.active -= 1


class _RetryingClient:
    """An ``MlflowClient`` whose every method is retried by :func:`retry_busy`."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute):
            return attribute

        @functools.wraps(attribute)
        def call(*args: Any, **kwargs: Any) -> Any:
            return retry_busy(lambda: attribute(*args, **kwargs))

        return call


def retrying(client: Any) -> Any:
    """``client`` (an ``MlflowClient``) with store calls retried on "database is locked"."""
    return _RetryingClient(client)


class _BusyFilter(logging.Filter):
    # MLflow logs every SQLite OperationalError with a traceback before raising it;
    # a busy one that is about to be retried is not an error.
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(_retrying_here, "active", 0):
            return True
        return not any(message in record.getMessage().lower() for message in _BUSY_MESSAGES)


_busy_filter = _BusyFilter()


def _install_busy_filter() -> None:
    logger = logging.getLogger("mlflow.store.db.utils")
    if _busy_filter not in logger.filters:
        logger.addFilter(_busy_filter)


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
