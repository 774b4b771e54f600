"""Generating a batch of ``docevals generate``: every case through the panel (and
adjudication and union, as asked), several at once, and the files each case gets."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from docevals_mlflow.cli.generate_cases import STAGES, Case, Outputs
from docevals_mlflow.cli.progress import ProgressDisplay
from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.groundtruth.config import adjudicator_for
from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from docevals_mlflow.groundtruth.router import GroundTruthRouter
from docevals_mlflow.groundtruth.union import resolve_ground_truth_union
from docevals_mlflow.judges.usage import Usage, total_usage

CASES_AT_ONCE = 16
"""Cases in progress at once (at least ``--concurrency``, so that a generous limit can
be filled); each provider still limits its own requests."""


@dataclass
class CaseResult:
    """Every stage one case went through."""

    case: Case
    stages: list[GenerationReport]

    @property
    def final(self) -> GenerationReport:
        """The report the review file is written from."""
        return self.stages[-1]

    @property
    def usage(self) -> Usage:
        """What every stage spent (a union asks no model)."""
        return total_usage(stage.usage for stage in self.stages)


async def generate_all(
    cases: Sequence[Case],
    panel: GroundTruthPanel,
    *,
    adjudicate: bool,
    union: bool,
    cases_at_once: int = CASES_AT_ONCE,
    progress: ProgressDisplay | None = None,
) -> list[CaseResult]:
    """Every case through panel, adjudication and union as asked, several at once, in
    the order given. Sources are checked (and documents converted) beforehand."""
    router = GroundTruthRouter(image_panel=panel)
    adjudicator = adjudicator_for(panel) if adjudicate else None
    gate = asyncio.Semaphore(cases_at_once)
    done = 0
    if progress is not None:
        progress("generating", 0, len(cases))

    async def one(case: Case) -> CaseResult:
        nonlocal done
        async with gate:
            report: GenerationReport | None = None
            if case.route == "images":
                report = (await router.aprepare(case.case_id, case.references)).image_report
            if report is None:
                # PDFs are read as they are, and text evidence needs no routing.
                report = await panel.agenerate(case.case_id, case.references)
            stages = [report]
            if adjudicator is not None and report.disagreements:
                stages.append(await adjudicator.aadjudicate(report, case.references))
            if union:
                stages.append(resolve_ground_truth_union(stages[-1]))
        done += 1
        if progress is not None:
            progress("generating", done, len(cases))
        return CaseResult(case, stages)

    return list(await asyncio.gather(*(one(case) for case in cases)))


def write_generation(result: CaseResult, outputs: Outputs) -> None:
    """The final report, the earlier stages and any Markdown copies, each atomically."""
    atomic_write_text(outputs.generation, result.final.model_dump_json(indent=2) + "\n")
    earlier = {stage.stage: stage for stage in result.stages[:-1]}
    for name in STAGES:
        if name in earlier:
            atomic_write_text(outputs.stage(name), earlier[name].model_dump_json(indent=2) + "\n")
        else:
            # A previous run's stage file would pass for one of this generation's.
            outputs.stage(name).unlink(missing_ok=True)
    for derivative in result.case.derivatives:
        atomic_write_text(outputs.markdown(derivative.id), str(derivative.content))
