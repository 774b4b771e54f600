"""``docevals generate``: provisional ground truth from documents, read blind by several
models, written as generation reports and review files (the start of the ground-truth
lifecycle: generate → review → approve → register).

Cases come from ``--source FILE`` (one case) or ``--sources-dir DIR``: each subfolder
of DIR is a case (its files are the sources; the id is the folder name), and files
directly in DIR are cases by file stem (``inv-7.pdf`` and ``inv-7.txt`` are one case,
``inv-7``). For each case, OUT gets ``<case>.generation.json`` (the final
:class:`~docevals_mlflow.groundtruth.models.GenerationReport`) and ``<case>.review.json``
(the review file); earlier stages, when adjudication or union ran, go to
``<case>.generation.<stage>.json`` and Markdown copies (``document_mode: markdown``)
to ``<case>.<source>-markdown.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    add_tracking_options,
    check_paths,
    log_or_keep,
    run_options,
    tracking_wanted,
)
from docevals_mlflow.cli.generate_cases import (
    STAGES,
    Case,
    Outputs,
    case_paths,
    collect_cases,
    refuse_reviewed,
    route_of,
)
from docevals_mlflow.cli.judging import cost_text
from docevals_mlflow.cli.progress import ProgressDisplay
from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.fingerprints import sha256_file
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.groundtruth.config import (
    GenerationConfig,
    adjudicator_for,
    load_generation_config,
)
from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from docevals_mlflow.groundtruth.review import write_ground_truth_review
from docevals_mlflow.groundtruth.router import GroundTruthRouter
from docevals_mlflow.groundtruth.union import resolve_ground_truth_union
from docevals_mlflow.judges.config import load_prices
from docevals_mlflow.judges.judge import run_sync
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


# --- command line -------------------------------------------------------------------


def register(commands: Any) -> None:
    """Add the ``generate`` subcommand."""
    parser = commands.add_parser(
        "generate",
        help="generate provisional ground truth from documents with a panel of models",
        description="Ask two or more models (the generators of --config) to read each "
        "case's sources blind and vote field by field. Writes OUT/<case>.generation.json "
        "(the generation report) and OUT/<case>.review.json (agreed fields and the disputed "
        "ones to decide with 'docevals review'), and logs one generation run to MLflow "
        "(experiment docevals-ground-truth unless --experiment). Cases: --source FILE "
        "(repeatable; one case) or --sources-dir DIR (each subfolder is a case; files "
        "directly in DIR are cases by file stem). PDFs and images are sent to the models "
        "as they are; a case may not mix them. Keys come from the environment only. "
        "Exit 0 when generation ran (a provider failing is reported, not fatal), 2 on bad "
        "input, configuration or a missing key.",
    )
    parser.add_argument(
        "--config",
        required=True,
        type=Path,
        metavar="GEN.yaml",
        help="generation configuration: instruction, expected_fields, generators, ...",
    )
    sources = parser.add_mutually_exclusive_group(required=True)
    sources.add_argument(
        "--source",
        dest="sources",
        action="append",
        type=Path,
        metavar="FILE",
        help="a source file of the one case (repeatable): PDF, image, text, JSON",
    )
    sources.add_argument(
        "--sources-dir",
        type=Path,
        metavar="DIR",
        help="one case per subfolder (id: the folder name) and per file stem of the files "
        "directly in DIR",
    )
    parser.add_argument(
        "--case-id",
        help="the case id with --source (default: the files' common stem)",
    )
    parser.add_argument(
        "--output-dir",
        required=True,
        type=Path,
        metavar="OUT",
        help="where the generation reports and review files are written",
    )
    parser.add_argument(
        "--adjudicate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="re-read the disputed fields once, blind (default: the configuration's 'adjudicate')",
    )
    parser.add_argument(
        "--union",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="accept disputed fields that only one value was given for (default: the "
        "configuration's 'union'); for unattended runs",
    )
    parser.add_argument(
        "--generation-cache",
        type=Path,
        metavar="DIR",
        help="reuse generators' answers stored here; a rerun of the same requests is free",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="requests in flight at once per provider (default 8; a generator with its "
        "own max_concurrency keeps it)",
    )
    parser.add_argument(
        "--prices",
        type=Path,
        metavar="PRICES.yaml",
        help="USD per million tokens by model ({input, output, cached_input}), for costs",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace review files that hold a reviewer's decisions or notes",
    )
    add_tracking_options(
        parser,
        experiment_help="MLflow experiment name (default: docevals-ground-truth)",
        no_mlflow_help="do not log the generation as an MLflow run",
    )
    parser.set_defaults(handler=run_generate)


def run_generate(args: argparse.Namespace) -> int:
    """Check everything, generate every case, write the files, log the run."""
    if args.concurrency is not None and args.concurrency < 1:
        raise InputError(f"--concurrency {args.concurrency}", expected="at least 1")
    config = load_generation_config(args.config)
    adjudicate = config.adjudicate if args.adjudicate is None else args.adjudicate
    union = config.union if args.union is None else args.union
    cases = collect_cases(args)
    out_dir: Path = args.output_dir
    bundle = _bundle_folder(args)
    # Every file each case writes, against every source and each other, before any
    # source is converted or any provider is paid.
    check_paths(*case_paths(args, cases, bundle=bundle))
    router = GroundTruthRouter(document_mode=config.document_mode)
    for case in cases:
        case.route = route_of(router, case)
    if not args.force:
        refuse_reviewed(out_dir, cases)
    if config.document_mode == "markdown":
        # Made now, locally: a PDF that cannot be converted stops the batch before
        # any provider is paid for another case.
        for case in cases:
            if case.route == "documents":
                case.derivatives = list(router.prepare(case.case_id, case.references).derivatives)
        # The Markdown copies' names are known now: checked like the other files.
        check_paths(*case_paths(args, cases, bundle=bundle))
    prices = load_prices(args.prices) if args.prices is not None else None
    try:
        panel = config.build_panel(
            prices=prices, cache=args.generation_cache, max_concurrency=args.concurrency
        )
    except DocEvalsError as exc:
        raise exc.located(source=str(args.config)) from None

    progress = ProgressDisplay(sys.stderr, command="generate", milestones=False)
    results = run_sync(
        generate_all(
            cases,
            panel,
            adjudicate=adjudicate,
            union=union,
            cases_at_once=max(CASES_AT_ONCE, args.concurrency or 0),
            progress=progress,
        )
    )

    out_dir.mkdir(parents=True, exist_ok=True)
    reviews: list[Path] = []
    failed = 0
    for result in results:
        outputs = Outputs(out_dir, result.case.case_id)
        write_generation(result, outputs)
        try:
            write_ground_truth_review(result.final, outputs.review, overwrite=args.force)
        except DocEvalsError as exc:
            # Someone started reviewing after the check above; their work wins.
            failed += 1
            print(f"docevals: error: {exc}", file=sys.stderr)
        else:
            reviews.append(outputs.review)
        print(describe_case(result, outputs))
    for line in provider_warnings(results):
        print(line, file=sys.stderr)
    print(describe_batch(results))
    log_run(args, results, reviews, config, adjudicate=adjudicate, union=union)
    return EXIT_BAD_INPUT if failed else EXIT_OK


# --- generating ---------------------------------------------------------------------


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


# --- what is printed ----------------------------------------------------------------


def usage_text(usage: Usage) -> str:
    """``N requests, X input / Y output tokens[, $Z]``."""
    return (
        f"{usage.requests} request(s), {usage.input_tokens:,} input / "
        f"{usage.output_tokens:,} output tokens"
        + cost_text(usage.cost_usd, partial=usage.cost_is_partial)
    )


def describe_case(result: CaseResult, outputs: Outputs) -> str:
    """Fields agreed / disputed / omitted, how each provider did, usage, next step."""
    final = result.final
    omitted = len(final.omitted_by_all)
    disputed = len(final.disagreements) - omitted
    first = result.stages[0]
    providers = ", ".join(
        provider.provider
        + (" ok" if provider.usable else f" {provider.status}")
        + (" (cached)" if provider.cached else "")
        for provider in first.providers
    )
    lines = [
        f"{final.case_id}: {len(final.consensus)} agreed, {disputed} disputed, {omitted} "
        f"omitted by all (agreement {final.overall_agreement:.2f}; {result.case.route}, "
        f"{len(result.case.references)} source(s))",
        f"  providers: {providers}",
    ]
    for provider in first.providers:
        if not provider.usable and provider.error:
            lines.append(f"    {provider.provider}: {_short(provider.error)}")
    for stage in result.stages[1:]:
        parent = result.stages[result.stages.index(stage) - 1]
        settled = len(parent.disagreements) - len(stage.disagreements)
        lines.append(f"  {stage.stage}: {settled} of {len(parent.disagreements)} settled")
    lines.append(f"  usage: {usage_text(result.usage)}")
    lines.append(f"  wrote {outputs.generation} and {outputs.review}")
    if final.requires_human_review:
        lines.append(f"  next: docevals review {outputs.review}")
    else:
        lines.append(
            f"  next: nothing disputed; docevals approve {outputs.review} --approved-by NAME "
            f"--output APPROVED.json"
        )
    return "\n".join(lines)


def describe_batch(results: Sequence[CaseResult]) -> str:
    """One line for the whole batch."""
    review = sum(result.final.requires_human_review for result in results)
    usage = total_usage(result.usage for result in results)
    return (
        f"generated {len(results)} case(s): {review} need review, "
        f"{len(results) - review} fully agreed; {usage_text(usage)}"
    )


def provider_warnings(results: Sequence[CaseResult]) -> list[str]:
    """A warning per generator that gave no usable answer in any case (a wrong key or
    model name looks like this)."""
    answers: dict[str, list[Any]] = {}
    for result in results:
        for provider in result.stages[0].providers:
            answers.setdefault(provider.provider, []).append(provider)
    lines = []
    for label, given in sorted(answers.items()):
        if not any(answer.usable for answer in given):
            last = given[-1]
            reason = f": {_short(last.error)}" if last.error else ""
            lines.append(
                f"docevals: warning: generator {label!r} gave no usable answer in any case "
                f"({last.status}{reason})"
            )
    return lines


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# --- MLflow -------------------------------------------------------------------------

BUNDLE_NAME = "generation.run"
"""The run bundle kept in OUT when the tracking store cannot be reached."""


def _bundle_folder(args: argparse.Namespace) -> Path | None:
    return args.output_dir / BUNDLE_NAME if tracking_wanted(args) else None


def log_run(
    args: argparse.Namespace,
    results: Sequence[CaseResult],
    reviews: Sequence[Path],
    config: GenerationConfig,
    *,
    adjudicate: bool,
    union: bool,
) -> None:
    """One generation run for the batch; never loses the generation when the store
    is unreachable (the bundle is kept in OUT for ``docevals log``)."""
    if not tracking_wanted(args) or not results:
        return
    from docevals_mlflow.tracking.assembly import assemble_generation
    from docevals_mlflow.tracking.generation_runs import GenerationSettings

    # Every stage of every case: the run holds each case's final report and the
    # stages before it, as log_generation logs the same reports.
    assembled = assemble_generation(
        [stage for result in results for stage in result.stages],
        run_options(args, keep_bundle_at=args.output_dir / BUNDLE_NAME),
        review_files=reviews,
        settings=GenerationSettings(
            adjudicate=adjudicate,
            union=union,
            document_mode=config.document_mode,
            config_sha256=sha256_file(args.config),
        ),
    )
    logged = log_or_keep(assembled, written="the files")
    if logged is not None:
        print(logged.describe())
