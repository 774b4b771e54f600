"""What :func:`~docevals_mlflow.compare.compare_runs` returns: one
:class:`PairComparison` per candidate, gathered in a :class:`Comparison`.

Tables are pandas DataFrames (pandas is imported only when one is built, so that
``import docevals_mlflow`` stays light).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docevals_mlflow.compare.changes import Changes
from docevals_mlflow.compare.snapshot import RunSnapshot
from docevals_mlflow.compare.statistics import LOWER_IS_BETTER

if TYPE_CHECKING:
    import pandas as pd

    from docevals_mlflow.compare.non_inferiority import NonInferiority

CASE_METRIC = "pass_rate"
"""The one metric case and pipeline evaluations are compared on."""
FAMILIES = ("overall", "field", "class", "stage")
"""Families of tests; Holm's correction runs within each (see docs/comparison.md)."""
EFFECT_COLUMNS = [
    "family",
    "unit",
    "metric",
    "test",
    "n",
    "baseline",
    "candidate",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "direction",
    "kappa",
    "detail",
]
"""Columns of :attr:`PairComparison.effects`: one row per family and unit."""
UNMATCHED_COLUMNS = ["unit", "id", "stage", "only_in"]
LEADERBOARD_COLUMNS = [
    "rank",
    "run",
    "run_id",
    "role",
    "n",
    "value",
    "ci_low",
    "ci_high",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "p_adjusted",
    "direction",
]


@dataclass(frozen=True)
class Settings:
    """How a comparison was computed."""

    metric: str
    alpha: float
    seed: int
    resamples: int
    confidence: float

    @property
    def lower_is_better(self) -> bool:
        """Whether a smaller value of the metric is better (``far``, ``fdr``)."""
        return self.metric in LOWER_IS_BETTER


# eq=False: the fields hold DataFrames, whose == is element-wise; repr stays short.
@dataclass(frozen=True, eq=False, repr=False)
class PairComparison:
    """One candidate against the baseline.

    ``effects`` holds the tested changes (one row per family and unit; see
    :data:`EFFECT_COLUMNS`), ``metrics`` every logged metric of either run with its
    delta, ``flips`` the documents or cases whose verdict changed and why,
    ``judges`` per-member pass rates and vote changes, ``unmatched`` what only one
    run holds (left out of every paired figure).
    """

    baseline: RunSnapshot
    candidate: RunSnapshot
    unit: str
    """``document`` (field comparison runs) or ``case`` (case/pipeline evaluations)."""
    matched: int
    changes: Changes
    metrics: pd.DataFrame
    effects: pd.DataFrame
    flips: pd.DataFrame
    judges: pd.DataFrame
    unmatched: pd.DataFrame
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return (
            f"PairComparison(baseline={self.baseline.label!r}, "
            f"candidate={self.candidate.label!r}, matched={self.matched} {self.unit}s, "
            f"improvements={len(self.improvements)}, regressions={len(self.regressions)})"
        )

    @property
    def regressions(self) -> pd.DataFrame:
        """Significant changes for the worse."""
        return self.effects[self.effects["direction"] == "regression"]

    @property
    def improvements(self) -> pd.DataFrame:
        """Significant changes for the better."""
        return self.effects[self.effects["direction"] == "improvement"]

    @property
    def headline(self) -> dict[str, Any]:
        """The first overall effect (the chosen metric over everything matched)."""
        overall = self.effects[self.effects["family"] == "overall"]
        return dict(overall.iloc[0]) if len(overall) else {}


@dataclass(frozen=True, eq=False, repr=False)
class Comparison:
    """The result of :func:`compare_runs`: one :class:`PairComparison` per candidate
    and, with two or more candidates, a ``leaderboard``."""

    baseline: RunSnapshot
    pairs: tuple[PairComparison, ...]
    settings: Settings
    leaderboard: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()
    non_inferiority: tuple[NonInferiority, ...] = ()
    """Non-inferiority tests asked for (:mod:`~docevals_mlflow.compare.non_inferiority`)."""

    def __repr__(self) -> str:
        return (
            f"Comparison(baseline={self.baseline.label!r}, "
            f"candidates={[run.label for run in self.candidates]!r}, "
            f"metric={self.settings.metric!r}, has_regression={self.has_regression})"
        )

    @property
    def candidates(self) -> tuple[RunSnapshot, ...]:
        """The candidate runs, in the order given."""
        return tuple(pair.candidate for pair in self.pairs)

    @property
    def effects(self) -> pd.DataFrame:
        """Every pair's effects, with ``candidate_run`` (label) and ``candidate_run_id``."""
        return self._stacked("effects")

    @property
    def regressions(self) -> pd.DataFrame:
        """Every significant regression, of any candidate."""
        effects = self.effects
        return effects[effects["direction"] == "regression"]

    @property
    def improvements(self) -> pd.DataFrame:
        """Every significant improvement, of any candidate."""
        effects = self.effects
        return effects[effects["direction"] == "improvement"]

    @property
    def has_regression(self) -> bool:
        """Whether any candidate regressed significantly anywhere (the CI gate)."""
        return any(len(pair.regressions) for pair in self.pairs)

    def _stacked(self, name: str) -> pd.DataFrame:
        import pandas as pd

        frames = []
        for pair in self.pairs:
            frame = getattr(pair, name).copy()
            frame.insert(0, "candidate_run", pair.candidate.label)
            frame.insert(1, "candidate_run_id", pair.candidate.run_id)
            frames.append(frame)
        stacked: pd.DataFrame = pd.concat(frames, ignore_index=True)
        return stacked

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables worth saving as CSV, by file stem."""
        tables = {
            "effects": self.effects,
            "metrics": self._stacked("metrics"),
            "flips": self._stacked("flips"),
            "judges": self._stacked("judges"),
            "unmatched": self._stacked("unmatched"),
        }
        if self.leaderboard is not None:
            tables["leaderboard"] = self.leaderboard
        return tables

    def to_markdown(self) -> str:
        """The comparison as Markdown (see :mod:`docevals_mlflow.compare.markdown`)."""
        from docevals_mlflow.compare.markdown import render_comparison_markdown

        return render_comparison_markdown(self)

    def to_html(self) -> str:
        """A self-contained offline HTML page (see :mod:`docevals_mlflow.compare.html`)."""
        from docevals_mlflow.compare.html import render_comparison_html

        return render_comparison_html(self)

    def summary(self) -> str:
        """A few plain lines: per candidate, the headline and what is significant."""
        from docevals_mlflow.compare.text import summary_lines

        return "\n".join(summary_lines(self))
