"""Per-level figures from the paired labels: agreement, Cohen's kappa with the judge's
unsure answers as categories of their own and on the decided subset, a confusion
matrix, precision/recall and intervals resampling cases (a case with all its
labels); for judge panels, Fleiss' kappa
across the variants' case verdicts and each variant's own figures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from docevals_mlflow.core.statistics import cohen_kappa, fleiss_kappa
from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings
from docevals_mlflow.core.statistics.rate_intervals import (
    RateInterval,
    agreement_intervals,
    rate_interval,
)
from docevals_mlflow.judges.calibration.matching import _Judged
from docevals_mlflow.judges.calibration.report import (
    CalibrationPair,
    ConfidenceInterval,
    LevelCalibration,
    LevelName,
    PanelCalibration,
    VariantCalibration,
)

CASE_ABSTENTIONS: tuple[str, ...] = ("uncertain", "not_applicable")
"""Case verdicts that decide nothing; the order is the confusion matrix's column order."""
CLAIM_ABSTENTIONS: tuple[str, ...] = ("not_verifiable", "ambiguous", "unanswered")
"""Claim answers that decide nothing; ``unanswered`` is a claim the judge was sent
but skipped."""
FLEISS_CATEGORIES: tuple[str, ...] = ("pass", "fail", "uncertain")


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _undefined_note(pairs: Sequence[CalibrationPair], what: str) -> str:
    shown = sorted({pair.human for pair in pairs} | {pair.judge for pair in pairs})
    return f"{what} is undefined: humans and judge used one category only ({', '.join(shown)})"


def _level_figures(
    level: LevelName,
    pairs: list[CalibrationPair],
    *,
    human_categories: tuple[str, ...],
    abstention_categories: tuple[str, ...],
    positive: str,
    resamples: int,
    seed: np.random.SeedSequence,
    confidence: float,
) -> LevelCalibration:
    abstaining = [pair for pair in pairs if pair.judge in abstention_categories]
    decided = [pair for pair in pairs if pair.judge not in abstention_categories]
    seen_abstentions = Counter(pair.judge for pair in abstaining)
    # Known categories first in a fixed order, so matrices line up across runs.
    judge_categories = [*human_categories]
    judge_categories += [name for name in abstention_categories if seen_abstentions[name]]
    judge_categories += sorted({pair.judge for pair in pairs} - set(judge_categories))
    confusion = {human: dict.fromkeys(judge_categories, 0) for human in human_categories}
    for pair in pairs:
        confusion[pair.human][pair.judge] += 1
    kappa = cohen_kappa([pair.human for pair in pairs], [pair.judge for pair in pairs])
    kappa_decided = cohen_kappa([pair.human for pair in decided], [pair.judge for pair in decided])
    notes = []
    if not pairs:
        notes.append(f"no labelled {level}: nothing to compare")
    elif kappa is None:
        notes.append(_undefined_note(pairs, "κ"))
    if kappa is not None and kappa_decided is None and decided:
        notes.append(_undefined_note(decided, "κ on the decided subset"))
    called = sum(pair.judge == positive for pair in pairs)
    labelled = sum(pair.human == positive for pair in pairs)
    hits = sum(pair.judge == positive and pair.human == positive for pair in pairs)
    figures = LevelCalibration(
        level=level,
        n=len(pairs),
        agreement=_ratio(sum(pair.agrees for pair in pairs), len(pairs)),
        kappa=kappa,
        decided_n=len(decided),
        decided_agreement=_ratio(sum(pair.agrees for pair in decided), len(decided)),
        kappa_decided=kappa_decided,
        abstentions=len(abstaining),
        abstention_rate=_ratio(len(abstaining), len(pairs)),
        abstention_counts=dict(seen_abstentions),
        positive=positive,
        precision=_ratio(hits, called),
        recall=_ratio(hits, labelled),
        human_categories=list(human_categories),
        judge_categories=judge_categories,
        confusion=confusion,
        notes=notes,
        pairs=pairs,
    )
    if level == "cases" and pairs:
        figures.judge_pass_rate = sum(pair.judge == "pass" for pair in pairs) / len(pairs)
        figures.human_pass_rate = sum(pair.human == "pass" for pair in pairs) / len(pairs)
    if pairs and resamples:
        _add_intervals(figures, kappa is not None, resamples, seed, confidence)
    return figures


def _add_intervals(
    figures: LevelCalibration,
    kappa_defined: bool,
    resamples: int,
    seed: np.random.SeedSequence,
    confidence: float,
) -> None:
    """Intervals of agreement and kappa (and at the case level of the judge's and the
    humans' pass rates) resampling cases, each case with all its pairs; a note when
    kappa was undefined in some resamples."""
    codes = {name: code for code, name in enumerate(figures.judge_categories)}
    clusters = [pair.case_id for pair in figures.pairs]
    agreement, kappa, defined = agreement_intervals(
        clusters,
        [codes[pair.human] for pair in figures.pairs],
        [codes[pair.judge] for pair in figures.pairs],
        len(figures.judge_categories),
        settings=IntervalSettings(resamples=resamples, confidence=confidence),
        rng=np.random.default_rng(seed),
    )
    figures.bootstrap_resamples = resamples
    figures.cases_resampled = agreement.cases
    figures.agreement_ci = _interval(agreement)
    figures.kappa_resamples = defined
    figures.kappa_ci = _interval(kappa)
    if agreement.low is None:
        figures.notes.append(f"no intervals: {agreement.reason}")
    # With no kappa at all, a note already says why; no second one per resample.
    elif kappa_defined and defined < resamples:
        figures.notes.append(
            f"κ was undefined in {resamples - defined} of {resamples} bootstrap "
            "resamples (one category only); its interval uses the rest"
        )
    if figures.level == "cases":
        judged = _per_case(figures.pairs, lambda pair: pair.judge == "pass")
        labelled = _per_case(figures.pairs, lambda pair: pair.human == "pass")
        figures.judge_pass_rate_ci = _interval(rate_interval(*judged, confidence=confidence))
        figures.human_pass_rate_ci = _interval(rate_interval(*labelled, confidence=confidence))


def _per_case(
    pairs: Sequence[CalibrationPair], success: Callable[[CalibrationPair], bool]
) -> tuple[list[int], list[int]]:
    """Per case id: how many of its pairs are a ``success``, and how many pairs."""
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for pair in pairs:
        totals[pair.case_id] += 1
        hits[pair.case_id] += success(pair)
    return [hits[case] for case in totals], list(totals.values())


def _interval(found: RateInterval) -> ConfidenceInterval | None:
    if found.low is None or found.high is None:
        return None
    return ConfidenceInterval(
        low=found.low,
        high=found.high,
        cases=found.cases,
        observations=found.observations,
        method=found.method,
    )


def _variant_figures(name: str, pairs: Sequence[tuple[str, str]]) -> VariantCalibration:
    decided = [(human, judge) for human, judge in pairs if judge not in CASE_ABSTENTIONS]
    return VariantCalibration(
        name=name,
        n=len(pairs),
        agreement=_ratio(sum(human == judge for human, judge in pairs), len(pairs)),
        kappa=cohen_kappa([human for human, _ in pairs], [judge for _, judge in pairs]),
        kappa_decided=cohen_kappa([human for human, _ in decided], [judge for _, judge in decided]),
        abstentions=len(pairs) - len(decided),
    )


def _panel_figures(
    units: Sequence[_Judged], variant_pairs: Mapping[str, list[tuple[str, str]]]
) -> PanelCalibration | None:
    panels = [unit for unit in units if unit.variants is not None]
    if not panels:
        return None
    names: list[str] = []
    for unit in panels:
        names.extend(name for name in unit.variants or {} if name not in names)
    notes = []
    sizes = sorted({len(unit.variants or {}) for unit in panels})
    rows: list[list[int]] = []
    folded = 0
    for unit in panels:
        folded += sum(
            verdict not in FLEISS_CATEGORIES for verdict in (unit.variants or {}).values()
        )
        votes = Counter(
            verdict if verdict in FLEISS_CATEGORIES else "uncertain"
            for verdict in (unit.variants or {}).values()
        )
        rows.append([votes[category] for category in FLEISS_CATEGORIES])
    category_counts = {
        category: sum(row[column] for row in rows)
        for column, category in enumerate(FLEISS_CATEGORIES)
    }
    kappa: float | None = None
    observed: float | None = None
    raters: int | None = sizes[0] if len(sizes) == 1 else None
    if raters is None:
        notes.append(
            "panels differ in size ("
            + ", ".join(str(size) for size in sizes)
            + " variants); Fleiss' κ needs the same number of ratings per case"
        )
    elif raters < 2:
        notes.append("a panel of one variant: Fleiss' κ needs at least two")
    else:
        kappa = fleiss_kappa(rows)
        agreeing = sum(count * count for row in rows for count in row) - len(rows) * raters
        observed = agreeing / (len(rows) * raters * (raters - 1))
        if kappa is None:
            used = [category for category, count in category_counts.items() if count]
            notes.append(f"Fleiss' κ is undefined: every variant verdict is {', '.join(used)}")
    if folded:
        notes.append(
            f"{folded} variant verdict(s) other than pass, fail, uncertain count as uncertain"
        )
    return PanelCalibration(
        metrics=sorted({unit.metric for unit in panels}),
        variants=names,
        cases=len(panels),
        raters=raters,
        category_counts=category_counts,
        observed_agreement=observed,
        fleiss_kappa=kappa,
        variant_calibration=[_variant_figures(name, variant_pairs.get(name, [])) for name in names],
        notes=notes,
    )
