"""Agreement beyond chance: Cohen's kappa of two raters, Fleiss' kappa of a panel, and
Landis and Koch's words for a kappa value.

Pure arithmetic on categories and counts; nothing here knows about reports or labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from docevals_mlflow.errors import ConfigurationError


def _kappa_from_sums(units: int, agreeing: int, chance: int) -> float | None:
    """Cohen's kappa from integer sums, exact up to one division.

    With ``n`` units, ``a`` agreeing ones and ``chance = sum_k rows_k * cols_k``,
    kappa = (p_o - p_e) / (1 - p_e) = (n*a - chance) / (n*n - chance). The
    denominator is zero exactly when both raters used one and the same category.
    """
    denominator = units * units - chance
    if units == 0 or denominator == 0:
        return None
    return (units * agreeing - chance) / denominator


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters who rated the same items (in the same order).

    Categories only one rater used count like any other (they add disagreement and
    nothing to chance agreement). ``None`` when undefined: no items, or both raters
    gave every item one and the same category (no variance to agree on).
    """
    if len(first) != len(second):
        raise ConfigurationError(
            f"the raters rated different numbers of items ({len(first)} and {len(second)})"
        )
    rows, cols = Counter(first), Counter(second)
    agreeing = sum(a == b for a, b in zip(first, second, strict=True))
    chance = sum(count * cols[category] for category, count in rows.items())
    return _kappa_from_sums(len(first), agreeing, chance)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from a subjects x categories table of rating counts.

    Row ``i`` holds how many raters put subject ``i`` in each category; every row
    must sum to the same number of raters (at least two). ``None`` when there are
    no subjects or every rating falls in one category. Computed with exact
    fractions, so hand-computed examples reproduce to the last digit.

    Raises:
        ConfigurationError: rows of different sums or lengths, negative counts, or
            fewer than two raters.
    """
    if not counts:
        return None
    raters = sum(counts[0])
    width = len(counts[0])
    for index, row in enumerate(counts):
        if len(row) != width or any(count < 0 for count in row):
            raise ConfigurationError(
                f"row {index} of the Fleiss table is not {width} non-negative counts"
            )
        if sum(row) != raters:
            raise ConfigurationError(
                f"row {index} of the Fleiss table has {sum(row)} ratings, not {raters}"
            )
    if raters < 2:
        raise ConfigurationError("Fleiss' kappa needs at least two ratings per subject")
    ratings = len(counts) * raters
    # Mean observed agreement: for each subject, the share of agreeing rater pairs.
    pairs_agreeing = sum(count * count for row in counts for count in row) - ratings
    observed = Fraction(pairs_agreeing, ratings * (raters - 1))
    totals = [sum(row[column] for row in counts) for column in range(width)]
    expected = Fraction(sum(total * total for total in totals), ratings * ratings)
    if expected == 1:
        return None
    return float((observed - expected) / (1 - expected))


def kappa_strength(kappa: float) -> str:
    """Landis and Koch's (1977) words for a kappa value.

    Below 0 poor; up to 0.20 slight; 0.40 fair; 0.60 moderate; 0.80 substantial;
    above that almost perfect.
    """
    if kappa < 0:
        return "poor"
    for bound, word in (
        (0.20, "slight"),
        (0.40, "fair"),
        (0.60, "moderate"),
        (0.80, "substantial"),
    ):
        if kappa <= bound:
            return word
    return "almost perfect"
