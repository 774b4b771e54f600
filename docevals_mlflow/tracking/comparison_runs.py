"""A comparison logged as an MLflow run (``docevals.kind=comparison``).

* params: ``compare.baseline_run_id``, ``compare.candidate_run_ids``, ``compare.metric``,
  ``compare.alpha``, ``compare.seed``, ``compare.resamples``, ``compare.confidence``;
* tags: ``docevals.kind=comparison``, ``docevals.compare.baseline``,
  ``docevals.compare.candidates``, ``docevals.compare.runs`` (every compared run id,
  comma separated), ``docevals.verdict`` (``fail`` on a significant regression or a
  non-inferiority test not passed, else ``pass``), per non-inferiority test
  ``docevals.noninferiority.<candidate>.<metric>`` (``non-inferior``, ``inferior`` or
  ``inconclusive``) and the Markdown summary as ``mlflow.note.content``;
* metrics: ``compare/<candidate>/{matched,regressions,improvements,flips_fixed,
  flips_broken}``, per tested effect
  ``compare/<candidate>/<family>/<unit>/{delta,ci_low,ci_high,p_adjusted}`` and per
  non-inferiority test ``compare/<candidate>/noninferiority/<metric>/{passed,delta,
  bound,margin,units}`` (``passed`` 1 only for ``non-inferior``, the gate's own rule:
  ``inferior`` and ``inconclusive`` are 0, the tag tells them apart);
* artifacts: ``comparison/comparison.md``, ``comparison/comparison.html``,
  ``comparison/<table>.csv``, ``comparison/changes.json`` and, with non-inferiority
  tests, ``comparison/non_inferiority.json`` (each test's figures, verdict, reason and
  its printed line).

Does not import mlflow itself; :func:`log_comparison` logs through
:func:`~docevals_mlflow.tracking.runs.log_bundle`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from docevals_mlflow._version import __version__
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.keys import KeyMap, clean_segment, legal_key, template_segment

if TYPE_CHECKING:
    from docevals_mlflow.compare.results import Comparison
    from docevals_mlflow.tracking.options import RunOptions
    from docevals_mlflow.tracking.runs import LoggedRun

ARTIFACT_FOLDER = "comparison"


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def layout_comparison(writer: BundleWriter, comparison: Comparison) -> KeyMap:
    """Fill ``writer`` with a comparison (see the module docstring)."""
    from docevals_mlflow.compare.markdown import note_markdown

    keys = KeyMap()
    settings = comparison.settings
    baseline = comparison.baseline
    candidates = comparison.candidates
    writer.param("docevals.version", __version__)
    writer.param("compare.baseline_run_id", baseline.run_id)
    writer.param("compare.candidate_run_ids", ",".join(run.run_id for run in candidates))
    writer.param("compare.metric", settings.metric)
    writer.param("compare.alpha", settings.alpha)
    writer.param("compare.seed", settings.seed)
    writer.param("compare.resamples", settings.resamples)
    writer.param("compare.confidence", settings.confidence)

    writer.tag("docevals.kind", "comparison")
    writer.tag("docevals.compare.baseline", baseline.run_id)
    writer.tag("docevals.compare.candidates", ",".join(run.run_id for run in candidates))
    writer.tag(
        "docevals.compare.runs", ",".join([baseline.run_id, *(run.run_id for run in candidates)])
    )
    # A non-inferiority test is a gate the user asked for: not shown is a failure.
    gated = any(not test.passed for test in comparison.non_inferiority)
    writer.tag("docevals.verdict", "fail" if comparison.has_regression or gated else "pass")
    writer.tag("mlflow.note.content", note_markdown(comparison))

    for pair in comparison.pairs:
        candidate = keys.named("candidate", pair.candidate.label)
        prefix = f"compare/{candidate}"
        writer.metric(legal_key(f"{prefix}/matched"), pair.matched)
        writer.metric(legal_key(f"{prefix}/regressions"), len(pair.regressions))
        writer.metric(legal_key(f"{prefix}/improvements"), len(pair.improvements))
        flips = pair.flips
        writer.metric(legal_key(f"{prefix}/flips_fixed"), int((flips["change"] == "fixed").sum()))
        writer.metric(legal_key(f"{prefix}/flips_broken"), int((flips["change"] == "broken").sum()))
        for _, row in pair.effects.iterrows():
            family = str(row["family"])
            source = f"{pair.candidate.label}: {family} {row['unit']}"
            cleaned = (
                template_segment(str(row["unit"]))
                if family == "field"
                else clean_segment(str(row["unit"]))
            )
            unit = keys.segment(f"{candidate}/{family}", source, cleaned)
            for name in ("delta", "ci_low", "ci_high", "p_adjusted"):
                writer.metric(legal_key(f"{prefix}/{family}/{unit}/{name}"), _finite(row[name]))

    _non_inferiority(writer, comparison, keys)
    writer.text(f"{ARTIFACT_FOLDER}/comparison.md", comparison.to_markdown())
    writer.text(f"{ARTIFACT_FOLDER}/comparison.html", comparison.to_html())
    for name, frame in comparison.tables().items():
        writer.text(f"{ARTIFACT_FOLDER}/{name}.csv", frame.to_csv(index=False))
    writer.json(
        f"{ARTIFACT_FOLDER}/changes.json",
        {pair.candidate.run_id: pair.changes.model_dump(mode="json") for pair in comparison.pairs},
    )
    writer.json("metrics_index.json", keys.index())
    return keys


def _non_inferiority(writer: BundleWriter, comparison: Comparison, keys: KeyMap) -> None:
    """Each non-inferiority test's verdict (a tag), figures (metrics) and line (JSON)."""
    entries = []
    for test in comparison.non_inferiority:
        candidate = keys.named("candidate", test.candidate)
        metric = clean_segment(test.metric)
        writer.tag(legal_key(f"docevals.noninferiority.{candidate}.{metric}"), test.verdict)
        prefix = f"compare/{candidate}/noninferiority/{metric}"
        writer.metric(legal_key(f"{prefix}/passed"), int(test.passed))
        for name, value in (
            ("delta", test.delta),
            ("bound", test.bound),
            ("margin", test.margin),
            ("units", test.units),
        ):
            writer.metric(legal_key(f"{prefix}/{name}"), _finite(value))
        entries.append(
            {
                "candidate": test.candidate,
                "metric": test.metric,
                "verdict": test.verdict,
                "passed": test.passed,
                "margin": test.margin,
                "alpha": test.alpha,
                "test": test.test,
                "unit": test.unit,
                "units": test.units,
                "baseline": _finite(test.baseline),
                "candidate_value": _finite(test.candidate_value),
                "delta": _finite(test.delta),
                "bound": _finite(test.bound),
                "reason": test.reason,
                "text": test.text(),
            }
        )
    if entries:
        writer.json(f"{ARTIFACT_FOLDER}/non_inferiority.json", entries)


def log_comparison(
    comparison: Comparison,
    *,
    run_name: str | None = None,
    experiment: str | None = None,
    tracking_uri: str | None = None,
    keep_bundle_at: str | os.PathLike[str] | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
    options: RunOptions | None = None,
) -> LoggedRun:
    """Log ``comparison`` as a run of kind ``comparison``.

    The experiment defaults to the baseline's (so the comparison sits next to the
    runs it compares) and the run name to ``compare <candidate> vs <baseline>``
    (:func:`~docevals_mlflow.tracking.assembly.assemble_comparison`, as ``docevals
    compare`` logs it). ``options`` holds the run settings in one value; the
    keywords given win over it. If logging fails and ``keep_bundle_at`` is given, the
    bundle is kept there for ``docevals log``.
    """
    from docevals_mlflow.tracking.assembly import assemble_comparison, log_assembled
    from docevals_mlflow.tracking.options import RunOptions

    chosen = (options or RunOptions()).merged(
        run_name=run_name,
        experiment=experiment,
        tracking_uri=tracking_uri,
        keep_bundle_at=keep_bundle_at,
        params=params,
        tags=tags,
    )
    return log_assembled(assemble_comparison(comparison, chosen))
