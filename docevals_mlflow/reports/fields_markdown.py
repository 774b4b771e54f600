"""Markdown rendering of a field comparison report (``docevals fields``).

Laid out after the IDP accelerator's evaluation report: a summary dashboard with
colour ratings and 20-character progress bars, metric tables, per-class, per-field
and per-list tables, the unpaired ids, the calibration of extraction confidence (when
rows carry it), per-document attribute tables (wrong rows first) and a short
explanation of the comparison methods used. Newer reports add a settings line (list
pairing, discovered attributes), warnings for unparsed numbers and for ground truth
that contradicts the schema, and a section for discovered attributes kept out of the
figures; each is rendered only when its key is present, so older reports still render.

Expected and predicted values are printed exactly as given (``value_cell``); every
figure goes through :mod:`docevals_mlflow.core.formatting`.

Ratings: 🟢 Excellent ≥ 0.9, 🟡 Good ≥ 0.7, 🟠 Fair ≥ 0.5, 🔴 Poor below. For the
false alarm and false discovery rates lower is better, so the scale is mirrored:
🟢 ≤ 0.1, 🟡 ≤ 0.3, 🟠 ≤ 0.5, 🔴 above. An undefined metric (zero denominator) is
shown as ``n/a`` with a neutral mark (``NOT_AVAILABLE``).

The input is the dict of :func:`docevals_mlflow.fields.report.build_fields_report`
(or the same JSON read back); the output depends on nothing else, so equal reports
render to equal text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from docevals_mlflow.core.formatting import (
    defined_number,
    metric_text,
    percent_text,
    score_text,
)
from docevals_mlflow.core.secrets import redact_text
from docevals_mlflow.fields.counts import LOWER_IS_BETTER
from docevals_mlflow.fields.registry import BUILTIN_METHODS
from docevals_mlflow.reports.diagnostics_markdown import calibration_section
from docevals_mlflow.reports.markdown import CellText, cell, table, value_cell

BAR_WIDTH = 20
FILLED = "█"
EMPTY = "░"
NOT_AVAILABLE = "➖ n/a"
DISCOVERED_MARK = "🔍"
MAX_UNPAIRED_IDS = 50
"""Unpaired ids listed per side; the JSON report has all of them."""
MAX_INVALID_EXAMPLES = 10
"""Examples of ground truth that contradicts the schema; the JSON report has the rest."""
FAR_UNDEFINED_MARK = "†"

_RATINGS = ((0.9, "🟢", "Excellent"), (0.7, "🟡", "Good"), (0.5, "🟠", "Fair"))
_POOR = ("🔴", "Poor")
# Lower-is-better metrics mirror the scale; compared on the value itself (not on
# 1 - value) so that 0.1, 0.3 and 0.5 land exactly on their boundaries.
_LOW_RATINGS = ((0.1, "🟢", "Excellent"), (0.3, "🟡", "Good"), (0.5, "🟠", "Fair"))

METRIC_LABELS: dict[str, str] = {
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1 score",
    "accuracy": "Accuracy",
    "far": "False alarm rate (FAR)",
    "fdr": "False discovery rate (FDR)",
}
_METRIC_NOTES: dict[str, str] = {
    "precision": "TP / (TP + FA + FD)",
    "recall": "TP / (TP + FN)",
    "f1": "2TP / (2TP + FA + FD + FN)",
    "accuracy": "(TP + TN) / all",
    "far": "FA / (FA + TN), lower is better",
    "fdr": "FD / (FD + TP), lower is better",
}

# Shown only for methods that occur in the report, in this order: the built-in methods
# as their records explain them, then plugin methods (explained by the report itself,
# in schema.methods), then list matching.
METHOD_EXPLANATIONS: dict[str, str] = {
    **{method.name: method.explanation for method in BUILTIN_METHODS},
    "HUNGARIAN": "list items are paired one-to-one by optimal assignment on their "
    "similarity; items below the match threshold stay unpaired and count as missed "
    "(FN) or extra (FA), and the fields of paired items are compared with their own "
    "methods.",
}
_OUTCOME_TEXT = (
    "Outcomes: **TP** match · **FA** false alarm (nothing expected, something "
    "predicted) · **FD** false discovery (both present, no match) · **FN** miss "
    "(expected, nothing predicted) · **TN** both empty."
)


# ---------------------------------------------------------------------------- pieces


def rating(metric: str, value: float | None) -> str:
    """``🟢 Excellent`` .. ``🔴 Poor`` for a metric value (mirrored for FAR/FDR)."""
    number = defined_number(value)
    if number is None:
        return NOT_AVAILABLE
    if metric in LOWER_IS_BETTER:
        for limit, icon, word in _LOW_RATINGS:
            if number <= limit:
                return f"{icon} {word}"
        return " ".join(_POOR)
    for limit, icon, word in _RATINGS:
        if number >= limit:
            return f"{icon} {word}"
    return " ".join(_POOR)


def _icon(metric: str, value: float | None) -> str:
    return rating(metric, value).split(" ", 1)[0]


def progress_bar(value: float | None) -> str:
    """A 20-character bar, e.g. ``[████████████████░░░░]`` for 0.8.

    Filled blocks are rounded *down* so that a full bar always means exactly 1.0
    (0.99 shows 19 blocks); the small epsilon keeps a value that float arithmetic
    left a hair below a block boundary (say, a mean of document scores) from losing
    a block.
    """
    number = defined_number(value)
    if number is None:
        return "[" + EMPTY * BAR_WIDTH + "]"
    filled = min(BAR_WIDTH, max(0, math.floor(number * BAR_WIDTH + 1e-9)))
    return "[" + FILLED * filled + EMPTY * (BAR_WIDTH - filled) + "]"


def _rated(metric: str, value: Any) -> str:
    # An undefined metric gets no mark at all: neither a colour nor a "Poor".
    number = defined_number(value)
    return "n/a" if number is None else f"{_icon(metric, number)} {metric_text(number)}"


def _code(text: Any) -> str:
    """Inline code for an id or name, safe in headings and lists."""
    plain = cell(str(text))
    # A backtick inside would end the code span early; a double fence tolerates it.
    return f"`` {plain} ``" if "`" in plain else f"`{plain}`"


def _confidence(value: Any) -> str:
    # "N/A" (not "n/a") as in the IDP report: confidence absent from the prediction.
    return "N/A" if defined_number(value) is None else score_text(value)


def _matched_of(counts: Mapping[str, int]) -> tuple[int, int]:
    matched = counts.get("tp", 0) + counts.get("tn", 0)
    total = sum(counts.get(key, 0) for key in ("tp", "fa", "fd", "fn", "tn"))
    return matched, total


def _cells(counts: Mapping[str, int]) -> list[int]:
    return [counts.get(key, 0) for key in ("tp", "fa", "fd", "fn", "tn")]


# ---------------------------------------------------------------------------- sections


def _dashboard(report: Mapping[str, Any]) -> list[str]:
    overall = report["overall"]
    metrics = overall["metrics"]
    matched, total = _matched_of(overall["counts"])
    rate = matched / total if total else None
    unpaired = report.get("unpaired", {})
    expected_only = len(unpaired.get("expected_only", ()))
    predicted_only = len(unpaired.get("predicted_only", ()))
    lines = [
        "## 🎯 Summary",
        "",
        f"- **Documents**: {overall['documents']} compared · unpaired: "
        f"{expected_only} expected only, {predicted_only} predicted only",
        f"- **Overall match rate**: {_icon('accuracy', rate)} {matched}/{total} attributes"
        + (f" {progress_bar(rate)} {percent_text(rate)}" if rate is not None else ""),
    ]
    for name, label in METRIC_LABELS.items():
        lines.append(f"- **{label}**: {_gauge(name, metrics.get(name))}")
    lines.append(f"- **Macro F1** (mean of document F1): {_gauge('f1', overall.get('macro_f1'))}")
    return lines + _settings(report) + _undecided(report) + _unparsed(report)


_PAIRING_TEXT = {
    "stickler": "list items paired as Stickler does (`stickler`: a pair below the match "
    "threshold stays a weak pair, counted FD)",
    "strict": "list items paired strictly (`strict`: a pair below the match threshold is "
    "broken up, its items counted missed and extra)",
    "schema": "list items paired as each list's `pairing` in the schema says (`stickler` "
    "unless set; see the list table)",
}


def _settings(report: Mapping[str, Any]) -> list[str]:
    """One line on the choices that shape the figures: how list items were paired and
    whether discovered attributes count. Empty for reports from before these existed."""
    settings = report.get("settings")
    if not isinstance(settings, Mapping) or not settings:
        return []
    parts = []
    pairing = settings.get("list_pairing")
    if pairing is not None:
        parts.append(_PAIRING_TEXT.get(str(pairing), f"list items paired {_code(pairing)}"))
    discovered = settings.get("discovered")
    if discovered == "include":
        parts.append("discovered attributes included in the figures")
    elif discovered == "exclude":
        parts.append(
            "discovered attributes left out of the figures (`--discovered include` puts them back)"
        )
    if settings.get("shape_mismatch") == "count":
        parts.append(
            "ground truth that contradicts the schema counted and left out "
            "(`--allow-shape-mismatch`)"
        )
    return [f"- **Settings**: {'; '.join(parts)}."] if parts else []


def _field_counts(report: Mapping[str, Any], key: str) -> list[str]:
    return [
        f"{_code(entry['template'])} {entry[key]}"
        for entry in report.get("fields", [])
        if entry.get(key)
    ]


def _unparsed(report: Mapping[str, Any]) -> list[str]:
    """A warning when values of numeric fields did not read as numbers, naming the
    fields: usually a ground truth or an extraction writing amounts as free text."""
    count = int(report["overall"].get("unparsed") or 0)
    if not count:
        return []
    fields = _field_counts(report, "unparsed")
    return [
        "",
        f"> ⚠️ **{count} value(s) not read as numbers**: values of numeric fields that "
        "do not parse as numbers (currency symbols and thousands separators are allowed), "
        "so they could not be compared as numbers. Check how the ground truth and the "
        "extraction write these fields" + (": " + ", ".join(fields) if fields else "") + ".",
    ]


def _undecided(report: Mapping[str, Any]) -> list[str]:
    """A warning when a provider left comparisons undecided (the metrics are then
    lower bounds), naming the fields and why."""
    overall = report["overall"]
    count = int(overall.get("undecided") or 0)
    if not count:
        return []
    fields = _field_counts(report, "undecided")
    lines = [
        "",
        f"> ⚠️ **{count} comparison(s) not decided**: a SEMANTIC or LLM provider failed. "
        "They are counted as FD (the worst case), so every metric above is a lower "
        "bound. Fields: " + ", ".join(fields) + ".",
    ]
    for reason in overall.get("undecided_reasons") or ():
        lines.append(f"> - {cell(reason)}")
    return lines


def _gauge(metric: str, value: Any) -> str:
    number = defined_number(value)
    if number is None:
        # No bar: an empty one would read as 0, which an undefined metric is not.
        return NOT_AVAILABLE
    return f"{_icon(metric, number)} {metric_text(number)} {progress_bar(number)}"


def _metrics_table(report: Mapping[str, Any]) -> list[str]:
    overall = report["overall"]
    rows: list[Sequence[Any]] = [
        (
            METRIC_LABELS[name],
            metric_text(overall["metrics"].get(name)),
            rating(name, overall["metrics"].get(name)),
            _METRIC_NOTES[name],
        )
        for name in METRIC_LABELS
    ]
    rows.append(
        (
            "Macro F1",
            metric_text(overall.get("macro_f1")),
            rating("f1", overall.get("macro_f1")),
            "mean of per-document F1",
        )
    )
    counts = _cells(overall["counts"])
    return [
        "## Metrics",
        "",
        *table(["Metric", "Value", "Rating", "Definition"], rows),
        "",
        f"Cells over all compared leaves: TP {counts[0]} · FA {counts[1]} · FD {counts[2]} "
        f"· FN {counts[3]} · TN {counts[4]}.",
    ]


def _classes_table(report: Mapping[str, Any]) -> list[str]:
    classes: Mapping[str, Any] = report.get("classes", {})
    if not classes:
        return []
    return [
        "## Document classes",
        "",
        *table(
            [
                "Class",
                "Configured",
                "Documents",
                "TP",
                "FA",
                "FD",
                "FN",
                "TN",
                "Precision",
                "Recall",
                "F1",
                "Macro F1",
            ],
            (
                (
                    name,
                    "yes" if entry.get("configured") else "no (inferred)",
                    entry.get("documents", 0),
                    *_cells(entry["counts"]),
                    _rated("precision", entry["metrics"].get("precision")),
                    _rated("recall", entry["metrics"].get("recall")),
                    _rated("f1", entry["metrics"].get("f1")),
                    _rated("f1", entry.get("macro_f1")),
                )
                for name, entry in classes.items()
            ),
        ),
    ]


def _field_rows_table(fields: Sequence[Mapping[str, Any]]) -> list[str]:
    """The per-field table; an Unparsed column only when some field has unparsed values."""
    unparsed = any(entry.get("unparsed") for entry in fields)
    headers = ["Template", "Method", "TP", "FA", "FD", "FN", "TN", "Precision", "Recall", "F1"]
    if unparsed:
        headers.append("Unparsed")
    headers.append("Discovered")
    return table(
        headers,
        (
            (
                entry["template"],
                entry["method"],
                *_cells(entry["counts"]),
                _rated("precision", entry["metrics"].get("precision")),
                _rated("recall", entry["metrics"].get("recall")),
                _rated("f1", entry["metrics"].get("f1")),
                *([int(entry.get("unparsed") or 0)] if unparsed else []),
                DISCOVERED_MARK if entry.get("discovered") else "",
            )
            for entry in fields
        ),
    )


def _fields_table(report: Mapping[str, Any]) -> list[str]:
    fields: Sequence[Mapping[str, Any]] = report.get("fields", [])
    if not fields:
        return []
    lines = ["## Fields", "", *_field_rows_table(fields)]
    if any(entry.get("discovered") for entry in fields):
        lines += [
            "",
            f"{DISCOVERED_MARK} discovered: the field is in the data but not in the schema, "
            "so it was compared with an inferred rule.",
        ]
    if any(entry.get("unparsed") for entry in fields):
        lines += [
            "",
            "Unparsed: values of a numeric field, expected or predicted, that do not read "
            "as numbers.",
        ]
    return lines


def _discovered_section(report: Mapping[str, Any]) -> list[str]:
    """Attributes in the data but not in the schema, with their own figures.

    Left out of the headline figures unless ``--discovered include``; either way the
    section says which, so nobody adds them in twice or looks for them in vain.
    """
    discovered = report.get("discovered")
    if not isinstance(discovered, Mapping) or not discovered:
        return []
    included = bool(discovered.get("included"))
    fields: Sequence[Mapping[str, Any]] = discovered.get("fields") or []
    counts = _cells(discovered.get("counts") or {})
    metrics: Mapping[str, Any] = discovered.get("metrics") or {}
    if included:
        lines = [
            f"## {DISCOVERED_MARK} Discovered attributes (included in the figures above)",
            "",
            "These attributes are in the data but not in the schema; they were compared "
            "with inferred rules and, with `--discovered include`, are counted in every "
            "figure above.",
        ]
    else:
        lines = [
            f"## {DISCOVERED_MARK} Discovered attributes (not in the figures above)",
            "",
            "These attributes are in the data but not in the schema; they were compared "
            "with inferred rules and are left out of every figure above. "
            "`--discovered include` puts them back.",
        ]
    lines += [
        "",
        f"Cells: TP {counts[0]} · FA {counts[1]} · FD {counts[2]} · FN {counts[3]} "
        f"· TN {counts[4]} · precision {_rated('precision', metrics.get('precision'))} "
        f"· recall {_rated('recall', metrics.get('recall'))} · F1 "
        f"{_rated('f1', metrics.get('f1'))}.",
    ]
    if fields:
        lines += ["", *_field_rows_table(fields)]
    return lines


def _far_cell(entry: Mapping[str, Any]) -> str:
    metrics = entry.get("metrics")
    if not isinstance(metrics, Mapping):
        return "n/a"
    far = metrics.get("far")
    if defined_number(far) is None:
        # Undefined, not zero: with no list expected empty nothing could be invented.
        return f"n/a {FAR_UNDEFINED_MARK}"
    return _rated("far", far)


def _lists_table(report: Mapping[str, Any]) -> list[str]:
    lists: Sequence[Mapping[str, Any]] = report.get("lists", [])
    if not lists:
        return []
    pairing = any("pairing" in entry for entry in lists)
    headers = ["List", "Method"]
    if pairing:
        headers.append("Pairing")
    headers += ["Matched", "Weak", "Missed", "Extra", "Both empty", "F1", "FAR"]
    lines = [
        "## List items",
        "",
        *table(
            headers,
            (
                (
                    entry["template"],
                    entry["method"],
                    *([entry.get("pairing") or "n/a"] if pairing else []),
                    entry.get("matched", 0),
                    entry.get("weak", 0),
                    entry.get("missed", 0),
                    entry.get("extra", 0),
                    entry.get("empty", 0),
                    _rated("f1", (entry.get("metrics") or {}).get("f1")),
                    CellText(_far_cell(entry)),
                )
                for entry in lists
            ),
        ),
        "",
        "Matched: expected items paired with a predicted item (TP) · Weak: pairs below the "
        "match threshold (FD) · Missed: expected items left unpaired (FN) · Extra: "
        "predicted items left unpaired (FA) · Both empty: documents where both lists were "
        "empty (TN). F1 is over items; FAR is the share of documents expecting the list "
        "empty where the model invented items.",
    ]
    if any(_far_cell(entry).endswith(FAR_UNDEFINED_MARK) for entry in lists):
        lines += ["", f"{FAR_UNDEFINED_MARK} FAR n/a: no document expected this list empty."]
    return lines


def _invalid_expected(report: Mapping[str, Any]) -> list[str]:
    """Ground truth whose shape contradicts the schema (``--allow-shape-mismatch``):
    counted and left out of the figures, so it is shown before them."""
    invalid = report.get("invalid_expected")
    if not isinstance(invalid, Mapping):
        return []
    documents = int(invalid.get("documents") or 0)
    examples: Sequence[Mapping[str, Any]] = invalid.get("examples") or []
    if not documents and not examples:
        return []
    lines = [
        "## ⚠️ Ground truth that contradicts the schema",
        "",
        f"{documents} document(s) have ground truth whose shape contradicts the schema "
        "(`--allow-shape-mismatch`): they are counted here and left out of every figure "
        "below. Fix the ground truth or the schema.",
    ]
    shown = examples[:MAX_INVALID_EXAMPLES]
    if shown:
        lines += [
            "",
            *table(
                ["Document", "Source", "Line", "Path", "Schema expects", "Found"],
                (
                    (
                        example.get("id"),
                        example.get("source"),
                        example.get("line"),
                        example.get("path"),
                        example.get("schema"),
                        value_cell(example.get("found")),
                    )
                    for example in shown
                ),
            ),
        ]
    if len(examples) > len(shown):
        lines += [
            "",
            f"*{len(shown)} of {len(examples)} examples shown; the JSON report has all of them.*",
        ]
    return lines


def _id_list(ids: Sequence[str]) -> str:
    shown = ", ".join(_code(doc_id) for doc_id in ids[:MAX_UNPAIRED_IDS])
    if len(ids) > MAX_UNPAIRED_IDS:
        shown += f" … and {len(ids) - MAX_UNPAIRED_IDS} more"
    return shown


def _unpaired(report: Mapping[str, Any]) -> list[str]:
    unpaired = report.get("unpaired", {})
    expected_only: Sequence[str] = unpaired.get("expected_only", [])
    predicted_only: Sequence[str] = unpaired.get("predicted_only", [])
    lines = ["## Unpaired documents", ""]
    if not expected_only and not predicted_only:
        return [*lines, "Every document was paired."]
    if expected_only:
        lines.append(
            f"- **Expected only** (ground truth, no prediction; not compared): "
            f"{len(expected_only)}: {_id_list(expected_only)}"
        )
    if predicted_only:
        lines.append(
            f"- **Predicted only** (prediction, no ground truth; not compared): "
            f"{len(predicted_only)}: {_id_list(predicted_only)}"
        )
    return lines


def _row_matched(row: Mapping[str, Any]) -> bool:
    if "matched" in row:
        return bool(row["matched"])
    return row.get("outcome") in ("TP", "TN")


def _document_order(documents: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    # Worst first: lowest F1, then documents without any defined F1 (nothing to
    # compare), each group in report order (the sort is stable).
    def key(document: Mapping[str, Any]) -> tuple[int, float]:
        f1 = defined_number(document.get("metrics", {}).get("f1"))
        return (1, 0.0) if f1 is None else (0, f1)

    return sorted(documents, key=key)


def _document_section(document: Mapping[str, Any], max_rows: int) -> list[str]:
    counts = document.get("counts", {})
    matched, total = _matched_of(counts)
    f1 = document.get("metrics", {}).get("f1")
    document_class = document.get("class")
    lines = [
        f"### Document {_code(document.get('id'))}"
        + (f" ({cell(document_class)})" if document_class is not None else ""),
        "",
        f"{_icon('f1', f1)} F1 {metric_text(f1)} · {matched}/{total} attributes matched",
        "",
    ]
    rows: Sequence[Mapping[str, Any]] = document.get("rows", [])
    if not rows:
        return [*lines, "No attributes to compare."]
    # Wrong rows first so that a capped table still shows the problems; the sort is
    # stable, so each group keeps the document's order.
    ordered = sorted(rows, key=_row_matched)
    shown = ordered[: max(0, max_rows)]
    lines += table(
        ["Status", "Attribute", "Expected", "Actual", "Confidence", "Score", "Method", "Reason"],
        (
            (
                "✅" if _row_matched(row) else "❌",
                row.get("path"),
                value_cell(row.get("expected")),
                value_cell(row.get("actual")),
                _confidence(row.get("confidence")),
                score_text(row.get("score")),
                row.get("method"),
                row.get("reason"),
            )
            for row in shown
        ),
    )
    hidden = len(ordered) - len(shown)
    if hidden:
        wrong_hidden = sum(1 for row in ordered[len(shown) :] if not _row_matched(row))
        lines += [
            "",
            f"*… and {hidden} more {'row' if hidden == 1 else 'rows'} ({wrong_hidden} "
            "wrong); the JSON report has all of them.*",
        ]
    return lines


def _documents(
    report: Mapping[str, Any], max_rows_per_document: int, max_documents: int
) -> list[str]:
    documents: Sequence[Mapping[str, Any]] = report.get("documents", [])
    lines = ["## Documents", ""]
    if not documents:
        return [*lines, "No documents were compared."]
    if not any("rows" in document for document in documents):
        return [
            *lines,
            "Attribute rows were not kept for this report (`--no-rows`); the per-field "
            "and per-class tables above cover every document.",
        ]
    ordered = _document_order(documents)
    shown = ordered[: max(0, max_documents)]
    if len(shown) < len(ordered):
        lines += [
            f"The {len(shown)} documents with the lowest F1 of {len(ordered)}; "
            f"the JSON report has all of them.",
            "",
        ]
    for index, document in enumerate(shown):
        if index:
            lines.append("")
        lines += _document_section(document, max_rows_per_document)
    return lines


def _all_fields(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Schema and discovered field entries (the latter kept apart when excluded)."""
    discovered = report.get("discovered")
    extra = discovered.get("fields") or [] if isinstance(discovered, Mapping) else []
    return [*report.get("fields", []), *extra]


def _pairings(report: Mapping[str, Any]) -> set[str]:
    pairings = {str(entry["pairing"]) for entry in report.get("lists", []) if "pairing" in entry}
    settings = report.get("settings")
    if not pairings and isinstance(settings, Mapping) and settings.get("list_pairing"):
        pairings.add(str(settings["list_pairing"]))
    return pairings


def _hungarian_text(pairings: set[str]) -> str:
    """The HUNGARIAN explanation for the pairing rules the report used."""
    below = {
        "strict": "with `strict` pairing a pair below the match threshold is broken up, "
        "its items counted missed (FN) and extra (FA)",
        "stickler": "with `stickler` pairing a pair below the match threshold stays a weak "
        "pair and counts as a false discovery (FD)",
    }
    known = [below[name] for name in ("strict", "stickler") if name in pairings]
    if not known:
        return METHOD_EXPLANATIONS["HUNGARIAN"]
    return (
        "list items are paired one-to-one by optimal assignment on their similarity; "
        + "; ".join(known)
        + ". Items left over are missed (FN) or extra (FA), and the fields of paired items "
        "are compared with their own methods."
    )


def _plugin_explanations(report: Mapping[str, Any]) -> dict[str, str]:
    """The explanations of plugin methods the report carries (``schema.methods``)."""
    schema = report.get("schema")
    methods = schema.get("methods") if isinstance(schema, Mapping) else None
    if not isinstance(methods, Mapping):
        return {}
    return {
        str(name): entry["explanation"]
        for name, entry in sorted(methods.items())
        if name not in METHOD_EXPLANATIONS
        and isinstance(entry, Mapping)
        and isinstance(entry.get("explanation"), str)
    }


def _method_names(report: Mapping[str, Any], plugins: Mapping[str, str]) -> list[str]:
    used: set[str] = set()
    for entry in _all_fields(report):
        name = entry.get("method_name")
        if isinstance(name, str):
            used.add(name)
        if str(entry.get("method", "")).startswith("HUNGARIAN"):
            used.add("HUNGARIAN")
    if report.get("lists"):
        used.add("HUNGARIAN")
    builtin = [name for name in METHOD_EXPLANATIONS if name != "HUNGARIAN" and name in used]
    listed = [name for name in plugins if name in used]
    return builtin + listed + (["HUNGARIAN"] if "HUNGARIAN" in used else [])


def _explanations(report: Mapping[str, Any]) -> list[str]:
    lines = ["## Method explanations", ""]
    plugins = _plugin_explanations(report)
    known = {**METHOD_EXPLANATIONS, **plugins}
    lines += [
        f"- **{name}**: "
        + (_hungarian_text(_pairings(report)) if name == "HUNGARIAN" else known[name])
        for name in _method_names(report, plugins)
    ]
    if any(entry.get("discovered") for entry in _all_fields(report)):
        lines.append(
            f"- {DISCOVERED_MARK} **Discovered** fields are not in the schema; they are "
            "compared with inferred rules (strings FUZZY 0.85, numbers NUMERIC_EXACT 0.01, "
            "booleans EXACT) and their reason starts with `[Discovered: ...]`."
        )
    lines += [
        "",
        _OUTCOME_TEXT,
        "",
        "Ratings: 🟢 Excellent ≥ 0.9 · 🟡 Good ≥ 0.7 · 🟠 Fair ≥ 0.5 · 🔴 Poor below; "
        "for FAR and FDR (lower is better) 🟢 ≤ 0.1 · 🟡 ≤ 0.3 · 🟠 ≤ 0.5 · 🔴 above. "
        "Confidence is the extraction's own confidence (N/A when the prediction has none); "
        "score is the method's similarity.",
    ]
    return lines


# ---------------------------------------------------------------------------- entry point


def render_fields_markdown(
    report: Mapping[str, Any],
    *,
    max_rows_per_document: int = 50,
    max_documents: int = 20,
) -> str:
    """Markdown for a field comparison report (the dict of ``BatchComparison.to_report()``).

    At most ``max_documents`` documents get an attribute table (those with the
    lowest F1), each with at most ``max_rows_per_document`` rows (wrong rows first);
    the JSON report always has everything.
    """
    schema = report.get("schema", {})
    digest = schema.get("sha256")
    lines = [
        "# Field evaluation report",
        "",
        f"**Schema:** {_code(schema.get('id', 'n/a'))} version "
        f"{_code(schema.get('version', 'n/a'))} (SHA-256 "
        f"{_code(digest[:12]) if digest else 'n/a'})",
        "",
    ]
    invalid = _invalid_expected(report)
    if invalid:
        lines += [*invalid, ""]
    lines += [*_dashboard(report), "", *_metrics_table(report)]
    for section in (
        _classes_table,
        _fields_table,
        _discovered_section,
        _lists_table,
        _unpaired,
    ):
        part = section(report)
        if part:
            lines += ["", *part]
    calibration = calibration_section(report.get("calibration"))
    if calibration:
        lines += ["", *calibration]
    lines += ["", *_documents(report, max_rows_per_document, max_documents)]
    lines += ["", *_explanations(report)]
    lines += ["", f"*docevals-mlflow {report.get('package_version', 'n/a')}*"]
    # Written to a file and to MLflow: a registered secret (a key a model quoted in a
    # reason) must not survive into the text, whatever the report dict held.
    return redact_text("\n".join(lines) + "\n")


__all__ = ["progress_bar", "rating", "render_fields_markdown"]
