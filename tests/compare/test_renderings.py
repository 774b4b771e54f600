"""Text, Markdown and HTML renderings of a comparison say why an interval that
excludes 0 is still not significant (multiplicity, sample size)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from docevals_mlflow.compare import Comparison, compare_runs
from docevals_mlflow.compare.text import (
    NOT_SIGNIFICANT_NOTE,
    headline_text,
    holm_tests,
    result_text,
    why_not_significant,
)
from tests.compare.synthetic import field_run, simulate_cells

RATES = [0.05, 0.05, 0.05, 0.10, 0.05]


@pytest.fixture
def comparison() -> Comparison:
    rng = np.random.default_rng(11)
    baseline = field_run("v1", simulate_cells(rng, 60, RATES))
    candidate = field_run("v2", simulate_cells(rng, 60, RATES))
    return compare_runs(baseline, candidate, resamples=200)


def set_headline(comparison: Comparison, **values: Any) -> None:
    """Give the overall headline effect the figures of the issue's example."""
    (pair,) = comparison.pairs
    effects = pair.effects
    index = effects.index[effects["family"] == "overall"][0]
    for name, value in values.items():
        effects.loc[index, name] = value


def row(**values: Any) -> dict[str, Any]:
    base = {
        "direction": "none",
        "ci_low": 0.018,
        "ci_high": 0.117,
        "p_value": 0.021,
        "p_adjusted": 0.241,
        "n": 24,
        "test": "randomisation",
    }
    return {**base, **values}


# --------------------------------------------------------------------------- phrase


def test_multiplicity_is_named_with_the_number_of_tests() -> None:
    phrase = why_not_significant(row(), tests=12, alpha=0.05)
    assert phrase == (
        "not significant: p 0.021 becomes 0.241 after Holm's correction over 12 tests; "
        "the interval is a bootstrap percentile interval, not adjusted for multiplicity"
    )
    assert result_text(row(), tests=12, alpha=0.05) == "– (Holm over 12 tests)"


def test_sample_size_when_p_was_not_small_even_before_holm() -> None:
    phrase = why_not_significant(row(p_value=0.08, p_adjusted=0.5), tests=3, alpha=0.05)
    assert phrase.startswith("not significant: randomisation test p 0.08 ≥ α 0.05 at n = 24")
    assert "unadjusted" in phrase
    assert result_text(row(p_value=0.08), tests=3, alpha=0.05) == "– (p ≥ α at n = 24)"


@pytest.mark.parametrize(
    "values",
    [
        {"ci_low": -0.01},  # the interval includes 0: nothing to explain
        {"direction": "improvement", "p_adjusted": 0.01},  # significant
        {"p_adjusted": float("nan")},  # not tested
    ],
)
def test_no_phrase_when_nothing_needs_explaining(values: dict[str, Any]) -> None:
    assert why_not_significant(row(**values), tests=4, alpha=0.05) == ""


# --------------------------------------------------------------------------- renderings


def test_holm_tests_counts_each_family(comparison: Comparison) -> None:
    tests = holm_tests(comparison)
    assert tests["field"] == 5
    assert tests["overall"] == 2


def test_every_rendering_explains_the_issue_example(comparison: Comparison) -> None:
    set_headline(
        comparison, delta=0.06, ci_low=0.018, ci_high=0.117, p_value=0.021, p_adjusted=0.241
    )
    (pair,) = comparison.pairs
    explained = "p 0.021 becomes 0.241 after Holm's correction over 2 tests"
    # Before, the headline ended with the bare dash after "Holm p 0.241)".
    headline = headline_text(pair, comparison.settings.confidence, comparison=comparison)
    assert "CI [+0.0180, +0.1170], Holm p 0.241): – (not significant: " in headline
    assert explained in headline
    assert explained in comparison.summary()
    markdown = comparison.to_markdown()
    assert f"**Headline:** {headline}" in markdown
    assert "| – (Holm over 2 tests) |" in markdown
    assert NOT_SIGNIFICANT_NOTE in markdown
    page = comparison.to_html()
    assert explained.replace("'", "&#x27;") in page
    assert "<td>– (Holm over 2 tests)</td>" in page


def test_headline_without_the_comparison_keeps_the_short_form(comparison: Comparison) -> None:
    set_headline(comparison, ci_low=0.018, ci_high=0.117, p_value=0.021, p_adjusted=0.241)
    assert headline_text(comparison.pairs[0]).endswith("Holm p 0.241): –")
