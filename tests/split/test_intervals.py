"""Intervals of split figures from resampling packets: values, scipy, coverage, outputs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from docevals_mlflow import evaluate_split_batch
from docevals_mlflow.core.statistics.cluster_intervals import (
    IntervalSettings,
    expanded_confidence,
)
from docevals_mlflow.reports.split_dashboard import render_split_dashboard
from docevals_mlflow.reports.split_markdown import render_split_markdown
from docevals_mlflow.split.batch import summarize
from docevals_mlflow.split.intervals import split_intervals
from docevals_mlflow.split.report import SplitReport
from docevals_mlflow.tracking.split_api import split_bundle
from tests.helpers import run, write_json
from tests.split.test_seed_metrics import EXPECTED, PREDICTED


def packet(correct: int, pages: int, *, tp: int = 0, fp: int = 0, fn: int = 0) -> SimpleNamespace:
    """The counts split_intervals reads from a packet report, without the rest."""
    sections = SimpleNamespace(correct_sections=correct, total_sections=pages)
    detection = SimpleNamespace(tp=tp, fp=fp, fn=fn)
    return SimpleNamespace(
        page_level_accuracy=SimpleNamespace(correct_pages=correct, total_pages=pages),
        split_accuracy_without_order=sections,
        split_accuracy_with_order=sections,
        boundaries=detection,
        matching=SimpleNamespace(exact=detection),
    )


def batch(pairs: int, wrong_every: int = 3) -> SplitReport:
    return evaluate_split_batch(
        [
            ({"id": f"p{i}", "sections": EXPECTED}, PREDICTED if i % wrong_every else EXPECTED)
            for i in range(pairs)
        ]
    )


def test_hand_computed_counts_and_a_degenerate_interval():
    # 12 packets, each 3 of 4 pages right: every resample is 0.75, so is the interval.
    found = split_intervals([packet(3, 4) for _ in range(12)], IntervalSettings())
    page = found["page_level_accuracy"]["accuracy"]
    assert (page.low, page.high) == (0.75, 0.75)
    assert (page.packets, page.pages, page.observations) == (12, 48, 48)
    assert (page.confidence, page.resamples, page.seed) == (0.95, 2000, 0)
    # A packet without pages is not resampled, and its boundaries are undefined.
    found = split_intervals([packet(1, 2), packet(0, 0), packet(2, 2)], IntervalSettings())
    page = found["page_level_accuracy"]["accuracy"]
    assert (page.packets, page.pages, page.observations) == (2, 4, 4)
    assert page.low is not None
    assert page.low <= 0.75 <= page.high
    assert found["boundaries"]["f1"].reason == "fewer than 2 packets (0)"
    one = split_intervals([packet(1, 2)], IntervalSettings())["page_level_accuracy"]["accuracy"]
    assert one.low is None
    assert one.reason == "fewer than 2 packets (1)"
    # Packets that predict nothing: precision is undefined, recall is not.
    found = split_intervals([packet(0, 1, fn=1), packet(0, 1, fn=2)], IntervalSettings())
    assert found["boundaries"]["precision"].reason == "precision undefined: nothing to count"
    assert found["boundaries"]["recall"].high == 0.0


def test_small_batches_match_scipys_percentile_bootstrap_at_the_expanded_level():
    # Below 10 packets the interval is the percentile interval at Hesterberg's expanded
    # level: scipy's percentile bootstrap of the same ratio of packet sums agrees.
    correct = np.array([5, 9, 2, 7, 4, 8, 11, 3, 6])
    pages = np.array([6, 10, 5, 7, 8, 9, 14, 6, 6])
    settings = IntervalSettings(resamples=20_000, seed=3)
    ours = split_intervals(
        [packet(int(c), int(p)) for c, p in zip(correct, pages, strict=True)], settings
    )
    interval = ours["page_level_accuracy"]["accuracy"]
    reference = stats.bootstrap(
        (correct, pages),
        lambda c, p, axis=-1: c.sum(axis=axis) / p.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        confidence_level=expanded_confidence(0.95, len(pages)),
        n_resamples=20_000,
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert interval.low == pytest.approx(reference.low, abs=0.01)
    assert interval.high == pytest.approx(reference.high, abs=0.01)


def test_larger_batches_agree_with_scipys_bca_bootstrap():
    # From 10 packets the interval is studentized; with 150 packets it and scipy's
    # BCa interval (another second-order correct interval) nearly coincide.
    rng = np.random.default_rng(11)
    pages = rng.integers(2, 12, size=150)
    correct = rng.binomial(pages, rng.beta(8, 2, size=150))
    settings = IntervalSettings(resamples=4000, seed=5)
    ours = split_intervals(
        [packet(int(c), int(p)) for c, p in zip(correct, pages, strict=True)], settings
    )
    interval = ours["page_level_accuracy"]["accuracy"]
    reference = stats.bootstrap(
        (correct, pages),
        lambda c, p, axis=-1: c.sum(axis=axis) / p.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="BCa",
        n_resamples=4000,
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert interval.low == pytest.approx(reference.low, abs=0.006)
    assert interval.high == pytest.approx(reference.high, abs=0.006)


def test_coverage_with_correlated_pages_and_what_ignoring_packets_gives():
    """Pages of one packet share its difficulty (beta-binomial, intra-packet
    correlation 0.3): resampling packets covers the true accuracy about 95% of the
    time; a binomial interval over pages as if independent covers far less."""
    started = time.perf_counter()
    rng = np.random.default_rng(2026)
    truth, rho, simulations, size = 0.8, 0.3, 200, 40
    strength = (1 - rho) / rho  # beta(a, b) with a + b = strength: correlation rho
    covered = naive = 0
    for simulation in range(simulations):
        pages = rng.integers(3, 15, size=size)
        correct = rng.binomial(pages, rng.beta(truth * strength, (1 - truth) * strength, size))
        packets = [packet(int(c), int(p)) for c, p in zip(correct, pages, strict=True)]
        found = split_intervals(packets, IntervalSettings(resamples=400, seed=simulation))
        page = found["page_level_accuracy"]["accuracy"]
        covered += page.low <= truth <= page.high
        share = correct.sum() / pages.sum()
        half = 1.96 * np.sqrt(share * (1 - share) / pages.sum())
        naive += share - half <= truth <= share + half
    assert 0.92 <= covered / simulations <= 0.99
    assert naive / simulations < 0.85
    assert time.perf_counter() - started < 5


def test_the_report_carries_intervals_deterministically_and_old_reports_load(tmp_path):
    report = batch(30)
    page = report.page_level_accuracy
    assert page.ci is not None
    interval = page.ci["accuracy"]
    assert interval.low <= page.accuracy <= interval.high
    assert (interval.packets, interval.pages) == (30, page.total_pages)
    assert set(report.boundaries.ci or {}) == {"precision", "recall", "f1"}
    section = (report.matching.ci or {})["f1"]
    assert section.low <= report.matching.exact.f1 <= section.high
    assert batch(30).model_dump() == report.model_dump()  # same seed, same intervals
    reseeded = summarize(report.packets, intervals=IntervalSettings(seed=1, resamples=500))
    assert reseeded.page_level_accuracy.ci["accuracy"].seed == 1
    assert reseeded.page_level_accuracy.ci["accuracy"].resamples == 500
    without = summarize(report.packets, intervals=False)
    assert without.page_level_accuracy.ci is None
    assert without.page_level_accuracy.accuracy == page.accuracy
    # A report written before intervals (no "ci" anywhere) loads and renders as before.
    data = json.loads(report.to_json())
    for part in ("page_level_accuracy", "split_accuracy_without_order", "boundaries"):
        del data[part]["ci"]
    del data["split_accuracy_with_order"]["ci"], data["matching"]["ci"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    loaded = SplitReport.load(old)
    assert loaded.page_level_accuracy.ci is None
    assert "## Intervals" not in render_split_markdown(loaded)
    assert "split-intervals" not in render_split_dashboard(loaded)


def test_markdown_dashboard_and_run_show_the_intervals():
    report = batch(30)
    interval = report.page_level_accuracy.ci["accuracy"]
    markdown = render_split_markdown(report)
    assert "## Intervals (95%, resampling packets)" in markdown
    row = f"| page-level accuracy | {report.page_level_accuracy.accuracy:.3f} [{interval.low:.3f}, "
    assert row in markdown
    assert f"{interval.high:.3f}] | 30 | 230 | 230 |" in markdown
    page = render_split_dashboard(report)
    assert "split-intervals" in page
    assert "error_x" in page
    writer = split_bundle(report)
    metrics = writer.bundle.metrics
    assert metrics["Summary/page_accuracy_ci_low"] == interval.low
    assert metrics["Summary/page_accuracy_ci_high"] == interval.high
    ordered = report.split_accuracy_with_order.ci["accuracy"]
    assert metrics["Summary/accuracy_with_order_ci_low"] == ordered.low
    # Only the headline's intervals are metrics; all of them are in the figure table.
    assert not any(key.startswith("split/") and "ci_" in key for key in metrics)
    table = json.loads(writer.files["tables/split_intervals.json"])
    rows = {row[0]: dict(zip(table["columns"], row, strict=True)) for row in table["data"]}
    assert rows["split/intervals/section/f1"]["value"] == report.matching.exact.f1
    assert rows["split/intervals/section/f1"]["ci_low"] == report.matching.ci["f1"].low
    assert rows["split/intervals/page_accuracy"]["packets"] == 30
    assert len(rows) == 9
    # One packet: no figure has an interval, and nothing about intervals is shown.
    single = batch(1)
    assert single.page_level_accuracy.ci["accuracy"].reason == "fewer than 2 packets (1)"
    assert "## Intervals" not in render_split_markdown(single)
    assert "split-intervals" not in render_split_dashboard(single)
    assert not any("ci_" in key for key in split_bundle(single).bundle.metrics)


def test_the_cli_takes_a_seed_and_can_leave_intervals_out(capsys, tmp_path: Path):
    rng = np.random.default_rng(1)
    for number in range(12):
        classes = rng.choice(["A", "B", "C"], size=3 + number).tolist()
        predicted = [name if rng.random() < 0.8 else "A" for name in classes]
        write_json(tmp_path / "gt" / f"p{number}.json", {"pages": classes})
        write_json(tmp_path / "pred" / f"p{number}.json", {"pages": predicted})
    base = ["split", "--expected", tmp_path / "gt", "--predicted", tmp_path / "pred"]
    outputs = {}
    for name, options in (
        ("default", []),
        ("again", []),
        ("seed", ["--seed", "7"]),
        ("none", ["--no-intervals"]),
    ):
        code, _, err = run(
            capsys, *base, "--output", tmp_path / f"{name}.json", "--no-mlflow", *options
        )
        assert code == 0, err
        outputs[name] = SplitReport.load(tmp_path / f"{name}.json")
    first = outputs["default"].page_level_accuracy.ci["accuracy"]
    assert outputs["again"].page_level_accuracy.ci["accuracy"] == first
    assert outputs["seed"].page_level_accuracy.ci["accuracy"].seed == 7
    assert outputs["seed"].page_level_accuracy.ci["accuracy"].low != first.low
    assert outputs["none"].page_level_accuracy.ci is None
    assert (
        outputs["none"].page_level_accuracy.accuracy
        == outputs["default"].page_level_accuracy.accuracy
    )
