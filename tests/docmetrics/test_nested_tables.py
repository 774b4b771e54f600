"""Tables inside cells: content of the cell holding them (their tags are tokens, as the
PubTabNet code and docling-eval read them), never structure of the outer table."""

from __future__ import annotations

import random

import pytest

from docevals_mlflow.docmetrics.table_html import parse_html_table
from docevals_mlflow.docmetrics.tables import teds
from docevals_mlflow.errors import InputError

INNER = [
    "<table><tr><td>a</td><td>b</td></tr></table>",
    "<table>\n <tr>\n  <td>a</td>\n  <td>b</td>\n </tr>\n</table>",
    "<table><tbody><tr><th>h</th> <td>1<td>2</tr><tr><td>3</table>",
    "<table><tr><td><b>x</b> y</td></tr><tr><td>z</td></tr></table>",
    "<table><tr><td><table><tr><td>deep</td></tr></table> t</td></tr></table>",
]
TEXTS = ["", "a", "12.5", "東京", "x y"]


def _table(rnd: random.Random, rows: int, cols: int) -> str:
    cells = []
    for _ in range(rows):
        row = []
        for _ in range(cols):
            text = rnd.choice(TEXTS)
            if rnd.random() < 0.35:
                text = f"{text}{rnd.choice(INNER)}{rnd.choice(TEXTS)}"
            row.append(f"<td>{text}</td>")
        cells.append("<tr>" + "".join(row) + "</tr>")
    return "<table>" + "".join(cells) + "</table>"


def _mutate(html: str, rnd: random.Random) -> str:
    choice = rnd.randrange(4)
    if choice == 0:
        return html.replace("<td>a</td>", "<td>A</td>", 1).replace("deep", "dep", 1)
    if choice == 1:  # an inner table lost, its text kept
        return html.replace("<table><tr><td>a</td><td>b</td></tr></table>", "a b", 1)
    if choice == 2:
        return html.replace("</tr>", "</tr><tr><td>extra</td></tr>", 1)
    return _table(rnd, 2, 2)


def _pubtabnet(expected: str, predicted: str, structure_only: bool) -> float:
    pubtabnet = pytest.importorskip("table_recognition_metric")
    wrap = "<html><body>{}</body></html>".format
    return float(pubtabnet.TEDS(structure_only=structure_only)(wrap(predicted), wrap(expected)))


def _ours(expected: str, predicted: str, structure_only: bool) -> float:
    return teds(
        parse_html_table(expected, source="e.html"),
        parse_html_table(predicted, source="p.html", strict=False),
        structure_only=structure_only,
    )


def test_an_inner_table_is_the_content_of_its_cell() -> None:
    table = parse_html_table(
        "<table><tr><td>x<table><tr><td>a</td>\n<td>b</td></tr></table>y</td></tr></table>"
    )
    assert table.size() == 3  # table, tr, td: the inner table adds no node
    (cell,) = table.rows()[0].children
    # The inner cells' tails (the newline after </td>) are dropped, as lxml-based
    # references drop them.
    assert "".join(cell.tokens) == "x<table><tr><td>a</td><td>b</td></tr></table>y"


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("structure_only", [False, True])
def test_nested_tables_match_pubtabnet(seed: int, structure_only: bool) -> None:
    rnd = random.Random(700 + seed)
    expected = _table(rnd, rnd.randint(1, 4), rnd.randint(1, 3))
    predicted = _mutate(expected, rnd)
    ours = _ours(expected, predicted, structure_only)
    assert ours == pytest.approx(_pubtabnet(expected, predicted, structure_only), abs=1e-6)


@pytest.mark.parametrize("seed", range(10))
def test_nested_tables_match_docling_structure(seed: int) -> None:
    docling = pytest.importorskip("docling_metrics_table.docling_metrics_table")
    rnd = random.Random(900 + seed)
    expected = _table(rnd, rnd.randint(1, 4), rnd.randint(1, 3))
    predicted = _mutate(expected, rnd)
    metric = docling.TableMetric(metrics=[docling.TableMetricKind.TEDS])
    sample = docling.TableMetricHTMLInputSample(
        id="t", html_a=expected, html_b=predicted, structure_only=True
    )
    result = metric.evaluate_sample(sample).teds
    assert result is not None
    assert _ours(expected, predicted, True) == pytest.approx(float(result.teds), abs=1e-6)


def test_an_unclosed_inner_table_is_an_error_in_the_expected_table() -> None:
    html = "<table><tr><td>x\n<table><tr><td>a</td></tr></td><td>q</td></tr></table>"
    with pytest.raises(
        InputError, match=r"e\.html, at line 2, column 27: </td> without an open <td> in the"
    ) as error:
        parse_html_table(html, source="e.html")
    assert "(opened at line 2, column 1)" in str(error.value)
    with pytest.raises(InputError, match=r"line 1, column 16: a <table> inside a cell is never"):
        parse_html_table("<table><tr><td><table><tr><td>a", source="e.html")


def test_an_unclosed_inner_table_in_a_prediction_is_read_as_lxml_reads_it() -> None:
    # lxml keeps reading the inner table to the end (the outer </td> and </tr> have
    # nothing to close there), so the cell holds everything after it.
    html = "<table><tr><td><table><tr><td>a</td></tr></td><td>q</td></tr></table>"
    table = parse_html_table(html, strict=False)
    (cell,) = table.rows()[0].children
    assert "".join(cell.tokens) == "<table><tr><td>a</td></tr><td>q</td></table>"
    assert _ours("<table><tr><td>a</td></tr></table>", html, False) == pytest.approx(
        _pubtabnet("<table><tr><td>a</td></tr></table>", html, False), abs=1e-6
    )
