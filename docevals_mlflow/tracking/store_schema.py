"""Checking an existing SQLite store's schema before MLflow opens it.

The Alembic version is compared with the tables: a half-migrated, outdated or newer
store is refused with a one-line :class:`TrackingError` naming the fix, and never
changed. The check reads the file read-only.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from docevals_mlflow.tracking.errors import TrackingError
from docevals_mlflow.tracking.uris import public_uri


def not_a_database(path: Path, exc: sqlite3.Error) -> TrackingError:
    """The error for a store path holding something other than an SQLite database."""
    return TrackingError(
        f"not an SQLite database ({exc})",
        source=str(path),
        expected="an MLflow SQLite store, or the name of a file to create",
    )


@dataclass(frozen=True)
class StoreState:
    """The tables and Alembic revisions of an SQLite store file."""

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
def migration_revisions() -> tuple[str, frozenset[str]]:
    """The head revision this MLflow migrates to, and every revision it knows (an
    older store can be upgraded; an unknown revision was made by a newer MLflow)."""
    return scanned_revisions() or _loaded_revisions()


_REVISION = re.compile(r"^revision(?:\s*:[^=\n]*)?\s*=\s*['\"](\w+)['\"]", re.MULTILINE)
_DOWN_REVISION = re.compile(r"^down_revision(?:\s*:[^=\n]*)?\s*=\s*(.+)$", re.MULTILINE)


@functools.cache
def scanned_revisions() -> tuple[str, frozenset[str]] | None:
    """The head revision and every revision of the installed MLflow's migration
    scripts, read from their text without importing mlflow (``None`` when they cannot
    be read so or do not form one chain)."""
    # Alembic imports every migration script to find the head, about 2 s of CPU; with
    # several processes starting at once that is most of their time. The two
    # assignments are read from the text instead; anything unexpected falls back to
    # Alembic itself. The scripts are found without importing mlflow (over a second).
    import importlib.util

    try:
        spec = importlib.util.find_spec("mlflow")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(next(iter(spec.submodule_search_locations)))
    folder = package / "store" / "db_migrations" / "versions"
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


_scanned_revisions = scanned_revisions  # the name the tests have always used


def _loaded_revisions() -> tuple[str, frozenset[str]]:
    from alembic.script import ScriptDirectory
    from mlflow.store.db.utils import _get_alembic_config

    config = _get_alembic_config(db_url="")  # type: ignore[no-untyped-call]
    script = ScriptDirectory.from_config(config)
    heads = script.get_heads()
    known = frozenset(revision.revision for revision in script.walk_revisions())
    return (heads[0] if len(heads) == 1 else ",".join(sorted(heads))), known


@functools.cache
def expected_tables() -> frozenset[str]:
    """The tables this MLflow's models define."""
    from mlflow.store.db.base_sql_model import Base

    # The models register their tables on import, as MLflow's own check relies on.
    from mlflow.store.db.utils import _all_tables_exist  # noqa: F401

    return frozenset(Base.metadata.tables)


def read_state(path: Path) -> StoreState:
    """The tables and revisions of the store at ``path`` (empty when there is no file),
    read without changing it."""
    if not path.exists():
        return StoreState(frozenset(), ())
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
        raise not_a_database(path, exc) from None
    return StoreState(tables, revisions)


def _runs_in(path: Path, state: StoreState) -> int:
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


def check_schema(
    state: StoreState,
    head: str,
    known: frozenset[str],
    expected: frozenset[str],
    path: Path,
    uri: str,
) -> None:
    """Refuse a store that is half-migrated, older or newer than this MLflow's head,
    with the fix in the message; return when it is at the head revision."""
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


def _half_migrated(state: StoreState, head: str, expected: frozenset[str]) -> str | None:
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
