"""``compare_runs``: a baseline against one or more candidates, with honest statistics.

For each candidate the comparison says what changed (params, prompt and spec diffs,
judge panels), what moved (every logged metric, judge pass rates and votes, flipped
cases or documents) and whether it is real:

* field comparison runs: the chosen metric over all matched documents, per field
  and per class (when there are several), with a paired bootstrap interval and a
  paired randomisation test; the share of fully correct documents with the exact
  McNemar test on the documents that flipped;
* case and pipeline evaluations: the pass rate over all matched stages and per
  stage, with a paired bootstrap interval and the exact McNemar test.

Tests come in families (``overall``, ``field``, ``class``, ``stage``). Within a family
(across its units and across all candidates) Holm's method adjusts the p-values, and
a change is an improvement or a regression only when its adjusted p-value is below
``alpha``. With more than one candidate a leaderboard ranks every run on the chosen
metric over the documents (or cases) all runs share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docevals_mlflow.compare.align import (
    AlignedCases,
    AlignedDocuments,
    align_cases,
    align_documents,
)
from docevals_mlflow.compare.changes import changes_between
from docevals_mlflow.compare.deltas import case_flips, document_flips, judge_deltas, metric_deltas
from docevals_mlflow.compare.effects import adjust, case_effects, field_effects
from docevals_mlflow.compare.leaderboard import leaderboard
from docevals_mlflow.compare.non_inferiority import check_margins, pair_non_inferiority
from docevals_mlflow.compare.results import (
    CASE_METRIC,
    EFFECT_COLUMNS,
    FAMILIES,
    UNMATCHED_COLUMNS,
    Comparison,
    PairComparison,
    Settings,
)
from docevals_mlflow.compare.snapshot import RunSnapshot
from docevals_mlflow.compare.statistics import FIELD_METRICS, check_metric
from docevals_mlflow.errors import ConfigurationError, InputError

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_RESAMPLES = 2000


def _unmatched(
    documents: AlignedDocuments | None, cases: AlignedCases | None
) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    if documents is not None:
        rows += [("document", doc, None, "baseline") for doc in documents.baseline_only]
        rows += [("document", doc, None, "candidate") for doc in documents.candidate_only]
    if cases is not None:
        rows += [("case", case, stage, "baseline") for case, stage in cases.baseline_only]
        rows += [("case", case, stage, "candidate") for case, stage in cases.candidate_only]
    return rows


def _unit(snapshot: RunSnapshot) -> str:
    if snapshot.documents is not None:
        return "document"
    if snapshot.cases is not None:
        return "case"
    raise InputError(
        "the run has no per-document or per-case results to compare",
        source=f"run {snapshot.label} ({snapshot.run_id})",
        expected="a field comparison run (results/documents.parquet) or a case, pipeline "
        "or suite evaluation run (results/cases.parquet)",
    )


def _unmatched_note(unit: str, baseline_only: int, candidate_only: int) -> list[str]:
    if not baseline_only and not candidate_only:
        return []
    return [
        f"{baseline_only} {unit}(s) only in the baseline and {candidate_only} only in the "
        "candidate are left out of every paired figure (listed under unmatched)."
    ]


def _field_notes(baseline: RunSnapshot, candidate: RunSnapshot) -> list[str]:
    notes = []
    for side, snapshot in (("baseline", baseline), ("candidate", candidate)):
        if snapshot.fields is None:
            notes.append(
                f"The {side} run has no per-field rows (results/fields.parquet; logged with "
                "--no-rows?): fields are not compared."
            )
    if baseline.fields is not None and candidate.fields is not None:
        first, second = set(baseline.fields.field), set(candidate.fields.field)
        for side, only in (("baseline", first - second), ("candidate", second - first)):
            if only:
                shown = ", ".join(sorted(only)[:10]) + (" ..." if len(only) > 10 else "")
                notes.append(
                    f"{len(only)} field(s) only in the {side}, undefined in the other run and "
                    f"not tested: {shown}."
                )
    return notes


def _resolution_notes(frames: Sequence[pd.DataFrame], settings: Settings) -> list[str]:
    """Families too large for the randomisation test's resolution.

    With ``resamples`` sign flips no p-value falls below ``1/(resamples+1)``, and Holm
    needs the smallest of ``m`` p-values below ``alpha/m``.
    """
    notes = []
    for family in FAMILIES:
        tests = sum(
            int(((frame["family"] == family) & (frame["test"] == "randomisation")).sum())
            for frame in frames
        )
        if tests > 1 and 1 / (settings.resamples + 1) >= settings.alpha / tests:
            notes.append(
                f"The {family} family holds {tests} randomisation tests: with "
                f"{settings.resamples} resamples none can be significant after Holm's "
                f"correction; use at least {int(np.ceil(2 * tests / settings.alpha))} resamples."
            )
    return notes


def _compare_pair(
    baseline: RunSnapshot, candidate: RunSnapshot, settings: Settings
) -> PairComparison:
    import pandas as pd

    unit = _unit(baseline)
    if _unit(candidate) != unit:
        raise InputError(
            f"cannot compare a {unit} run with a {_unit(candidate)} run",
            source=f"runs {baseline.label} and {candidate.label}",
            expected="two field comparison runs, or two case/pipeline/suite evaluation runs",
        )
    if unit == "document":
        documents = align_documents(baseline, candidate)
        assert documents is not None
        rows = field_effects(documents, settings)
        flips = document_flips(documents)
        matched = len(documents.ids)
        unmatched = _unmatched(documents, None)
        notes = _unmatched_note(unit, len(documents.baseline_only), len(documents.candidate_only))
        notes += _field_notes(baseline, candidate)
    else:
        cases = align_cases(baseline, candidate)
        assert cases is not None
        rows = case_effects(cases, settings)
        flips = case_flips(cases, baseline, candidate)
        matched = len(cases.keys)
        unmatched = _unmatched(None, cases)
        notes = _unmatched_note(unit, len(cases.baseline_only), len(cases.candidate_only))
    changes = changes_between(baseline, candidate)
    if changes.datasets:
        # Paired figures assume both runs were scored against the same truth.
        notes.insert(
            0,
            "The runs were evaluated against different ground truth ("
            + ", ".join(entry.name for entry in changes.datasets)
            + "): a delta mixes the change of the system with the change of the answers.",
        )
    return PairComparison(
        baseline=baseline,
        candidate=candidate,
        unit=unit,
        matched=matched,
        changes=changes,
        metrics=metric_deltas(baseline, candidate),
        effects=pd.DataFrame.from_records(rows, columns=EFFECT_COLUMNS),
        flips=flips,
        judges=judge_deltas(baseline, candidate),
        unmatched=pd.DataFrame.from_records(unmatched, columns=UNMATCHED_COLUMNS),
        notes=tuple(notes),
    )


def _settings(
    baseline: RunSnapshot,
    metric: str | None,
    *,
    alpha: float,
    seed: int,
    resamples: int,
    confidence: float,
) -> Settings:
    """The checked settings of a comparison; the metric follows the baseline's kind."""
    if not 0.0 < alpha < 1.0:
        raise ConfigurationError(f"alpha {alpha} is outside (0, 1)")
    if not 0.0 < confidence < 1.0:
        raise ConfigurationError(f"confidence {confidence} is outside (0, 1)")
    if resamples < 100:
        raise ConfigurationError(
            f"resamples {resamples} is too few for intervals and tests", expected="at least 100"
        )
    if _unit(baseline) == "document":
        chosen = check_metric(metric or "f1")
    else:
        if metric not in (None, CASE_METRIC):
            raise ConfigurationError(
                f"case evaluations are compared on {CASE_METRIC}, not {metric!r}",
                expected=f"{CASE_METRIC} (or one of {', '.join(FIELD_METRICS)} for field runs)",
            )
        chosen = CASE_METRIC
    return Settings(
        metric=chosen, alpha=alpha, seed=seed, resamples=resamples, confidence=confidence
    )


def compare_runs(
    baseline: RunSnapshot,
    *candidates: RunSnapshot,
    metric: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    non_inferiority: Mapping[str, float] | None = None,
) -> Comparison:
    """Compare ``candidates`` with ``baseline`` (see the module docstring).

    Args:
        baseline: the reference run.
        candidates: one or more runs of the same kind (field comparisons, or case,
            pipeline and suite evaluations).
        metric: what to test and rank on: for field runs one of ``precision``,
            ``recall``, ``f1`` (default), ``accuracy``, ``far``, ``fdr``,
            ``macro_f1``; case evaluations are compared on ``pass_rate``.
        alpha: family-wise significance level (after Holm's adjustment).
        seed: seeds the bootstrap and the randomisation test; equal inputs and seed
            give equal results.
        resamples: bootstrap resamples and random sign flips per test.
        confidence: level of the bootstrap intervals.
        non_inferiority: ``{metric: margin}``: test, one-sided at ``alpha``, that each
            candidate is not worse than the baseline by more than ``margin`` (see
            :mod:`~docevals_mlflow.compare.non_inferiority`).

    Raises:
        ConfigurationError: an unknown metric, or alpha, confidence or resamples out
            of range.
        InputError: no candidate, or runs without comparable per-document or
            per-case results, or runs of different kinds.
    """
    if not candidates:
        raise InputError("nothing to compare", expected="at least one candidate run")
    settings = _settings(
        baseline, metric, alpha=alpha, seed=seed, resamples=resamples, confidence=confidence
    )
    if non_inferiority:
        check_margins(non_inferiority, _unit(baseline))
    pairs = [_compare_pair(baseline, candidate, settings) for candidate in candidates]
    frames = [pair.effects for pair in pairs]
    adjust(frames, settings)
    board = leaderboard(baseline, pairs, settings) if len(pairs) > 1 else None
    tests = []
    for pair in pairs if non_inferiority else ():
        tests += pair_non_inferiority(pair, non_inferiority or {}, settings)
    return Comparison(
        baseline=baseline,
        pairs=tuple(pairs),
        settings=settings,
        leaderboard=board,
        notes=tuple(_resolution_notes(frames, settings)),
        non_inferiority=tuple(tests),
    )
