"""Counterfactual (oracle-swap) attribution of failures that co-occur upstream.

When a stage and one of its ancestors both fail, attribution from verdicts stops at
``upstream_or_combined``: the failure "must not be blamed on this stage alone". The
way out is to rerun the stage on corrected input. :class:`Counterfactual` does that
for every such stage: it replaces each direct upstream output by its ground-truth
(or approved) version, rebuilds the stage's input, gets a new output from the
registered action (or a recorded rerun result) and scores it with the stage's own
metrics:

* the rerun passes → ``caused_by_upstream``: the upstream failure caused this one;
* it still fails → ``independent_failure``: the stage has a problem of its own;
* it cannot be rerun (no action, no ground truth upstream, the action raised) or the
  rerun is uncertain → the attribution stays ``upstream_or_combined``.

The rerun's input, output, metric results and reason are kept on the stage report
(:class:`~docevals_mlflow.core.diagnostics.CounterfactualRerun`).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import Field

from docevals_mlflow.core.cases import EvaluationCase, PipelineCase
from docevals_mlflow.core.diagnostics import CounterfactualRerun, RerunOutcome
from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.core.literals import FailureContext
from docevals_mlflow.core.model import FrozenModel
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.core.verdicts import combine_verdicts
from docevals_mlflow.diagnostics.oracle import (
    RerunUnavailable,
    copy_value,
    default_rerun_input,
    oracle_output,
)
from docevals_mlflow.errors import ConfigurationError, DocEvalsError, InputError

Action = Callable[[Any], Any]
"""Reruns an operation: corrected input in, new output out (may be ``async``)."""
InputBuilder = Callable[[EvaluationCase, Mapping[str, Any]], Any]
"""``(stage, corrected upstream outputs by stage id) -> input_data`` for the rerun."""
Scorer = Callable[[EvaluationCase], Awaitable[list[MetricResult]]]
"""Scores a stage case with that stage's metrics (supplied by the evaluator)."""

_OUTCOME_CONTEXT: dict[RerunOutcome, FailureContext] = {
    "caused_by_upstream": "caused_by_upstream",
    "independent_failure": "independent_failure",
    "inconclusive": "upstream_or_combined",
    "not_rerun": "upstream_or_combined",
}


class RecordedRerun(FrozenModel):
    """A rerun done elsewhere: the stage's output on corrected upstream input.

    ``input_data`` (optional) is the corrected input it was run on, kept in the
    report; without it the input the evaluator would have built is recorded.
    """

    pipeline_id: str = Field(min_length=1)
    stage_id: str = Field(min_length=1)
    prediction: Any
    input_data: Any = None


def _attribution(verdict: str) -> tuple[RerunOutcome, str | None]:
    """What a rerun's verdict says about the original failure, and why when unclear."""
    if verdict == "pass":
        return "caused_by_upstream", None
    if verdict == "fail":
        return "independent_failure", None
    return "inconclusive", f"the rerun's verdict is {verdict}, so the attribution stays combined"


class Counterfactual:
    """Oracle-swap reruns for stages that failed along with an upstream stage.

    ``actions`` maps a stage id or an operation (a stage id wins) to the function
    that performs it: it receives the corrected input and returns the new output,
    and may be ``async``. ``reruns`` are rerun results recorded elsewhere (they win
    over an action). ``build_input(stage, corrected)`` rebuilds a stage's input from
    corrected upstream outputs where :func:`default_rerun_input` cannot.

    Pass it to :class:`~docevals_mlflow.PipelineEvaluator` (``counterfactual=``);
    without it nothing is rerun and evaluation is unchanged.
    """

    def __init__(
        self,
        actions: Mapping[str, Action] | None = None,
        *,
        reruns: Iterable[RecordedRerun] = (),
        build_input: InputBuilder | None = None,
    ) -> None:
        self.actions = dict(actions or {})
        for name, action in self.actions.items():
            if not callable(action):
                raise ConfigurationError(
                    f"action {name!r} is not callable", expected="a function of the input"
                )
        self.reruns: dict[tuple[str, str], RecordedRerun] = {}
        for rerun in reruns:
            key = (rerun.pipeline_id, rerun.stage_id)
            if key in self.reruns:
                raise ConfigurationError(
                    f"two recorded reruns for pipeline {rerun.pipeline_id!r} stage "
                    f"{rerun.stage_id!r}",
                    expected="one per stage",
                )
            self.reruns[key] = rerun
        self.build_input = build_input

    def check_references(self, pipelines: Sequence[PipelineCase]) -> None:
        """Refuse recorded reruns and actions that name nothing in ``pipelines``.

        A rerun for a pipeline or stage that does not exist, or an action named after
        neither a stage id nor an operation, would never be used, and the attribution
        it was meant to refine would stay ``upstream_or_combined`` without a word.

        Raises:
            InputError: naming the rerun (``record`` ``rerun N``, in the order given)
                or the action, and what exists.
        """
        by_pipeline = {
            pipeline.pipeline_id: {stage.stage_id for stage in pipeline.stages}
            for pipeline in pipelines
        }
        for position, (pipeline_id, stage_id) in enumerate(self.reruns, start=1):
            stages = by_pipeline.get(pipeline_id)
            if stages is None:
                raise InputError(
                    f"recorded rerun for pipeline {pipeline_id!r}, which is not evaluated",
                    record=f"rerun {position}",
                    expected=f"one of the pipelines: {_names(by_pipeline)}",
                )
            if stage_id not in stages:
                raise InputError(
                    f"recorded rerun for stage {stage_id!r}, which pipeline {pipeline_id!r} "
                    "does not have",
                    record=f"rerun {position}",
                    expected=f"one of its stages: {_names(stages)}",
                )
        known = {
            name
            for pipeline in pipelines
            for stage in pipeline.stages
            for name in (stage.stage_id, stage.operation)
        }
        for name in self.actions:
            if name not in known:
                raise InputError(
                    f"action {name!r} names neither a stage nor an operation of the pipelines",
                    expected=f"a stage id or an operation: {_names(known)}",
                )

    def action_for(self, stage: EvaluationCase) -> Action | None:
        """The action registered for the stage id, else for its operation."""
        return self.actions.get(stage.stage_id) or self.actions.get(stage.operation)

    async def apply(
        self,
        pipeline_id: str,
        stages: Sequence[EvaluationCase],
        reports: Sequence[EvaluationReport],
        score: Scorer,
    ) -> list[EvaluationReport]:
        """``reports`` with every ``upstream_or_combined`` failure rerun and refined.

        ``stages`` are the resolved stages (in the order of ``reports``); ``score``
        runs a stage's metrics on a case.
        """
        by_id = {stage.stage_id: stage for stage in stages}
        report_of = {report.stage_id: report for report in reports}
        pending = [
            (index, report)
            for index, report in enumerate(reports)
            if report.failure_context == "upstream_or_combined"
        ]
        if not pending:
            return list(reports)
        refined = await asyncio.gather(
            *(self._rerun(pipeline_id, by_id, report_of, report, score) for _, report in pending)
        )
        out = list(reports)
        for (index, _), report in zip(pending, refined, strict=True):
            out[index] = report
        return out

    async def _rerun(
        self,
        pipeline_id: str,
        stages: Mapping[str, EvaluationCase],
        reports: Mapping[str, EvaluationReport],
        report: EvaluationReport,
        score: Scorer,
    ) -> EvaluationReport:
        stage = stages[report.stage_id]
        record = await self._record(pipeline_id, stage, stages, reports, score)
        return report.model_copy(
            update={
                "failure_context": _OUTCOME_CONTEXT[record.outcome],
                "counterfactual": record,
            }
        )

    async def _record(
        self,
        pipeline_id: str,
        stage: EvaluationCase,
        stages: Mapping[str, EvaluationCase],
        reports: Mapping[str, EvaluationReport],
        score: Scorer,
    ) -> CounterfactualRerun:
        recorded = self.reruns.get((pipeline_id, stage.stage_id))
        action = self.action_for(stage)
        if recorded is None and action is None:
            return CounterfactualRerun(
                outcome="not_rerun",
                reason=f"no action registered for stage {stage.stage_id!r} or operation "
                f"{stage.operation!r}, and no recorded rerun",
            )
        sources, input_data, problem = self._corrected_input(stage, stages, reports)
        if recorded is not None:
            source = "recorded"
            if recorded.input_data is not None:
                input_data, problem = recorded.input_data, None
            prediction = recorded.prediction
        else:
            if problem is not None:
                return CounterfactualRerun(
                    outcome="not_rerun", corrected_upstream=sources, reason=problem
                )
            assert action is not None
            source = "action"
            try:
                prediction = action(copy_value(input_data))
                if inspect.isawaitable(prediction):
                    prediction = await prediction
                prediction = _plain(prediction)
            except Exception as exc:  # the system under test: any failure stays local
                return CounterfactualRerun(
                    outcome="not_rerun",
                    source="action",
                    corrected_upstream=sources,
                    input_data=input_data,
                    reason=f"the action raised {type(exc).__name__}: {exc}",
                )
        rerun_case = stage.model_copy(update={"input_data": input_data, "prediction": prediction})
        results = await score(rerun_case)
        verdict = combine_verdicts(result.verdict for result in results)
        outcome, reason = _attribution(verdict)
        if problem is not None and recorded is not None:
            reason = f"{reason + '; ' if reason else ''}input not recorded: {problem}"
        return CounterfactualRerun(
            outcome=outcome,
            source=source,
            corrected_upstream=sources,
            input_data=input_data,
            prediction=prediction,
            verdict=verdict,
            metric_results=list(results),
            reason=reason,
        )

    def _corrected_input(
        self,
        stage: EvaluationCase,
        stages: Mapping[str, EvaluationCase],
        reports: Mapping[str, EvaluationReport],
    ) -> tuple[dict[str, str], Any, str | None]:
        """What each upstream output was replaced with, the stage's input built from the
        replacements, and why there is no input (``None`` when there is one)."""
        corrected: dict[str, Any] = {}
        sources: dict[str, str] = {}
        try:
            for name in stage.depends_on:
                passed = reports[name].verdict == "pass"
                corrected[name], sources[name] = oracle_output(stages[name], passed)
            return sources, self._input(stage, corrected, stages), None
        except RerunUnavailable as exc:
            return sources, None, str(exc)
        except Exception as exc:  # a user's build_input: its failure stays local
            return sources, None, f"build_input raised {type(exc).__name__}: {exc}"

    def _input(
        self,
        stage: EvaluationCase,
        corrected: Mapping[str, Any],
        stages: Mapping[str, EvaluationCase],
    ) -> Any:
        if self.build_input is not None:
            return self.build_input(stage, corrected)
        recorded = {name: stages[name].prediction for name in stage.depends_on}
        return default_rerun_input(stage, corrected, recorded)


def _names(names: Iterable[str], limit: int = 10) -> str:
    ordered = sorted(names)
    shown = ", ".join(repr(name) for name in ordered[:limit])
    return shown + (f" and {len(ordered) - limit} more" if len(ordered) > limit else "")


def _plain(value: Any) -> Any:
    """An action's output as JSON data where possible (reports must serialise it)."""
    try:
        return json.loads(canonical_json(value))
    except DocEvalsError:
        return value
