"""``docevals quickstart``: generate invoices, evaluate two prompt versions, log both runs."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.common import EXIT_OK
from docevals_mlflow.cli.options import add_tracking_options
from docevals_mlflow.cli.paths import Output, check_paths
from docevals_mlflow.cli.progress import ProgressDisplay
from docevals_mlflow.cli.run_logging import (
    NO_MLFLOW_VARIABLE,
    PROJECT_RUN,
    bundle_folder,
    log_evaluation,
    tracking_wanted,
)
from docevals_mlflow.core.formatting import metric_text
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.tracking.runs import LoggedRun

DEFAULT_OUTPUT = Path("docevals-quickstart")
DEFAULT_EXPERIMENT = "docevals-quickstart"
MAX_DOCUMENTS = 1000
"""More would only make a demonstration slow; ``docevals fields`` scales further."""
QUICKSTART_TAG = "docevals.quickstart"
"""Ties the runs of one invocation together, so their ids can be found afterwards."""
PROMPT_NAME = "docevals-quickstart-extract"
"""The prompt-registry name of the simulated extraction prompt (v1 and v2 are versions)."""
DATASET_NAME = "docevals-quickstart-invoices"
"""The MLflow evaluation dataset holding the invoices' ground truth."""
EXPERIMENT_ID_VARIABLE = "MLFLOW_EXPERIMENT_ID"
"""Set by ``mlflow run`` to the project run's experiment."""
DEFAULT_EXPERIMENT_ID = "0"
"""MLflow's ``Default`` experiment, where ``mlflow run`` puts runs nobody placed."""


def register(commands: Any) -> None:
    """Add the ``quickstart`` subcommand."""
    quickstart = commands.add_parser(
        "quickstart",
        help="generate sample invoices, evaluate two prompt versions and log them to MLflow",
        description="Generate a small synthetic invoice set (PDFs, ground truth, schema), "
        "simulate the extractions of two prompt versions with realistic errors, compare "
        "each with the ground truth field by field, write the reports and log each "
        "version as an MLflow run. Offline and deterministic for a seed.",
    )
    quickstart.add_argument(
        "--output-dir",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"folder for documents, predictions and reports (default: {DEFAULT_OUTPUT})",
    )
    quickstart.add_argument(
        "--documents",
        type=int,
        default=24,
        help=f"number of invoices, 1 to {MAX_DOCUMENTS} (default: 24)",
    )
    quickstart.add_argument(
        "--seed", type=int, default=7, help="seed of the generated set (default: 7)"
    )
    # The shared tracking options minus --run-name: the quickstart logs two runs whose
    # names (prompt-v1, prompt-v2) are what the comparison is about.
    add_tracking_options(
        quickstart,
        experiment_help=f"MLflow experiment name (default: {DEFAULT_EXPERIMENT})",
        experiment_default=DEFAULT_EXPERIMENT,
        run_name_help=None,
        no_mlflow_help="write the reports only, log no runs",
    )
    quickstart.set_defaults(handler=run)


def _assembler(version: Any, ground_truth: Path) -> Any:
    """The assembly of one prompt version's run (a field comparison, as ``docevals
    fields`` assembles it), whose dataset input is the evaluation dataset."""

    def assemble(options: Any) -> Any:
        from docevals_mlflow.tracking.assembly import assemble_fields
        from docevals_mlflow.tracking.dataset_evaluation import run_input

        run = assemble_fields(version.report, options, markdown=version.markdown)
        # Named after the evaluation dataset, one row per invoice, with the digest
        # `docevals fields --expected ground_truth.jsonl` records for the same file.
        run.writer.dataset(*run_input(DATASET_NAME, ground_truth))
        return run

    return assemble


def _version_options(version: Any, documents: Any) -> dict[str, Any]:
    """What the run of one prompt version records besides its figures."""
    from docevals_mlflow.tracking.options import RunPrompt

    return {
        "schema": documents.schema,
        # The prompt is what changed between the runs: its params are what MLflow's
        # run comparison lines up against the metrics (prompt.sha256 as --prompt
        # records it, so the same text has the same fingerprint in every run).
        "prompt": RunPrompt(version.prompt.text),
        "params": {"prompt.version": version.prompt.version},
        "tags": {QUICKSTART_TAG: "true"},
    }


def _log_versions(
    args: argparse.Namespace, result: Any, progress: ProgressDisplay
) -> dict[str, LoggedRun]:
    """Log each prompt version as a run; returns run name → the runs logged."""
    # log_evaluation reads the run name from the arguments; None lets each version's
    # own name (the default run name) apply.
    tracking_args = argparse.Namespace(**vars(args), run_name=None)
    total = len(result.versions)
    runs: dict[str, LoggedRun] = {}
    progress("logging to MLflow", 0, total)
    from docevals_mlflow.tracking.project_runs import several_runs

    # Under `mlflow run` both versions become child runs of the project run, side by
    # side, rather than the first one taking the project run over.
    with several_runs(), _own_experiment() as project_run_id:
        for done, version in enumerate(result.versions, start=1):
            # The summary reports both runs at once, so the per-run lines stay quiet;
            # warnings (a store that cannot be reached) still go to stderr.
            logged = log_evaluation(
                tracking_args,
                _assembler(version, result.documents.ground_truth),
                default_run_name=version.prompt.run_name,
                anchor=version.json_report,
                quiet=True,
                named_by_content=False,
                **_version_options(version, result.documents),
            )
            if logged is not None:
                runs[version.prompt.run_name] = logged
            progress("logging to MLflow", done, total)
    if project_run_id is not None and runs:
        _link_to_project(project_run_id, list(runs.values()))
    return runs


def _link_to_project(project_run_id: str, runs: list[LoggedRun]) -> None:
    """Tie runs logged outside the project run to it (``docevals.project_run_id`` and
    ``docevals.runs``), and name it ``quickstart`` unless the user named it."""
    from docevals_mlflow.tracking.project_runs import link_to_project, name_project_run
    from docevals_mlflow.tracking.store import open_client

    try:
        client = open_client(runs[0].tracking_uri)
        for logged in runs:
            link_to_project(client, project_run_id, logged.run_id)
        name_project_run(client, client.get_run(project_run_id), "quickstart")
    except Exception as exc:  # the runs are logged; the link is a convenience
        print(f"docevals: warning: runs not linked to the project run ({exc})", file=sys.stderr)


@contextmanager
def _own_experiment() -> Iterator[str | None]:
    """Under ``mlflow run`` in MLflow's Default experiment, the runs go to the
    quickstart's own experiment (linked to the project run, not nested in it), so the
    quickstart's runs are in one experiment however it was started; yields the project
    run's id in that case. A project run in an experiment the user chose keeps them."""
    run_id = os.environ.get(PROJECT_RUN)
    if not run_id or os.environ.get(EXPERIMENT_ID_VARIABLE) != DEFAULT_EXPERIMENT_ID:
        yield None
        return
    del os.environ[PROJECT_RUN]
    try:
        yield run_id
    finally:
        os.environ[PROJECT_RUN] = run_id


def _publish(runs: dict[str, LoggedRun], result: Any) -> list[str]:
    """Register v1 and v2 in the prompt registry (linked to their runs) and publish
    the ground truth as an evaluation dataset; returns the summary's lines."""
    from docevals_mlflow.tracking.dataset_evaluation import publish_evaluation_dataset
    from docevals_mlflow.tracking.prompts import register_prompt_series

    logged = [
        (version, runs[version.prompt.run_name])
        for version in result.versions
        if version.prompt.run_name in runs
    ]
    if not logged:
        return []
    uri = logged[0][1].tracking_uri
    experiments = [run.experiment_id for _, run in logged]
    dataset_id, warning = publish_evaluation_dataset(
        uri, DATASET_NAME, result.documents.ground_truth, experiments
    )
    series = [(run.run_id, run.experiment_id, version.prompt.text) for version, run in logged]
    prompts, prompt_warning = register_prompt_series(uri, PROMPT_NAME, series)
    for text in (warning, prompt_warning):
        if text:
            print(f"docevals: warning: {text}", file=sys.stderr)
    lines = []
    if prompts:
        versions = ", ".join(
            f"{version.prompt.run_name} = version {prompt.version}"
            for (version, _), prompt in zip(logged, prompts, strict=False)
        )
        lines.append(f"  prompt {PROMPT_NAME!r} (Prompts page): {versions}")
    if dataset_id is not None:
        count = len(result.documents.invoices)
        lines.append(f"  evaluation dataset {DATASET_NAME!r} (Datasets tab): {count} records")
    return lines


def _summary(
    args: argparse.Namespace,
    result: Any,
    runs: dict[str, LoggedRun] | None,
    seconds: float,
    published: Sequence[str] = (),
) -> list[str]:
    count = len(result.documents.invoices)
    lines = [
        f"docevals quickstart: {count} invoice{'s' if count != 1 else ''} (seed {result.seed}) "
        f"written to {result.documents.root}/, done in {seconds:.1f} s",
        "",
    ]
    for version in result.versions:
        metrics = version.metrics
        lines.append(
            f"{version.prompt.run_name}  micro F1 {metric_text(metrics['f1'])}  "
            f"precision {metric_text(metrics['precision'])}  "
            f"recall {metric_text(metrics['recall'])}"
        )
        # A perfect field is nobody's weakest: listing it would read as a problem.
        weakest = ", ".join(
            f"{template} {metric_text(f1)}" for template, f1 in version.weakest_fields() if f1 < 1.0
        )
        perfect = f"none, every field scored F1 {metric_text(1.0)}"
        lines.append(f"{'':11}weakest fields: {weakest or perfect}")
    reports = result.reports
    names = ", ".join(f"{version.prompt.run_name}.md" for version in result.versions)
    lines += ["", f"reports: {reports}/ ({names}, and .json)"]
    if runs is None:
        lines.append(
            f"MLflow logging is off (--no-mlflow or {NO_MLFLOW_VARIABLE}); "
            f"open the Markdown reports in {reports}/ to look at the results"
        )
        return lines
    from docevals_mlflow.tracking.runs import resolve_tracking_uri, ui_command
    from docevals_mlflow.tracking.uris import public_uri

    uri = public_uri(resolve_tracking_uri(args.tracking_uri))
    # Under `mlflow run` the runs go to the project run's experiment, not --experiment.
    experiments = sorted({logged.experiment_name for logged in runs.values()})
    experiment = experiments[0] if len(experiments) == 1 else args.experiment
    lines.append(f"MLflow experiment {experiment!r} ({uri}):")
    for version in result.versions:
        name = version.prompt.run_name
        logged = runs.get(name)
        lines.append(
            f"  {name}  run {logged.run_id}"
            if logged
            else f"  {name}  not logged (see the warning above)"
        )
    lines += published
    if runs:
        lines.append(f"look at them with: {ui_command(uri)}")
    return lines


def _outputs(args: argparse.Namespace) -> list[Output | None]:
    """The folder and the files the quickstart writes in it (a folder where one of
    them goes is refused before any invoice is made)."""
    from docevals_mlflow.quickstart.simulation import PROMPTS

    root: Path = args.output_dir
    reports = root / "reports"
    outputs: list[Output | None] = [
        Output("--output-dir", root, "folder"),
        Output("the documents folder", root / "documents", "folder"),
        Output("the ground truth", root / "ground_truth.jsonl"),
        Output("the schema", root / "schema.yaml"),
        Output("the reports folder", reports, "folder"),
    ]
    for prompt in PROMPTS:
        report = reports / f"{prompt.run_name}.json"
        outputs += [
            Output(
                f"the {prompt.run_name} predictions", root / f"predictions_{prompt.version}.jsonl"
            ),
            Output(f"the {prompt.run_name} report", report),
            Output(f"the {prompt.run_name} Markdown report", report.with_suffix(".md")),
        ]
        if tracking_wanted(args):
            outputs.append(Output("a run bundle", bundle_folder(report), "owned"))
    return outputs


def run(args: argparse.Namespace) -> int:
    """Generate, evaluate, write the reports, log both runs and print a summary."""
    from docevals_mlflow.quickstart.run import run_quickstart

    # Checked before anything is written, so a typo costs nothing.
    if not 1 <= args.documents <= MAX_DOCUMENTS:
        raise InputError(
            f"--documents {args.documents} is out of range",
            expected=f"a number of invoices from 1 to {MAX_DOCUMENTS}",
        )
    check_paths([], _outputs(args))
    started = time.perf_counter()
    progress = ProgressDisplay(sys.stderr, command="quickstart")
    result = run_quickstart(
        args.output_dir, documents=args.documents, seed=args.seed, progress=progress
    )
    runs = _log_versions(args, result, progress) if tracking_wanted(args) else None
    published = _publish(runs, result) if runs else []
    seconds = time.perf_counter() - started
    print("\n".join(_summary(args, result, runs, seconds, published)))
    return EXIT_OK
