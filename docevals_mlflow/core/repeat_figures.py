"""How far an LLM judge agrees with itself when asked the same case again
(``--repeats N`` on ``evaluate-case`` and ``evaluate-pipeline``).

Each judged stage keeps, in its judge result's ``details["repeats"]``, the verdict of
every repeat; the report adds :class:`JudgeRepeatFigures` over its stages. A stage
*flips* when its N verdicts are not all the same; *pass^N* is the share of stages
the judge called ``pass`` in every repeat. The stage's verdict is the first repeat's.
A panel's members get the same two figures from their own verdicts
(:class:`JudgeMemberRepeat`): which member flips, when the panel's vote does not show it.
"""

from __future__ import annotations

from pydantic import Field

from docevals_mlflow.core.formatting import percent_text
from docevals_mlflow.core.model import DocEvalsModel

REPEATS_DETAIL = "repeats"
"""The key of a judge result's ``details`` holding its repeats' verdicts."""


def _absent(value: object) -> bool:
    """Leave an optional field out of the JSON, so reports without it stay as they were."""
    return value is None


class JudgeMemberRepeat(DocEvalsModel):
    """One member (variant) of a repeated panel: its own verdicts over the repeats."""

    member: str
    stages: int
    """Stages the member judged (each N times)."""
    flipped: int
    """Stages where the member's N verdicts are not all the same."""
    flip_rate: float | None
    pass_all: float | None
    """pass^N: the share of stages the member called ``pass`` in every repeat."""


class JudgeRepeat(DocEvalsModel):
    """One judge (the ``--judge`` metric, a panel, a configured judge) over its stages."""

    metric: str
    stages: int
    """Stages the judge judged (each N times)."""
    flipped: int
    """Stages whose N verdicts are not all the same."""
    flip_rate: float | None
    pass_all: float | None
    """pass^N: the share of stages called ``pass`` in every repeat."""
    members: list[JudgeMemberRepeat] | None = Field(default=None, exclude_if=_absent)
    """A panel's members, by name (left out of the JSON for a single judge)."""


class JudgeRepeatFigures(DocEvalsModel):
    """Flip rate and pass^N of every repeated judge of a report."""

    repeats: int
    """N: how many times each judge was asked per stage."""
    verdict_from: str = "first repeat"
    """Which repeat gives the stage's verdict."""
    units: int
    """(stage, judge) pairs judged N times."""
    flip_rate: float | None
    """The share of those pairs whose verdicts flipped."""
    pass_all: float | None
    """pass^N over those pairs: the share called ``pass`` in every repeat."""
    judges: list[JudgeRepeat] = Field(default_factory=list)
    flipping: list[str] = Field(default_factory=list)
    """``case_id/stage_id: metric`` of each pair that flipped."""

    def summary_line(self) -> str:
        """``judge repeats (3): 1 of 4 stage judgements flipped (25.0%), pass^3 50.0%``."""
        flips = sum(judge.flipped for judge in self.judges)
        return (
            f"judge repeats ({self.repeats}): {flips} of {self.units} stage judgement"
            f"{'s' if self.units != 1 else ''} flipped ({percent_text(self.flip_rate)}), "
            f"pass^{self.repeats} {percent_text(self.pass_all)}"
        )


def _member_table(figures: JudgeRepeatFigures) -> list[str]:
    """Each panel member's own flip rate and pass^N (none without a repeated panel)."""
    rows = [
        f"| {judge.metric} | {member.member} | {member.stages} | {member.flipped} | "
        f"{percent_text(member.flip_rate)} | {percent_text(member.pass_all)} |"
        for judge in figures.judges
        for member in judge.members or ()
    ]
    if not rows:
        return []
    n = figures.repeats
    return [
        "",
        "Panel members, each from its own verdicts over the repeats:",
        "",
        f"| Panel | Member | Stages | Flipped | Flip rate | pass^{n} |",
        "|---|---|---|---|---|---|",
        *rows,
    ]


def judge_repeat_section(figures: JudgeRepeatFigures | None) -> list[str]:
    """The Markdown section of a report's judge repeats (none without repeats)."""
    if figures is None:
        return []
    n = figures.repeats
    lines = [
        "",
        "## Judge repeats",
        "",
        f"{figures.summary_line()}; each stage's verdict is the {figures.verdict_from}'s.",
        "",
        f"| Judge | Stages | Flipped | Flip rate | pass^{n} |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {judge.metric} | {judge.stages} | {judge.flipped} | "
        f"{percent_text(judge.flip_rate)} | {percent_text(judge.pass_all)} |"
        for judge in figures.judges
    ]
    lines += _member_table(figures)
    if figures.flipping:
        lines += ["", "Flipped: " + ", ".join(f"`{unit}`" for unit in figures.flipping[:20])]
        if len(figures.flipping) > 20:
            lines[-1] += f" and {len(figures.flipping) - 20} more"
    return lines
