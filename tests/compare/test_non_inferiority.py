"""Non-inferiority gates: verdicts, reasons, and where the comparison shows them."""

from __future__ import annotations

import numpy as np
import pytest

from docevals_mlflow.compare import compare_runs
from docevals_mlflow.compare.non_inferiority import (
    MIN_UNITS,
    non_inferiority_test,
    parse_margins,
)
from docevals_mlflow.compare.statistics import FIELD_METRICS, paired_comparison
from docevals_mlflow.errors import InputError
from tests.compare.synthetic import case_run, field_run, simulate_cells

METRICS = [*FIELD_METRICS, "pass_rate"]


def _cells(rng, documents, wrong_rate):
    return simulate_cells(rng, documents, [wrong_rate], leaves=4)[:, 0, :]


def test_margins_parse_and_refuse_nonsense() -> None:
    assert parse_margins(["f1=0.02", "recall=0"], METRICS) == {"f1": 0.02, "recall": 0.0}
    for spec in ("f1", "f1=abc", "f1=2", "f1=-0.1", "auc=0.01"):
        with pytest.raises(InputError, match="--non-inferiority"):
            parse_margins([spec], METRICS)


def test_an_equal_candidate_on_many_documents_is_non_inferior() -> None:
    rng = np.random.default_rng(1)
    base = _cells(rng, 600, 0.1)
    same = base.copy()
    test = non_inferiority_test(base, same, metric="f1", margin=0.02, resamples=500)
    assert test.passed
    assert test.verdict == "non-inferior"
    assert test.bound == pytest.approx(0.0)
    assert "clears the margin -0.0200" in test.reason
    # The bound is the lower end of the paired bootstrap's 90% interval (one-sided 95%).
    candidate = _cells(rng, 600, 0.1)
    test = non_inferiority_test(base, candidate, metric="f1", margin=0.05, resamples=500)
    reference = paired_comparison(base, candidate, metric="f1", resamples=500, confidence=0.9)
    assert test.bound == pytest.approx(float(reference.ci_low[0]))
    assert test.opposite == pytest.approx(float(reference.ci_high[0]))


def test_a_clear_regression_is_inferior_and_a_close_one_inconclusive() -> None:
    rng = np.random.default_rng(2)
    base = _cells(rng, 500, 0.05)
    worse = base.copy()
    moved = np.minimum(worse[:, 0], 1)
    worse[:, 0] -= moved
    worse[:, 3] += moved
    test = non_inferiority_test(base, worse, metric="recall", margin=0.02, resamples=500)
    assert test.verdict == "inferior"
    assert not test.passed
    assert "whole interval is beyond the margin" in test.reason
    slightly = base.copy()
    moved = np.minimum(slightly[:30, 0], 1)
    slightly[:30, 0] -= moved
    slightly[:30, 3] += moved
    test = non_inferiority_test(base, slightly, metric="recall", margin=0.015, resamples=500)
    assert test.verdict == "inconclusive"
    assert "interval crosses the margin" in test.reason


def test_too_few_documents_are_inconclusive_whatever_the_data_say() -> None:
    rng = np.random.default_rng(3)
    base = _cells(rng, MIN_UNITS - 1, 0.0)
    test = non_inferiority_test(base, base, metric="f1", margin=0.1, resamples=200)
    assert test.verdict == "inconclusive"
    assert f"{MIN_UNITS - 1} matched (at least {MIN_UNITS} needed)" in test.reason


def test_lower_is_better_metrics_use_the_upper_bound() -> None:
    rng = np.random.default_rng(4)
    base = _cells(rng, 400, 0.1)
    more_errors = base.copy()
    moved = np.minimum(more_errors[:, 0], 1)
    more_errors[:, 0] -= moved
    more_errors[:, 2] += moved
    test = non_inferiority_test(base, more_errors, metric="fdr", margin=0.02, resamples=500)
    assert test.verdict == "inferior"
    assert test.bound >= test.opposite
    assert "upper bound" in test.test


def test_pass_rates_are_tested_on_cases() -> None:
    base = np.array([1.0] * 40 + [0.0] * 10)
    test = non_inferiority_test(
        base, base.copy(), metric="pass_rate", margin=0.05, resamples=300, unit="case"
    )
    assert test.passed
    assert "over cases" in test.test


def test_compare_runs_reports_the_tests_in_every_rendering() -> None:
    rng = np.random.default_rng(5)
    cells = simulate_cells(rng, 200, [0.05] * 5)
    comparison = compare_runs(
        field_run("base", cells),
        field_run("cand", cells.copy()),
        resamples=300,
        non_inferiority={"f1": 0.02, "fdr": 0.02},
    )
    verdicts = [(test.metric, test.verdict) for test in comparison.non_inferiority]
    assert verdicts == [("f1", "non-inferior"), ("fdr", "non-inferior")]
    summary = comparison.summary()
    assert "non-inferiority f1 (margin 0.02): non-inferior. one-sided paired bootstrap" in summary
    markdown = comparison.to_markdown()
    assert "## Non-inferiority" in markdown
    assert "| cand | f1 | 0.02 |" in markdown
    html = comparison.to_html()
    assert "Non-inferiority" in html
    assert "inconclusive fails it" in html
    # Without the option nothing is added.
    plain = compare_runs(field_run("base", cells), field_run("cand", cells), resamples=200)
    assert plain.non_inferiority == ()
    assert "Non-inferiority" not in plain.to_markdown()


def test_metrics_the_runs_cannot_be_tested_on_are_refused() -> None:
    rng = np.random.default_rng(6)
    cells = simulate_cells(rng, 20, [0.1] * 5)
    with pytest.raises(InputError, match="not available for document runs"):
        compare_runs(
            field_run("a", cells), field_run("b", cells), non_inferiority={"pass_rate": 0.1}
        )
    with pytest.raises(InputError, match="not available"):
        compare_runs(
            field_run("a", cells), field_run("b", cells), non_inferiority={"macro_f1": 0.1}
        )
    verdicts = {(f"c{index}", "output"): "pass" for index in range(30)}
    comparison = compare_runs(
        case_run("a", verdicts),
        case_run("b", verdicts),
        resamples=200,
        non_inferiority={"pass_rate": 0.05},
    )
    (test,) = comparison.non_inferiority
    assert test.passed
    assert test.units == 30
