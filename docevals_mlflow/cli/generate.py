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
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.common import EXIT_BAD_INPUT, EXIT_OK
from docevals_mlflow.cli.options import (
    add_answer_cache_option,
    add_concurrency_option,
    add_prices_option,
    add_tracking_options,
    check_concurrency,
)
from docevals_mlflow.cli.paths import check_paths
from docevals_mlflow.cli.progress import ProgressDisplay
from docevals_mlflow.cli.run_logging import log_or_keep, run_options, tracking_wanted
from docevals_mlflow.errors import DocEvalsError

if TYPE_CHECKING:
    from docevals_mlflow.cli.generate_batch import CaseResult
    from docevals_mlflow.cli.generate_cases import Case
    from docevals_mlflow.groundtruth.config import GenerationConfig


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
    _add_case_options(parser)
    _add_generation_options(parser)
    add_tracking_options(
        parser,
        experiment_help="MLflow experiment name (default: docevals-ground-truth)",
        no_mlflow_help="do not log the generation as an MLflow run",
    )
    parser.set_defaults(handler=run_generate)


def _add_case_options(parser: argparse.ArgumentParser) -> None:
    """Where the cases come from (``--source``, ``--sources-dir``, ``--case-id``) and
    where their files go (``--output-dir``)."""
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


def _add_generation_options(parser: argparse.ArgumentParser) -> None:
    """How the panel generates: adjudication, union, cache, concurrency, prices, and
    ``--force``."""
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
    add_answer_cache_option(parser, "--generation-cache", answers="generators' answers")
    add_concurrency_option(parser, own_limit="a generator")
    add_prices_option(parser)
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace review files that hold a reviewer's decisions or notes",
    )


def run_generate(args: argparse.Namespace) -> int:
    """Check everything, generate every case, write the files, log the run."""
    from docevals_mlflow.cli.generate_batch import CASES_AT_ONCE, generate_all
    from docevals_mlflow.cli.generate_messages import describe_batch, provider_warnings
    from docevals_mlflow.groundtruth.config import load_generation_config
    from docevals_mlflow.judges.config import load_prices
    from docevals_mlflow.judges.judge import run_sync

    check_concurrency(args)
    config = load_generation_config(args.config)
    adjudicate = config.adjudicate if args.adjudicate is None else args.adjudicate
    union = config.union if args.union is None else args.union
    cases = _prepared_cases(args, config)
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
    reviews, failed = _write_results(args, results)
    for line in provider_warnings(results):
        print(line, file=sys.stderr)
    print(describe_batch(results))
    log_run(args, results, reviews, config, adjudicate=adjudicate, union=union)
    return EXIT_BAD_INPUT if failed else EXIT_OK


def _prepared_cases(args: argparse.Namespace, config: GenerationConfig) -> list[Case]:
    """The cases, routed (and converted to Markdown when the configuration says so),
    once every file they would write is known to be safe to write."""
    from docevals_mlflow.cli.generate_cases import (
        case_paths,
        collect_cases,
        refuse_reviewed,
        route_of,
    )
    from docevals_mlflow.groundtruth.router import GroundTruthRouter

    cases = collect_cases(args)
    bundle = _bundle_folder(args)
    # Every file each case writes, against every source and each other, before any
    # source is converted or any provider is paid.
    check_paths(*case_paths(args, cases, bundle=bundle))
    router = GroundTruthRouter(document_mode=config.document_mode)
    for case in cases:
        case.route = route_of(router, case)
    if not args.force:
        refuse_reviewed(args.output_dir, cases)
    if config.document_mode == "markdown":
        # Made now, locally: a PDF that cannot be converted stops the batch before
        # any provider is paid for another case.
        for case in cases:
            if case.route == "documents":
                case.derivatives = list(router.prepare(case.case_id, case.references).derivatives)
        # The Markdown copies' names are known now: checked like the other files.
        check_paths(*case_paths(args, cases, bundle=bundle))
    return cases


def _write_results(
    args: argparse.Namespace, results: Sequence[CaseResult]
) -> tuple[list[Path], int]:
    """Each case's files, and a few lines on it; the review files written and how many
    could not be."""
    from docevals_mlflow.cli.generate_batch import write_generation
    from docevals_mlflow.cli.generate_cases import Outputs
    from docevals_mlflow.cli.generate_messages import describe_case
    from docevals_mlflow.groundtruth.review import write_ground_truth_review

    out_dir: Path = args.output_dir
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
    return reviews, failed


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
    from docevals_mlflow.core.fingerprints import sha256_file

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
