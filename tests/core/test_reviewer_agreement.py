"""Reviewer agreement: Cohen, Fleiss and Krippendorff (nominal and interval) against
hand-computed values, an independent alpha written here (and the ``krippendorff``
package when installed), and properties of the estimates and their intervals."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.core.statistics.agreement import cohen_kappa, fleiss_kappa
from docevals_mlflow.core.statistics.reviewer_agreement import (
    AgreementReport,
    reviewer_agreement,
)


def one_field(units, field="$.f"):
    """Each unit its own document: ``[{"x": "a", "y": "b"}, ...]``."""
    return [{field: dict(unit)} for unit in units]


def test_cohen_worked_example():
    # 10 items, raters x and y: 4 both "y", 2 x=y/y=n, 3 both "n", 1 x=n/y=y.
    # p_o = 7/10. x: 6 y, 4 n; y: 5 y, 5 n. p_e = .6*.5 + .4*.5 = .5.
    # kappa = (.7 - .5) / (1 - .5) = 0.4.
    x = list("yyyyyynnnn")
    y = list("yyyynnnnny")
    report = reviewer_agreement(
        one_field({"x": a, "y": b} for a, b in zip(x, y, strict=True)), resamples=0
    )
    assert report.overall.cohen_kappa.value == pytest.approx(0.4)
    assert report.fields[0].cohen_kappa.value == pytest.approx(0.4)
    assert cohen_kappa(x, y) == pytest.approx(0.4)
    assert report.overall.observed_agreement == pytest.approx(0.7)
    assert (report.overall.units, report.overall.raters, report.overall.ratings) == (10, 2, 20)


FLEISS_UNITS = [("a", "a", "a"), ("a", "a", "b"), ("b", "b", "b"), ("a", "b", "b")]


def test_fleiss_and_nominal_alpha_worked_example():
    # Three raters, four units. Per unit the share of agreeing rater pairs
    # P_i = (sum n_ik^2 - 3) / 6: 1, 1/3, 1, 1/3, mean 2/3. Category totals 6 and 6
    # of 12 ratings: P_e = .5. Fleiss' kappa = (2/3 - 1/2) / (1/2) = 1/3.
    # Alpha: n = 12 pairable values; each mixed unit (2 a, 1 b) adds 2*1/(3-1) = 1 to
    # o_ab and to o_ba: 4 off-diagonal coincidences. n_a = n_b = 6, so
    # sum_{c != k} n_c n_k = 144 - 72 = 72 and alpha = 1 - (12 - 1) * 4 / 72 = 7/18.
    units = [dict(zip("xyz", unit, strict=True)) for unit in FLEISS_UNITS]
    report = reviewer_agreement(one_field(units), resamples=0)
    assert report.overall.fleiss_kappa.value == pytest.approx(1 / 3)
    assert fleiss_kappa([[3, 0], [2, 1], [0, 3], [1, 2]]) == pytest.approx(1 / 3)
    assert report.overall.alpha_nominal.value == pytest.approx(7 / 18)
    assert report.overall.cohen_kappa.value is None  # three raters
    assert report.fleiss_raters == 3


def test_nominal_alpha_with_missing_ratings_worked_example():
    # u1: a a -; u2: a b b; u3: - b b. n = 7 pairable values.
    # u1: o_aa += 2; u2: o_ab = o_ba = 1*2/2 = 1, o_bb += 2*1/2 = 1; u3: o_bb += 2.
    # Off-diagonal 2; n_a = 3, n_b = 4; 49 - 9 - 16 = 24; alpha = 1 - 6 * 2 / 24 = 0.5.
    units = [{"x": "a", "y": "a"}, {"x": "a", "y": "b", "z": "b"}, {"y": "b", "z": "b"}]
    report = reviewer_agreement(one_field(units), resamples=0)
    assert report.overall.alpha_nominal.value == pytest.approx(0.5)
    # Fleiss takes the most common count of raters (2: units 1 and 3) - both agree,
    # every rating in its unit's category: P = 1; totals a 2, b 2: P_e = .5; kappa 1.
    assert report.overall.fleiss_kappa.value == pytest.approx(1.0)
    assert report.overall.fleiss_kappa.units == 2


def test_interval_alpha_worked_example():
    # Units (1, 2), (3, 3), (5, 4). Observed: each unit adds sum_{i != j} (x_i - x_j)^2
    # / (m - 1): 2, 0, 2, total 4. Expected: over all 6 values, sum_{i,j} (x_i - x_j)^2
    # = 2 n sum x^2 - 2 (sum x)^2 = 2*6*64 - 2*18^2 = 120.
    # alpha = 1 - (n - 1) * 4 / 120 = 1 - 5 * 4 / 120 = 5/6.
    units = [(1, 2), (3, 3), (5, 4)]
    docs = one_field({"x": str(a), "y": str(b)} for a, b in units)
    numbers = one_field({"x": float(a), "y": float(b)} for a, b in units)
    report = reviewer_agreement(docs, numbers, resamples=0)
    assert report.overall.alpha_interval.value == pytest.approx(5 / 6)
    assert report.fields[0].alpha_interval.value == pytest.approx(5 / 6)
    assert report.overall.alpha_interval.units == 3


def naive_alpha(units: list[list[float | str]], interval: bool) -> float | None:
    """Krippendorff's alpha straight from the definition: a coincidence matrix, then
    1 - (n - 1) * sum o_ck d_ck / sum n_c n_k d_ck (written independently of ours)."""
    values = sorted({v for unit in units for v in unit}, key=str)

    def delta(c, k):
        return (float(c) - float(k)) ** 2 if interval else float(c != k)

    coincidence = {(c, k): 0.0 for c in values for k in values}
    for unit in units:
        if len(unit) < 2:
            continue
        for i, j in itertools.permutations(range(len(unit)), 2):
            coincidence[unit[i], unit[j]] += 1 / (len(unit) - 1)
    totals = {c: sum(coincidence[c, k] for k in values) for c in values}
    n = sum(totals.values())
    observed = sum(coincidence[c, k] * delta(c, k) for c in values for k in values)
    expected = sum(totals[c] * totals[k] * delta(c, k) for c in values for k in values)
    if expected == 0:
        return None
    return 1 - (n - 1) * observed / expected


ratings_table = st.lists(
    st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=3, max_size=3),
    min_size=2,
    max_size=12,
)


def _as_documents(table):
    rows = [{r: v for r, v in zip("xyz", row, strict=True) if v is not None} for row in table]
    docs = one_field({r: str(v) for r, v in row.items()} for row in rows)
    numbers = one_field({r: float(v) for r, v in row.items()} for row in rows)
    return rows, docs, numbers


@settings(max_examples=60, deadline=None)
@given(ratings_table)
def test_alpha_matches_an_independent_implementation(table):
    rows, docs, numbers = _as_documents(table)
    report = reviewer_agreement(docs, numbers, resamples=0)
    units = [list(row.values()) for row in rows]
    for name, interval in (("alpha_nominal", False), ("alpha_interval", True)):
        expected = naive_alpha(units, interval)
        got = getattr(report.overall, name).value
        if expected is None:
            assert got is None
        else:
            assert got == pytest.approx(expected, abs=1e-9)


def test_alpha_matches_the_krippendorff_package():
    krippendorff = pytest.importorskip("krippendorff")
    rng = random.Random(3)
    compared = 0
    for _ in range(20):
        table = [[rng.choice([None, 0, 1, 2, 5]) for _ in range(3)] for _ in range(15)]
        rows, docs, numbers = _as_documents(table)
        report = reviewer_agreement(docs, numbers, resamples=0)
        data = np.array([[np.nan if v is None else v for v in row] for row in table]).T
        pairable = sum(1 for row in rows if len(row) >= 2)
        if pairable == 0 or len({v for row in rows if len(row) >= 2 for v in row.values()}) < 2:
            continue
        for name, level in (("alpha_nominal", "nominal"), ("alpha_interval", "interval")):
            theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
            assert getattr(report.overall, name).value == pytest.approx(theirs, abs=1e-9)
            compared += 1
    assert compared >= 30


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=1, max_size=30))
def test_cohen_and_fleiss_equal_the_panel_statistics(pairs):
    report = reviewer_agreement(one_field({"x": a, "y": b} for a, b in pairs), resamples=0)
    x, y = zip(*pairs, strict=True)
    expected = cohen_kappa(list(x), list(y))
    got = report.overall.cohen_kappa.value
    assert got == pytest.approx(expected) if expected is not None else got is None
    table = [[(a == c) + (b == c) for c in "abc"] for a, b in pairs]
    expected = fleiss_kappa(table)
    got = report.overall.fleiss_kappa.value
    assert got == pytest.approx(expected) if expected is not None else got is None


documents = st.lists(
    st.dictionaries(
        st.sampled_from(["$.a", "$.b", "$.c"]),
        st.dictionaries(st.sampled_from(["ann", "bob", "cy"]), st.sampled_from("pqr"), max_size=3),
        max_size=3,
    ),
    min_size=1,
    max_size=15,
)


@settings(max_examples=40, deadline=None)
@given(documents, st.randoms(use_true_random=False))
def test_permutation_invariance(docs, rng):
    before = reviewer_agreement(docs, resamples=0)
    shuffled = list(docs)
    rng.shuffle(shuffled)
    names = dict(zip(["ann", "bob", "cy"], ["zed", "yan", "xi"], strict=True))
    labels = dict(zip("pqr", ["r1", "r2", "r3"], strict=True))
    renamed = [
        {path: {names[r]: labels[c] for r, c in rated.items()} for path, rated in doc.items()}
        for doc in shuffled
    ]
    after = reviewer_agreement(renamed, resamples=0)
    for name in ("cohen_kappa", "fleiss_kappa", "alpha_nominal"):
        first, second = getattr(before.overall, name).value, getattr(after.overall, name).value
        assert (first is None) == (second is None)
        if first is not None:
            assert first == pytest.approx(second)


@settings(max_examples=40, deadline=None)
@given(documents)
def test_perfect_agreement_is_one(docs):
    agreed = [
        {path: dict.fromkeys(rated, path[-1] + str(i % 2)) for path, rated in doc.items()}
        for i, doc in enumerate(docs)
    ]
    report = reviewer_agreement(agreed, resamples=50)
    for stat in (
        report.overall.cohen_kappa,
        report.overall.fleiss_kappa,
        report.overall.alpha_nominal,
    ):
        assert stat.value is None or stat.value == pytest.approx(1.0)
        if stat.value is not None and stat.low is not None:
            assert stat.low == pytest.approx(1.0)
            assert stat.high == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(documents, st.integers(0, 2**32 - 1))
def test_bootstrap_interval_contains_the_estimate_and_is_seeded(docs, seed):
    report = reviewer_agreement(docs, resamples=60, seed=seed)
    for row in [report.overall, *report.fields]:
        for name in ("cohen_kappa", "fleiss_kappa", "alpha_nominal", "alpha_interval"):
            stat = getattr(row, name)
            if stat.value is not None and stat.low is not None:
                assert stat.low <= stat.value <= stat.high
                assert stat.high <= 1.0 + 1e-9
    assert reviewer_agreement(docs, resamples=60, seed=seed) == report


def test_intervals_narrow_with_more_documents():
    rng = random.Random(1)

    def sample(count):
        docs = []
        for _ in range(count):
            truth = rng.choice("abcd")
            docs.append(
                {"$.f": {r: truth if rng.random() < 0.8 else rng.choice("abcd") for r in "xy"}}
            )
        return docs

    small = reviewer_agreement(sample(20), resamples=400).overall.cohen_kappa
    large = reviewer_agreement(sample(800), resamples=400).overall.cohen_kappa
    assert (large.high - large.low) < (small.high - small.low) / 3
    assert large.low < large.value < large.high


def test_counts_and_fields_and_json():
    docs = [
        {"$.a": {"x": "1", "y": "1"}, "$.b": {"x": "p"}},
        {"$.a": {"x": "1", "y": "2"}, "$.b": {"x": "p", "y": "q"}},
        {},
    ]
    report = reviewer_agreement(docs, resamples=100)
    assert [f.path for f in report.fields] == ["$.a", "$.b"]
    a, b = report.fields
    assert (a.documents, a.units, a.single_rated, a.raters) == (2, 2, 0, 2)
    assert (b.documents, b.units, b.single_rated) == (1, 1, 1)
    assert (report.documents, report.overall.documents, report.overall.units) == (3, 2, 3)
    assert report.raters == ["x", "y"]
    assert report.resamples == 100
    assert AgreementReport.model_validate_json(report.model_dump_json()) == report
    assert math.isclose(report.overall.observed_agreement, 1 / 3)


def test_nothing_to_measure():
    for docs in ([], [{}], [{"$.a": {"x": "1"}}]):
        report = reviewer_agreement(docs, resamples=10)
        assert report.overall.units == 0
        assert report.overall.alpha_nominal.value is None
