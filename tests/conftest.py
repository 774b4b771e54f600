"""Fixtures shared across the test suite."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# MLflow sends usage telemetry unless told not to; tests never touch the network.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")

ModuleWriter = Callable[[Path, str], str]


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
def mlflow_store(_mlflow_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh temporary SQLite tracking store, used by default (URI returned).

    The working directory moves to ``tmp_path`` so that artifacts land there too.
    """
    store = tmp_path / "mlflow.db"
    shutil.copy(_mlflow_template, store)
    uri = f"sqlite:///{store}"
    monkeypatch.delenv("DOCEVALS_NO_MLFLOW", raising=False)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.chdir(tmp_path)
    return uri
