"""The calibration report as Markdown: verdict lines, a table and a confusion matrix per
level, the panel, and the unpaired labels and items.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docevals_mlflow.core.formatting import metric_text, percent_text
from docevals_mlflow.judges.calibration.statistics import ConfidenceInterval, kappa_strength

if TYPE_CHECKING:
    from docevals_mlflow.judges.calibration.report import CalibrationReport, LevelName


def _percent(value: float, *, sign: bool = True) -> str:
    """A share as a percentage; without ``sign``, the number only (the lower end of a
    range such as ``70.0-85.0%``)."""
    text = percent_text(value)
    return text if sign else text.removesuffix("%")


def _level(confidence: float) -> str:
    # A setting, not a measurement: printed as given (95%, 97.5%), never rounded.
    return f"{confidence * 100:g}%"


def _share(value: float | None, interval: ConfidenceInterval | None) -> str:
    if value is None:
        return "n/a"
    text = _percent(value)
    if interval is not None:
        text += f" ({_percent(interval.low, sign=False)}–{_percent(interval.high)})"
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
    from docevals_mlflow.reports.markdown import table

    figures = report.level(name)
    lines = [f"## {name.capitalize()}", "", report.verdict_line(name), ""]
    if figures.n == 0:
        return lines
    level = _level(report.confidence)
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


def _render_markdown(report: CalibrationReport, max_rows: int) -> str:
    from docevals_mlflow.reports.markdown import table

    lines = ["# Judge calibration", ""]
    lines += [
        f"Metric: {', '.join(f'`{name}`' for name in report.metrics_used)}; "
        f"bootstrap {report.bootstrap} resamples, seed {report.seed}.",
        "",
    ]
    lines += _level_markdown(report, "cases")
    lines += _level_markdown(report, "claims")
    panel = report.panel
    if panel is not None:
        lines += ["## Panel", ""]
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
        lines += ["", *(f"- {note}" for note in panel.notes), ""]
    if report.disagreement is not None:
        from docevals_mlflow.reports.diagnostics_markdown import disagreement_section

        lines += [*disagreement_section(report.disagreement), ""]
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
    if report.notes:
        lines += ["## Notes", "", *(f"- {note}" for note in report.notes), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _more(total: int, shown: int) -> list[str]:
    if total <= shown:
        return [""]
    return ["", f"... and {total - shown} more (see the JSON report).", ""]
