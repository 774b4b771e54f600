"""What a user sees of a ``docevals text`` run in MLflow's own UI, in a real browser.

The run is logged by the command (in a subprocess, as a user runs it) through the
served quickstart store's ``mlflow server`` into an experiment of its own, which
docevals creates with the saved view "docevals headline". Pages: Latin and CJK text
and one HTML table, so the run has text and table figures. Each test saves its
screenshot under ``test-artifacts/browser/`` (or ``$BROWSER_ARTIFACTS``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("CI"):  # in CI the dev extra is installed: missing is a failure
    pytest.importorskip("playwright", reason="Playwright for Python (the dev extra)")
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import QuickstartSite
from tests.browser.test_mlflow_ui import _LINE_TEXTS, SETTLE_MS, _close_assistant

pytestmark = pytest.mark.browser

EXPERIMENT = "docevals-text-ui"
RUN_NAME = "ocr-engine-a"
HEADLINE = ("cer", "wer", "token_f1", "teds")
"""The ``Summary/…`` figures of a text run the saved view must show as columns."""
TOLERANCE = 0.0006
"""The UI rounds to three decimals or more."""

PAGES = {
    "latin/invoice.txt": (
        "Invoice 2024-117 from ACME GmbH, total 1,250.00 EUR due 30 May",
        "Invoice 2024-117 from ACME GmbH, tota1 1,250.00 EUR due 3O May",
    ),
    "latin/letter.md": (
        "Dear customer, thank you for your order.",
        "Dear custom, thank you for order.",
    ),
    "cjk/receipt.txt": ("東京都千代田区 合計 ¥3,200 税込", "東京都千代田 合計 ¥3,200 税込"),
    "cjk/notice.txt": ("请于五月三十日前付款。谢谢！", "请于五月三十日前付款。谢谢"),
    "tables/items.html": (
        "<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>"
        "<tr><td>Paper</td><td>2</td><td>10.00</td></tr>"
        "<tr><td>Toner</td><td>1</td><td>80.00</td></tr></table>",
        "<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>"
        "<tr><td>Paper</td><td>2</td><td>10.00</td></tr>"
        "<tr><td colspan='2'>Toner 1</td><td>80.00</td></tr></table>",
    ),
}


@dataclass
class TextRun:
    """The ``docevals text`` run as MLflow holds it."""

    experiment_id: str
    run_id: str
    metrics: dict[str, float]


def _write(root: Path, side: int) -> Path:
    for name, texts in PAGES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(texts[side], encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def text_run(site: QuickstartSite, tmp_path_factory: pytest.TempPathFactory) -> TextRun:
    """``docevals text`` logged through the served store's tracking server."""
    from mlflow.tracking import MlflowClient

    folder = tmp_path_factory.mktemp("text-run")
    expected, predicted = _write(folder / "gt", 0), _write(folder / "ocr", 1)
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DOCEVALS_NO_MLFLOW", "MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME")
    }
    # Loopback only: a proxy in the environment must not carry the server's requests.
    environment.update({"MLFLOW_DISABLE_TELEMETRY": "true", "NO_PROXY": "127.0.0.1,localhost"})
    argv = [
        *(sys.executable, "-m", "docevals_mlflow", "text", str(expected), str(predicted)),
        *("--tracking-uri", site.server.url, "--experiment", EXPERIMENT),
        *("--run-name", RUN_NAME, "--max-cer", "0.5", "--min-teds", "0.5"),
    ]
    result = subprocess.run(
        argv, cwd=folder, env=environment, capture_output=True, text=True, timeout=180, check=False
    )
    assert result.returncode == 0, f"docevals text failed:\n{result.stdout}\n{result.stderr}"
    client = MlflowClient(tracking_uri=site.server.url)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None, f"docevals text logged no experiment {EXPERIMENT!r}"
    (found,) = client.search_runs([experiment.experiment_id])
    assert found.info.run_name == RUN_NAME
    assert found.data.tags.get("docevals.verdict") == "pass"
    return TextRun(experiment.experiment_id, found.info.run_id, dict(found.data.metrics))


def _headers(page: Any) -> list[str]:
    return [text.strip() for text in page.get_by_role("columnheader").all_inner_texts()]


def test_saved_view_shows_the_text_headline_as_columns(
    site: QuickstartSite, text_run: TextRun, page: Any
) -> None:
    page.set_viewport_size({"width": 2400, "height": 1000})
    page.goto(
        site.url(f"/experiments/{text_run.experiment_id}/runs?viewStateShareKey=docevals-headline")
    )
    page.get_by_text(RUN_NAME, exact=True).first.wait_for()
    _close_assistant(page)
    page.wait_for_timeout(SETTLE_MS)
    headers = _headers(page)
    for name in HEADLINE:
        assert any(header.endswith(f"Summary/{name}") or header == name for header in headers), (
            f"no Summary/{name} column in the saved view; columns shown: {headers}"
        )
    line = page.get_by_text(RUN_NAME, exact=True).first.evaluate(_LINE_TEXTS)
    numbers = [float(text) for text in line if _is_number(text)]
    for name in HEADLINE:
        value = text_run.metrics[f"Summary/{name}"]
        assert any(abs(number - value) <= TOLERANCE for number in numbers), (
            f"the run's row does not show Summary/{name} {value:.4f}: {line}"
        )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_run_page_lists_the_worst_pages_table(
    site: QuickstartSite, text_run: TextRun, page: Any
) -> None:
    base = f"/experiments/{text_run.experiment_id}/runs/{text_run.run_id}/artifacts"
    page.goto(site.url(base))
    _close_assistant(page)
    # The artifact tree lists top-level folders; open "tables" to reach the file.
    page.get_by_text("tables", exact=True).first.click()
    page.get_by_text("worst_pages.json", exact=True).first.wait_for()
    page.get_by_text("worst_pages.json", exact=True).first.click()
    page.wait_for_timeout(SETTLE_MS)
    # MLflow shows a logged table as a grid: the worst pages' names are in it.
    with contextlib.suppress(PlaywrightTimeout):  # what is missing is reported below
        page.get_by_text("cjk/receipt.txt").first.wait_for(timeout=10_000)
    _close_assistant(page)  # it opens with the run page: fold it for the screenshot
    body = page.inner_text("body")
    shown = [name for name in PAGES if name in body]
    assert "tables/items.html" in shown, f"no table row; the page shows: {body[:800]!r}"
    assert len(shown) >= 3, f"the worst-pages table shows {shown}; the page: {body[:800]!r}"
    headers = _headers(page)
    assert {"kind", "page", "cer"} <= set(headers), f"not shown as a table: {headers}"
    assert page.page_errors == [], f"script errors: {page.page_errors}"
