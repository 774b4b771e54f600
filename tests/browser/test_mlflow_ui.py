"""What a new user sees of ``docevals quickstart`` in MLflow's own UI, in a real browser.

One quickstart store is served by ``mlflow server`` for the whole module (see
conftest.py); each test opens one page in headless chromium and saves its screenshot
under ``test-artifacts/browser/`` (or ``$BROWSER_ARTIFACTS``) whatever the outcome.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlparse

import pytest

if not os.environ.get("CI"):  # in CI the dev extra is installed: missing is a failure
    pytest.importorskip("playwright", reason="Playwright for Python (the dev extra)")
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import QuickstartSite

pytestmark = pytest.mark.browser

VERSIONS = ("prompt-v1", "prompt-v2")
F1_TOLERANCE = 0.0006
"""The UI rounds to three decimals or more; the quickstart prints four."""
HEADLINE_ROWS = 5
"""How far down MLflow's compare-runs metric table F1 may sit and still be "first"."""
F1_NAME = re.compile(r"(^|[^a-z])f1$", re.IGNORECASE)
"""A metric name that is the F1 itself (``f1``, ``overall/f1``), not ``macro_f1``."""
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
SETTLE_MS = 1500

# Leaf elements whose vertical middle lies within the element's line: a table row's
# cells, even when a grid draws names and values as separate blocks.
_LINE_TEXTS = """(element) => {
  const box = element.getBoundingClientRect();
  const texts = [];
  for (const node of document.querySelectorAll('body *')) {
    if (node.children.length > 0) continue;
    const rect = node.getBoundingClientRect();
    const middle = (rect.top + rect.bottom) / 2;
    if (rect.width > 0 && middle >= box.top - 2 && middle <= box.bottom + 2) {
      texts.push(node.textContent.trim());
    }
  }
  return texts.filter((text) => text.length > 0);
}"""

# Axis and title text of every plotly chart whose box leaves its chart's SVG.
_CLIPPED_TEXT = """() => {
  const clipped = [];
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  plots.forEach((plot, index) => {
    const svg = plot.querySelector('.main-svg');
    if (!svg) return;
    const box = svg.getBoundingClientRect();
    const title = (plot.querySelector('.gtitle') || {}).textContent || `chart ${index + 1}`;
    const labels = '.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .gtitle';
    for (const label of plot.querySelectorAll(labels)) {
      const r = label.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5
          || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
        clipped.push(`${title}: ${JSON.stringify(label.textContent)}`);
      }
    }
  });
  return {charts: plots.length, clipped};
}"""


def _close_assistant(page: Any) -> None:
    """Fold MLflow's assistant side panel away, so the page gets the width."""
    if page.get_by_role("button", name="New Chat").count() == 0:
        return
    # The panel's header: New Chat, Settings, Close; cosmetic, so a miss is no failure.
    with contextlib.suppress(PlaywrightError):
        page.get_by_role("button", name="Close", exact=True).last.click(timeout=3000)


def _numbers(texts: list[str]) -> list[float]:
    return [float(match) for text in texts for match in NUMBER.findall(text)]


def _shows(texts: list[str], value: float) -> bool:
    return any(abs(number - value) <= F1_TOLERANCE for number in _numbers(texts))


def _linked_prompts(site: QuickstartSite) -> dict[str, set[str]]:
    """Prompt name → versions the quickstart runs link (MLflow's linkedPrompts tag)."""
    linked: dict[str, set[str]] = {}
    for run in site.runs.values():
        for entry in json.loads(run.data.tags.get("mlflow.linkedPrompts", "[]")):
            linked.setdefault(entry["name"], set()).add(str(entry["version"]))
    return linked


# The quickstart's experiment is a GenAI one: its runs are listed under "Evaluation
# runs", which shows every metric in key order, so Summary/* lead. MLflow's classic
# runs list shows no metric column until the user picks one (the choice lives in the
# browser's storage); the saved view docevals adds to each experiment it creates,
# "docevals headline" in the Views menu, picks the Summary columns there.
RUNS_LISTS = {
    "evaluation-runs": "/experiments/{id}/evaluation-runs",
    "saved-view": "/experiments/{id}/runs?viewStateShareKey=docevals-headline",
}


@pytest.mark.parametrize("runs_list", sorted(RUNS_LISTS))
def test_runs_list_shows_the_headline_metrics(
    site: QuickstartSite, page: Any, runs_list: str
) -> None:
    page.set_viewport_size({"width": 2400, "height": 1000})
    page.goto(site.url(RUNS_LISTS[runs_list].format(id=site.experiment_id)))
    page.get_by_text("prompt-v1", exact=True).first.wait_for()
    _close_assistant(page)
    page.wait_for_timeout(SETTLE_MS)
    headers = [text.strip() for text in page.get_by_role("columnheader").all_inner_texts()]
    assert any(F1_NAME.search(header) for header in headers), (
        f"no F1 column in the runs list without picking columns; columns shown: {headers}"
    )
    for name in VERSIONS:
        cell = page.get_by_text(name, exact=True).first
        line = cell.evaluate(_LINE_TEXTS)
        assert _shows(line, site.f1[name]), f"{name}'s row does not show F1 {site.f1[name]}: {line}"


def test_compare_runs_shows_f1_of_both_versions_first(site: QuickstartSite, page: Any) -> None:
    ids = json.dumps([site.runs[name].info.run_id for name in VERSIONS])
    experiments = json.dumps([site.experiment_id])
    page.goto(site.url(f"/compare-runs?runs={quote(ids)}&experiments={quote(experiments)}"))
    page.get_by_text("Run details").first.wait_for()
    page.wait_for_timeout(SETTLE_MS)
    # The metric table lists names as links in MLflow's virtualised grid, in its order
    # (the only grid of links on the page).
    names = page.locator("[role=rowgroup] a")
    names.first.wait_for()
    first = [text.strip() for text in names.all_inner_texts()[:HEADLINE_ROWS]]
    f1_rows = [index for index, text in enumerate(first) if F1_NAME.search(text)]
    assert f1_rows, f"F1 is not among the first {HEADLINE_ROWS} compared metrics: {first}"
    line = names.nth(f1_rows[0]).evaluate(_LINE_TEXTS)
    for name in VERSIONS:
        assert _shows(line, site.f1[name]), f"{first[f1_rows[0]]}: no {name} F1 in {line}"


def test_run_traces_list_the_invoices_with_field_assessments(
    site: QuickstartSite, page: Any
) -> None:
    run = site.runs["prompt-v2"]
    page.goto(site.url(f"/experiments/{site.experiment_id}/runs/{run.info.run_id}/traces"))
    page.get_by_role("tab", name="Traces").first.wait_for()
    _close_assistant(page)
    page.wait_for_timeout(SETTLE_MS)
    expected = site.document_ids
    # Traces load after the page: wait for the first invoice rather than a fixed time.
    with contextlib.suppress(PlaywrightTimeout):  # what is missing is reported below
        page.get_by_text(expected[0]).first.wait_for(timeout=10_000)
    body = page.inner_text("body")
    missing = [document for document in expected if document not in body]
    assert not missing, (
        f"the run's traces miss {len(missing)} of {len(expected)} invoices "
        f"(e.g. {missing[:3]}); the page shows: {body[:600]!r}"
    )
    headers = " ".join(page.get_by_role("columnheader").all_inner_texts())
    assessed = [field for field in site.fields if field in headers]
    assert assessed, f"no field assessment among the trace columns: {headers!r}"


def test_prompts_page_shows_both_versions(site: QuickstartSite, page: Any) -> None:
    linked = _linked_prompts(site)
    page.goto(site.url("/prompts"))
    page.get_by_role("heading", name="Prompts").first.wait_for()
    page.wait_for_timeout(SETTLE_MS)
    assert linked, (
        "the quickstart runs link no registered prompt (no mlflow.linkedPrompts tag); "
        f"the Prompts page shows: {page.inner_text('body')[:400]!r}"
    )
    name = sorted(linked)[0]
    assert len(linked[name]) == 2, f"the runs link versions {sorted(linked[name])} of {name!r}"
    page.get_by_role("link", name=name, exact=True).first.click()
    for version in sorted(linked[name]):
        page.get_by_text(f"Version {version}", exact=True).first.wait_for()


def test_dashboard_artifact_has_no_clipped_axis_text(site: QuickstartSite, page: Any) -> None:
    run = site.runs["prompt-v1"]
    page.goto(
        site.url(
            f"/experiments/{site.experiment_id}/runs/{run.info.run_id}"
            "/artifacts/report/dashboard.html"
        )
    )
    # MLflow's artifact viewer shows HTML in a sandboxed iframe.
    frame = page.wait_for_selector("iframe").content_frame()
    assert frame is not None
    frame.wait_for_selector(".js-plotly-plot .main-svg")
    frame.wait_for_timeout(SETTLE_MS)
    found = frame.evaluate(_CLIPPED_TEXT)
    assert found["charts"] > 0
    assert not found["clipped"], (
        f"{len(found['clipped'])} axis or title labels leave their chart: {found['clipped'][:8]}"
    )


def _local_file(uri: str) -> Path:
    parsed = urlparse(uri)
    assert parsed.scheme == "file", f"artifacts not in a local folder: {uri}"
    return Path(parsed.path)


def test_dashboards_open_offline_without_script_errors(site: QuickstartSite, page: Any) -> None:
    outside: list[str] = []

    def note(request: Any) -> None:
        scheme = urlparse(request.url).scheme
        host = urlparse(request.url).hostname
        if scheme not in ("file", "data", "blob", "about") and host != "127.0.0.1":
            outside.append(request.url)

    page.on("request", note)
    for name in VERSIONS:
        dashboard = _local_file(site.runs[name].info.artifact_uri) / "report" / "dashboard.html"
        page.goto(dashboard.as_uri())
        page.wait_for_selector(".js-plotly-plot .main-svg")
        charts = page.locator(".js-plotly-plot").count()
        assert charts > 0, f"{name}'s dashboard draws no chart"
    assert page.page_errors == [], f"script errors: {page.page_errors}"
    assert outside == [], f"requests beyond the machine: {outside}"
