"""``docevals log``: log a run bundle that could not be logged when it was made."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import EXIT_OK
from docevals_mlflow.cli.options import add_tracking_options


def register(commands: Any) -> None:
    """Add the ``log`` subcommand."""
    log = commands.add_parser(
        "log",
        help="log a saved run bundle (written when the tracking server was unreachable)",
        description="Log a run bundle folder (run.json + artifacts/) as one MLflow run. "
        "Only regular files and folders are uploaded: a symbolic link, FIFO or device in "
        "the bundle is an error naming it, and nothing is logged.",
    )
    log.add_argument("bundle", type=Path, help="the bundle folder, e.g. reports/case.run")
    add_tracking_options(log, log_by_default=False)
    log.add_argument("--run-id", help="continue this run instead of creating one")
    log.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Log the bundle; errors (unreachable server, conflicting run, a link or special
    file in the bundle, a half-migrated SQLite store) exit 2."""
    from docevals_mlflow.tracking.runs import log_bundle, require_bundle_dir

    logged = log_bundle(
        require_bundle_dir(args.bundle),
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        run_name=args.run_name,
        run_id=args.run_id,
    )
    print(logged.describe())
    return EXIT_OK
