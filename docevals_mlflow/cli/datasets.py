"""``register-dataset`` and ``datasets``, and ``--ground-truth-dataset`` for the
evaluation commands.

``docevals register-dataset NAME --from APPROVED`` registers approved ground truth as
the next version of dataset NAME (an approval run in MLflow); ``docevals datasets``
lists what is registered. The evaluation commands take ``--ground-truth-dataset
NAME[@VERSION]`` through :func:`add_dataset_option` and the helpers below, so each
command needs only a line or two to use a registered dataset.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.common import EXIT_OK
from docevals_mlflow.cli.dataset_review import add_review_options
from docevals_mlflow.cli.options import add_tracking_options
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.core.artifacts import ReferenceArtifact
    from docevals_mlflow.core.cases import PipelineCase
    from docevals_mlflow.fields.inputs import PairedRecords
    from docevals_mlflow.tracking.dataset_use import DatasetUse
    from docevals_mlflow.tracking.datasets import DatasetVersion, GroundTruthDataset


def register(commands: Any) -> None:
    """Add ``register-dataset`` and ``datasets``."""
    _register_registration(commands)
    _register_listing(commands)


def _register_registration(commands: Any) -> None:
    registration = commands.add_parser(
        "register-dataset",
        help="register approved ground truth as a versioned dataset in MLflow",
        description="Register approved ground-truth files (written by docevals approve) as "
        "the next version of dataset NAME: an MLflow approval run holding the approved "
        "cases, their approval records and a ground_truth input with the content digest, "
        "plus an MLflow GenAI evaluation dataset of the same name. Prints NAME@VERSION, "
        "the run id and the digest. Content equal to the latest version is not "
        "registered again (that version is printed) unless --force is given.",
    )
    registration.add_argument("name", help="dataset name (letters, digits, _ - . and spaces)")
    registration.add_argument(
        "--from",
        dest="sources",
        action="append",
        required=True,
        type=Path,
        metavar="APPROVED",
        help="an approved file, or a folder of them (repeatable)",
    )
    registration.add_argument(
        "--public-key",
        metavar="KEY",
        help="the trusted public key (file, PEM/OpenSSH text or base64; default: "
        "DOCEVALS_PUBLIC_KEY): every approval must be signed by it. Without one, each "
        "signature is checked against the key in its own record",
    )
    registration.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="accept approvals that carry no signature (the version is marked unsigned)",
    )
    registration.add_argument("--description", default="", help="what this version is")
    registration.add_argument(
        "--force",
        action="store_true",
        help="register a new version even when the content equals the latest version's",
    )
    registration.add_argument(
        "--no-genai-dataset",
        action="store_true",
        help="do not update the MLflow GenAI evaluation dataset of the same name",
    )
    add_review_options(registration)
    add_tracking_options(
        registration,
        log_by_default=False,
        experiment_help="experiment of the approval run (default: docevals-ground-truth)",
        run_name_help=None,
    )
    registration.set_defaults(handler=_run_register)


def _register_listing(commands: Any) -> None:
    listing = commands.add_parser(
        "datasets",
        help="list registered ground-truth datasets and their versions",
        description="List the registered versions of every ground-truth dataset (or of NAME): "
        "version, cases, approved rows, digest, approvers and when it was registered.",
    )
    listing.add_argument("name", nargs="?", help="only this dataset")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_tracking_options(listing, log_by_default=False, experiment_help=None, run_name_help=None)
    listing.set_defaults(handler=_run_list)


def _run_register(args: argparse.Namespace) -> int:
    from docevals_mlflow.cli.dataset_review import checked_sources, record_review
    from docevals_mlflow.tracking.datasets import register_ground_truth_dataset

    # Everything that can refuse is checked before anything is registered.
    sources, review = checked_sources(args)
    version = register_ground_truth_dataset(
        args.name,
        sources,
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        public_key=args.public_key,
        require_signature=not args.allow_unsigned,
        description=args.description,
        force=args.force,
        genai_dataset=not args.no_genai_dataset,
    )
    print(version.spec)
    print(f"run: {version.run_id} ({version.tracking_uri})")
    print(
        f"digest: {version.digest}; {version.cases:,} cases, {version.records:,} rows; "
        f"approved by {', '.join(version.approvers)}; signatures {version.signatures}"
    )
    if version.already_registered:
        print(
            f"unchanged: version {version.version} already holds this content; nothing was "
            "registered (--force registers a new version)"
        )
    elif review is not None:
        for line in record_review(version.run_id, args.tracking_uri, review):
            print(line)
    for warning in version.warnings:
        print(f"docevals: warning: {warning}", file=sys.stderr)
    return EXIT_OK


def _run_list(args: argparse.Namespace) -> int:
    from docevals_mlflow.tracking.datasets import DatasetNotFoundError, list_ground_truth_datasets
    from docevals_mlflow.tracking.runs import resolve_tracking_uri

    versions = list_ground_truth_datasets(args.name, tracking_uri=args.tracking_uri)
    if args.json:
        print(json.dumps([version.model_dump(mode="json") for version in versions], indent=1))
        return EXIT_OK
    if not versions:
        if args.name:
            raise DatasetNotFoundError(f"no ground-truth dataset named {args.name!r}")
        where = _shown_uri(resolve_tracking_uri(args.tracking_uri))
        print(f"no ground-truth datasets registered ({where})")
        return EXIT_OK
    print("\n".join(version_table(versions)))
    return EXIT_OK


def _shown_uri(uri: str) -> str:
    from docevals_mlflow.tracking.uris import public_uri

    return public_uri(uri)


def version_table(versions: Sequence[DatasetVersion]) -> list[str]:
    """The Markdown table ``docevals datasets`` prints."""
    from docevals_mlflow.reports.markdown import table

    return table(
        ["name", "version", "cases", "rows", "digest", "approvers", "created", "run"],
        (
            (
                version.name,
                version.version,
                version.cases,
                version.records,
                version.digest,
                ", ".join(version.approvers),
                version.created_at,
                version.run_id,
            )
            for version in versions
        ),
    )


# --- --ground-truth-dataset on evaluation commands ------------------------------------


def add_dataset_option(
    parser: argparse.ArgumentParser,
    *,
    pipeline: bool = False,
    exclusive: Any = None,
) -> None:
    """``--ground-truth-dataset NAME[@VERSION]`` and ``--public-key`` (and, for
    pipelines, ``--dataset-stage``). ``exclusive`` is a mutually exclusive group the
    dataset option joins (``docevals fields``: either ``--expected`` or a dataset)."""
    group = parser.add_argument_group("registered ground truth")
    (exclusive or group).add_argument(
        "--ground-truth-dataset",
        metavar="NAME[@VERSION]",
        help="use a registered ground-truth dataset (latest version unless @VERSION), "
        "matched by case id; the run logs dataset.name, dataset.version and dataset.digest",
    )
    group.add_argument(
        "--public-key",
        dest="dataset_public_key",
        metavar="KEY",
        help="verify the dataset's approval signatures against this public key (file or "
        "key text; default: DOCEVALS_PUBLIC_KEY)",
    )
    if pipeline:
        group.add_argument(
            "--dataset-stage",
            action="append",
            default=[],
            metavar="STAGE",
            help="stage that gets the dataset's ground truth (repeatable; default: the "
            "final stages, those no other stage depends on)",
        )


def requested_dataset(args: argparse.Namespace) -> GroundTruthDataset | None:
    """The dataset named by ``--ground-truth-dataset``, loaded and checked (once)."""
    spec = getattr(args, "ground_truth_dataset", None)
    if not spec:
        return None
    loaded: GroundTruthDataset | None = getattr(args, "loaded_ground_truth_dataset", None)
    if loaded is not None:
        return loaded
    from docevals_mlflow.tracking.datasets import load_ground_truth, parse_dataset_spec

    name, version = parse_dataset_spec(spec)
    loaded = load_ground_truth(
        name,
        version,
        tracking_uri=getattr(args, "tracking_uri", None),
        public_key=getattr(args, "dataset_public_key", None),
    )
    args.loaded_ground_truth_dataset = loaded
    print(
        f"ground truth: {loaded.spec} ({len(loaded.cases)} cases, digest {loaded.digest}, "
        f"signatures {loaded.signatures})"
    )
    return loaded


def dataset_references(args: argparse.Namespace, case_id: str) -> list[ReferenceArtifact]:
    """``evaluate-case``: the dataset's reference for ``case_id`` (none without the option).

    Raises:
        InputError: ``--ground-truth`` files are given too.
        DatasetNotFoundError: the dataset has no such case.
    """
    # Refused before the store is asked: the clash is in the command line alone.
    if getattr(args, "ground_truth_dataset", None) and getattr(args, "ground_truth", None):
        raise InputError(
            "--ground-truth and --ground-truth-dataset both give ground truth",
            expected="one of them",
        )
    dataset = requested_dataset(args)
    if dataset is None:
        return []
    reference = dataset.reference(case_id)
    from docevals_mlflow.tracking.dataset_use import DatasetUse

    # Kept on the parsed arguments until the run is assembled (see used_datasets).
    args.dataset_use = DatasetUse(dataset, (case_id,), replace_derived_input=True)
    return [reference]


def apply_dataset_to_pipeline(args: argparse.Namespace, pipeline: PipelineCase) -> PipelineCase:
    """``evaluate-pipeline``: the pipeline with the dataset's ground truth added."""
    dataset = requested_dataset(args)
    if dataset is None:
        if getattr(args, "dataset_stage", None):
            raise InputError("--dataset-stage needs --ground-truth-dataset")
        return pipeline
    from docevals_mlflow.tracking.dataset_use import (
        DatasetUse,
        attach_to_pipeline,
        has_other_ground_truth,
    )

    updated = attach_to_pipeline(pipeline, dataset, args.dataset_stage or None)
    used = tuple(
        sorted(
            {
                stage.case_id
                for stage in updated.stages
                if any(ref.metadata.get("dataset") == dataset.name for ref in stage.references)
            }
        )
    )
    args.dataset_use = DatasetUse(
        dataset, used, replace_derived_input=not has_other_ground_truth(updated.stages, dataset)
    )
    return updated


def paired_inputs(args: argparse.Namespace) -> PairedRecords:
    """``fields``: expected documents from ``--expected`` or from the dataset, paired
    with ``--predicted`` by document id (= case id)."""
    dataset = requested_dataset(args)
    if dataset is None:
        from docevals_mlflow.fields.inputs import pair_records

        return pair_records(args.expected, args.predicted)
    from docevals_mlflow.tracking.dataset_use import DatasetUse, dataset_pairs

    paired = dataset_pairs(dataset, args.predicted)
    used = tuple(sorted(set(dataset.case_ids) - set(paired.expected_only)))
    args.dataset_use = DatasetUse(dataset, used, replace_derived_input=True)
    return paired


def used_datasets(args: argparse.Namespace) -> tuple[DatasetUse, ...]:
    """The registered dataset the evaluation used (none without
    ``--ground-truth-dataset``), for :attr:`RunOptions.datasets
    <docevals_mlflow.tracking.options.RunOptions.datasets>`."""
    use: DatasetUse | None = getattr(args, "dataset_use", None)
    return () if use is None else (use,)
