"""The ``docevals`` command (also ``python -m docevals_mlflow``).

Exit codes: 0 success; 1 an evaluation reached the ``--fail-on`` level, or a
``--fail-under``/``--fail-over`` threshold was breached (CI gating); 2 bad input or
usage. Expected errors print one line to stderr, never a traceback. Evaluations are
logged as MLflow runs unless ``--no-mlflow`` is given.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from docevals_mlflow._version import __version__
from docevals_mlflow.cli import (
    calibrate,
    cases,
    compare,
    datasets,
    fields,
    generate,
    plan,
    quickstart,
    repeats,
    review,
    runs,
    split,
    text,
)
from docevals_mlflow.cli.annotations import check_annotations
from docevals_mlflow.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_BELOW_THRESHOLD,
    EXIT_OK,
    Parser,
    check_text_arguments,
)
from docevals_mlflow.cli.fields import FAIL_OVER_METRICS, FAIL_UNDER_METRICS
from docevals_mlflow.errors import DocEvalsError, DocEvalsWarning

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BELOW_THRESHOLD",
    "EXIT_OK",
    "FAIL_OVER_METRICS",
    "FAIL_UNDER_METRICS",
    "build_parser",
    "main",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``docevals`` command.

    Quick (``docevals --help``): each module's ``register`` needs only argparse and
    cli/light_constants.py; the handlers import what they run on, when they run
    (checked by tests/test_cli_imports.py)."""
    parser = Parser(
        prog="docevals",
        description="Evaluate document-AI outputs (cases, pipelines, field extraction) "
        "and log them as MLflow runs.",
    )
    parser.add_argument("--version", action="version", version=f"docevals-mlflow {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in (
        cases,
        fields,
        runs,
        quickstart,
        calibrate,
        datasets,
        generate,
        review,
        split,
        compare,
        plan,
        repeats,
        text,
    ):
        module.register(commands)
    return parser


_RECURSION_LIMIT = 5000


@contextmanager
def _one_line_warnings() -> Iterator[None]:
    """docevals' own warnings (a stale checkpoint, capped workers) print as one line,
    ``docevals: warning: <text>``, without Python's source path and line; others keep
    Python's format."""
    original = warnings.formatwarning

    def one_line(message: Any, category: Any, filename: str, lineno: int, line: Any = None) -> str:
        if issubclass(category, DocEvalsWarning):
            return f"docevals: warning: {message}\n"
        return original(message, category, filename, lineno, line)

    warnings.formatwarning = one_line
    try:
        yield
    finally:
        warnings.formatwarning = original


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    # Inputs may nest up to 1,000 levels (core.datafiles); comparing such a document
    # walks one frame or two per level, more than Python's default 1,000.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), _RECURSION_LIMIT))
    # MLflow draws a tqdm bar on stderr for every artifact download (a dataset, a
    # baseline run's results) once tqdm is installed; the command's stderr is its
    # one-line messages. A user who wants the bars sets the variable themselves.
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_text_arguments(parser, args)
        check_annotations(args)
        with _one_line_warnings():
            code: int = args.handler(args)
    except DocEvalsError as exc:
        print(f"docevals: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("docevals: interrupted", file=sys.stderr)
        return 130
    return code
