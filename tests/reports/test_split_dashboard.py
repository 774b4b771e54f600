"""The offline dashboard of a split report: cards, per-class bars, confusion heatmap,
weakest packets; self-contained, escaped, deterministic and bounded."""

from __future__ import annotations

import pytest

from docevals_mlflow.reports.dashboard_figures import MAX_BARS
from docevals_mlflow.reports.split_dashboard import TITLE, render_split_dashboard
from docevals_mlflow.split.batch import evaluate_split_batch
from docevals_mlflow.split.evaluate import evaluate_split
from tests.reports.test_dashboard import assert_self_contained, figure
from tests.split.test_seed_metrics import EXPECTED, PREDICTED


def card(label: str, value: str) -> str:
    return f'<div class="card"><div class="label">{label}</div><div class="value">{value}</div>'


def test_one_packet_gets_cards_class_bars_and_the_heatmap() -> None:
    page = render_split_dashboard(evaluate_split(EXPECTED, PREDICTED))
    assert_self_contained(page)
    assert f"<title>{TITLE}</title>" in page
    # The seed example: 6 of 8 pages right, 1 of 3 sections in order.
    assert card("Packets", "1") in page
    assert card("Pages", "8") in page
    assert card("Page accuracy", "0.7500") in page
    assert card("Split accuracy (in order)", "0.3333") in page
    for div_id in ("split-class-scores", "split-confusion"):
        assert f'id="{div_id}"' in page
    assert 'id="split-packet-accuracy"' not in page  # one packet: no per-packet chart
    traces, layout = figure(page, "split-class-scores")
    assert [trace["name"] for trace in traces] == ["precision", "recall", "F1"]
    assert layout["barmode"] == "group"
    f1 = dict(zip(traces[2]["y"], traces[2]["x"], strict=True))
    # Worst F1 first.
    values = [value for value in f1.values() if value is not None]
    assert values == sorted(values)
    heatmap, _ = figure(page, "split-confusion")
    assert heatmap[0]["type"] == "heatmap"


def test_a_batch_lists_its_packets_weakest_first() -> None:
    pairs = [
        ({"id": "good", "sections": EXPECTED}, EXPECTED),
        ({"id": "bad", "sections": EXPECTED}, PREDICTED),
    ]
    page = render_split_dashboard(evaluate_split_batch(pairs))
    assert card("Packets", "2") in page
    traces, _ = figure(page, "split-packet-accuracy")
    assert traces[0]["y"] == ["bad", "good"]
    assert traces[0]["x"] == pytest.approx([0.75, 1.0])
    assert "pages right: 6 of 8 (75.0%)" in traces[0]["hovertext"][0]


def test_class_and_packet_names_are_escaped() -> None:
    hostile = [
        {**section, "document_class": "<script>x</script>"} if index == 0 else section
        for index, section in enumerate(EXPECTED)
    ]
    pairs = [
        ({"id": "<b>p</b>", "sections": hostile}, PREDICTED),
        ({"id": "q", "sections": EXPECTED}, EXPECTED),
    ]
    page = render_split_dashboard(evaluate_split_batch(pairs))
    assert "<script>x</script>" not in page
    assert "<b>p</b>" not in page
    traces, _ = figure(page, "split-class-scores")
    assert "&lt;script&gt;x&lt;/script&gt;" in traces[0]["y"]


def test_equal_reports_give_equal_pages() -> None:
    report = evaluate_split(EXPECTED, PREDICTED)
    assert render_split_dashboard(report) == render_split_dashboard(report)


def test_many_packets_are_capped_with_a_note() -> None:
    pairs = [
        ({"id": f"p{index:03d}", "sections": EXPECTED}, PREDICTED) for index in range(MAX_BARS + 3)
    ]
    page = render_split_dashboard(evaluate_split_batch(pairs))
    traces, _ = figure(page, "split-packet-accuracy")
    assert len(traces[0]["y"]) == MAX_BARS
    assert f"Showing the {MAX_BARS} weakest of {MAX_BARS + 3} packets." in page


def test_no_pages_says_so() -> None:
    page = render_split_dashboard(evaluate_split([], []))
    assert "No page classes in this batch." in page
    assert "No pages to show." in page
