"""TEDS speed (issue 22 target: a 50 x 10-cell table in at most 50 ms).

Scores a generated 50 x 10 table (text, empty and unicode cells) against a wrong
prediction of it (a fifth of the cells edited, one row lost, one cell merged) and prints
the median and best wall-clock and the median CPU time of TEDS alone, TEDS-S alone and
both (one call of ``score_table``), parsing included, then larger tables (``--sizes 1``
times the 50 x 10 table only). With the ``bench`` extra installed it also times the
references on the same pair and checks the figures agree: ``table-recognition-metric``
(PubTabNet code, pure-Python APTED) and ``docling-metrics-table`` (C++, structure only
compared, since its content TEDS renames differing cells at cost 1: docs/differences.md).

Prints figures; asserts nothing.

    python benchmarks/docmetrics_tables.py [--repeat 15] [--sizes 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from docevals_mlflow.docmetrics.tables import score_table, teds

WORDS = ["", "12.5", "Total", "héllo", "東京", "n/a", "2024-01-31", "€ 9,99", "x"]


def table_pair(rows: int, cols: int, seed: int = 7) -> tuple[str, str]:
    rnd = random.Random(seed)
    grid = [[rnd.choice(WORDS) for _ in range(cols)] for _ in range(rows)]
    predicted = [[w if rnd.random() > 0.2 else w[::-1] + "?" for w in row] for row in grid]
    del predicted[rows // 2]

    def html(cells: list[list[str]], merge: bool) -> str:
        out = []
        for r, row in enumerate(cells):
            tds = [f"<td>{w}</td>" for w in row]
            if merge and r == 1:
                tds[:2] = [f'<td colspan="2">{row[0]} {row[1]}</td>']
            out.append("<tr>" + "".join(tds) + "</tr>")
        return "<table><tbody>" + "".join(out) + "</tbody></table>"

    return html(grid, False), html(predicted, True)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def timed(call: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    # Not the statistics module: benchmarks/statistics.py shadows it when run from here.
    return _median(walls) * 1e3, min(walls) * 1e3, _median(cpus) * 1e3


def _ms(times: tuple[float, float, float]) -> str:
    return " / ".join(f"{t:.1f}" for t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--sizes", type=int, default=3, help="how many of the sizes to time")
    args = parser.parse_args()
    for rows, cols in [(50, 10), (100, 10), (100, 20)][: args.sizes]:
        expected, predicted = table_pair(rows, cols)
        score = score_table(expected, predicted)
        both = timed(lambda e=expected, p=predicted: score_table(e, p), args.repeat)
        alone = timed(lambda e=expected, p=predicted: teds(e, p), args.repeat)
        shape = timed(lambda e=expected, p=predicted: teds(e, p, structure_only=True), args.repeat)
        print(
            f"{rows} x {cols} ({score.expected_nodes} nodes), ms median / best / CPU median: "
            f"TEDS {score.teds:.6f} {_ms(alone)}; TEDS-S {score.teds_structure:.6f} "
            f"{_ms(shape)}; both (score_table) {_ms(both)}"
        )
    expected, predicted = table_pair(50, 10)
    ours = score_table(expected, predicted)
    try:
        from docling_metrics_table.docling_metrics_table import (
            TableMetric,
            TableMetricHTMLInputSample,
            TableMetricKind,
        )
        from table_recognition_metric import TEDS
    except ImportError:
        print("references not installed (pip install -e '.[bench]'); skipped")
        return
    wrap = "<html><body>{}</body></html>".format
    start = time.perf_counter()
    reference = TEDS()(wrap(predicted), wrap(expected))
    took = (time.perf_counter() - start) * 1e3
    print(
        f"table-recognition-metric (apted) 50 x 10 TEDS {reference:.6f} in {took:.0f} ms; "
        f"|ours - ref| = {abs(reference - ours.teds):.1e}"
    )
    metric = TableMetric(metrics=[TableMetricKind.TEDS])
    sample = TableMetricHTMLInputSample(
        id="b", html_a=expected, html_b=predicted, structure_only=True
    )
    median, _, _ = timed(lambda: metric.evaluate_sample(sample), 3)
    result = metric.evaluate_sample(sample).teds
    assert result is not None
    print(
        f"docling-metrics-table (C++) 50 x 10 TEDS-S {result.teds:.6f} in {median:.0f} ms; "
        f"|ours - ref| = {abs(result.teds - ours.teds_structure):.1e}"
    )


if __name__ == "__main__":
    main()
