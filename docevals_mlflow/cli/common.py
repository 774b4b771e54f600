"""Pieces every ``docevals`` command shares: the parser class, exit codes, options,
and logging an evaluation to MLflow without ever losing it."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.literals import Verdict

if TYPE_CHECKING:
    from docevals_mlflow.tracking.runs import LoggedRun

EXIT_OK = 0
EXIT_BELOW_THRESHOLD = 1
EXIT_BAD_INPUT = 2

FAILING: dict[str, set[Verdict]] = {
    "fail": {"fail"},
    "uncertain": {"fail", "uncertain"},
    "never": set(),
}
NO_MLFLOW_VARIABLE = "DOCEVALS_NO_MLFLOW"
"""Set to a non-empty value to skip MLflow logging everywhere (like ``--no-mlflow``)."""


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one line and exit code 2."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--output`` (JSON report) and ``--markdown``."""
    parser.add_argument("--output", required=True, type=Path, help="JSON report to write")
    parser.add_argument("--markdown", type=Path, help="also write a Markdown report here")


def add_fail_on(parser: argparse.ArgumentParser) -> None:
    """``--fail-on fail|uncertain|never``."""
    parser.add_argument(
        "--fail-on",
        choices=sorted(FAILING),
        default="fail",
        help="exit 1 when the verdict is 'fail' (default), 'fail' or 'uncertain' "
        "('uncertain'), or never ('never')",
    )


def add_tracking_options(parser: argparse.ArgumentParser, *, log_by_default: bool = True) -> None:
    """``--tracking-uri``, ``--experiment``, ``--run-name`` and ``--no-mlflow``."""
    group = parser.add_argument_group("MLflow")
    group.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else sqlite:///mlflow.db "
        "in the working directory)",
    )
    group.add_argument("--experiment", help="MLflow experiment name (default: docevals)")
    group.add_argument("--run-name", help="MLflow run name")
    if log_by_default:
        group.add_argument(
            "--no-mlflow",
            action="store_true",
            help=f"do not log the evaluation as an MLflow run (or set {NO_MLFLOW_VARIABLE}=1)",
        )


def tracking_wanted(args: argparse.Namespace) -> bool:
    """Whether this invocation logs to MLflow."""
    return not getattr(args, "no_mlflow", False) and not os.environ.get(NO_MLFLOW_VARIABLE)


def log_evaluation(
    args: argparse.Namespace,
    build: Callable[[Any], None],
    *,
    default_run_name: str,
    anchor: Path,
    quiet: bool = False,
) -> LoggedRun | None:
    """Log an evaluation whose reports are already written; never lose it.

    ``build`` fills a bundle writer. When the tracking store cannot be reached (or
    refuses the run), the bundle is kept next to ``anchor`` (``<report>.run/``), the
    message says how to log it later with ``docevals log``, and ``None`` is returned.
    ``quiet`` leaves printing the run to the caller.
    """
    if not tracking_wanted(args):
        return None
    from docevals_mlflow.tracking.bundle import BundleWriter, keep_bundle
    from docevals_mlflow.tracking.runs import log_bundle

    writer = BundleWriter(run_name=args.run_name or default_run_name)
    build(writer)
    with tempfile.TemporaryDirectory(prefix="docevals-run-") as temporary:
        folder = writer.write(Path(temporary) / "bundle")
        try:
            logged = log_bundle(folder, tracking_uri=args.tracking_uri, experiment=args.experiment)
        except Exception as exc:  # tracking must never cost the user the evaluation
            kept = keep_bundle(folder, anchor.with_name(anchor.stem + ".run"))
            print(
                f"docevals: warning: not logged to MLflow ({type(exc).__name__}: {exc}); "
                f"the reports are written; log this run later with: docevals log {kept}",
                file=sys.stderr,
            )
            return None
    if not quiet:
        print(logged.describe())
    return logged
