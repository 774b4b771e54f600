"""Agreement between human reviewers, per field path and overall, with bootstrap
intervals that resample documents.

The input is, per document, each field path's ratings by rater: a category (any
hashable; equal categories agree) and, where the answer is a number, its value. A
*unit* is one field of one document rated by at least two raters; a field rated by
one rater is counted but cannot show agreement.

* **Cohen's kappa**: only when exactly two raters rated all the units (the raters
  are then fixed people, as Cohen's kappa assumes); units both rated.
* **Fleiss' kappa**: the units rated by the most common number of raters ``m`` (the
  statistic needs the same number of ratings per unit); ``m`` is chosen once, over
  all fields, so that the overall value pools the fields' units.
* **Krippendorff's alpha, nominal**: every unit, whatever its number of raters.
* **Krippendorff's alpha, interval**: the units with at least two numeric ratings
  (other ratings left out); a field's value is reported when any unit has them. The
  overall value is the fields' interval alphas weighted by their pairable values,
  since numbers of different fields (an amount, a quantity) are not on one scale.

Categories belong to a field: two fields never share one, so pooling fields never
makes their values agree by chance. Each statistic is a ratio of sums over
documents, so a bootstrap resample is a row of document weights (see
:mod:`.intervals`); the point estimate is the same formula with every weight 1.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
from pydantic import Field

from docevals_mlflow.core.model import DocEvalsModel, FrozenModel
from docevals_mlflow.core.statistics.intervals import (
    FloatArray,
    bootstrap_weights,
    percentile_interval,
    resample_batches,
)
from docevals_mlflow.core.statistics.quadratic_terms import Counts, IntArray, Quadratic, joined

Ratings = Mapping[str, Mapping[str, Hashable]]
"""One document: field path → rater → category."""
Numbers = Mapping[str, Mapping[str, float]]
"""One document: field path → rater → the numeric value of the rating."""

STATISTICS = ("cohen_kappa", "fleiss_kappa", "alpha_nominal", "alpha_interval")
OVERALL = "overall"


class AgreementStat(FrozenModel):
    """One statistic with its bootstrap interval (``None`` where undefined)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    units: int = 0
    """The units the statistic used."""


class FieldAgreement(FrozenModel):
    """Agreement on one field path (or ``overall``)."""

    path: str
    documents: int
    """Documents with at least one unit here."""
    units: int
    """Fields of documents rated by two raters or more."""
    single_rated: int
    """Fields of documents rated by one rater (no agreement to measure)."""
    raters: int
    ratings: int
    observed_agreement: float | None = None
    """Share of units on which every rater gave the same category."""
    cohen_kappa: AgreementStat
    fleiss_kappa: AgreementStat
    alpha_nominal: AgreementStat
    alpha_interval: AgreementStat


class AgreementReport(DocEvalsModel):
    """Reviewer agreement over a set of documents (JSON-able)."""

    documents: int
    raters: list[str]
    fleiss_raters: int | None = None
    """The number of raters per unit Fleiss' kappa used."""
    resamples: int
    seed: int
    confidence: float
    overall: FieldAgreement
    fields: list[FieldAgreement] = Field(default_factory=list)


# Per document sums of one field: Cohen (units, agreeing), Fleiss (units, sum of
# squared counts), nominal alpha (pairable values, off-diagonal coincidences),
# interval alpha (pairable values, observed squared differences, sum, sum of
# squares), and units where every rater agreed.
_C_N, _C_AGREE, _F_N, _F_SQUARES, _A_N, _A_OFF, _I_N, _I_OBSERVED, _I_SUM, _I_SQUARES, _SAME = (
    range(11)
)
_COLUMNS = 11


class _Field:
    """One field path's units, and its sums per document once prepared."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.units: list[tuple[int, Mapping[str, Hashable]]] = []
        self.numbers: list[tuple[int, list[float]]] = []
        self.raters: set[str] = set()
        self.single = 0
        self.width = 1

    def prepare(
        self,
        dense: FloatArray,
        counts: dict[str, list[Counts]],
        offset: int,
        pair: tuple[str, str] | None,
        m: int,
    ) -> None:
        """Fill this field's per-document sums (``dense``: documents x columns) and
        its category counts (columns ``offset`` onwards of the shared matrices)."""
        if self.units:
            self._nominal(dense, counts, offset, pair, m)
        if self.numbers:
            # Alpha is translation invariant; centring keeps the sums of squares exact.
            centre = float(np.mean([x for _, values in self.numbers for x in values]))
            for doc, values in self.numbers:
                x = np.asarray(values, dtype=np.float64) - centre
                k, total, square = len(x), float(x.sum()), float((x * x).sum())
                dense[doc, _I_N] += k
                dense[doc, _I_OBSERVED] += (2 * k * square - 2 * total * total) / (k - 1)
                dense[doc, _I_SUM] += total
                dense[doc, _I_SQUARES] += square

    def _nominal(
        self,
        dense: FloatArray,
        counts: dict[str, list[Counts]],
        offset: int,
        pair: tuple[str, str] | None,
        m: int,
    ) -> None:
        # Every rating at once: its unit, its category (numbered per field).
        ids: dict[Hashable, int] = {}
        sizes = np.fromiter((len(rated) for _, rated in self.units), np.int64)
        flat = np.fromiter(
            (ids.setdefault(c, len(ids)) for _, rated in self.units for c in rated.values()),
            np.int64,
            int(sizes.sum()),
        )
        docs = np.fromiter((doc for doc, _ in self.units), np.int64, len(self.units))
        self.width = width = max(len(ids), 1)
        # Each unit's count of each category it holds (units x categories, sparse).
        cells, n = np.unique(
            np.repeat(np.arange(len(sizes)), sizes) * width + flat, return_counts=True
        )
        unit, category, n = cells // width, cells % width + offset, n.astype(np.float64)
        squares = np.bincount(unit, weights=n * n, minlength=len(sizes))
        k = sizes.astype(np.float64)
        if pair is not None:
            both = [
                (doc, ids[rated[pair[0]]] + offset, ids[rated[pair[1]]] + offset)
                for doc, rated in self.units
                if pair[0] in rated and pair[1] in rated
            ]
            cohen = np.asarray(both, dtype=np.int64).reshape(-1, 3)
            _add(dense, _C_N, cohen[:, 0], np.ones(len(both)))
            _add(dense, _C_AGREE, cohen[:, 0], (cohen[:, 1] == cohen[:, 2]).astype(np.float64))
            counts["a"].append((cohen[:, 0], cohen[:, 1], np.ones(len(both))))
            counts["b"].append((cohen[:, 0], cohen[:, 2], np.ones(len(both))))
        fleiss = sizes == m
        _add(dense, _F_N, docs[fleiss], np.ones(int(fleiss.sum())))
        _add(dense, _F_SQUARES, docs[fleiss], squares[fleiss])
        kept = fleiss[unit]
        counts["t"].append((docs[unit][kept], category[kept], n[kept]))
        _add(dense, _A_N, docs, k)
        _add(dense, _A_OFF, docs, (k * k - squares) / (k - 1))
        _add(dense, _SAME, docs, (np.bincount(unit, minlength=len(sizes)) == 1) * 1.0)
        counts["n"].append((docs[unit], category, n))


def _add(dense: FloatArray, column: int, docs: IntArray, values: FloatArray) -> None:
    """Add ``values`` to the documents' (``docs``) rows of one column of ``dense``."""
    dense[:, column] += np.bincount(docs, weights=values, minlength=dense.shape[0])


class _Tables:
    """Every field's sums per document (``documents x fields x columns``) and the
    category counts of all fields side by side, so a batch of resamples costs a few
    matrix products whatever the number of fields.

    The chance terms are quadratic: ``sum_k (w . a_k) (w . b_k)`` over categories
    ``k``. A category seen in one document only (most typed values) contributes
    ``w_d^2 a_dk b_dk``, one column per field; only categories shared by documents
    need a column of their own.
    """

    def __init__(
        self, fields: list[_Field], documents: int, pair: tuple[str, str] | None, m: int
    ) -> None:
        self.m = m
        self.dense = np.zeros((documents, len(fields), _COLUMNS))
        counts: dict[str, list[Counts]] = {k: [] for k in "abtn"}
        owner: list[int] = []
        for index, field in enumerate(fields):
            offset = len(owner)
            field.prepare(self.dense[:, index, :], counts, offset, pair, m)
            owner.extend([index] * field.width)
        self.flat = self.dense.reshape(documents, len(fields) * _COLUMNS)
        shape = (documents, len(fields))
        owners = np.asarray(owner, dtype=np.int64)
        table = {k: joined(parts) for k, parts in counts.items()}
        self.terms = {
            "chance": Quadratic(table["a"], table["b"], owners, shape),
            "totals2": Quadratic(table["t"], None, owners, shape),
            "marginals2": Quadratic(table["n"], None, owners, shape),
        }

    def sums(self, weights: FloatArray) -> dict[str, FloatArray]:
        """Per field, its sums under each row of document weights (``b x F ...``)."""
        dense = (weights @ self.flat).reshape(weights.shape[0], -1, _COLUMNS)
        found = {name: term(weights) for name, term in self.terms.items()}
        return {"dense": dense, **found}


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    out = np.full(numerator.shape, np.nan)
    ok = np.abs(denominator) > 1e-12
    out[ok] = numerator[ok] / denominator[ok]
    return out


def _nominal(sums: dict[str, FloatArray], m: int) -> FloatArray:
    """Cohen, Fleiss and nominal alpha from sums (any leading shape; last axis 3)."""
    d = sums["dense"]
    n, agree, chance = d[..., _C_N], d[..., _C_AGREE], sums["chance"]
    cohen = _ratio(n * agree - chance, n * n - chance)
    ratings = d[..., _F_N] * m
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = (d[..., _F_SQUARES] - ratings) / (ratings * max(m - 1, 1))
        expected = sums["totals2"] / (ratings * ratings)
    fleiss = _ratio(observed - expected, 1 - expected)
    fleiss[ratings == 0] = np.nan
    values = d[..., _A_N]
    alpha = 1 - _ratio((values - 1) * d[..., _A_OFF], values * values - sums["marginals2"])
    return np.stack([cohen, fleiss, alpha], axis=-1)


def _interval(dense: FloatArray) -> FloatArray:
    n, observed = dense[..., _I_N], dense[..., _I_OBSERVED]
    spread = 2 * n * dense[..., _I_SQUARES] - 2 * dense[..., _I_SUM] ** 2
    return 1 - _ratio((n - 1) * observed, spread)


def _statistics(weights: FloatArray, tables: _Tables) -> FloatArray:
    """``b x (fields + 1) x 4``: each field's statistics, then the overall ones."""
    fields = tables.dense.shape[1]
    out = np.full((weights.shape[0], fields + 1, len(STATISTICS)), np.nan)
    if not fields:
        return out
    sums = tables.sums(weights)
    out[:, :-1, :3] = _nominal(sums, tables.m)
    interval = _interval(sums["dense"])
    out[:, :-1, 3] = interval
    # Fields are pooled by adding their sums (their categories never coincide).
    out[:, -1, :3] = _nominal({k: v.sum(axis=1) for k, v in sums.items()}, tables.m)
    mass = np.where(np.isnan(interval), 0.0, sums["dense"][..., _I_N])
    out[:, -1, 3] = _ratio((mass * np.nan_to_num(interval)).sum(axis=1), mass.sum(axis=1))
    return out


def reviewer_agreement(
    documents: Sequence[Ratings],
    numbers: Sequence[Numbers] | None = None,
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AgreementReport:
    """Agreement of raters per field path and overall, with bootstrap intervals.

    Args:
        documents: per document, field path → rater → category.
        numbers: per document (same order), field path → rater → number, for the
            ratings that are numbers (interval alpha); leave out for none.
        resamples: bootstrap resamples of the documents (0: no intervals).
        seed: the bootstrap's seed (equal inputs and seed give equal intervals).
        confidence: the intervals' level.
    """
    fields: dict[str, _Field] = {}
    for doc, rated in enumerate(documents):
        numeric_paths = numbers[doc] if numbers is not None else {}
        for path, by_rater in rated.items():
            field = fields.get(path)
            if field is None:
                field = fields[path] = _Field(path)
            if len(by_rater) >= 2:
                field.units.append((doc, by_rater))
                field.raters.update(by_rater)
            elif by_rater:
                field.single += 1
            numeric = numeric_paths.get(path)
            if numeric:
                values = [float(numeric[r]) for r in by_rater if r in numeric]
                if len(values) >= 2:
                    field.numbers.append((doc, values))
    raters = set().union(*(f.raters for f in fields.values()))
    ordered = [fields[p] for p in sorted(fields)]
    sizes = Counter(len(rated) for f in ordered for _, rated in f.units)
    m = max(sizes, key=lambda k: (sizes[k], k)) if sizes else 2
    pair = (min(raters), max(raters)) if len(raters) == 2 else None
    tables = _Tables(ordered, len(documents), pair, m)
    point = _statistics(np.ones((1, len(documents))), tables)[0]
    low, high = _bootstrap(tables, len(ordered), len(documents), resamples, seed, confidence)
    totals = tables.dense.sum(axis=0)
    summaries = [
        _summary(f.path, [f], totals[i], point[i], low[i], high[i]) for i, f in enumerate(ordered)
    ]
    return AgreementReport(
        documents=len(documents),
        raters=sorted(raters),
        fleiss_raters=m if sizes else None,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        overall=_summary(OVERALL, ordered, totals.sum(axis=0), point[-1], low[-1], high[-1]),
        fields=summaries,
    )


def _bootstrap(
    tables: _Tables, fields: int, documents: int, resamples: int, seed: int, confidence: float
) -> tuple[FloatArray, FloatArray]:
    shape = (fields + 1, len(STATISTICS))
    if resamples <= 0 or documents == 0:
        return np.full(shape, np.nan), np.full(shape, np.nan)
    rng = np.random.default_rng(seed)
    draws = [
        _statistics(bootstrap_weights(rng, size, documents), tables)
        for size in resample_batches(resamples, documents)
    ]
    flat = np.concatenate(draws).reshape(resamples, -1)
    low, high = percentile_interval(flat, confidence)
    return low.reshape(shape), high.reshape(shape)


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _summary(
    path: str,
    fields: list[_Field],
    dense: FloatArray,
    point: FloatArray,
    low: FloatArray,
    high: FloatArray,
) -> FieldAgreement:
    units = sum(len(f.units) for f in fields)
    # A field has one unit per document at most.
    docs = (
        len(fields[0].units) if len(fields) == 1 else len({d for f in fields for d, _ in f.units})
    )
    counts = (dense[_C_N], dense[_F_N], units)
    stats = {}
    for index, name in enumerate(STATISTICS):
        value = _number(point[index])
        lo, hi = _number(low[index]), _number(high[index])
        if value is not None and lo is not None and hi is not None:
            # A percentile interval can miss the estimate with very few documents.
            lo, hi = min(lo, value), max(hi, value)
        used = int(counts[index]) if index < 3 else sum(len(f.numbers) for f in fields)
        stats[name] = AgreementStat(value=value, low=lo, high=hi, units=used)
    return FieldAgreement(
        path=path,
        documents=docs,
        units=units,
        single_rated=sum(f.single for f in fields),
        raters=len(set().union(*(f.raters for f in fields))),
        ratings=int(dense[_A_N]),
        observed_agreement=float(dense[_SAME] / units) if units else None,
        **stats,
    )
