"""What ``docevals fields`` prints: the summary line of a report and the warnings its
figures call for (undecided comparisons, unparsed numbers, wrong-shaped ground truth)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docevals_mlflow.core.formatting import metric_text as figure_text


def fields_summary(report: Mapping[str, Any]) -> str:
    """Documents, micro precision/recall/F1, macro F1 and the unpaired documents."""
    metrics = report["overall"]["metrics"]
    unpaired = report["unpaired"]
    return (
        f"documents: {report['overall']['documents']}; micro precision "
        f"{figure_text(metrics['precision'])}, recall {figure_text(metrics['recall'])}, "
        f"F1 {figure_text(metrics['f1'])}; macro F1 {figure_text(report['overall']['macro_f1'])}; "
        f"unpaired: {len(unpaired['expected_only'])} expected only, "
        f"{len(unpaired['predicted_only'])} predicted only"
    )


def undecided_warning(report: Mapping[str, Any]) -> str | None:
    """The stderr line for comparisons a provider left undecided, or ``None``."""
    overall = report["overall"]
    count = int(overall.get("undecided") or 0)
    if not count:
        return None
    reasons = overall.get("undecided_reasons") or ["no reason recorded"]
    more = f" (and {len(reasons) - 1} other reasons)" if len(reasons) > 1 else ""
    return (
        f"docevals: warning: {count} field comparison{'s' if count != 1 else ''} "
        f"{'were' if count != 1 else 'was'} not decided ({reasons[0]}{more}); counted as FD, "
        "so the metrics are lower bounds"
    )


def unparsed_warning(report: Mapping[str, Any]) -> str | None:
    """The stderr line for numeric values that do not read as numbers, or ``None``."""
    count = int(report["overall"].get("unparsed") or 0)
    if not count:
        return None
    fields = sorted(
        (
            entry
            for entry in (*report["fields"], *report.get("discovered", {}).get("fields", []))
            if entry.get("unparsed")
        ),
        key=lambda entry: -int(entry["unparsed"]),
    )
    named = ", ".join(f"{entry['template']} ({entry['unparsed']})" for entry in fields[:3])
    more = f" and {len(fields) - 3} more fields" if len(fields) > 3 else ""
    return (
        f"docevals: warning: {count} value{'s' if count != 1 else ''} of numeric fields "
        f"{'do' if count != 1 else 'does'} not read as numbers ({named}{more}); such values "
        "match only a value of identical text"
    )


def invalid_expected_warning(report: Mapping[str, Any]) -> str | None:
    """The stderr line for documents left out for wrong-shaped ground truth, or ``None``."""
    invalid = report.get("invalid_expected")
    if not invalid:
        return None
    first = invalid["examples"][0]
    where = ", ".join(str(part) for part in (first.get("source"), first.get("line")) if part)
    count = int(invalid["documents"])
    return (
        f"docevals: warning: {count} document{'s' if count != 1 else ''} left out of the "
        f"figures: ground truth of the wrong shape (first: {where + ', ' if where else ''}"
        f"document {first['id']!r} at {first['path']}: {first['found']} where the schema "
        f"declares {first['schema']}); counted as invalid_expected"
    )
