"""The interval charts of suite and split dashboards as a browser draws them: error
bars present, every label inside its chart, no script error, nothing fetched."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from docevals_mlflow.reports.evaluation_dashboard import render_evaluation_dashboard
from docevals_mlflow.reports.split_dashboard import render_split_dashboard
from tests.browser.test_mlflow_ui import _CLIPPED_TEXT, SETTLE_MS
from tests.evaluation.test_suite_intervals import suite
from tests.split.test_intervals import batch

pytestmark = pytest.mark.browser

_ERROR_BARS = """(id) => {
  const plot = document.getElementById(id);
  if (!plot) return -1;
  return plot.querySelectorAll('.errorbar').length;
}"""


def _open(page: Any, html: str, folder: Path) -> list[str]:
    outside: list[str] = []

    def note(request: Any) -> None:
        if urlparse(request.url).scheme not in ("file", "data", "blob", "about"):
            outside.append(request.url)

    page.on("request", note)
    file = folder / "dashboard.html"
    file.write_text(html, encoding="utf-8")
    page.goto(file.as_uri())
    page.wait_for_selector(".js-plotly-plot .main-svg")
    page.wait_for_timeout(SETTLE_MS)
    return outside


def _check(page: Any, chart: str, bars: int, outside: list[str]) -> None:
    found = page.evaluate(_CLIPPED_TEXT)
    assert found["charts"] > 0
    assert not found["clipped"], f"labels leave their chart: {found['clipped'][:8]}"
    # One error bar per interval drawn: a chart without them would show bare points.
    assert page.evaluate(_ERROR_BARS, chart) == bars
    assert page.page_errors == [], f"script errors: {page.page_errors}"
    assert outside == [], f"requests beyond the machine: {outside}"


def test_suite_dashboard_draws_stage_pass_rates_with_error_bars(page: Any, tmp_path: Path) -> None:
    report = suite()
    outside = _open(page, render_evaluation_dashboard(report), tmp_path)
    _check(page, "fig-stage-pass-rates", len(report.stages), outside)


def test_split_dashboard_draws_interval_error_bars(page: Any, tmp_path: Path) -> None:
    report = batch(30)
    outside = _open(page, render_split_dashboard(report), tmp_path)
    drawn = sum(
        1
        for part in (
            report.page_level_accuracy,
            report.split_accuracy_without_order,
            report.split_accuracy_with_order,
        )
        for interval in (part.ci or {}).values()
        if interval.low is not None
    ) + sum(
        1
        for part in (report.boundaries, report.matching)
        for interval in (part.ci or {}).values()
        if interval.low is not None
    )
    _check(page, "split-intervals", drawn, outside)
