"""Verdict arithmetic: combining verdicts and attributing failures along dependencies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from docevals_mlflow.core.literals import FailureContext, Verdict

_PRECEDENCE: dict[Verdict, int] = {"fail": 3, "uncertain": 2, "pass": 1, "not_applicable": 0}


def combine_verdicts(verdicts: Iterable[Verdict]) -> Verdict:
    """The combined verdict: fail > uncertain > pass > not_applicable.

    No verdicts at all is ``not_applicable``.
    """
    return max(verdicts, key=_PRECEDENCE.__getitem__, default="not_applicable")


def failure_context(own: Verdict, upstream: Mapping[str, Verdict]) -> FailureContext:
    """Where a failure can be placed, given this stage's verdict and its ancestors'.

    * ``indeterminate``: this stage or any ancestor is uncertain or not applicable, so
      nothing can be attributed;
    * ``upstream_or_combined``: this stage and an ancestor failed; the failure must
      not be blamed on this stage alone;
    * ``current_stage``: this stage failed, every ancestor passed;
    * ``upstream``: this stage passed on the input it received, an ancestor failed;
    * ``none``: everything passed.

    ``upstream`` must hold every transitive ancestor, not only direct dependencies.
    """
    verdicts = [own, *upstream.values()]
    if any(verdict in ("uncertain", "not_applicable") for verdict in verdicts):
        return "indeterminate"
    upstream_failed = any(verdict == "fail" for verdict in upstream.values())
    if own == "fail":
        return "upstream_or_combined" if upstream_failed else "current_stage"
    return "upstream" if upstream_failed else "none"
