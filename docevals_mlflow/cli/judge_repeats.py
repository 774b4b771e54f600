"""``--repeats N`` of ``evaluate-case`` and ``evaluate-pipeline``: the judges wrapped
to be asked N times, the report's flip-rate figures, and their printed line (see
:mod:`docevals_mlflow.evaluation.judge_repeats`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TypeVar

from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.core.repeat_figures import JudgeRepeatFigures
    from docevals_mlflow.core.reports import EvaluationReport
    from docevals_mlflow.evaluation.metrics import Metric
    from docevals_mlflow.evaluation.pipeline import PipelineEvaluator

MAX_REPEATS = 100
"""Far above what a flip rate needs; a typo (``--repeats 1000``) should not cost 1000 calls."""

R = TypeVar("R")


def repeats_of(args: argparse.Namespace) -> int:
    """``--repeats`` (1 for a command without it), checked.

    Raises:
        InputError: below 1 or above :data:`MAX_REPEATS`.
    """
    repeats: int = getattr(args, "repeats", 1)
    if not 1 <= repeats <= MAX_REPEATS:
        raise InputError(f"--repeats {repeats}", expected=f"a whole number from 1 to {MAX_REPEATS}")
    return repeats


def _no_judge(repeats: int, where: str) -> InputError:
    return InputError(
        f"--repeats {repeats} needs an LLM judge to repeat",
        expected=f"--judge or --panel{where}",
    )


def repeat_case_judge(args: argparse.Namespace, judge: Metric | None) -> Metric | None:
    """The ``evaluate-case`` judge, asked ``--repeats`` times.

    Raises:
        InputError: ``--repeats`` above 1 without a judge.
    """
    from docevals_mlflow.evaluation.judge_repeats import repeated

    repeats = repeats_of(args)
    if judge is None:
        if repeats > 1:
            raise _no_judge(repeats, "")
        return None
    return repeated(judge, repeats)


def repeat_pipeline_judges(args: argparse.Namespace, evaluator: PipelineEvaluator) -> None:
    """Every judge of ``evaluator`` (``--judge``/``--panel`` and those the configuration
    names), asked ``--repeats`` times.

    Raises:
        InputError: ``--repeats`` above 1 and no judge anywhere.
    """
    from docevals_mlflow.evaluation.judge_repeats import repeat_judges_in

    repeats = repeats_of(args)
    lists = [
        *evaluator.stage_metrics.values(),
        *evaluator.operation_metrics.values(),
        evaluator.default_metrics,
    ]
    if repeat_judges_in(lists, repeats) == 0 and repeats > 1:
        raise _no_judge(repeats, ", or a judge or panel metric in the configuration")


def with_repeat_figures(report: R, stages: list[EvaluationReport] | None = None) -> R:
    """``report`` with its judges' flip-rate figures (itself when no judge was repeated,
    so a run without ``--repeats`` writes the report it always wrote)."""
    from docevals_mlflow.cli.judging import stage_reports
    from docevals_mlflow.evaluation.judge_repeats import judge_repeat_figures

    figures = judge_repeat_figures(stage_reports(report, stages))
    if figures is None or not hasattr(report, "judge_repeats"):
        return report
    copy: R = report.model_copy(update={"judge_repeats": figures})  # type: ignore[attr-defined]
    return copy


def repeat_figures_of(
    report: Any, stages: list[EvaluationReport] | None
) -> JudgeRepeatFigures | None:
    """The report's figures, or (a suite: the report has none) those of its stages."""
    figures = getattr(report, "judge_repeats", None)
    if figures is not None or stages is None:
        return figures
    from docevals_mlflow.evaluation.judge_repeats import judge_repeat_figures

    return judge_repeat_figures(stages)


def repeat_lines(figures: JudgeRepeatFigures | None) -> list[str]:
    """The printed lines: the summary, then each judge that flipped and each panel
    member whose own verdicts flipped (``judge <panel>/<member>: ...``)."""
    if figures is None:
        return []
    from docevals_mlflow.core.formatting import percent_text

    def line(name: str, flipped: int, stages: int, rate: float | None, all_: float | None) -> str:
        return (
            f"judge {name}: {flipped} of {stages} flipped ({percent_text(rate)}), "
            f"pass^{figures.repeats} {percent_text(all_)}"
        )

    lines = [figures.summary_line()]
    for judge in figures.judges:
        if judge.flipped:
            lines.append(
                line(judge.metric, judge.flipped, judge.stages, judge.flip_rate, judge.pass_all)
            )
        for member in judge.members or ():
            if member.flipped:
                lines.append(
                    line(
                        f"{judge.metric}/{member.member}",
                        member.flipped,
                        member.stages,
                        member.flip_rate,
                        member.pass_all,
                    )
                )
    return lines
