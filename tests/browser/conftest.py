"""A real MLflow UI after ``docevals quickstart``, and headless chromium to look at it.

The store is a temporary SQLite file filled by ``docevals quickstart`` (run as a user
runs it, in a subprocess); ``mlflow server`` then serves it on a free loopback port
until the module's tests are done. Chromium is Debian's (``/usr/bin/chromium``, or
``$CHROMIUM``) driven by Playwright; Playwright's own browser builds are never used.
Every test saves a full-page screenshot under ``test-artifacts/browser/`` (or
``$BROWSER_ARTIFACTS``), pass or fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.tracking.servers import MlflowServer, mlflow_server

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS") or REPO / "test-artifacts" / "browser")
EXPERIMENT = "docevals-quickstart"
TIMEOUT_MS = 20_000
"""Generous for a page of MLflow's single-page app on a loaded CI machine."""


def chromium_path() -> str | None:
    """Debian's chromium, or the one ``$CHROMIUM`` names."""
    named = os.environ.get("CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _missing(what: str) -> None:
    # In CI (.ci/run installs both) a missing browser is a failure, not a skip.
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing in CI; .ci/run installs it")
    pytest.skip(f"{what} is not installed (install the dev extra and Debian's chromium)")


FIELDS = ("invoice_number", "issue_date", "currency", "total")
"""Top-level fields of the quickstart schema, as any naming of their assessments has them."""
F1_LINE = re.compile(r"^(prompt-v\d+)\s+micro F1 ([0-9.]+)", re.MULTILINE)


@dataclass
class QuickstartSite:
    """The served quickstart store: the server and what the quickstart made."""

    server: MlflowServer
    tracking_uri: str
    experiment_id: str
    runs: dict[str, Any]  # run name -> mlflow.entities.Run
    f1: dict[str, float]  # run name -> micro F1 as the quickstart printed it
    document_ids: list[str]
    fields: tuple[str, ...] = FIELDS

    def url(self, fragment: str) -> str:
        return f"{self.server.url}/#{fragment}"


def _run_quickstart(folder: Path, tracking_uri: str) -> tuple[Path, str]:
    """Run ``docevals quickstart`` as a user would; returns its folder and output."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DOCEVALS_NO_MLFLOW", "MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME")
    }
    environment.update({"MLFLOW_TRACKING_URI": tracking_uri, "MLFLOW_DISABLE_TELEMETRY": "true"})
    output = folder / "docevals-quickstart"
    result = subprocess.run(
        [sys.executable, "-m", "docevals_mlflow", "quickstart", "--output-dir", str(output)],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, f"quickstart failed:\n{result.stdout}\n{result.stderr}"
    return output, result.stdout


@pytest.fixture(scope="module")
def site(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuickstartSite]:
    """``docevals quickstart`` into a temporary SQLite store, served by ``mlflow server``.

    It needs the browser first: without one the tests skip before the slow part.
    """
    from mlflow.tracking import MlflowClient

    folder = tmp_path_factory.mktemp("browser-site")
    tracking_uri = f"sqlite:///{folder / 'mlflow.db'}"
    output, printed = _run_quickstart(folder, tracking_uri)
    f1 = {name: float(value) for name, value in F1_LINE.findall(printed)}
    assert len(f1) == 2, f"no micro F1 of both versions in the quickstart's output:\n{printed}"
    lines = (output / "ground_truth.jsonl").read_text(encoding="utf-8").splitlines()
    document_ids = [json.loads(line)["id"] for line in lines if line.strip()]
    client = MlflowClient(tracking_uri=tracking_uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None, f"quickstart logged no experiment {EXPERIMENT!r}"
    runs = {
        run.info.run_name: run
        for run in client.search_runs([experiment.experiment_id], max_results=100)
    }
    with mlflow_server(tracking_uri, folder / "server") as server:
        yield QuickstartSite(server, tracking_uri, experiment.experiment_id, runs, f1, document_ids)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless chromium (Debian's), shared by a module's browser tests.

    Module-scoped on purpose: Playwright's sync API keeps an event loop running in
    this thread while it is started, and every later test calling ``asyncio.run``
    would fail with "cannot be called from a running event loop"."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python")
    executable = chromium_path()
    if executable is None:
        _missing("chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            # Root in a container has no user namespaces for chromium's sandbox.
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        try:
            yield launched
        finally:
            launched.close()


def screenshot_path(name: str) -> Path:
    """Where a test's screenshot goes (the folder is created)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh page at 1600 by 1000; its screenshot is saved when the test ends."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.page_errors = errors
    try:
        yield opened
    finally:
        try:
            opened.screenshot(path=str(screenshot_path(request.node.name)), full_page=True)
        finally:
            context.close()
