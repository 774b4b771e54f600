"""``docevals plan``: how many documents a field report's figures need."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import EXIT_OK

PLAN_METRIC_CHOICES = ("f1", "precision", "recall", "accuracy")


def register(commands: Any) -> None:
    """Add the ``plan`` subcommand."""
    parser = commands.add_parser(
        "plan",
        help="plan a sample size: documents for a ±k interval, detectable differences",
        description="From a field report's per-document counts, estimate per field the "
        "variance over documents (delta method for a ratio over document clusters) and "
        "the intra-document correlation, then say how many documents a ±HALF-WIDTH "
        "interval needs and the smallest difference between two versions a paired test "
        "detects. Every figure is printed with what it assumes.",
    )
    parser.add_argument("--report", required=True, type=Path, help="a field report JSON")
    _add_plan_options(parser)
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(handler=run)


def _add_plan_options(parser: argparse.ArgumentParser) -> None:
    """The interval, test and pairing options."""
    parser.add_argument(
        "--half-width",
        type=float,
        default=0.03,
        metavar="K",
        help="wanted half-width of the interval, in metric units (default 0.03)",
    )
    parser.add_argument(
        "--field",
        action="append",
        metavar="F",
        help="plan this field template only (repeatable; 'overall' for the whole document)",
    )
    parser.add_argument(
        "--metric",
        choices=PLAN_METRIC_CHOICES,
        default="f1",
        help="the figure to plan for (default f1)",
    )
    parser.add_argument(
        "--power", type=float, default=0.8, help="power of the paired test (default 0.8)"
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="two-sided level of the interval and the test (default 0.05)",
    )
    parser.add_argument(
        "--other-report",
        type=Path,
        metavar="R2",
        help="a second report over the same documents (another prompt version): the "
        "paired differences give the variance of a difference",
    )
    parser.add_argument(
        "--pair-correlation",
        type=float,
        default=0.5,
        metavar="R",
        help="without --other-report, the assumed per-document correlation of two "
        "versions (default 0.5)",
    )
    parser.add_argument(
        "--difference",
        type=float,
        metavar="D",
        help="also plan the documents a paired test needs to detect this difference",
    )


def _figure(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def plan_text(plan: Any) -> str:
    """The plan as a plain table with its assumptions."""
    head = (
        f"{'field':<28} {plan.metric:>7} {'docs':>6} {'ICC':>7} {'deff':>6} "
        f"{'±now':>7} {'docs ±' + format(plan.half_width, 'g'):>10} {'MDD now':>8} "
        f"{'MDD then':>8}"
    )
    if plan.difference is not None:
        head += f" {'docs Δ' + format(plan.difference, 'g'):>10}"
    lines = [head]
    for unit in plan.fields:
        line = (
            f"{unit.field[:28]:<28} {_figure(unit.value):>7} {unit.documents:>6} "
            f"{_figure(unit.intra_document_correlation, 3):>7} "
            f"{_figure(unit.design_effect, 2):>6} {_figure(unit.current_half_width):>7} "
            f"{unit.required_documents or 'n/a':>10} {_figure(unit.mdd_now):>8} "
            f"{_figure(unit.mdd_at_required):>8}"
        )
        if plan.difference is not None:
            line += f" {unit.documents_for_difference or 'n/a':>10}"
        lines.append(line)
    confidence = f"{1 - plan.alpha:.0%}"
    lines += [
        "",
        f"±now: half-width of the {confidence} interval at the report's size; docs ±k: "
        "documents for the wanted half-width; MDD: minimum detectable difference of a "
        f"two-sided paired test (alpha {plan.alpha:g}, power {plan.power:g}) now and at "
        "that size; ICC: intra-document correlation; deff: design effect.",
        "assumptions:",
    ]
    seen: list[str] = []
    for unit in plan.fields:
        seen += [text for text in unit.assumptions[1:] if text not in seen]
    lines += [f"  - {text}" for text in seen]
    lines.append("  - documents drawn like the report's (the same share hold each field)")
    lines += [f"note: {note}" for note in plan.notes]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Plan and print."""
    from docevals_mlflow.core.statistics.planner import plan_sample_size

    plan = plan_sample_size(
        args.report,
        half_width=args.half_width,
        field=args.field,
        metric=args.metric,
        alpha=args.alpha,
        power=args.power,
        other=args.other_report,
        pair_correlation=args.pair_correlation,
        difference=args.difference,
    )
    if args.json:
        print(json.dumps(plan.as_dict(), indent=2))
    else:
        print(plan_text(plan))
    return EXIT_OK
