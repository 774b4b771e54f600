"""Fixtures shared across the test suite."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# MLflow sends usage telemetry unless told not to; tests never touch the network.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
# Logging a trace whose spans name an LLM provider makes MLflow fetch that provider's
# price list from GitHub (three tries with back-off, ~7 s per provider offline, in
# every process); empty means MLflow's bundled copy, the same one it falls back to.
os.environ["MLFLOW_MODEL_CATALOG_URI"] = ""

ModuleWriter = Callable[[Path, str], str]


_WORK_TREE = Path(__file__).resolve().parent.parent
_STRAY = ("mlflow.db", "mlflow.db.lock", "mlruns")
_STRAY_BEFORE = {name for name in _STRAY if (_WORK_TREE / name).exists()}


@pytest.fixture(autouse=True)
def _secrets_stay_with_their_test() -> Iterator[None]:
    # The registry of secrets to redact is process-wide: one test's keys must not
    # redact (or hide leaks in) the next test's output.
    from docevals_mlflow.core.secrets import REGISTRY

    saved = REGISTRY.secrets()
    yield
    REGISTRY.clear()
    REGISTRY.add(*saved)


@pytest.fixture(autouse=True)
def _work_tree_stays_clean() -> Iterator[None]:
    # A test that logs without a temporary store leaves an MLflow store in the work
    # tree (and in the next clean clone's CI run); name the test that did it.
    yield
    stray = [name for name in _STRAY if name not in _STRAY_BEFORE and (_WORK_TREE / name).exists()]
    if stray:
        for name in stray:
            target = _WORK_TREE / name
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink()
        pytest.fail(f"the test wrote {', '.join(stray)} into the work tree")


@pytest.fixture(autouse=True)
def _no_mlflow_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    # Commands log to MLflow by default; tests that check tracking opt back in with
    # the `mlflow_store` fixture, the rest must not create stores in the work tree.
    monkeypatch.setenv("DOCEVALS_NO_MLFLOW", "1")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    # Under `mlflow run` the suite itself would inherit a project run to log into.
    for name in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_EXPERIMENT_ID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_signing_key_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's own signing or trusted key must never reach a test; tests that
    # need one set it themselves.
    for name in ("DOCEVALS_SIGNING_KEY", "DOCEVALS_SIGNING_KEY_PASSPHRASE", "DOCEVALS_PUBLIC_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def isolated_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Function metrics are imported from the config folder, which the loader puts on
    # sys.path; keep that from leaking into other tests.
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.fixture
def checks_module(isolated_sys_path: None) -> Iterator[ModuleWriter]:
    """Write a uniquely named module into a folder; returns its module name.

    Unique names keep ``sys.modules`` from serving one test's module to another.
    """
    names: list[str] = []

    def write(folder: Path, source: str) -> str:
        name = f"checks_{uuid.uuid4().hex}"
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        names.append(name)
        return name

    yield write
    for name in names:
        sys.modules.pop(name, None)


@pytest.fixture(scope="session")
def _mlflow_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty SQLite store, created once (migrations take seconds)."""
    from mlflow.tracking import MlflowClient

    path = tmp_path_factory.mktemp("mlflow-template") / "mlflow.db"
    MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def migrated_store(_mlflow_template: Path, tmp_path: Path) -> str:
    """An empty, migrated SQLite store at ``tmp_path / "mlflow.db"`` (URI returned).

    A copy of the session's template: nothing else (environment, working directory)
    changes, so a test that names that path itself opens a ready store.
    """
    store = tmp_path / "mlflow.db"
    shutil.copy(_mlflow_template, store)
    # MLflow fixed the Default experiment's artifact folder when the template was
    # made; point this copy's at its own folder, or runs in experiment 0 (projects,
    # prompts) would all write into one shared place.
    with contextlib.closing(sqlite3.connect(store)) as connection, connection:
        connection.execute(
            "UPDATE experiments SET artifact_location = ? WHERE experiment_id = 0",
            ((tmp_path / "mlruns" / "0").as_uri(),),
        )
    return f"sqlite:///{store}"


@pytest.fixture
def mlflow_store(migrated_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh temporary SQLite tracking store, used by default (URI returned).

    The working directory moves to ``tmp_path`` so that artifacts land there too.
    """
    monkeypatch.delenv("DOCEVALS_NO_MLFLOW", raising=False)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", migrated_store)
    monkeypatch.chdir(tmp_path)
    return migrated_store


# The JVM compiles with its quick compiler only and collects garbage on one thread:
# the Spark tests run small jobs once each, where the optimising compiler costs more
# CPU than it saves (it changes how fast Java runs, never what Spark computes).
_SPARK_TEST_JVM = "--driver-java-options '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' pyspark-shell"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local Spark session (``local[2]``) for every Spark test in the run.

    Starting one costs seconds, so all Spark tests (tests/spark and tracking's) share
    it; once started, an idle JVM takes no CPU from the rest of the suite.
    """
    pytest.importorskip("pyspark", reason="needs the spark extra")
    from docevals_mlflow.spark.session import spark_session

    # Read once, when the JVM starts; a developer's own setting wins.
    added = "PYSPARK_SUBMIT_ARGS" not in os.environ
    if added:
        os.environ["PYSPARK_SUBMIT_ARGS"] = _SPARK_TEST_JVM
    try:
        session = spark_session("local[2]", app_name="docevals-tests")
    finally:
        if added:
            del os.environ["PYSPARK_SUBMIT_ARGS"]
    # Small data: two shuffle partitions instead of 200 keep every job short.
    session.conf.set("spark.sql.shuffle.partitions", "2")
    # Timestamps are written in the session's zone: the same text on any machine.
    session.conf.set("spark.sql.session.timeZone", "UTC")
    yield session
    session.stop()


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fail instead of hanging if a read blocks (a named pipe) or runs away."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError("the read did not return")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(10)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
