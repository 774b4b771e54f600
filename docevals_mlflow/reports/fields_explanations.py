"""The "Method explanations" section of the fields Markdown report: each method the
report used, as its registry record (or, for a plugin, the report itself) explains it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docevals_mlflow.fields.registry import BUILTIN_METHODS
from docevals_mlflow.reports.fields_tables import DISCOVERED_MARK

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


def explanations_section(report: Mapping[str, Any]) -> list[str]:
    """The methods the report used, the outcome legend and the rating scale."""
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
