"""Options several ``docevals`` commands declare, each declared once here: the
report outputs, ``--fail-on``, the MLflow group, and the ``--prices``,
``--concurrency`` and answer-cache options of the commands that call models (with
the check ``--concurrency`` needs). Threshold options (``--fail-under``) are in
:mod:`~docevals_mlflow.cli.thresholds`, beside the gate that reads them."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import FAILING
from docevals_mlflow.cli.run_logging import NO_MLFLOW_VARIABLE
from docevals_mlflow.errors import InputError


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--output`` (JSON report) and ``--markdown``."""
    parser.add_argument("--output", required=True, type=Path, help="JSON report to write")
    parser.add_argument("--markdown", type=Path, help="also write a Markdown report here")


def add_dashboard_option(
    parser: argparse.ArgumentParser, *, what: str = "the run's HTML dashboard"
) -> None:
    """``--dashboard FILE``: the command's HTML dashboard, written locally too."""
    parser.add_argument(
        "--dashboard",
        type=Path,
        metavar="FILE",
        help=f"also write {what} here (self-contained HTML, opens offline; with or without MLflow)",
    )


def write_dashboard(args: argparse.Namespace, render: Callable[[], str]) -> str | None:
    """Render and write (atomically) the dashboard ``--dashboard`` asks for, printing
    where it went; the text, for the run to reuse, or ``None`` without the option."""
    path: Path | None = getattr(args, "dashboard", None)
    if path is None:
        return None
    from docevals_mlflow.core.atomic import atomic_write_text
    from docevals_mlflow.core.secrets import redact_text

    text = redact_text(render())
    atomic_write_text(path, text)
    print(f"dashboard: {path}")
    return text


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
    experiment_help: str | None = "MLflow experiment name (default: docevals)",
    experiment_default: str | None = None,
    run_name_help: str | None = "MLflow run name",
    no_mlflow_help: str = "do not log the evaluation as an MLflow run",
) -> None:
    """``--tracking-uri``, ``--experiment``, ``--run-name`` and ``--no-mlflow``.

    The help texts say what the options mean for the command; ``experiment_help=None``
    leaves ``--experiment`` out (for commands that only read the store) and
    ``run_name_help=None`` leaves ``--run-name`` out (for commands that name their
    runs themselves).
    """
    group = parser.add_argument_group("MLflow")
    group.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else sqlite:///mlflow.db "
        "in the working directory)",
    )
    if experiment_help is not None:
        group.add_argument("--experiment", default=experiment_default, help=experiment_help)
    if run_name_help is not None:
        group.add_argument("--run-name", help=run_name_help)
    if log_by_default:
        group.add_argument(
            "--no-mlflow",
            action="store_true",
            help=f"{no_mlflow_help} (or set {NO_MLFLOW_VARIABLE}=1)",
        )


def _traces_value(text: str) -> Any:
    from docevals_mlflow.tracking.trace_policy import parse_trace_policy

    try:
        return parse_trace_policy(text)
    except InputError:
        raise argparse.ArgumentTypeError(
            f"invalid value {text[:40]!r} (expected all, errors, none, or a whole number of traces)"
        ) from None


def add_traces_option(parser: argparse.ArgumentParser, *, what: str = "document") -> None:
    """``--traces all|errors|N|none``: which documents (``what``) become MLflow traces
    linked to the run (default: every one up to 1,000; beyond, the wrong and changed
    ones first), and ``--traces-baseline RUN``: the run *changed* is measured against."""
    parser.add_argument(
        "--traces",
        type=_traces_value,
        metavar="all|errors|N|none",
        help=f"which {what}s get an MLflow trace linked to the run: all, only the wrong "
        f"ones (errors), at most N, or none; default: every {what} up to 1000. When a "
        f"limit leaves some out: wrong and changed ones first, then changed, then wrong",
    )
    parser.add_argument(
        "--traces-baseline",
        metavar="RUN",
        help=f"the run whose outcomes define a changed {what} (run id, experiment/run-name "
        "or run name, as docevals compare takes them); default: the latest finished run of "
        "the same kind in the experiment with the same schema/spec and ground truth",
    )


def traces_policy(args: argparse.Namespace) -> Any:
    """``--traces`` with ``--traces-baseline`` bound to it (``None``: neither given)."""
    policy = getattr(args, "traces", None)
    baseline = getattr(args, "traces_baseline", None)
    if baseline is None:
        return policy
    from docevals_mlflow.tracking.trace_policy import parse_trace_policy

    return parse_trace_policy(policy).with_baseline(baseline)


# --- commands that call models ---------------------------------------------------------


def add_concurrency_option(group: Any, *, own_limit: str) -> None:
    """``--concurrency N``; ``own_limit`` names what keeps its own ``max_concurrency``."""
    group.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="requests in flight at once per provider (default 8; "
        f"{own_limit} with its own max_concurrency keeps it)",
    )


def add_answer_cache_option(group: Any, option: str, *, answers: str) -> None:
    """``option DIR`` (``--judge-cache``, ``--generation-cache``): where ``answers``
    are kept on disk and reused."""
    group.add_argument(
        option,
        type=Path,
        metavar="DIR",
        help=f"reuse {answers} stored here; a rerun of the same requests is free",
    )


def add_prices_option(group: Any) -> None:
    """``--prices PRICES.yaml``."""
    group.add_argument(
        "--prices",
        type=Path,
        metavar="PRICES.yaml",
        help="USD per million tokens by model ({input, output, cached_input}), for costs",
    )


def check_concurrency(args: argparse.Namespace) -> None:
    """Refuse ``--concurrency`` below 1.

    Raises:
        InputError: naming the value.
    """
    if args.concurrency is not None and args.concurrency < 1:
        raise InputError(f"--concurrency {args.concurrency}", expected="at least 1")
