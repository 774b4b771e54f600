"""A judge calibration as an MLflow run (``docevals.kind=evaluation``,
``docevals.report_kind=calibration``).

* params: ``calibration.metric``, ``calibration.bootstrap``, ``calibration.seed``,
  ``calibration.confidence`` and ``calibration.labels_sha256`` (when the labels file
  is known);
* the headline: ``Summary/{agreement,kappa}`` (judge against humans on cases),
  ``Summary/labelled_{cases,claims}`` and ``Summary/{judge,human}_pass_rate`` (the
  share of labelled cases each called ``pass``) and ``Summary/corrected_pass_rate``
  (the PPI++ estimate of the true case pass rate, or the human-only one on fallback);
  ``Summary/{agreement,kappa,judge_pass_rate,human_pass_rate}_ci_{low,high}`` (their
  intervals resampling the labelled cases);
* PPI++: ``ppi/{corrected,judge_only,human_only}/{estimate,ci_low,ci_high,n}`` and
  ``ppi/{lambda,lambda_estimated,labelled,unlabelled,fallback}``;
* metrics per level (``cases``, ``claims``): ``calibration/<level>/{n, cases, agreement,
  agreement_ci_low, agreement_ci_high, kappa, kappa_ci_low, kappa_ci_high,
  kappa_decided, abstention_rate, precision, recall}``; ``calibration/{unmatched_labels,
  unlabelled_cases, unlabelled_claims}``; for panels ``calibration/fleiss_kappa`` and
  ``calibration/variant/<name>/{kappa,agreement}``;
* artifacts: ``report/report.json``, ``report/report.md``, ``metrics_index.json``; the
  disagreement budget's figure tables ``tables/disagreement_budget.json`` and
  ``tables/disagreement_threshold.json``.

Undefined figures are not logged. ``docevals calibrate`` and
:func:`log_calibration_report` both assemble the run with
:func:`~docevals_mlflow.tracking.assembly.assemble_calibration`. Does not import
mlflow itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.fingerprints import sha256_file
from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.diagnostics_layout import disagreement_metrics
from docevals_mlflow.tracking.keys import KeyMap, legal_key
from docevals_mlflow.tracking.layout import tag_evaluation
from docevals_mlflow.tracking.layout_shared import headline

if TYPE_CHECKING:
    from docevals_mlflow.judges.calibration import CalibrationReport
    from docevals_mlflow.tracking.options import RunOptions
    from docevals_mlflow.tracking.runs import LoggedRun

LEVELS = ("cases", "claims")
"""The levels a calibration reports figures for, as ``calibration/<level>/...``."""
HEADLINE_FIGURES = (
    *("agreement", "kappa", "labelled_cases", "labelled_claims"),
    *("judge_pass_rate", "human_pass_rate", "corrected_pass_rate"),
)
"""A calibration's headline, logged as ``Summary/<figure>``."""
HEADLINE_INTERVALS = ("agreement", "kappa", "judge_pass_rate", "human_pass_rate")
"""Headline figures logged with their interval (on cases, resampling case ids), as
``Summary/<figure>_ci_low`` and ``_ci_high``."""


def headline_figures(report: CalibrationReport) -> dict[str, float | int | None]:
    """The headline figures of a calibration (undefined ones ``None``): agreement and
    Cohen's kappa on cases, how many cases and claims were labelled, and the share of
    the labelled cases the judge and the humans called ``pass``."""
    cases = report.cases
    confusion = cases.confusion
    human_pass = sum(confusion.get("pass", {}).values())
    judge_pass = sum(row.get("pass", 0) for row in confusion.values())
    return {
        "agreement": cases.agreement,
        "kappa": cases.kappa,
        "labelled_cases": cases.n,
        "labelled_claims": report.claims.n,
        "judge_pass_rate": judge_pass / cases.n if cases.n else None,
        "human_pass_rate": human_pass / cases.n if cases.n else None,
        "corrected_pass_rate": (
            report.pass_rate.corrected.estimate if report.pass_rate is not None else None
        ),
    }


def ppi_metrics(writer: BundleWriter, report: CalibrationReport) -> None:
    """``ppi/{corrected,judge_only,human_only}/{estimate,ci_low,ci_high,n}``,
    ``ppi/{lambda,lambda_estimated,labelled,unlabelled,fallback}`` (fallback 1 when the
    human-only estimate stands in for PPI++)."""
    correction = report.pass_rate
    if correction is None:
        return
    for name, estimate in (
        ("corrected", correction.corrected),
        ("judge_only", correction.judge_only),
        ("human_only", correction.human_only),
    ):
        writer.metric(f"ppi/{name}/estimate", estimate.estimate)
        writer.metric(f"ppi/{name}/ci_low", estimate.low)
        writer.metric(f"ppi/{name}/ci_high", estimate.high)
        writer.metric(f"ppi/{name}/n", estimate.n)
    writer.metric("ppi/lambda", correction.lam)
    writer.metric("ppi/lambda_estimated", correction.lam_estimated)
    writer.metric("ppi/labelled", correction.labelled)
    writer.metric("ppi/unlabelled", correction.unlabelled)
    writer.metric("ppi/fallback", int(correction.fallback is not None))


def layout_calibration(
    writer: BundleWriter,
    report: CalibrationReport,
    *,
    markdown: str,
    labels_sha256: str | None = None,
    verdict: str | None = None,
) -> KeyMap:
    """Fill ``writer`` with a calibration (see the module docstring)."""
    keys = KeyMap()
    writer.param("docevals.version", __version__)
    writer.param("calibration.metric", ", ".join(report.metrics_used))
    writer.param("calibration.bootstrap", report.bootstrap)
    writer.param("calibration.seed", report.seed)
    writer.param("calibration.confidence", report.confidence)
    writer.param("calibration.labels_sha256", labels_sha256)
    figures_of = headline_figures(report)
    headline(writer, ((name, figures_of[name]) for name in HEADLINE_FIGURES))
    # Beside the headline, its intervals (resampling cases).
    for name in HEADLINE_INTERVALS:
        interval = getattr(report.cases, f"{name}_ci")
        if interval is not None:
            writer.metric(f"Summary/{name}_ci_low", interval.low)
            writer.metric(f"Summary/{name}_ci_high", interval.high)
    for name in LEVELS:
        figures = report.cases if name == "cases" else report.claims
        prefix = f"calibration/{name}"
        writer.metric(f"{prefix}/n", figures.n)
        if figures.agreement_ci is not None:
            writer.metric(f"{prefix}/cases", figures.cases_resampled)
        writer.metric(f"{prefix}/agreement", figures.agreement)
        writer.metric(f"{prefix}/kappa", figures.kappa)
        writer.metric(f"{prefix}/kappa_decided", figures.kappa_decided)
        writer.metric(f"{prefix}/abstention_rate", figures.abstention_rate)
        writer.metric(f"{prefix}/precision", figures.precision)
        writer.metric(f"{prefix}/recall", figures.recall)
        for figure, interval in (
            ("agreement", figures.agreement_ci),
            ("kappa", figures.kappa_ci),
        ):
            if interval is not None:
                writer.metric(f"{prefix}/{figure}_ci_low", interval.low)
                writer.metric(f"{prefix}/{figure}_ci_high", interval.high)
    writer.metric("calibration/unmatched_labels", len(report.unmatched_labels))
    writer.metric("calibration/unlabelled_cases", len(report.unlabelled_cases))
    writer.metric("calibration/unlabelled_claims", len(report.unlabelled_claims))
    if report.panel is not None:
        writer.metric("calibration/fleiss_kappa", report.panel.fleiss_kappa)
        for variant in report.panel.variant_calibration:
            segment = keys.named("variant", variant.name)
            writer.metric(legal_key(f"calibration/variant/{segment}/kappa"), variant.kappa)
            writer.metric(legal_key(f"calibration/variant/{segment}/agreement"), variant.agreement)
    disagreement_metrics(writer, report.disagreement)
    ppi_metrics(writer, report)
    tag_evaluation(writer, "calibration", verdict=verdict, note=calibration_summary(report))
    writer.json("report/report.json", report.model_dump(mode="json"))
    writer.text("report/report.md", markdown)
    writer.json("metrics_index.json", keys.index())
    return keys


def calibration_summary(report: CalibrationReport) -> str:
    """The Markdown run description of a calibration."""
    from docevals_mlflow.core.statistics import kappa_strength

    lines = [
        "**docevals judge calibration**",
        "",
        f"- {report.verdict_line('cases')}",
        f"- {report.verdict_line('claims')}",
    ]
    if report.pass_rate is not None:
        from docevals_mlflow.judges.calibration.correction import correction_lines

        lines += [f"- {line}" for line in correction_lines(report.pass_rate, report.confidence)]
    panel = report.panel
    if panel is not None and panel.fleiss_kappa is not None:
        lines.append(
            f"- Fleiss' κ across {panel.raters} variants: {metric_text(panel.fleiss_kappa)} "
            f"({kappa_strength(panel.fleiss_kappa)})"
        )
    return "\n".join(lines) + "\n"


def log_calibration_report(
    report: CalibrationReport,
    *,
    labels: str | os.PathLike[str] | None = None,
    verdict: str | None = None,
    run_name: str | None = None,
    experiment: str | None = None,
    tracking_uri: str | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
    keep_bundle_at: str | os.PathLike[str] | None = None,
    options: RunOptions | None = None,
) -> LoggedRun:
    """Log a judge calibration as an MLflow run, as ``docevals calibrate`` does.

    ``labels`` (the human labels file) is fingerprinted as
    ``calibration.labels_sha256``; ``verdict`` is the outcome of a gate on the
    figures, when there was one. ``options`` holds the run settings in one value; the
    keywords given win over it. If logging fails and ``keep_bundle_at`` is given, the
    bundle is kept there for ``docevals log``.
    """
    from docevals_mlflow.tracking.assembly import assemble_calibration, log_assembled
    from docevals_mlflow.tracking.options import RunOptions

    chosen = (options or RunOptions()).merged(
        run_name=run_name,
        experiment=experiment,
        tracking_uri=tracking_uri,
        params=params,
        tags=tags,
        keep_bundle_at=keep_bundle_at,
    )
    labels_sha256 = sha256_file(os.fspath(labels)) if labels is not None else None
    return log_assembled(
        assemble_calibration(report, chosen, labels_sha256=labels_sha256, verdict=verdict)
    )


__all__ = [
    "HEADLINE_FIGURES",
    "HEADLINE_INTERVALS",
    "LEVELS",
    "calibration_summary",
    "headline_figures",
    "layout_calibration",
    "log_calibration_report",
    "ppi_metrics",
]
