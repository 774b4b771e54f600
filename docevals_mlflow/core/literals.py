"""The small vocabularies shared by cases, metrics and reports."""

from __future__ import annotations

from typing import Literal

Authority = Literal["evidence", "generated", "ground_truth"]
"""How far a reference may be trusted: raw source, AI-generated, or authoritative."""

ArtifactKind = Literal["text", "structured", "image", "pdf", "file"]

ComparisonMode = Literal["auto", "exact", "semantic"]
"""``auto``: JSON and path tables are exact-comparable, other tables and notes are
semantic; ``exact``: flatten structured content for deterministic comparison;
``semantic``: leave the reference to judges only."""

ContentFormat = Literal["json", "path_table", "table", "text"]

Verdict = Literal["pass", "fail", "uncertain", "not_applicable"]

FailureContext = Literal[
    "none",
    "current_stage",
    "upstream",
    "upstream_or_combined",
    "indeterminate",
    "caused_by_upstream",
    "independent_failure",
]
"""Where a failure belongs. The last two refine ``upstream_or_combined`` after an
oracle-swap rerun (:mod:`docevals_mlflow.diagnostics.counterfactual`)."""

SpecStatus = Literal["draft", "approved"]

JudgeInstructionMode = Literal["append", "replace"]

VERDICTS: tuple[Verdict, ...] = ("pass", "fail", "uncertain", "not_applicable")
FAILURE_CONTEXTS: tuple[FailureContext, ...] = (
    "none",
    "current_stage",
    "upstream",
    "upstream_or_combined",
    "indeterminate",
)
"""The contexts attribution from verdicts alone gives (always counted in suites)."""
COUNTERFACTUAL_CONTEXTS: tuple[FailureContext, ...] = ("caused_by_upstream", "independent_failure")
"""Refinements of ``upstream_or_combined`` that only a counterfactual rerun gives
(counted in suites when they occur)."""
