"""What every ``docevals`` command shares: the parser class, exit codes, and the
checks on text and numbers given as options (before any work is done).

Options several commands declare live in :mod:`~docevals_mlflow.cli.options`,
inputs-are-never-outputs checks in :mod:`~docevals_mlflow.cli.paths`, and logging
a run without ever losing it in :mod:`~docevals_mlflow.cli.run_logging`."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from docevals_mlflow.core.literals import Verdict
from docevals_mlflow.errors import InputError

EXIT_OK = 0
EXIT_BELOW_THRESHOLD = 1
EXIT_BAD_INPUT = 2

FAILING: dict[str, set[Verdict]] = {
    "fail": {"fail"},
    "uncertain": {"fail", "uncertain"},
    "never": set(),
}


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one line and exit code 2."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


# --- text given as options ------------------------------------------------------------


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= char <= "\udfff" for char in value)
    if isinstance(value, (list, tuple)):
        return any(_has_surrogate(item) for item in value)
    return False


def check_text_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before any work, a text argument that is not UTF-8.

    Python reads bytes of a command line that are not UTF-8 as lone surrogates; such
    text has no UTF-8 form, so a report, a review file, a key comment or an MLflow
    param holding it could not be written (a traceback, half-way through). Paths
    (``type=Path`` options) are left to the commands, which name them.

    Raises:
        InputError: naming the option.
    """
    command = getattr(args, "command", None)
    actions: list[argparse.Action] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            actions = action.choices[command]._actions
    for action in actions:
        if _has_surrogate(getattr(args, action.dest, None)):
            name = max(action.option_strings, key=len, default=None) or str(
                action.metavar or action.dest
            )
            raise InputError(
                f"{name}: the argument holds bytes that are not UTF-8 text",
                expected="UTF-8 text",
            )


# --- numbers given as options ---------------------------------------------------------


def check_number(
    option: str,
    value: float | None,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
) -> None:
    """Refuse a NaN or infinite ``value`` of ``option``, or one outside
    ``[minimum, maximum]`` (``None``, an option not given, passes).

    argparse's ``type=float`` reads ``nan`` and ``inf``; a NaN tolerance compares
    false with everything and an infinite one matches everything, so either would
    decide every comparison without saying so.
    """
    if value is None:
        return
    if (
        not math.isfinite(value)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
    ):
        if minimum is not None and maximum is not None:
            wanted = f"a number from {minimum:g} to {maximum:g}"
        elif minimum is not None:
            wanted = f"a finite number ≥ {minimum:g}"
        else:
            wanted = "a finite number"
        raise InputError(f"{option} {value:g}", expected=wanted)
