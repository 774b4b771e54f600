"""``docevals calibrate``: how far a judge agrees with human labels, with a CI gate."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.options import add_output_options, add_tracking_options
from docevals_mlflow.cli.paths import Input, check_paths, inputs_of, report_outputs
from docevals_mlflow.cli.run_logging import log_evaluation
from docevals_mlflow.cli.thresholds import breaches, gate, gate_verdict
from docevals_mlflow.core.formatting import count_text, level_text, metric_text, percent_text
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.core.diagnostics import DisagreementBudget
    from docevals_mlflow.core.reports import EvaluationReport
    from docevals_mlflow.judges.calibration import CalibrationReport, HumanLabel
    from docevals_mlflow.reports.files import AnyReport


def register(commands: Any) -> None:
    """Add the ``calibrate`` subcommand."""
    parser = commands.add_parser(
        "calibrate",
        help="measure how far an LLM judge agrees with human labels",
        description="Pair human labels (JSON Lines or CSV: case_id, stage_id, claim_id, "
        "label, labeler) with a judge's verdicts in case or pipeline reports, and report "
        "agreement, Cohen's kappa with bootstrap intervals, a confusion matrix and, for "
        "judge panels, Fleiss' kappa across the variants; and the case pass rate from the "
        "judge alone, the humans alone and both combined (PPI++, corrected for the judge's "
        "bias).",
    )
    parser.add_argument("reports", nargs="+", type=Path, help="case or pipeline report JSON")
    parser.add_argument(
        "--labels", required=True, type=Path, help="human labels (.jsonl, .ndjson, .csv, .tsv)"
    )
    add_output_options(parser)
    parser.add_argument(
        "--metric", help="the judge metric to calibrate (default: each stage's only judge)"
    )
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=2000,
        metavar="N",
        help="bootstrap resamples for the intervals (0: none; default 2000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="interval confidence level (default 0.95)",
    )
    parser.add_argument(
        "--min-kappa",
        type=float,
        metavar="K",
        help="exit 1 when the case kappa is below K or undefined",
    )
    add_tracking_options(parser)
    parser.set_defaults(handler=run)


def _check_min_kappa(value: float | None) -> None:
    # Kappa lies in [-1, 1]; anything else (say 70 for 0.7) is a typo that would pass
    # or fail every run without saying so.
    if value is not None and not (math.isfinite(value) and -1.0 <= value <= 1.0):
        raise InputError(f"--min-kappa {value:g}", expected="a value between -1 and 1")


def check_label_cases(
    labels: list[HumanLabel], reports: list[AnyReport], *, source: str | None = None
) -> None:
    """Refuse a label naming a case and stage that no report holds.

    Such a label cannot be paired with anything: a typo in a case id, a stage id
    left out (it defaults to ``output``) or the wrong reports. Labels for cases the
    reports hold but the judge did not decide stay unmatched in the report.

    Raises:
        InputError: naming the label (``record`` ``label N``, in file order), its case
            and stage, and the stages the case has when it has some.
    """
    from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport

    present: dict[str, set[str]] = {}
    for report in reports:
        if isinstance(report, PipelineEvaluationReport):
            stages: list[EvaluationReport] = list(report.stage_reports)
        elif isinstance(report, EvaluationReport):
            stages = [report]
        else:  # a suite report: calibrate() says why it cannot be used
            return
        for stage in stages:
            present.setdefault(stage.case_id, set()).add(stage.stage_id)
    for position, label in enumerate(labels, start=1):
        stages_of_case = present.get(label.case_id)
        if stages_of_case is None:
            cases = sorted(present)
            shown = ", ".join(repr(case) for case in cases[:10])
            raise InputError(
                f"label for case {label.case_id!r}, which no report holds",
                source=source,
                record=f"label {position}",
                expected=f"a case of the reports: {shown}"
                + (f" and {len(cases) - 10} more" if len(cases) > 10 else ""),
            )
        if label.stage_id not in stages_of_case:
            raise InputError(
                f"label for case {label.case_id!r} stage {label.stage_id!r}, a stage the "
                "reports do not hold for that case",
                source=source,
                record=f"label {position}",
                expected="stage_id one of " + ", ".join(repr(s) for s in sorted(stages_of_case)),
            )


def disagreement_line(budget: DisagreementBudget) -> str:
    """``panel disagreement: reviewing the 10% most disputed verdicts catches 60% of
    the panel's errors (3 of 5)``, for the smallest budget that catches any."""
    review = budget.review
    if not review.errors:
        return f"panel disagreement: the panel made no errors on {review.items} labelled verdicts"
    point = next((point for point in review.budgets if point.errors_caught), review.budgets[-1])
    shared = not float(point.errors_caught).is_integer()
    return (
        f"panel disagreement: reviewing the {level_text(point.budget)} most disputed verdicts "
        f"catches {percent_text(point.error_capture or 0)} of the panel's errors "
        f"({count_text(point.errors_caught)} of {review.errors}"
        f"{'; ties share credit' if shared else ''})"
    )


def _print_summary(report: CalibrationReport, args: argparse.Namespace) -> None:
    """The verdict lines, the three pass rates, the panel and where the reports went."""
    from docevals_mlflow.judges.calibration.correction import correction_lines

    print(report.verdict_line("cases"))
    print(report.verdict_line("claims"))
    for level in ("cases", "claims"):
        line = report.interval_line(level)
        if line is not None:
            print(line)
    if report.pass_rate is not None:
        for line in correction_lines(report.pass_rate, report.confidence):
            print(line)
    if report.panel is not None and report.panel.fleiss_kappa is not None:
        print(f"Fleiss' κ across panel variants: {metric_text(report.panel.fleiss_kappa)}")
    if report.disagreement is not None:
        print(disagreement_line(report.disagreement))
    if report.unmatched_labels:
        print(
            f"{len(report.unmatched_labels)} label(s) matched no judged case or claim "
            "(listed in the report)"
        )
    print(f"report: {args.output}" + (f" (Markdown: {args.markdown})" if args.markdown else ""))


def run(args: argparse.Namespace) -> int:
    """Calibrate, write the reports, log the run, and gate on ``--min-kappa``."""
    from docevals_mlflow.core.atomic import atomic_write_text
    from docevals_mlflow.core.fingerprints import sha256_file
    from docevals_mlflow.judges.calibration import calibrate, load_human_labels
    from docevals_mlflow.reports.calibration_markdown import render_calibration_markdown
    from docevals_mlflow.reports.files import load_report

    # Settings and paths first: a typo in them should not cost reading every report.
    _check_min_kappa(args.min_kappa)
    check_paths(
        [*inputs_of("report", args.reports), Input("--labels", args.labels)],
        report_outputs(args),
    )
    labels = load_human_labels(args.labels)
    reports = [load_report(path) for path in args.reports]
    check_label_cases(labels, reports, source=str(args.labels))
    report = calibrate(
        reports,
        labels,
        metric=args.metric,
        bootstrap=args.bootstrap,
        seed=args.seed,
        confidence=args.confidence,
    )
    # Render both texts before writing either, so a failure leaves old files alone.
    json_text = report.model_dump_json(indent=2) + "\n"
    markdown_text = render_calibration_markdown(report)
    atomic_write_text(args.output, json_text)
    if args.markdown is not None:
        atomic_write_text(args.markdown, markdown_text)
    _print_summary(report, args)

    under = {} if args.min_kappa is None else {"case κ": args.min_kappa}
    breached = breaches(lambda _: report.cases.kappa, under=under)
    verdict = gate_verdict(breached, gated=bool(under))
    labels_sha256 = sha256_file(args.labels)

    def assemble(options: Any) -> Any:
        from docevals_mlflow.tracking.assembly import assemble_calibration

        return assemble_calibration(
            report, options, labels_sha256=labels_sha256, verdict=verdict, markdown=markdown_text
        )

    log_evaluation(args, assemble, default_run_name=args.output.stem, anchor=args.output)
    return gate(breached)


def __getattr__(name: str) -> Any:
    # Re-exported, loaded on first use: the run layout moved to tracking/, beside every other
    # run kind's.
    if name in ("LEVELS", "layout_calibration"):
        from docevals_mlflow.tracking import calibration_runs

        return getattr(calibration_runs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
