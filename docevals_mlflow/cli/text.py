"""``docevals text``: text and table metrics of a reading stage (OCR, a parser)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from docevals_mlflow.cli.annotations import add_run_annotations, annotation_inputs
from docevals_mlflow.cli.common import check_number
from docevals_mlflow.cli.options import add_tracking_options
from docevals_mlflow.cli.paths import Input, Output, check_paths
from docevals_mlflow.cli.run_logging import bundle_folder, log_evaluation, tracking_wanted
from docevals_mlflow.cli.thresholds import gate, gate_verdict
from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.docmetrics.inputs import PairedInputs
    from docevals_mlflow.docmetrics.report import TableFigures, TextFigures, TextMetricsReport

KINDS = ("auto", "text", "table")
"""``--kind`` choices (``docmetrics.inputs.KindChoice``; kept here so that building the
parser imports no NumPy; tests/test_cli_text.py checks they agree)."""
UNICODE_FORMS = ("NFC", "NFKC", "none")
"""``--unicode-form`` choices (``docmetrics.normalize.UnicodeForm``)."""
DEFAULT_ANCHOR = Path("docevals-text.json")
"""Without ``--output``, a run bundle MLflow could not take is kept beside this name
(``docevals-text.run``) in the working directory."""


@dataclass(frozen=True)
class Gate:
    """One exit-code gate: ``option`` X fails the run when the batch figure ``figure``
    of ``kind`` is ``breached_when`` X."""

    option: str
    figure: str
    label: str
    kind: Literal["text", "table"]
    breached_when: Literal["above", "below"]

    @property
    def dest(self) -> str:
        """The argparse attribute of the option."""
        return self.option.removeprefix("--").replace("-", "_")


GATES = (
    Gate("--max-cer", "cer", "CER", "text", "above"),
    Gate("--max-wer", "wer", "WER", "text", "above"),
    Gate("--min-teds", "teds", "TEDS", "table", "below"),
)
"""The gates of ``docevals text``, in the order their breaches are printed."""


def _add_gates(text: argparse.ArgumentParser) -> None:
    gates = text.add_argument_group("gates (exit 1 when one fails; 2 when its kind has no pages)")
    gates.add_argument(
        "--max-cer", type=float, metavar="X", help="exit 1 when the micro CER is above X"
    )
    gates.add_argument(
        "--max-wer", type=float, metavar="X", help="exit 1 when the micro WER is above X"
    )
    gates.add_argument(
        "--min-teds",
        type=float,
        metavar="X",
        help="exit 1 when the mean TEDS over tables is below X (0 to 1)",
    )


def register(commands: Any) -> None:
    """Add the ``text`` subcommand."""
    text = commands.add_parser(
        "text",
        help="score OCR/parser output: CER, WER, edit distance, token F1 and TEDS",
        description="Score a reading stage (OCR, a document parser) against ground truth: "
        "character and word error rate, normalized edit distance and token F1 of texts, TEDS "
        "and TEDS-S of tables, per page, per document and over the batch. EXPECTED and "
        "PREDICTED are two folders of .txt/.md/.html files paired by relative path, two "
        'JSON Lines files of {"id", "text"|"html"|"table", "page" (optional)} records '
        "paired by id and page, or two single files.",
    )
    text.add_argument("expected", type=Path, metavar="EXPECTED", help="ground truth")
    text.add_argument("predicted", type=Path, metavar="PREDICTED", help="the stage's output")
    text.add_argument(
        "--kind",
        choices=KINDS,
        default="auto",
        help="score every document as text or as a table; auto (default): .html files and "
        "html/table records are tables, the rest text",
    )
    normalization = text.add_argument_group("text normalization (before comparing)")
    normalization.add_argument(
        "--unicode-form",
        choices=UNICODE_FORMS,
        default="NFC",
        help="Unicode normalization: NFC (default), NFKC (also folds full-width letters, "
        "ligatures) or none",
    )
    normalization.add_argument(
        "--keep-whitespace",
        action="store_true",
        help="compare white space as it is (default: runs of white space are one space)",
    )
    normalization.add_argument("--casefold", action="store_true", help="ignore case")
    normalization.add_argument(
        "--remove-punctuation", action="store_true", help="drop Unicode punctuation"
    )
    text.add_argument("--output", type=Path, help="also write the JSON report here")
    text.add_argument("--markdown", type=Path, help="also write a Markdown report here")
    text.add_argument(
        "--worst",
        type=int,
        default=10,
        metavar="N",
        help="pages (by CER) and tables (by TEDS) in the worst-pages tables (default 10)",
    )
    _add_gates(text)
    add_tracking_options(text)
    add_run_annotations(text, prompt=True)
    text.set_defaults(handler=run)


def _check(args: argparse.Namespace) -> None:
    if args.worst < 0:
        raise InputError(f"--worst {args.worst}", expected="a count >= 0")
    check_number("--max-cer", args.max_cer, minimum=0)
    check_number("--max-wer", args.max_wer, minimum=0)
    check_number("--min-teds", args.min_teds, minimum=0, maximum=1)
    anchor = args.output or DEFAULT_ANCHOR
    check_paths(
        [
            Input("EXPECTED", args.expected),
            Input("PREDICTED", args.predicted),
            *annotation_inputs(args),
        ],
        [
            Output("--output", args.output) if args.output is not None else None,
            Output("--markdown", args.markdown) if args.markdown is not None else None,
            Output("the run bundle", bundle_folder(anchor), "owned")
            if tracking_wanted(args)
            else None,
        ],
    )


def _evaluate(args: argparse.Namespace) -> tuple[PairedInputs, TextMetricsReport]:
    from docevals_mlflow.docmetrics.inputs import read_text_pairs
    from docevals_mlflow.docmetrics.normalize import TextNormalization
    from docevals_mlflow.docmetrics.report import evaluate_text_inputs

    normalization = TextNormalization(
        unicode_form=args.unicode_form,
        collapse_whitespace=not args.keep_whitespace,
        casefold=args.casefold,
        remove_punctuation=args.remove_punctuation,
    )
    inputs = read_text_pairs(args.expected, args.predicted, kind=args.kind)
    return inputs, evaluate_text_inputs(inputs, normalization=normalization)


def _warn(inputs: PairedInputs) -> None:
    from docevals_mlflow.docmetrics.inputs import names_line

    if inputs.missing:
        count = len(inputs.missing)
        print(
            f"docevals: warning: {count} expected page{'s' if count != 1 else ''} "
            f"{'have' if count != 1 else 'has'} no prediction and "
            f"{'are' if count != 1 else 'is'} scored as an empty prediction (CER 1, TEDS 0): "
            f"{names_line(inputs.missing)}",
            file=sys.stderr,
        )
    if inputs.extra:
        count = len(inputs.extra)
        print(
            f"docevals: warning: {count} prediction{'s' if count != 1 else ''} "
            f"{'have' if count != 1 else 'has'} no expected page and "
            f"{'are' if count != 1 else 'is'} not scored: {names_line(inputs.extra)}",
            file=sys.stderr,
        )


def _aligned(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))]
    return [
        ("  " + "  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True))).rstrip()
        for row in [headers, *rows]
    ]


def summary_lines(report: TextMetricsReport, *, worst: int) -> list[str]:
    """What the terminal shows: batch figures, then the worst pages and tables."""
    from docevals_mlflow.reports.text_markdown import (
        WORST_TABLE_HEADERS,
        WORST_TEXT_HEADERS,
        counted,
        worst_table_rows,
        worst_text_rows,
    )

    lines = []
    text, tables = report.text, report.table
    if text is not None:
        lines.append(
            f"text: {counted(text.documents, 'document')}, {counted(text.pages, 'page')}; "
            f"CER {metric_text(text.cer)} (macro {metric_text(text.macro_cer)}), "
            f"WER {metric_text(text.wer)} (macro {metric_text(text.macro_wer)}), "
            f"NED {metric_text(text.ned)}, token F1 {metric_text(text.token_f1)}"
        )
    if tables is not None:
        lines.append(
            f"tables: {counted(tables.documents, 'document')}, "
            f"{counted(tables.tables, 'table')}; TEDS {metric_text(tables.teds)} "
            f"(macro {metric_text(tables.macro_teds)}), "
            f"TEDS-S {metric_text(tables.teds_s)}"
        )
    if worst and text is not None:
        lines.append("worst pages by CER:")
        lines += _aligned(WORST_TEXT_HEADERS, worst_text_rows(report.worst_text(worst)))
    if worst and tables is not None:
        lines.append("worst tables by TEDS:")
        lines += _aligned(WORST_TABLE_HEADERS, worst_table_rows(report.worst_tables(worst)))
    return lines


def _figures(report: TextMetricsReport, one: Gate) -> TextFigures | TableFigures | None:
    return report.text if one.kind == "text" else report.table


def asked_gates(args: argparse.Namespace, report: TextMetricsReport) -> list[tuple[Gate, float]]:
    """The gates given, with their limits.

    Raises:
        InputError: a gate on a kind the inputs have no page of (``--min-teds`` with
            text files only): a gate that cannot be checked must not pass silently.
    """
    asked = [(one, getattr(args, one.dest)) for one in GATES]
    given = [(one, limit) for one, limit in asked if limit is not None]
    for one, limit in given:
        if _figures(report, one) is None:
            what = "text pages" if one.kind == "text" else "tables"
            how = (
                ".txt/.md files or text records"
                if one.kind == "text"
                else ".html files, html/table records, or --kind table"
            )
            raise InputError(
                f"{one.option} {limit:g}: the inputs have no {what} to score",
                expected=f"{what} in EXPECTED ({how})",
            )
    return given


def _by(difference: float) -> str:
    shown = metric_text(difference)
    # A breach smaller than the fourth decimal would otherwise read "by 0.0000".
    return shown if shown != metric_text(0.0) else f"{difference:.1e}"


def gate_breaches(report: TextMetricsReport, gates: Sequence[tuple[Gate, float]]) -> list[str]:
    """One line per failed gate: the figure, the gate, and by how much it missed."""
    lines = []
    for one, limit in gates:
        figures = _figures(report, one)
        value: float = getattr(figures, one.figure)
        missed = value - limit if one.breached_when == "above" else limit - value
        if missed > 0:
            lines.append(
                f"{one.label} {metric_text(value)} is {one.breached_when} "
                f"{one.option} {limit:g} by {_by(missed)}"
            )
    return lines


def run(args: argparse.Namespace) -> int:
    """Score, print, write the reports, log the run, and gate on ``--max-cer``,
    ``--max-wer`` and ``--min-teds``."""
    from docevals_mlflow.core.atomic import atomic_write_text
    from docevals_mlflow.reports.text_markdown import render_text_markdown

    _check(args)
    inputs, report = _evaluate(args)
    gates = asked_gates(args, report)
    # Render everything before writing anything: a failure leaves old files untouched.
    json_text = report.to_json()
    markdown_text = render_text_markdown(report, worst=args.worst)
    _warn(inputs)
    if args.output is not None:
        atomic_write_text(args.output, json_text)
    if args.markdown is not None:
        atomic_write_text(args.markdown, markdown_text)
    print("\n".join(summary_lines(report, worst=args.worst)))
    written = [
        f"{what}: {path}"
        for what, path in (("report", args.output), ("Markdown", args.markdown))
        if path
    ]
    if written:
        print(" · ".join(written))
    breached = gate_breaches(report, gates)

    def assemble(options: Any) -> Any:
        from docevals_mlflow.tracking.text_runs import assemble_text

        return assemble_text(
            report,
            options,
            worst=args.worst,
            verdict=gate_verdict(breached, gated=bool(gates)),
            markdown=markdown_text,
            report_json=json_text,
        )

    anchor = args.output or DEFAULT_ANCHOR
    log_evaluation(
        args,
        assemble,
        default_run_name="text" if args.output is None else args.output.stem,
        anchor=anchor,
        ground_truth=args.expected,
    )
    return gate(breached)


__all__ = [
    "GATES",
    "KINDS",
    "UNICODE_FORMS",
    "Gate",
    "asked_gates",
    "gate_breaches",
    "register",
    "run",
    "summary_lines",
]
