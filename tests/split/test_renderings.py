"""The Markdown report (the seed's layout) and the confusion-matrix heatmap."""

from __future__ import annotations

from docevals_mlflow.reports.split_markdown import render_split_markdown
from docevals_mlflow.reports.split_plot import render_split_heatmap
from docevals_mlflow.split.batch import evaluate_split_batch
from docevals_mlflow.split.evaluate import evaluate_split
from tests.split.test_boundaries import sections
from tests.split.test_seed_metrics import EXPECTED, PREDICTED


def test_single_packet_markdown_follows_the_seed():
    text = render_split_markdown(evaluate_split(EXPECTED, PREDICTED))
    assert text.startswith("# Document Split Classification Evaluation\n")
    assert "- **Page Level Accuracy**: 🟡 6/8 pages [███████████████░░░░░] 75%\n" in text
    assert "- **Split Accuracy (With Order)**: 🔴 1/3 sections [██████░░░░░░░░░░░░░░] 33%\n" in text
    assert (
        "| Metric | Accuracy | Rating | Correct/Total |\n"
        "| ------ | :------: | :----: | :-----------: |\n"
    ) in text
    assert "| Page Level Classification | 0.7500 | 🟡 Good | 6/8 pages |\n" in text
    assert (
        "| Section Match | Page Order Match | Section ID | Expected Class | Expected Pages "
        "| Pred Class | Pred Pages | Matched Section |\n"
    ) in text
    assert "| ✅ | ❌ | section_2 | W2 | [3, 4] | W2 | [4, 3] | pred_section_2 |\n" in text
    # An unmatched section shows its closest predicted section in italics, as the
    # seed's documentation does.
    assert "| ❌ | ❌ | section_3 | Receipt | [5, 6] | *Invoice* | *[5]* | N/A |\n" in text
    assert "| ❌ | ❌ | N/A | No Match | N/A | Receipt | [6, 7] | pred_section_4 |\n" in text
    assert "- **Missed boundaries** (a document should start at page): 7\n" in text
    assert "Macro (per packet)" not in text
    assert "## 🔍 Beyond the Seed" in text
    assert "## 📖 Metrics Explanation" in text


def test_percentages_come_from_counts():
    # int(0.29 * 100) is 28 in floating point; 29 of 100 pages is 29%.
    expected = sections(list(range(100)))
    predicted = [
        {"section_id": "a", "document_class": "A", "page_indices": list(range(29))},
        {"section_id": "b", "document_class": "B", "page_indices": list(range(29, 100))},
    ]
    text = render_split_markdown(evaluate_split(expected, predicted))
    assert "29/100 pages [█████░░░░░░░░░░░░░░░] 29%" in text


def test_long_page_lists_become_ranges():
    expected = sections([*list(range(40)), 50, 52])
    text = render_split_markdown(evaluate_split(expected, []))
    assert "[0-39, 50, 52] (42 pages)" in text


def test_batch_markdown_lists_packets_worst_first_and_skips_perfect_ones():
    report = evaluate_split_batch(
        [
            ({"id": "good", "sections": EXPECTED}, EXPECTED),
            ({"id": "bad", "sections": EXPECTED}, PREDICTED),
        ]
    )
    text = render_split_markdown(report)
    assert "**2 packets** · 15 pages" in text
    assert "Macro (per packet)" in text
    packets = text[text.index("## 📦 Packets") :]
    assert packets.index("| bad |") < packets.index("| good |")
    analysis = text[text.index("## 📑 Section Split Analysis") :]
    assert "1 of 2 packets have a wrong page or section." in analysis
    assert "### Packet `bad`" in analysis
    assert "### Packet `good`" not in analysis


def test_max_packets_caps_the_section_tables():
    pairs = [({"id": f"p{i}", "sections": EXPECTED}, PREDICTED) for i in range(5)]
    text = render_split_markdown(evaluate_split_batch(pairs), max_packets=2)
    assert text.count("### Packet ") == 2
    assert "the 2 weakest are shown" in text


def test_undefined_figures_read_na_and_cells_are_escaped():
    text = render_split_markdown(
        evaluate_split([], [{"section_id": "a|b", "document_class": "X|Y", "page_indices": [0]}])
    )
    assert "0/0 sections ➖ n/a" in text
    assert "X\\|Y" in text
    assert "a\\|b" in text


def test_unpaired_and_warnings_sections():
    report = evaluate_split_batch(
        [
            (
                {
                    "id": "p",
                    "sections": [{"section_id": "e", "document_class": "A", "page_indices": []}],
                },
                [],
            )
        ],
        expected_only=["lost"],
    )
    text = render_split_markdown(report)
    assert "## Unpaired packets" in text
    assert "`lost`" in text
    assert "- packet 'p': expected: section 'e' has no pages" in text


def test_heatmap_is_self_contained_deterministic_and_escaped():
    expected = [{"section_id": "a", "document_class": "<b>Invoice</b>", "page_indices": [0, 1]}]
    predicted = [{"section_id": "b", "document_class": "W2", "page_indices": [0, 1, 2]}]
    report = evaluate_split(expected, predicted)
    html = render_split_heatmap(report)
    assert html == render_split_heatmap(report)
    assert html.count('<script type="text/javascript">') == 1
    assert 'id="split-confusion"' in html
    assert "<b>Invoice" not in html
    assert "&lt;b&gt;Invoice" in html
    assert "(missing)" in html
    assert "cdn.plot.ly" not in html.split("</head>")[1]


def test_heatmap_without_pages():
    html = render_split_heatmap(evaluate_split([], []))
    assert "No pages to show." in html
    assert "<script" not in html
