"""Pieces every ``docevals`` command shares: the parser class, exit codes, options,
and logging an evaluation to MLflow without ever losing it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.core.literals import Verdict

if TYPE_CHECKING:
    from docevals_mlflow.tracking.bundle import BundleWriter
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


def add_fail_on(
    parser: argparse.ArgumentParser, *, default: str = "fail", subject: str = "the verdict"
) -> None:
    """``--fail-on fail|uncertain|never``."""
    parser.add_argument(
        "--fail-on",
        choices=sorted(FAILING),
        default=default,
        help=f"exit 1 when {subject} is 'fail' ('fail'), 'fail' or 'uncertain' "
        f"('uncertain'), or never ('never'); default {default!r}",
    )


def add_tracking_options(
    parser: argparse.ArgumentParser,
    *,
    log_by_default: bool = True,
    experiment_help: str = "MLflow experiment name (default: docevals)",
    experiment_default: str | None = None,
    run_name_help: str | None = "MLflow run name",
    no_mlflow_help: str = "do not log the evaluation as an MLflow run",
) -> None:
    """``--tracking-uri``, ``--experiment``, ``--run-name`` and ``--no-mlflow``.

    The help texts say what the options mean for the command; ``run_name_help=None``
    leaves ``--run-name`` out (for commands that name their runs themselves).
    """
    group = parser.add_argument_group("MLflow")
    group.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else sqlite:///mlflow.db "
        "in the working directory)",
    )
    group.add_argument("--experiment", default=experiment_default, help=experiment_help)
    if run_name_help is not None:
        group.add_argument("--run-name", help=run_name_help)
    if log_by_default:
        group.add_argument(
            "--no-mlflow",
            action="store_true",
            help=f"{no_mlflow_help} (or set {NO_MLFLOW_VARIABLE}=1)",
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
    from docevals_mlflow.cli.annotations import annotate
    from docevals_mlflow.tracking.bundle import BundleWriter

    writer = BundleWriter(run_name=args.run_name or default_run_name)
    build(writer)
    annotate(args, writer)
    logged = log_or_keep(
        writer,
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        keep_at=anchor.with_name(anchor.stem + ".run"),
        written="the reports",
    )
    if logged is not None and not quiet:
        print(logged.describe())
    return logged


def log_or_keep(
    writer: BundleWriter,
    *,
    tracking_uri: str | None,
    experiment: str | None,
    keep_at: Path,
    written: str,
) -> LoggedRun | None:
    """Log a bundle as a run; when the store cannot be reached (or refuses the run),
    keep the bundle at ``keep_at``, warn that ``written`` (what the command already
    wrote) is safe and how to log the run later, and return ``None``."""
    from docevals_mlflow.tracking.runs import log_writer

    try:
        return log_writer(
            writer, tracking_uri=tracking_uri, experiment=experiment, keep_bundle_at=keep_at
        )
    except Exception as exc:  # tracking must never cost the user what was computed
        print(
            f"docevals: warning: not logged to MLflow ({type(exc).__name__}: {exc}); "
            f"{written} are written; log this run later with: docevals log {keep_at}",
            file=sys.stderr,
        )
        return None
