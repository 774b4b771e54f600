"""TEDS and TEDS-S equal the reference implementations within 1e-6.

References (the ``bench`` extra): ``table-recognition-metric`` (the PubTabNet TEDS code,
td-only tables inside ``<html><body>``) and ``docling-metrics-table`` (docling-eval's C++
TEDS; ``th`` compared as ``td``). Where they differ from us by definition, the test says so
and docs/differences.md has the row.
"""

from __future__ import annotations

import random

import pytest

from docevals_mlflow.docmetrics.table_html import parse_html_table
from docevals_mlflow.docmetrics.tables import score_table, teds

pubtabnet = pytest.importorskip("table_recognition_metric")
docling = pytest.importorskip("docling_metrics_table.docling_metrics_table")

TEXTS = [
    "",
    "",
    "a",
    "12.5",
    "héllo wörld",
    "東京都",
    "😀 ok",
    "e\u0301",
    "x&amp;y",
    " pad ",
    "<b>bold</b> t",
]


def _grid_html(rnd: random.Random, *, header: bool = False) -> str:
    """A random table whose spans tile a rectangle (so it also parses strictly)."""
    rows, cols = rnd.randint(1, 7), rnd.randint(1, 6)
    taken: set[tuple[int, int]] = set()
    out = []
    for r in range(rows):
        cells = []
        for c in range(cols):
            if (r, c) in taken:
                continue
            width = 1
            while (
                width < 3
                and c + width < cols
                and (r, c + width) not in taken
                and rnd.random() < 0.2
            ):
                width += 1
            height = 1
            while height < 3 and r + height < rows and rnd.random() < 0.2:
                height += 1
            taken.update((r + dr, c + dc) for dr in range(height) for dc in range(width))
            spans = (f' colspan="{width}"' if width > 1 else "") + (
                f' rowspan="{height}"' if height > 1 else ""
            )
            tag = "th" if header and r == 0 else "td"
            cells.append(f"<{tag}{spans}>{rnd.choice(TEXTS)}</{tag}>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    body = "".join(out)
    return (
        f"<table><tbody>{body}</tbody></table>" if rnd.random() < 0.5 else f"<table>{body}</table>"
    )


def _mutate(html: str, rnd: random.Random) -> str:
    """A plausible wrong prediction: edited text, lost cells or spans, extra rows."""
    choice = rnd.randrange(5)
    if choice == 0:
        return html.replace(
            rnd.choice(["a<", "12.5", "ok", "東"]), rnd.choice(["b<", "12,5", "", "京"]), 1
        )
    if choice == 1:
        return html.replace("<td></td>", "", 1).replace("<td>a</td>", "", 1)
    if choice == 2:
        return html.replace(' colspan="2"', "", 1).replace(' rowspan="2"', ' rowspan="3"', 1)
    if choice == 3:
        return html.replace("</tr>", "</tr><tr><td>extra</td></tr>", 1)
    return _grid_html(rnd)


def _pubtabnet(expected: str, predicted: str, structure_only: bool) -> float:
    wrap = "<html><body>{}</body></html>".format
    scorer = pubtabnet.TEDS(structure_only=structure_only)
    return float(scorer(wrap(predicted), wrap(expected)))


def _docling(expected: str, predicted: str, structure_only: bool) -> float:
    metric = docling.TableMetric(metrics=[docling.TableMetricKind.TEDS])
    sample = docling.TableMetricHTMLInputSample(
        id="t", html_a=expected, html_b=predicted, structure_only=structure_only
    )
    result = metric.evaluate_sample(sample).teds
    assert result is not None
    return float(result.teds)


def _ours(expected: str, predicted: str, structure_only: bool) -> float:
    return teds(
        parse_html_table(expected),
        parse_html_table(predicted, strict=False),
        structure_only=structure_only,
    )


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("structure_only", [False, True])
def test_generated_tables_match_pubtabnet(seed: int, structure_only: bool) -> None:
    rnd = random.Random(seed)
    expected = _grid_html(rnd)
    predicted = _mutate(expected, rnd)
    ours = _ours(expected, predicted, structure_only)
    assert ours == pytest.approx(_pubtabnet(expected, predicted, structure_only), abs=1e-6)


@pytest.mark.parametrize("seed", range(40))
def test_generated_tables_with_headers_match_docling_structure(seed: int) -> None:
    rnd = random.Random(1000 + seed)
    expected = _grid_html(rnd, header=True)
    predicted = _mutate(expected, rnd)
    ours = _ours(expected, predicted, True)
    assert ours == pytest.approx(_docling(expected, predicted, True), abs=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_generated_tables_with_headers_match_pubtabnet_on_td(seed: int) -> None:
    # We compare <th> as <td>; so does the PubTabNet code once the tags are td.
    rnd = random.Random(2000 + seed)
    expected = _grid_html(rnd, header=True)
    predicted = _mutate(expected, rnd)
    as_td = {"<th": "<td", "</th>": "</td>"}
    plain_e, plain_p = expected, predicted
    for old, new in as_td.items():
        plain_e, plain_p = plain_e.replace(old, new), plain_p.replace(old, new)
    ours = _ours(expected, predicted, False)
    assert ours == pytest.approx(_pubtabnet(plain_e, plain_p, False), abs=1e-6)


FIXTURES = [
    (  # PubTabNet-style: thead/tbody, bold header cells, a merged header
        '<table><thead><tr><td rowspan="2"><b>Gene</b></td>'
        '<td colspan="2"><b>Expression</b></td></tr>'
        "<tr><td>Tumor</td><td>Normal</td></tr></thead>"
        "<tbody><tr><td>BRCA1</td><td>2.31</td><td>1.02</td></tr>"
        "<tr><td>TP53</td><td>0.87</td><td>0.91</td></tr></tbody></table>",
        "<table><thead><tr><td><b>Gene</b></td><td><b>Expression</b></td><td></td></tr>"
        "<tr><td>Tumor</td><td>Normal</td></tr></thead>"
        "<tbody><tr><td>BRCA1</td><td>2.31</td><td>1.02</td></tr>"
        "<tr><td>TP53</td><td>0.81</td><td>0.91</td></tr></tbody></table>",
    ),
    (  # an invoice line-item table, one row lost and a cell split
        "<table><tr><td>Item</td><td>Qty</td><td>Price</td></tr><tr><td>Widget</td><td>2</td>"
        "<td>€ 9,99</td></tr><tr><td>Gadget</td><td>1</td><td>€ 19,00</td></tr></table>",
        "<table><tr><td>Item</td><td>Qty</td><td>Price</td></tr><tr><td>Widget</td><td>2</td>"
        "<td>€</td><td>9,99</td></tr></table>",
    ),
    ("<table><tr><td>only</td></tr></table>", "<table></table>"),
]


@pytest.mark.parametrize(("expected", "predicted"), FIXTURES)
def test_fixtures_match_both_references(expected: str, predicted: str) -> None:
    for structure_only in (False, True):
        ours = _ours(expected, predicted, structure_only)
        assert ours == pytest.approx(_pubtabnet(expected, predicted, structure_only), abs=1e-6)
    assert _ours(expected, predicted, True) == pytest.approx(
        _docling(expected, predicted, True), abs=1e-6
    )


def test_fixture_value_by_hand() -> None:
    # One cell's text differs by one character of four ("0.87" → "0.81"): TED 0.25 over 3
    # rows of 3 cells + 3 tr + tbody + table = 14 nodes.
    expected = (
        "<table><tbody>" + "<tr><td>a</td><td>b</td><td>0.87</td></tr>" * 3 + "</tbody></table>"
    )
    predicted = expected.replace("0.87", "0.81", 1)
    assert teds(expected, predicted) == pytest.approx(1 - 0.25 / 14, abs=1e-12)
    assert teds(expected, predicted, structure_only=True) == 1.0


# Differences by definition (docs/differences.md, "TEDS"):


def test_th_text_is_compared_where_pubtabnet_ignores_it() -> None:
    expected = "<table><tr><th>Name</th><th>Total</th></tr><tr><td>A</td><td>1</td></tr></table>"
    predicted = expected.replace("Total", "Totl")
    # "Total" → "Totl": 1 edit over 5 tokens, in a tree of 7 nodes.
    assert _ours(expected, predicted, False) == pytest.approx(1 - 0.2 / 7)
    # The PubTabNet code walks into <th> as structure and never reads its text.
    assert _pubtabnet(expected, predicted, False) == 1.0


def test_cell_text_costs_levenshtein_where_docling_cpp_charges_one() -> None:
    expected = "<table><tr><td>abcd</td><td>z</td></tr></table>"
    predicted = expected.replace("abcd", "abce")
    ours = _ours(expected, predicted, False)
    assert ours == pytest.approx(1 - 0.25 / 4)
    assert ours == pytest.approx(_pubtabnet(expected, predicted, False))
    # docling-metrics-table 0.16 (C++ TEDS): any text difference renames at cost 1.
    assert _docling(expected, predicted, False) == pytest.approx(1 - 1 / 4)


def test_tree_is_rooted_at_the_table_not_html_body() -> None:
    expected = "<table><tr><td>a</td><td>b</td></tr></table>"
    predicted = "<table><tr><td>a</td></tr></table>"
    wrap = "<html><body>{}</body></html>".format
    ours = teds(wrap(expected), wrap(predicted))
    assert ours == pytest.approx(1 - 1 / 4)
    assert ours == pytest.approx(_pubtabnet(expected, predicted, False))
    # docling-metrics-table counts <html> and <body> as nodes of the tree.
    assert _docling(wrap(expected), wrap(predicted), False) == pytest.approx(1 - 1 / 6)


def test_bare_table_is_scored_where_pubtabnet_needs_html_body() -> None:
    expected = "<table><tr><td>a</td></tr></table>"
    assert teds(expected, expected) == 1.0
    assert float(pubtabnet.TEDS()(expected, expected)) == 0.0


def test_empty_prediction_scores_zero_like_the_references() -> None:
    expected = "<table><tr><td>a</td></tr></table>"
    score = score_table(expected, "")
    assert (score.teds, score.teds_structure) == (0.0, 0.0)
    assert float(pubtabnet.TEDS()("", f"<html><body>{expected}</body></html>")) == 0.0


def test_caption_is_not_table_structure_where_pubtabnet_counts_it() -> None:
    with_caption = "<table><caption>Prices</caption><tr><td>a</td></tr></table>"
    plain = "<table><tr><td>a</td></tr></table>"
    assert teds(with_caption, plain) == 1.0
    # The PubTabNet code makes <caption> a node (and its text nothing): 1 - 1/4.
    assert _pubtabnet(with_caption, plain, False) == pytest.approx(0.75)
