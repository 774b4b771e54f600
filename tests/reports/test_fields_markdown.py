"""Markdown report of a field comparison: ratings, bars, tables, caps."""

from __future__ import annotations

from typing import Any

import pytest

from docevals_mlflow.fields.batch import DocumentPair, compare_documents
from docevals_mlflow.fields.counts import metrics_from_cells
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.reports.fields_markdown import (
    progress_bar,
    rating,
    render_fields_markdown,
)

# --------------------------------------------------------------------------- helpers


def counts(tp: int = 0, fa: int = 0, fd: int = 0, fn: int = 0, tn: int = 0) -> dict[str, int]:
    return {"tp": tp, "fa": fa, "fd": fd, "fn": fn, "tn": tn}


def field(template: str, method: str, cells: dict[str, int], *, discovered: bool = False) -> Any:
    return {
        "template": template,
        "method": method,
        "method_name": method.split(" ", 1)[0],
        "threshold": None,
        "discovered": discovered,
        "counts": cells,
        "metrics": metrics_from_cells(**cells),
    }


def row(
    path: str,
    outcome: str,
    expected: Any,
    actual: Any,
    score: float | None,
    confidence: float | None,
    method: str,
    reason: str,
) -> dict[str, Any]:
    return {
        "path": path,
        "template": path,
        "method": method,
        "threshold": None,
        "expected": expected,
        "actual": actual,
        "score": score,
        "outcome": outcome,
        "confidence": confidence,
        "discovered": False,
        "reason": reason,
        "matched": outcome in ("TP", "TN"),
    }


def document(doc_id: str, cells: dict[str, int], rows: list[dict[str, Any]] | None) -> Any:
    entry: dict[str, Any] = {
        "id": doc_id,
        "class": "Invoice",
        "counts": cells,
        "metrics": metrics_from_cells(**cells),
    }
    if rows is not None:
        entry["rows"] = rows
    return entry


FUZZY = "FUZZY (threshold: 0.8)"
NUMERIC = "NUMERIC_EXACT (tolerance: 0.01)"
LIST = "HUNGARIAN (comparator: FUZZY, threshold: 0.7)"


def small_report(*, rows: bool = True) -> dict[str, Any]:
    """A hand-built report whose figures land on rating boundaries.

    Overall: 20 of 25 leaves matched (0.8), FAR 1/10 = 0.1 (the edge of 🟢 for a
    lower-is-better rate), macro F1 0.5 (the edge of 🟠).
    """
    overall = counts(tp=11, fa=1, fd=1, fn=3, tn=9)
    d1 = counts(tp=1, fd=1, fn=1)
    return {
        "kind": "fields",
        "package_version": "9.9.9",
        "schema": {"id": "invoices", "version": "2", "sha256": "abcdef0123456789" * 4},
        "overall": {
            "documents": 2,
            "counts": overall,
            "metrics": metrics_from_cells(**overall),
            "macro_f1": 0.5,
        },
        "classes": {
            "Invoice": {
                "configured": True,
                "documents": 2,
                "counts": overall,
                "metrics": metrics_from_cells(**overall),
                "macro_f1": 0.5,
                "fields": [],
            }
        },
        "fields": [
            field("$.vendor", FUZZY, counts(tp=9, fd=1)),  # precision 0.9
            field("$.items[].code", LIST, counts(tp=7, fa=3)),  # precision 0.7
            field("$.note", "FUZZY (threshold: 0.85)", counts(tp=1, fd=1), discovered=True),
        ],
        "lists": [{"template": "$.items", "method": LIST, "matched": 7, "missed": 2, "extra": 3}],
        "documents": [
            document("d0", counts(tp=2), [row("$.vendor", "TP", "A", "A", 1.0, 0.5, FUZZY, "ok")])
            if rows
            else document("d0", counts(tp=2), None),
            document(
                "d1",
                d1,
                [
                    row("$.vendor", "TP", "Acme", "ACME", 1.0, 0.92, FUZZY, "Exact match"),
                    row("$.total", "FD", "12.50", "12.5|0", 0.0, None, NUMERIC, "Numbers differ"),
                    row("$.items[0].code", "FN", "A1", None, None, None, LIST, "Missing"),
                ]
                if rows
                else None,
            ),
        ],
        "unpaired": {"expected_only": ["gt-only"], "predicted_only": []},
    }


def lines_of(text: str) -> list[str]:
    return text.split("\n")


# --------------------------------------------------------------------------- pieces


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "🟢 Excellent"),
        (0.9, "🟢 Excellent"),
        (0.8999, "🟡 Good"),
        (0.7, "🟡 Good"),
        (0.6999, "🟠 Fair"),
        (0.5, "🟠 Fair"),
        (0.4999, "🔴 Poor"),
        (0.0, "🔴 Poor"),
        (None, "➖ n/a"),
    ],
)
def test_rating_boundaries(value: float | None, expected: str) -> None:
    assert rating("f1", value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "🟢 Excellent"),
        (0.1, "🟢 Excellent"),
        (0.1001, "🟡 Good"),
        (0.3, "🟡 Good"),
        (0.3001, "🟠 Fair"),
        (0.5, "🟠 Fair"),
        (0.5001, "🔴 Poor"),
        (0.9, "🔴 Poor"),
        (None, "➖ n/a"),
    ],
)
@pytest.mark.parametrize("metric", ["far", "fdr"])
def test_rating_is_reversed_for_lower_is_better_rates(
    metric: str, value: float | None, expected: str
) -> None:
    assert rating(metric, value) == expected


@pytest.mark.parametrize(
    ("value", "bar"),
    [
        (0.8, "[████████████████░░░░]"),
        (0.0, "[░░░░░░░░░░░░░░░░░░░░]"),
        (1.0, "[████████████████████]"),
        (0.99, "[███████████████████░]"),  # a full bar is kept for exactly 1.0
        (0.7, "[██████████████░░░░░░]"),
        (None, "[░░░░░░░░░░░░░░░░░░░░]"),
    ],
)
def test_progress_bar(value: float | None, bar: str) -> None:
    assert progress_bar(value) == bar
    assert len(bar) == 22


# --------------------------------------------------------------------------- report


def test_dashboard_and_metrics_table_lines() -> None:
    lines = lines_of(render_fields_markdown(small_report()))
    assert lines[:3] == [
        "# Field evaluation report",
        "",
        "**Schema:** `invoices` version `2` (SHA-256 `abcdef012345`)",
    ]
    start = lines.index("## 🎯 Summary")
    assert lines[start + 2 : start + 12] == [
        "- **Documents**: 2 compared · unpaired: 1 expected only, 0 predicted only",
        "- **Overall match rate**: 🟡 20/25 attributes [████████████████░░░░] 80.0%",
        "- **Precision**: 🟡 0.8462 [████████████████░░░░]",
        "- **Recall**: 🟡 0.7857 [███████████████░░░░░]",
        "- **F1 score**: 🟡 0.8148 [████████████████░░░░]",
        "- **Accuracy**: 🟡 0.8000 [████████████████░░░░]",
        "- **False alarm rate (FAR)**: 🟢 0.1000 [██░░░░░░░░░░░░░░░░░░]",
        "- **False discovery rate (FDR)**: 🟢 0.0833 [█░░░░░░░░░░░░░░░░░░░]",
        "- **Macro F1** (mean of document F1): 🟠 0.5000 [██████████░░░░░░░░░░]",
        "",
    ]
    assert (
        "| False alarm rate (FAR) | 0.1000 | 🟢 Excellent | FA / (FA + TN), lower is better |"
        in lines
    )
    assert "| Macro F1 | 0.5000 | 🟠 Fair | mean of per-document F1 |" in lines
    assert "Cells over all compared leaves: TP 11 · FA 1 · FD 1 · FN 3 · TN 9." in lines
    assert (
        "| Invoice | yes | 2 | 11 | 1 | 1 | 3 | 9 | 🟡 0.8462 | 🟡 0.7857 | 🟡 0.8148 | 🟠 0.5000 |"
        in lines
    )


def test_field_and_list_tables() -> None:
    lines = lines_of(render_fields_markdown(small_report()))
    start = lines.index("## Fields")
    assert lines[start + 2 : start + 7] == [
        "| Template | Method | TP | FA | FD | FN | TN | Precision | Recall | F1 | Discovered |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        "| $.vendor | FUZZY (threshold: 0.8) | 9 | 0 | 1 | 0 | 0 "
        "| 🟢 0.9000 | 🟢 1.0000 | 🟢 0.9474 |  |",
        "| $.items[].code | HUNGARIAN (comparator: FUZZY, threshold: 0.7) | 7 | 3 | 0 | 0 | 0 "
        "| 🟡 0.7000 | 🟢 1.0000 | 🟡 0.8235 |  |",
        "| $.note | FUZZY (threshold: 0.85) | 1 | 0 | 1 | 0 | 0 "
        "| 🟠 0.5000 | 🟢 1.0000 | 🟠 0.6667 | 🔍 |",
    ]
    assert lines[start + 8].startswith(
        "🔍 discovered: the field is in the data but not in the schema"
    )
    assert "| $.items | HUNGARIAN (comparator: FUZZY, threshold: 0.7) | 7 | 2 | 3 |" in lines
    assert "- **Expected only** (ground truth, no prediction; not compared): 1: `gt-only`" in lines


def test_document_rows_wrong_first_with_na_confidence() -> None:
    lines = lines_of(render_fields_markdown(small_report()))
    start = lines.index("### Document `d1` (Invoice)")
    assert lines[start : start + 9] == [
        "### Document `d1` (Invoice)",
        "",
        "🟠 F1 0.5000 · 1/3 attributes matched",
        "",
        "| Status | Attribute | Expected | Actual | Confidence | Score | Method | Reason |",
        "|---|---|---|---|---|---|---|---|",
        "| ❌ | $.total | 12.50 | 12.5\\|0 | N/A | 0.00 | NUMERIC_EXACT (tolerance: 0.01) "
        "| Numbers differ |",
        "| ❌ | $.items[0].code | A1 | n/a | N/A | n/a "
        "| HUNGARIAN (comparator: FUZZY, threshold: 0.7) | Missing |",
        "| ✅ | $.vendor | Acme | ACME | 0.92 | 1.00 | FUZZY (threshold: 0.8) | Exact match |",
    ]
    # The worst document comes first.
    assert lines.index("### Document `d1` (Invoice)") < lines.index("### Document `d0` (Invoice)")


def test_row_cap_keeps_the_wrong_rows() -> None:
    lines = lines_of(render_fields_markdown(small_report(), max_rows_per_document=2))
    start = lines.index("### Document `d1` (Invoice)")
    table = lines[start + 6 : start + 10]
    assert all(line.startswith("| ❌ |") for line in table[:2])
    assert table[2:] == ["", "*… and 1 more row (0 wrong); the JSON report has all of them.*"]
    assert not any("| ✅ | $.vendor | Acme" in line for line in lines)


def test_document_cap_shows_the_lowest_f1() -> None:
    lines = lines_of(render_fields_markdown(small_report(), max_documents=1))
    assert "The 1 documents with the lowest F1 of 2; the JSON report has all of them." in lines
    assert "### Document `d1` (Invoice)" in lines
    assert "### Document `d0` (Invoice)" not in lines


def test_report_without_rows() -> None:
    text = render_fields_markdown(small_report(rows=False))
    assert "Attribute rows were not kept for this report (`--no-rows`)" in text
    assert "### Document" not in text


def test_undefined_metrics_have_no_bar() -> None:
    report = small_report()
    report["overall"]["counts"] = counts()
    report["overall"]["metrics"] = metrics_from_cells(**counts())
    report["overall"]["macro_f1"] = None
    lines = lines_of(render_fields_markdown(report))
    assert "- **Overall match rate**: ➖ 0/0 attributes" in lines
    assert "- **Precision**: ➖ n/a" in lines
    assert "| Precision | n/a | ➖ n/a | TP / (TP + FA + FD) |" in lines


def test_method_explanations_list_only_methods_used() -> None:
    text = render_fields_markdown(small_report())
    section = text[text.index("## Method explanations") :]
    assert "- **FUZZY**:" in section
    assert "- **HUNGARIAN**:" in section
    assert "🔍 **Discovered**" in section
    assert "- **DATE**:" not in section
    assert text.endswith("*docevals-mlflow 9.9.9*\n")


def test_rendering_is_deterministic() -> None:
    assert render_fields_markdown(small_report()) == render_fields_markdown(small_report())


def test_renders_a_real_batch() -> None:
    schema = DocumentSchema.model_validate(
        {
            "schema_id": "inv",
            "classes": [
                {
                    "name": "Invoice",
                    "fields": {
                        "vendor": {"method": "FUZZY", "threshold": 0.8},
                        "tags": {"items": {"method": "FUZZY", "threshold": 0.7}},
                    },
                }
            ],
        }
    )
    batch = compare_documents(
        [
            DocumentPair(
                "1",
                {"vendor": "Acme", "tags": ["a", "b"], "memo": "x"},
                {"vendor": "Acme", "tags": ["a"], "memo": "x"},
                "Invoice",
                confidence={"vendor": 0.9},
            )
        ],
        schema,
    )
    lines = lines_of(render_fields_markdown(batch.to_report()))
    assert (
        "| $.vendor | FUZZY (threshold: 0.8) | 1 | 0 | 0 | 0 | 0 "
        "| 🟢 1.0000 | 🟢 1.0000 | 🟢 1.0000 |  |" in lines
    )
    assert any(
        line.startswith("| $.tags[] | HUNGARIAN (comparator: FUZZY, threshold: 0.7) |")
        for line in lines
    )
    assert any(
        line.startswith("| $.memo | FUZZY (threshold: 0.85) |") and line.endswith("| 🔍 |")
        for line in lines
    )
    assert (
        "| ✅ | $.vendor | Acme | Acme | 0.90 | 1.00 | FUZZY (threshold: 0.8) | Exact match |"
        in lines
    )
    assert "Every document was paired." in lines


def test_undecided_comparisons_are_a_warning() -> None:
    report = small_report()
    assert "not decided" not in render_fields_markdown(report)
    report["overall"]["undecided"] = 2
    report["overall"]["undecided_reasons"] = ["not decided: ProviderError: model | gone"]
    report["fields"][0]["undecided"] = 2
    text = render_fields_markdown(report)
    assert (
        "> ⚠️ **2 comparison(s) not decided**: a SEMANTIC or LLM provider failed. They are "
        "counted as FD (the worst case), so every metric above is a lower bound. "
        "Fields: `$.vendor` 2."
    ) in text
    assert "> - not decided: ProviderError: model \\| gone" in text
