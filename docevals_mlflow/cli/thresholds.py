"""CI gating shared by the commands: the ``METRIC=VALUE`` threshold options, the
breaches of a report, and the exit code they call for."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from docevals_mlflow.cli.common import EXIT_BELOW_THRESHOLD, EXIT_OK
from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.errors import InputError


def add_threshold_option(
    parser: argparse.ArgumentParser,
    option: str,
    metrics: Sequence[str],
    *,
    subject: str,
    breached_when: Literal["below", "above"] = "below",
) -> None:
    """A repeatable ``option METRIC=VALUE`` (``--fail-under``, ``--fail-over``):
    exit 1 when ``subject`` (``an overall metric``) is ``breached_when`` VALUE."""
    parser.add_argument(
        option,
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help=f"exit 1 when {subject} is {breached_when} VALUE or undefined; METRIC is one of "
        f"{', '.join(metrics)} (repeatable)",
    )


def parse_thresholds(option: str, pairs: Sequence[str], allowed: Sequence[str]) -> dict[str, float]:
    """``METRIC=VALUE`` options (``option`` names them in errors) as a dict.

    Raises:
        InputError: an unknown metric, a value outside [0, 1], or a metric given twice.
    """
    thresholds: dict[str, float] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip().lower()
        if not sep or name not in allowed:
            raise InputError(
                f"{option} {pair!r}",
                expected=f"METRIC=VALUE with METRIC one of {', '.join(allowed)}",
            )
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        # Every metric here lies in [0, 1]; a value outside it is a typo (say, 90 for 0.9)
        # that would otherwise pass or fail every run silently.
        if not 0.0 <= value <= 1.0:
            raise InputError(f"{option} {pair!r}", expected="a VALUE between 0 and 1")
        if name in thresholds:
            raise InputError(f"{option} {name} given twice", expected="one threshold per metric")
        thresholds[name] = value
    return thresholds


def breaches(
    value_of: Callable[[str], float | None],
    *,
    under: Mapping[str, float],
    over: Mapping[str, float] | None = None,
) -> list[str]:
    """One line per breached threshold: a value below its ``under`` limit or above its
    ``over`` limit, or undefined (an undefined metric never passes a gate)."""
    lines = []
    for name, limit in under.items():
        value = value_of(name)
        if value is None:
            lines.append(f"{name} is undefined (required at least {limit:g})")
        elif value < limit:
            lines.append(f"{name} {metric_text(value)} is below {limit:g}")
    for name, limit in (over or {}).items():
        value = value_of(name)
        if value is None:
            lines.append(f"{name} is undefined (required at most {limit:g})")
        elif value > limit:
            lines.append(f"{name} {metric_text(value)} is above {limit:g}")
    return lines


def gate_verdict(breached: Sequence[str], *, gated: bool) -> Literal["pass", "fail"] | None:
    """The run's verdict: ``None`` when no threshold was asked for."""
    if not gated:
        return None
    return "fail" if breached else "pass"


def gate(breached: Sequence[str]) -> int:
    """Print each breach on stderr; the exit code they call for."""
    for line in breached:
        print(f"docevals: threshold: {line}", file=sys.stderr)
    return EXIT_BELOW_THRESHOLD if breached else EXIT_OK


__all__ = ["add_threshold_option", "breaches", "gate", "gate_verdict", "parse_thresholds"]
