"""``docevals compare``: a baseline run against candidates, with a regression gate."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import EXIT_BELOW_THRESHOLD, EXIT_OK
from docevals_mlflow.cli.options import (
    add_dashboard_option,
    add_tracking_options,
    write_dashboard,
)
from docevals_mlflow.cli.paths import Input, Output, check_paths, existing_path
from docevals_mlflow.cli.run_logging import run_options, tracking_wanted
from docevals_mlflow.core.formatting import metric_text, p_value_text, signed_text
from docevals_mlflow.errors import InputError

REFERENCE_HELP = (
    "a run id, EXPERIMENT/RUN-NAME, RUN-NAME (the most recent run of that name), a run "
    "bundle folder or a report JSON file"
)


def register(commands: Any) -> None:
    """Add the ``compare`` subcommand."""
    parser = commands.add_parser(
        "compare",
        help="compare runs: what changed, what moved, and whether it is significant",
        description="Compare a baseline run with one or more candidates: params, prompt "
        "and spec diffs, judge panel changes, metric deltas with paired bootstrap "
        "intervals, randomisation and exact McNemar tests with Holm's correction, and "
        "the documents or cases that flipped. Writes Markdown, HTML and CSV when "
        "--output-dir is given and logs the comparison as an MLflow run.",
    )
    parser.add_argument("baseline", help=f"the baseline: {REFERENCE_HELP}")
    parser.add_argument("candidates", nargs="+", metavar="candidate", help="runs to compare")
    parser.add_argument(
        "--metric",
        help="metric to test and rank on: precision, recall, f1 (default for field runs), "
        "accuracy, far, fdr, macro_f1; case evaluations use pass_rate",
    )
    _add_statistics_options(parser)
    parser.add_argument(
        "--output-dir",
        type=Path,
        help="write comparison.md, comparison.html and the tables as CSV here",
    )
    add_dashboard_option(
        parser, what="the comparison as HTML (the page --output-dir names comparison.html)"
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when any candidate regressed significantly (CI gating)",
    )
    parser.add_argument(
        "--non-inferiority",
        action="append",
        default=[],
        metavar="METRIC=MARGIN",
        help="exit 1 unless each candidate is shown (one-sided test at --alpha) to be "
        "at most MARGIN worse than the baseline on METRIC, e.g. f1=0.02; repeatable",
    )
    # The usual tracking options, with help that says what they mean here: the
    # experiment also narrows the lookup of bare run names.
    add_tracking_options(
        parser,
        experiment_help="where to look up bare run names (default: every experiment; when "
        "several hold a name, MLFLOW_EXPERIMENT_NAME's or the other runs' experiment), and "
        "where to log the comparison (default: the baseline's experiment)",
        run_name_help="name of the comparison run (default: compare CANDIDATES vs BASELINE)",
        no_mlflow_help="do not log the comparison as an MLflow run",
    )
    parser.set_defaults(handler=run)


def _add_statistics_options(parser: argparse.ArgumentParser) -> None:
    """``--alpha``, ``--seed``, ``--resamples`` and ``--confidence``."""
    parser.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="family-wise significance level after Holm's correction (default 0.05)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    parser.add_argument(
        "--resamples",
        type=int,
        default=2000,
        metavar="N",
        help="bootstrap resamples and random sign flips per test (default 2000)",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence level of the intervals (default 0.95)",
    )


def _check(args: argparse.Namespace) -> None:
    # Checked before any run is loaded: a typo should cost nothing.
    from docevals_mlflow.compare.results import CASE_METRIC
    from docevals_mlflow.compare.statistics import FIELD_METRICS

    if not (math.isfinite(args.alpha) and 0 < args.alpha < 1):
        raise InputError(f"--alpha {args.alpha:g}", expected="a level between 0 and 1")
    if not (math.isfinite(args.confidence) and 0 < args.confidence < 1):
        raise InputError(f"--confidence {args.confidence:g}", expected="a level between 0 and 1")
    if args.resamples < 100:
        raise InputError(f"--resamples {args.resamples}", expected="at least 100")
    from docevals_mlflow.compare.non_inferiority import parse_margins

    args.margins = parse_margins(args.non_inferiority, [*FIELD_METRICS, CASE_METRIC])
    if args.metric is not None and args.metric not in (*FIELD_METRICS, CASE_METRIC):
        raise InputError(
            f"unknown metric {args.metric!r}",
            expected=f"one of {', '.join(FIELD_METRICS)} (field runs) or {CASE_METRIC} (cases)",
        )


OUTPUT_FILES = (
    "comparison.md",
    "comparison.html",
    *(f"{name}.csv" for name in ("effects", "metrics", "flips", "judges", "unmatched")),
    "leaderboard.csv",
)
"""What ``--output-dir`` may receive (the tables of ``Comparison.tables()``), so that
each can be checked against the runs being read before any is loaded."""


def _check_paths(args: argparse.Namespace) -> None:
    # A run given as a report file or a bundle folder is an input; run ids and names
    # are not paths (a name that happens to be a file is read as one, so it counts).
    paths = [existing_path(reference) for reference in [args.baseline, *args.candidates]]
    inputs = [Input("run", path) for path in paths if path is not None]
    outputs: list[Output] = []
    if args.dashboard is not None:
        outputs.append(Output("--dashboard", args.dashboard))
    if args.output_dir is not None:
        outputs.append(Output("--output-dir", args.output_dir, "folder"))
        outputs += [Output("--output-dir file", args.output_dir / name) for name in OUTPUT_FILES]
    check_paths(inputs, outputs)


def _write_outputs(comparison: Any, folder: Path) -> list[Path]:
    from docevals_mlflow.core.atomic import atomic_write_text

    # Everything is rendered before anything is written, so a failure leaves old files.
    texts = {
        "comparison.md": comparison.to_markdown(),
        "comparison.html": comparison.to_html(),
        **{f"{name}.csv": frame.to_csv(index=False) for name, frame in comparison.tables().items()},
    }
    return [atomic_write_text(folder / name, text) for name, text in texts.items()]


def load_snapshots(args: argparse.Namespace) -> list[Any]:
    """The baseline and candidates as snapshots.

    A bare run name several experiments hold, with no ``--experiment``, resolves in the
    current default experiment (``MLFLOW_EXPERIMENT_NAME``) or else in the experiment
    of the other runs compared (``compare prompt-v1 prompt-v2`` where only one
    experiment holds a ``prompt-v2``); names still ambiguous then fail in one line
    that lists the experiments.
    """
    from docevals_mlflow.tracking.snapshots import AmbiguousRunError, load_run_snapshot

    references = [args.baseline, *args.candidates]
    found: dict[int, Any] = {}
    ambiguous: list[int] = []
    for index, reference in enumerate(references):
        try:
            found[index] = load_run_snapshot(
                reference, tracking_uri=args.tracking_uri, experiment=args.experiment
            )
        except AmbiguousRunError:
            ambiguous.append(index)
    # Only one experiment among the runs found says which is meant; two say nothing.
    experiments = {snapshot.experiment for snapshot in found.values() if snapshot.experiment}
    prefer = sorted(experiments) if len(experiments) == 1 else []
    for index in ambiguous:
        found[index] = load_run_snapshot(
            references[index], tracking_uri=args.tracking_uri, prefer=prefer
        )
    return [found[index] for index in range(len(references))]


def run(args: argparse.Namespace) -> int:
    """Load the runs, compare, print, write, log, and gate on regressions."""
    from docevals_mlflow.compare import compare_runs

    _check(args)
    _check_paths(args)
    snapshots = load_snapshots(args)
    comparison = compare_runs(
        snapshots[0],
        *snapshots[1:],
        metric=args.metric,
        alpha=args.alpha,
        seed=args.seed,
        resamples=args.resamples,
        confidence=args.confidence,
        non_inferiority=args.margins,
    )
    print(comparison.summary())
    if args.output_dir is not None:
        written = _write_outputs(comparison, args.output_dir)
        print(f"written: {', '.join(path.name for path in written)} in {args.output_dir}")
    write_dashboard(args, comparison.to_html)
    if tracking_wanted(args):
        from docevals_mlflow.tracking.assembly import assemble_comparison, log_assembled

        try:
            logged = log_assembled(assemble_comparison(comparison, run_options(args)))
        except Exception as exc:  # the comparison is printed; logging must not hide it
            print(
                f"docevals: warning: comparison not logged to MLflow ({type(exc).__name__}: {exc})",
                file=sys.stderr,
            )
        else:
            print(logged.describe())
    failed = [test for test in comparison.non_inferiority if not test.passed]
    for test in failed:
        print(f"docevals: not shown non-inferior: {test.candidate}: {test.text()}", file=sys.stderr)
    if args.fail_on_regression and comparison.has_regression:
        for _, row in comparison.regressions.iterrows():
            print(
                f"docevals: regression: {row['candidate_run']}: {row['family']} {row['unit']} "
                f"{row['metric']} {metric_text(row['baseline'])} -> "
                f"{metric_text(row['candidate'])} (delta {signed_text(row['delta'])}, "
                f"Holm p {p_value_text(row['p_adjusted'])})",
                file=sys.stderr,
            )
        return EXIT_BELOW_THRESHOLD
    return EXIT_BELOW_THRESHOLD if failed else EXIT_OK
