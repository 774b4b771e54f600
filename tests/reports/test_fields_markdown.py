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
    # An older report's list entry (no weak, empty or metrics) still renders.
    assert (
        "| $.items | HUNGARIAN (comparator: FUZZY, threshold: 0.7) | 7 | 0 | 2 | 3 | 0 "
        "| n/a | n/a |" in lines
    )
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
    report = batch.to_report()
    lines = lines_of(render_fields_markdown(report))
    assert (
        "| $.vendor | FUZZY (threshold: 0.8) | 1 | 0 | 0 | 0 | 0 "
        "| 🟢 1.0000 | 🟢 1.0000 | 🟢 1.0000 |  |" in lines
    )
    assert any(
        line.startswith("| $.tags[] | HUNGARIAN (comparator: FUZZY, threshold: 0.7) |")
        for line in lines
    )
    # A discovered attribute's entry is in the fields table or, left out of the
    # figures, in its own section (whichever the report builder chose); its row is in
    # the document table either way.
    discovered = report.get("discovered") or {}
    if any(
        entry["template"] == "$.memo"
        for entry in [*report["fields"], *discovered.get("fields", [])]
    ):
        assert any(
            line.startswith("| $.memo | FUZZY (threshold: 0.85) |") and line.endswith("| 🔍 |")
            for line in lines
        )
    assert any(line.startswith("| ✅ | $.memo | x | x |") for line in lines)
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


# --------------------------------------------------------------------------- values


def test_values_print_exactly_as_given() -> None:
    report = small_report()
    report["documents"][1]["rows"] = [
        row("$.total", "FD", 673.95, 613.95, 0.0, 0.875, NUMERIC, "Numbers differ"),
        row("$.big", "FD", 123456.78, 123457.78, 0.0, None, NUMERIC, "Numbers differ"),
        row("$.tiny", "FD", 1e-7, 2e-7, 0.0, None, NUMERIC, "Numbers differ"),
        row("$.count", "TP", 12, 12, 1.0, None, NUMERIC, "Exact match"),
        row("$.paid", "TP", True, True, 1.0, None, "EXACT", "Exact match"),
        row("$.ringgit", "TP", "RM7.42", "RM7.42", 1.0, None, NUMERIC, "Exact match"),
        row("$.euro", "TP", "1.234,56 €", "1.234,56 €", 1.0, None, NUMERIC, "Exact match"),
        row("$.tags", "FD", ["a", "b"], {"x": 1.5}, 0.0, None, "EXACT", "Differ"),
    ]
    text = render_fields_markdown(report)
    assert "| ❌ | $.total | 673.95 | 613.95 | 0.88 | 0.00 |" in text
    assert "| ❌ | $.big | 123456.78 | 123457.78 | N/A | 0.00 |" in text
    assert "| ❌ | $.tiny | 1e-07 | 2e-07 |" in text
    assert '| ❌ | $.tags | ["a", "b"] | {"x": 1.5} |' in text
    assert "| ✅ | $.count | 12 | 12 |" in text
    assert "| ✅ | $.paid | true | true |" in text
    assert "| ✅ | $.ringgit | RM7.42 | RM7.42 |" in text
    assert "| ✅ | $.euro | 1.234,56 € | 1.234,56 € |" in text


def test_long_values_and_weak_pair_reasons_are_not_cut_silently() -> None:
    description = "Premium widget, brushed steel, " * 20
    reason = (
        "Weak pair (item similarity 0.42 < 0.50): description, quantity and unit price "
        "differ from the expected item's; the assignment kept the pair as the best left"
    )
    report = small_report()
    report["documents"][1]["rows"] = [
        row("$.items[0].description", "FD", description, "Widget", 0.42, None, LIST, reason)
    ]
    text = render_fields_markdown(report)
    assert f"| {reason} |" in text
    left_out = len(description) - 500
    assert f"| {description[:500]}… (+{left_out} chars) | Widget |" in text


# --------------------------------------------------------------------------- new content


def test_settings_line_says_how_lists_were_paired_and_what_counts() -> None:
    report = small_report()
    assert "**Settings**" not in render_fields_markdown(report)
    report["settings"] = {"list_pairing": "stickler", "discovered": "exclude"}
    lines = lines_of(render_fields_markdown(report))
    start = lines.index("## 🎯 Summary")
    assert lines[start + 11] == (
        "- **Settings**: list items paired as Stickler does (`stickler`: a pair below the "
        "match threshold stays a weak pair, counted FD); discovered attributes left out of "
        "the figures (`--discovered include` puts them back)."
    )
    report["settings"] = {
        "list_pairing": "strict",
        "discovered": "include",
        "shape_mismatch": "count",
    }
    assert (
        "- **Settings**: list items paired strictly (`strict`: a pair below the match "
        "threshold is broken up, its items counted missed and extra); discovered attributes "
        "included in the figures; ground truth that contradicts the schema counted and left "
        "out (`--allow-shape-mismatch`)."
    ) in lines_of(render_fields_markdown(report))


def test_hungarian_explanation_follows_the_pairing_used() -> None:
    report = small_report()
    report["lists"][0]["pairing"] = "stickler"
    text = render_fields_markdown(report)
    assert "with `stickler` pairing a pair below the match threshold stays a weak pair" in text
    assert "with `strict` pairing" not in text


def test_unparsed_values_are_a_warning_and_a_column() -> None:
    report = small_report()
    text = render_fields_markdown(report)
    assert "not read as numbers" not in text
    assert "| Unparsed |" not in text
    report["overall"]["unparsed"] = 3
    report["fields"][0]["unparsed"] = 3
    lines = lines_of(render_fields_markdown(report))
    assert (
        "> ⚠️ **3 value(s) not read as numbers**: values of numeric fields that do not "
        "parse as numbers (currency symbols and thousands separators are allowed), so they "
        "could not be compared as numbers. Check how the ground truth and the extraction "
        "write these fields: `$.vendor` 3."
    ) in lines
    start = lines.index("## Fields")
    assert lines[start + 2].endswith("| F1 | Unparsed | Discovered |")
    assert lines[start + 4].endswith("| 🟢 0.9474 | 3 |  |")
    assert lines[start + 5].endswith("| 🟡 0.8235 | 0 |  |")


def discovered_block(*, included: bool) -> dict[str, Any]:
    cells = counts(tp=2, fa=1, fd=1)
    return {
        "included": included,
        "counts": cells,
        "metrics": metrics_from_cells(**cells),
        "fields": [
            field("$.memo", "FUZZY (threshold: 0.85)", counts(tp=2, fd=1), discovered=True),
            field("$.stamp", "EXACT", counts(fa=1), discovered=True),
        ],
    }


def test_discovered_attributes_left_out_get_their_own_section() -> None:
    report = small_report()
    report["discovered"] = discovered_block(included=False)
    lines = lines_of(render_fields_markdown(report))
    start = lines.index("## 🔍 Discovered attributes (not in the figures above)")
    assert lines.index("## Fields") < start < lines.index("## List items")
    assert lines[start + 2] == (
        "These attributes are in the data but not in the schema; they were compared with "
        "inferred rules and are left out of every figure above. `--discovered include` "
        "puts them back."
    )
    assert lines[start + 4] == (
        "Cells: TP 2 · FA 1 · FD 1 · FN 0 · TN 0 · precision 🟠 0.5000 · recall 🟢 1.0000 "
        "· F1 🟠 0.6667."
    )
    assert "| $.memo | FUZZY (threshold: 0.85) | 2 | 0 | 1 | 0 | 0 " in "\n".join(lines)
    # $.stamp has no TP: precision 0 is rated, recall (no expected value) is undefined.
    assert "| $.stamp | EXACT | 0 | 1 | 0 | 0 | 0 | 🔴 0.0000 | n/a | 🔴 0.0000 | 🔍 |" in lines
    # Methods of discovered fields are explained too.
    assert "- **EXACT**:" in "\n".join(lines)


def test_discovered_attributes_included_say_so() -> None:
    report = small_report()
    report["discovered"] = discovered_block(included=True)
    text = render_fields_markdown(report)
    assert "## 🔍 Discovered attributes (included in the figures above)" in text
    assert "with `--discovered include`, are counted in every figure above." in text
    assert "not in the figures above" not in text


def test_list_table_counts_weak_pairs_and_both_empty_with_f1_and_far() -> None:
    report = small_report()
    items = {"matched": 7, "weak": 1, "missed": 2, "extra": 3, "empty": 4, "invented": 1}
    cells = counts(tp=7, fa=3, fd=1, fn=2, tn=4)
    report["lists"] = [
        {
            "template": "$.items",
            "method": LIST,
            "pairing": "stickler",
            **items,
            "counts": cells,
            "metrics": {**metrics_from_cells(**cells), "far": 1 / 5},
            "expected_empty": 5,
            "invented": 1,
        },
        {
            "template": "$.tags",
            "method": LIST,
            "pairing": "strict",
            "matched": 2,
            "weak": 0,
            "missed": 0,
            "extra": 0,
            "empty": 0,
            "counts": counts(tp=2),
            "metrics": {**metrics_from_cells(**counts(tp=2)), "far": None},
            "expected_empty": 0,
            "invented": 0,
        },
    ]
    lines = lines_of(render_fields_markdown(report))
    start = lines.index("## List items")
    assert lines[start + 2 : start + 6] == [
        "| List | Method | Pairing | Matched | Weak | Missed | Extra | Both empty | F1 | FAR |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| $.items | {LIST} | stickler | 7 | 1 | 2 | 3 | 4 | 🟡 0.7000 | 🟡 0.2000 |",
        f"| $.tags | {LIST} | strict | 2 | 0 | 0 | 0 | 0 | 🟢 1.0000 | n/a † |",
    ]
    assert "† FAR n/a: no document expected this list empty." in lines


def test_undefined_metrics_are_never_rated_poor() -> None:
    report = small_report()
    empty = counts()
    report["overall"]["counts"] = empty
    report["overall"]["metrics"] = metrics_from_cells(**empty)
    report["overall"]["macro_f1"] = float("nan")
    report["fields"] = [field("$.none", "EXACT", empty)]
    report["lists"] = [
        {
            "template": "$.items",
            "method": LIST,
            "counts": empty,
            "metrics": dict.fromkeys(metrics_from_cells(**empty)),
        }
    ]
    text = render_fields_markdown(report)
    before_explanations = text[: text.index("## Method explanations")]
    assert "🔴" not in before_explanations
    assert "Poor" not in before_explanations
    assert "- **Macro F1** (mean of document F1): ➖ n/a" in text


def test_invalid_expected_is_a_warning_before_the_figures() -> None:
    report = small_report()
    examples = [
        {
            "id": f"inv-{index}",
            "source": "truth.jsonl",
            "line": index + 1,
            "path": "$.total",
            "schema": "a single value",
            "found": {"amount": 673.95, "currency": "MYR"},
        }
        for index in range(12)
    ]
    report["invalid_expected"] = {"documents": 12, "examples": examples}
    lines = lines_of(render_fields_markdown(report))
    start = lines.index("## ⚠️ Ground truth that contradicts the schema")
    assert start < lines.index("## 🎯 Summary")
    assert lines[start + 2] == (
        "12 document(s) have ground truth whose shape contradicts the schema "
        "(`--allow-shape-mismatch`): they are counted here and left out of every figure "
        "below. Fix the ground truth or the schema."
    )
    assert lines[start + 4] == "| Document | Source | Line | Path | Schema expects | Found |"
    assert lines[start + 6] == (
        '| inv-0 | truth.jsonl | 1 | $.total | a single value | {"amount": 673.95, '
        '"currency": "MYR"} |'
    )
    assert "| inv-9 |" in lines[start + 15]
    assert not any(line.startswith("| inv-10 |") for line in lines)
    assert "*10 of 12 examples shown; the JSON report has all of them.*" in lines


def test_older_reports_render_without_the_new_keys() -> None:
    text = render_fields_markdown(small_report())
    for absent in ("**Settings**", "Discovered attributes (", "contradicts the schema", "†"):
        assert absent not in text


def _interval(low: float | None, high: float | None, documents: int, **extra: Any) -> Any:
    return {
        "low": low,
        "high": high,
        "documents": documents,
        "observations": 3 * documents,
        "confidence": 0.95,
        "resamples": 2000,
        "seed": 0,
        **extra,
    }


def test_interval_text_gives_bounds_and_documents_or_why_not() -> None:
    from docevals_mlflow.reports.fields_markdown import interval_text

    assert interval_text(0.91234, _interval(0.8871, 0.9344, 240)) == (
        "0.912 [0.887, 0.934], 240 docs"
    )
    reason = "fewer than 2 documents (1)"
    assert interval_text(0.5, _interval(None, None, 1, reason=reason)) == (
        f"0.500 (no interval: {reason}), 1 doc"
    )
    assert interval_text(None, None) == "n/a"


def test_intervals_section_lists_overall_figures_and_field_f1() -> None:
    report = small_report()
    assert "## Intervals" not in render_fields_markdown(report)  # older reports: no section
    report["overall"]["ci"] = {
        name: _interval(0.1, 0.9, 12) for name in ("precision", "recall", "f1", "accuracy")
    }
    report["fields"][0]["ci"] = {"f1": _interval(0.25, 0.75, 12)}
    lines = lines_of(render_fields_markdown(report))
    assert "## Intervals (95%, resampling documents)" in lines
    f1 = report["overall"]["metrics"]["f1"]
    assert f"| F1 | {f1:.3f} [0.100, 0.900], 12 docs | 36 |" in lines
    entry = report["fields"][0]
    assert (
        f"| `{entry['template']}` | {entry['metrics']['f1']:.3f} [0.250, 0.750], 12 docs |" in lines
    )
