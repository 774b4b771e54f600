"""``--repeats N``: every LLM judge (or panel) asked N times per stage, and how far
its verdicts agree (:mod:`docevals_mlflow.core.repeat_figures`).

:class:`RepeatedJudgeMetric` wraps a judge metric: repeat 1 is an ordinary call and
gives the stage's result (the verdict a run without repeats would have, the one the
judge cache holds); repeats 2..N run concurrently inside
:func:`~docevals_mlflow.judges.repeats.fresh_answers`, so each is a real call. The
result keeps every repeat's verdict in ``details["repeats"]`` (a panel's also each
member's, under ``members``), and its usage is the sum over the repeats, so the
printed cost is what was spent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.repeat_figures import (
    REPEATS_DETAIL,
    JudgeMemberRepeat,
    JudgeRepeat,
    JudgeRepeatFigures,
)
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.evaluation.metrics import Metric, arun_metric, metric_config, metric_name
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric
from docevals_mlflow.judges.judge import run_sync
from docevals_mlflow.judges.repeats import fresh_answers


def is_judge(metric: Metric) -> bool:
    """Whether ``metric`` is an LLM judge or a panel (what ``--repeats`` repeats)."""
    return isinstance(metric, (LLMJudgeMetric, JudgePanelMetric, RepeatedJudgeMetric))


def _summed_usage(results: Sequence[MetricResult]) -> dict[str, float]:
    total: dict[str, float] = {}
    for result in results:
        for key, value in result.usage.items():
            total[key] = total.get(key, 0.0) + value
    return total


NO_ANSWER = "no answer"
"""A member verdict when the member gave none (as ``docevals repeats`` counts it)."""


def member_verdicts(results: Sequence[MetricResult]) -> dict[str, list[str]] | None:
    """Each panel member's verdict in every repeat, by member name (``None``: not a
    panel)."""
    members: dict[str, list[str]] = {}
    for result in results:
        details = result.details if isinstance(result.details, dict) else {}
        variants = details.get("variants")
        if result.basis != "judge_panel" or not isinstance(variants, list):
            return None
        for variant in variants:
            verdict = variant.get("verdict") if isinstance(variant, dict) else None
            name = str(variant.get("name")) if isinstance(variant, dict) else "?"
            members.setdefault(name, []).append(NO_ANSWER if verdict is None else str(verdict))
    return members or None


class RepeatedJudgeMetric:
    """A judge metric asked ``repeats`` times per case (see the module docstring)."""

    def __init__(self, metric: Metric, repeats: int) -> None:
        if repeats < 2:
            raise ValueError("a repeated judge needs at least 2 repeats")
        self.metric = metric
        self.repeats = repeats
        self.name = metric_name(metric)

    def config(self) -> dict[str, Any]:
        """The judge's own settings and the number of repeats (both change results)."""
        return {"repeated": metric_config(self.metric), "repeats": self.repeats}

    async def _fresh(self, case: EvaluationCase) -> MetricResult:
        with fresh_answers():
            return await arun_metric(self.metric, case)

    async def aevaluate(self, case: EvaluationCase) -> MetricResult:
        """The first repeat's result, with every repeat's verdict in its details."""
        first = await arun_metric(self.metric, case)
        # Each gathered repeat is a task of its own: the bypass stays inside it.
        others = await asyncio.gather(*(self._fresh(case) for _ in range(self.repeats - 1)))
        results = [first, *others]
        verdicts = [result.verdict for result in results]
        flipped = len(set(verdicts)) > 1
        entry: dict[str, Any] = {"verdicts": verdicts, "flipped": flipped}
        members = member_verdicts(results)
        if members is not None:
            entry["members"] = members
        details = {**(first.details or {}), REPEATS_DETAIL: entry}
        notes = list(first.notes)
        if flipped:
            notes.append(
                f"the judge's verdict flipped across {self.repeats} repeats "
                f"({', '.join(verdicts)}); the first repeat's stands"
            )
        return first.model_copy(
            update={
                "details": details,
                "notes": notes,
                "usage": _summed_usage(results) if any(r.usage for r in results) else first.usage,
                # A verdict the judge does not repeat is not one to trust unread.
                "requires_human_review": first.requires_human_review or flipped,
            }
        )

    def evaluate(self, case: EvaluationCase) -> MetricResult:
        """Synchronous :meth:`aevaluate`."""
        return run_sync(self.aevaluate(case))


def repeated(metric: Metric, repeats: int) -> Metric:
    """``metric`` asked ``repeats`` times (itself when ``repeats`` is 1)."""
    return metric if repeats <= 1 else RepeatedJudgeMetric(metric, repeats)


def repeat_judges_in(lists: Iterable[list[Metric]], repeats: int) -> int:
    """Replace, in place, every judge of ``lists`` by its repeated form; how many were
    replaced (a metric object in several lists is wrapped once and shared)."""
    if repeats <= 1:
        return 0
    wrapped: dict[int, Metric] = {}
    for metrics in lists:
        for index, metric in enumerate(metrics):
            if is_judge(metric) and not isinstance(metric, RepeatedJudgeMetric):
                metrics[index] = wrapped.setdefault(
                    id(metric), RepeatedJudgeMetric(metric, repeats)
                )
    return len(wrapped)


def _repeat(rows: Sequence[Sequence[str]]) -> tuple[int, int]:
    """Of ``rows`` (each a unit's N verdicts): how many flipped, how many passed in all."""
    flipped = sum(len(set(row)) > 1 for row in rows)
    passed = sum(all(verdict == "pass" for verdict in row) for row in rows)
    return flipped, passed


def _members(rows: dict[str, list[list[str]]]) -> list[JudgeMemberRepeat] | None:
    if not rows:
        return None
    members = []
    for member, verdicts in sorted(rows.items()):
        flipped, passed = _repeat(verdicts)
        members.append(
            JudgeMemberRepeat(
                member=member,
                stages=len(verdicts),
                flipped=flipped,
                flip_rate=flipped / len(verdicts),
                pass_all=passed / len(verdicts),
            )
        )
    return members


def judge_repeat_figures(stages: Iterable[EvaluationReport]) -> JudgeRepeatFigures | None:
    """Flip rate and pass^N over the repeated judge results of ``stages``, per judge and
    per panel member (``None``: no judge was repeated)."""
    per_metric: dict[str, list[list[str]]] = {}
    per_member: dict[str, dict[str, list[list[str]]]] = {}
    flipping: list[str] = []
    for stage in stages:
        for result in stage.metric_results:
            details = result.details if isinstance(result.details, dict) else {}
            entry = details.get(REPEATS_DETAIL)
            if not isinstance(entry, dict) or not isinstance(entry.get("verdicts"), list):
                continue
            verdicts = [str(verdict) for verdict in entry["verdicts"]]
            per_metric.setdefault(result.name, []).append(verdicts)
            members = entry.get("members")
            for member, seen in (members if isinstance(members, dict) else {}).items():
                rows = per_member.setdefault(result.name, {}).setdefault(str(member), [])
                rows.append([str(verdict) for verdict in seen])
            if len(set(verdicts)) > 1:
                flipping.append(f"{stage.case_id}/{stage.stage_id}: {result.name}")
    if not per_metric:
        return None
    repeats = max(len(verdicts) for rows in per_metric.values() for verdicts in rows)
    judges = []
    passed_all = 0
    for name, rows in sorted(per_metric.items()):
        flipped, passed = _repeat(rows)
        passed_all += passed
        judges.append(
            JudgeRepeat(
                metric=name,
                stages=len(rows),
                flipped=flipped,
                flip_rate=flipped / len(rows),
                pass_all=passed / len(rows),
                members=_members(per_member.get(name, {})),
            )
        )
    units = sum(judge.stages for judge in judges)
    return JudgeRepeatFigures(
        repeats=repeats,
        units=units,
        flip_rate=sum(judge.flipped for judge in judges) / units,
        pass_all=passed_all / units,
        judges=judges,
        flipping=flipping,
    )
