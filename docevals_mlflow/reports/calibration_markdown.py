"""A judge calibration report as Markdown: verdict lines, a table and a confusion
matrix per level, the panel, the disagreement budget, and the unpaired labels and
items.
"""

from __future__ import annotations

from docevals_mlflow.core.formatting import level_text, metric_text
from docevals_mlflow.core.statistics import kappa_strength
from docevals_mlflow.judges.calibration.report import (
    CalibrationReport,
    ConfidenceInterval,
    LevelName,
    PanelCalibration,
    share_percent,
)
from docevals_mlflow.reports.diagnostics_markdown import disagreement_section
from docevals_mlflow.reports.markdown import table


def render_calibration_markdown(report: CalibrationReport, *, max_rows: int = 50) -> str:
    """A compact Markdown report of ``report``: verdict lines, a table and a confusion
    matrix per level, the panel, and the unpaired labels and items (at most
    ``max_rows`` each; the JSON report has all of them)."""
    lines = ["# Judge calibration", ""]
    lines += [
        f"Metric: {', '.join(f'`{name}`' for name in report.metrics_used)}; "
        f"bootstrap {report.bootstrap} resamples, seed {report.seed}.",
        "",
    ]
    lines += _level_markdown(report, "cases")
    if report.pass_rate is not None:
        from docevals_mlflow.judges.calibration.correction import correction_lines

        lines += [
            "## Pass rate corrected for judge bias (PPI++)",
            "",
            *(f"- {line}" for line in correction_lines(report.pass_rate, report.confidence)),
            "",
        ]
    lines += _level_markdown(report, "claims")
    if report.panel is not None:
        lines += _panel_markdown(report.panel)
    if report.disagreement is not None:
        lines += [*disagreement_section(report.disagreement), ""]
    lines += _unpaired_markdown(report, max_rows)
    if report.notes:
        lines += ["## Notes", "", *(f"- {note}" for note in report.notes), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _share(value: float | None, interval: ConfidenceInterval | None) -> str:
    if value is None:
        return "n/a"
    text = share_percent(value)
    if interval is not None:
        text += f" ({share_percent(interval.low, sign=False)}–{share_percent(interval.high)})"
    return text


def _kappa_text(value: float | None, interval: ConfidenceInterval | None = None) -> str:
    if value is None:
        return "undefined"
    text = metric_text(value)
    if interval is not None:
        # "to" rather than a dash: kappa bounds can be negative.
        text += f" ({metric_text(interval.low)} to {metric_text(interval.high)})"
    return text


def _level_markdown(report: CalibrationReport, name: LevelName) -> list[str]:
    figures = report.level(name)
    lines = [f"## {name.capitalize()}", "", report.verdict_line(name), ""]
    if figures.n == 0:
        return lines
    intervals = report.interval_line(name)
    if intervals is not None:
        lines += [intervals, ""]
    level = level_text(report.confidence)
    lines += table(
        [
            "n",
            f"agreement ({level} CI)",
            f"κ ({level} CI)",
            "κ decided",
            "abstentions",
            f"{figures.positive} precision",
            f"{figures.positive} recall",
        ],
        [
            (
                figures.n,
                _share(figures.agreement, figures.agreement_ci),
                _kappa_text(figures.kappa, figures.kappa_ci),
                _kappa_text(figures.kappa_decided),
                f"{figures.abstentions} of {figures.n}",
                _share(figures.precision, None),
                _share(figures.recall, None),
            )
        ],
    )
    lines += ["", "Rows human, columns judge:", ""]
    lines += table(
        ["human \\ judge", *figures.judge_categories],
        (
            [human, *(figures.confusion[human][judge] for judge in figures.judge_categories)]
            for human in figures.human_categories
        ),
    )
    if figures.notes:
        lines += ["", *(f"- {note}" for note in figures.notes)]
    return [*lines, ""]


def _panel_markdown(panel: PanelCalibration) -> list[str]:
    lines = ["## Panel", ""]
    if panel.fleiss_kappa is None:
        lines.append(f"Fleiss' κ across variants on {panel.cases} cases: undefined")
    else:
        lines.append(
            f"Fleiss' κ across {panel.raters} variants on {panel.cases} cases: "
            f"{metric_text(panel.fleiss_kappa)} ({kappa_strength(panel.fleiss_kappa)})"
        )
    lines += [
        "",
        *table(
            ["variant", "labelled cases", "agreement", "κ with humans", "abstentions"],
            (
                (
                    variant.name,
                    variant.n,
                    _share(variant.agreement, None),
                    _kappa_text(variant.kappa),
                    variant.abstentions,
                )
                for variant in panel.variant_calibration
            ),
        ),
    ]
    return [*lines, "", *(f"- {note}" for note in panel.notes), ""]


def _unpaired_markdown(report: CalibrationReport, max_rows: int) -> list[str]:
    lines: list[str] = []
    if report.unmatched_labels:
        lines += [f"## Unmatched labels ({len(report.unmatched_labels)})", ""]
        lines += table(
            ["case", "stage", "claim", "label", "reason"],
            (
                (
                    item.label.case_id,
                    item.label.stage_id,
                    item.label.claim_id,
                    item.label.label,
                    item.reason,
                )
                for item in report.unmatched_labels[:max_rows]
            ),
        )
        lines += _more(len(report.unmatched_labels), max_rows)
    if report.unlabelled_cases or report.unlabelled_claims:
        lines += [
            "## Unlabelled judged items",
            "",
            f"{len(report.unlabelled_cases)} judged case(s) and "
            f"{len(report.unlabelled_claims)} judged claim(s) have no human label.",
            "",
        ]
        if report.unlabelled_cases:
            lines += table(
                ["case", "stage", "judge verdict"],
                (
                    (item.case_id, item.stage_id, item.judge_answer)
                    for item in report.unlabelled_cases[:max_rows]
                ),
            )
            lines += _more(len(report.unlabelled_cases), max_rows)
    return lines


def _more(total: int, shown: int) -> list[str]:
    if total <= shown:
        return [""]
    return ["", f"... and {total - shown} more (see the JSON report).", ""]
