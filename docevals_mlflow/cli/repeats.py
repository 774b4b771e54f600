"""``docevals repeats``: flip rate and pass^k over runs repeated on the same inputs."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from docevals_mlflow.errors import InputError


def register(commands: Any) -> None:
    """Add the ``repeats`` subcommand."""
    parser = commands.add_parser(
        "repeats",
        help="flip rate and pass^k of runs repeated on the same inputs",
        description="Read the per-case verdicts (case and pipeline runs) or per-document "
        "results (field runs) of two or more runs of the same inputs and report how often "
        "an outcome flips between repeats, pass^k (the chance k repeats are all correct; "
        "pass^N: correct in every run) and each judge's own flip rate.",
    )
    parser.add_argument(
        "runs",
        nargs="*",
        metavar="run",
        help="run id, experiment/run-name, run name, run bundle folder or report JSON "
        "(or none, with --group)",
    )
    parser.add_argument(
        "--group",
        metavar="NAME",
        help="the runs logged with --repeat-group NAME (in --experiment when given), "
        "oldest first, instead of listing runs",
    )
    parser.add_argument("--output", type=Path, help="write the JSON report here")
    parser.add_argument("--markdown", type=Path, help="write a Markdown report here")
    parser.add_argument(
        "--max-flip-rate",
        type=float,
        metavar="R",
        help="exit 1 when the share of flipping cases or documents is above R (0-1)",
    )
    parser.add_argument("--tracking-uri", help="MLflow tracking URI to read runs from")
    parser.add_argument("--experiment", help="where to look up bare run names and the --group runs")
    parser.add_argument(
        "--log",
        action="store_true",
        help="log the repeat report as an MLflow run (kind comparison, in the first "
        "run's experiment unless --log-experiment) linked to the runs it compares",
    )
    parser.add_argument("--log-experiment", help="the experiment of the --log run")
    parser.add_argument("--run-name", help="the name of the --log run")
    parser.set_defaults(handler=run)


def _check(args: argparse.Namespace) -> None:
    if args.group is not None:
        if args.runs:
            raise InputError(
                f"--group {args.group} and {len(args.runs)} listed run(s)",
                expected="either --group NAME or the runs, not both",
            )
    elif len(args.runs) < 2:
        raise InputError(f"{len(args.runs)} run given", expected="at least 2 repeat runs")
    limit = args.max_flip_rate
    if limit is not None and not (math.isfinite(limit) and 0.0 <= limit <= 1.0):
        raise InputError(f"--max-flip-rate {limit:g}", expected="a share between 0 and 1")


def _check_paths(args: argparse.Namespace) -> None:
    from docevals_mlflow.cli.paths import Input, Output, check_paths, existing_path

    # Runs given as report files or bundle folders are inputs an output must not replace.
    paths = [existing_path(reference) for reference in args.runs]
    check_paths(
        [Input("run", path) for path in paths if path is not None],
        [
            Output("--output", args.output) if args.output is not None else None,
            Output("--markdown", args.markdown) if args.markdown is not None else None,
        ],
    )


def run(args: argparse.Namespace) -> int:
    """Load the runs, report, write, and gate on ``--max-flip-rate``."""
    from docevals_mlflow.compare.repeats import (
        check_same_inputs,
        repeat_stability,
        repeats_markdown,
    )
    from docevals_mlflow.core.atomic import atomic_write_text
    from docevals_mlflow.tracking.snapshots import load_run_snapshot

    _check(args)
    _check_paths(args)
    if args.group is not None:
        from docevals_mlflow.tracking.repeat_runs import repeat_group_snapshots

        snapshots = repeat_group_snapshots(
            args.group, tracking_uri=args.tracking_uri, experiment=args.experiment
        )
    else:
        snapshots = [
            load_run_snapshot(reference, tracking_uri=args.tracking_uri, experiment=args.experiment)
            for reference in args.runs
        ]
    check_same_inputs(snapshots)
    report = repeat_stability(snapshots)
    markdown = repeats_markdown(report)
    if args.output is not None:
        atomic_write_text(args.output, report.model_dump_json(indent=2) + "\n")
    if args.markdown is not None:
        atomic_write_text(args.markdown, markdown)
    code = _print_report(report, args.max_flip_rate)
    if args.log:
        _log(args, report, markdown, experiment=snapshots[0].experiment)
    return code


def _log(args: argparse.Namespace, report: Any, markdown: str, *, experiment: str | None) -> None:
    """Log the report as a run; when the store cannot take it, keep the bundle beside
    ``--output`` (``docevals log`` logs it later)."""
    from docevals_mlflow.cli.run_logging import bundle_folder, log_or_keep
    from docevals_mlflow.tracking.options import RunOptions
    from docevals_mlflow.tracking.repeat_runs import assemble_repeats

    options = RunOptions(
        run_name=args.run_name,
        experiment=args.log_experiment,
        tracking_uri=args.tracking_uri,
        keep_bundle_at=bundle_folder(args.output) if args.output is not None else None,
    )
    run = assemble_repeats(
        report, options, markdown=markdown, group=args.group, experiment=experiment
    )
    logged = log_or_keep(run, written="the repeat report")
    if logged is not None:
        print(logged.describe())


def _print_report(report: Any, limit: float | None) -> int:
    """Print the summary, flaky judges, flipping units and notes; the exit code of
    ``--max-flip-rate``."""
    print(report.summary_line())
    for judge in report.judges:
        if judge.flip_rate:
            print(f"judge {judge.member} ({judge.metric}): {judge.flip_rate:.1%} flip")
    flipped = [unit.unit for unit in report.per_unit if unit.flipped]
    if flipped:
        shown = ", ".join(flipped[:10]) + (
            f" and {len(flipped) - 10} more" if len(flipped) > 10 else ""
        )
        print(f"flipping {report.unit_kind}s: {shown}")
    for note in report.notes:
        print(f"note: {note}")
    if limit is not None and (report.flip_rate is None or report.flip_rate > limit):
        print(f"FAIL: flip rate above {limit:g}")
        return 1
    return 0
