"""``docevals review log``: reviewers' answers and final values onto the generation
run's document traces in MLflow (``Expectation`` assessments), and reviewer agreement
as metrics of the generation run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import EXIT_OK
from docevals_mlflow.cli.options import add_tracking_options


def register(review_commands: Any) -> None:
    """Add ``review log`` to the ``review`` subcommands."""
    parser = review_commands.add_parser(
        "log",
        help="write reviewers' answers and final values to the generation run in MLflow",
        description="For each review file written from a logged generation run (matched by "
        "its generation digest to the run's trace of the case): every person's current "
        "answer per field becomes an MLflow Expectation (source HUMAN, the person as source "
        "id) on the case's trace, and each decided field's final value one with source id "
        "'final'; the generation run gets the reviewer agreement as metrics. Logging again "
        "adds only what is new.",
    )
    parser.add_argument("path", type=Path, help="review file, or a folder of them")
    parser.add_argument(
        "--run",
        metavar="RUN_ID",
        help="the generation run whose traces get the answers (default: the latest run "
        "holding each case's generation)",
    )
    parser.add_argument(
        "--reviewers",
        type=int,
        default=1,
        metavar="N",
        help="reviewers who must agree before a field without adjudication is final (default: 1)",
    )
    add_tracking_options(parser, log_by_default=False, experiment_help=None, run_name_help=None)
    parser.set_defaults(handler=run_log)


def run_log(args: argparse.Namespace) -> int:
    """Log the answers, then the agreement metrics per generation run; say what was done."""
    from docevals_mlflow.errors import InputError
    from docevals_mlflow.groundtruth.review_layers import load_many, review_files
    from docevals_mlflow.tracking.approval_runs import tracking_client
    from docevals_mlflow.tracking.review_expectations import log_review_expectations
    from docevals_mlflow.tracking.review_metrics import (
        log_agreement_metrics,
        review_agreement_metrics,
    )

    if args.reviewers < 1:
        raise InputError(f"--reviewers {args.reviewers}", expected="a whole number of at least 1")
    layer_sets = load_many(review_files(args.path))
    logged = log_review_expectations(
        layer_sets,
        tracking_uri=args.tracking_uri,
        run_id=args.run,
        required_reviewers=args.reviewers,
    )
    print(
        f"{logged.matched:,} of {logged.reviews:,} review file(s) matched a generation trace: "
        f"{logged.added:,} expectation(s) added ({logged.overridden:,} overriding an earlier "
        f"answer), {logged.unchanged:,} already logged"
    )
    for path in logged.unmatched[:10]:
        print(f"no trace: {path} (its generation was not logged as a traced run)")
    if len(logged.unmatched) > 10:
        print(f"… and {len(logged.unmatched) - 10:,} more without a trace")
    if logged.runs:
        client, _ = tracking_client(args.tracking_uri)
        for run_id, reviews in sorted(logged.runs.items()):
            metrics = review_agreement_metrics(reviews, required_reviewers=args.reviewers)
            count = log_agreement_metrics(client, run_id, metrics)
            print(f"run {run_id}: {len(reviews):,} review(s), {count:,} agreement metric(s) logged")
    return EXIT_OK
