"""``register-dataset --policy`` and ``--reviews``: the approval chains checked before
anything is registered, and what the approval run records of the review behind it
(the policy's fingerprint, the reviewers' agreement as metrics)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.records import ApprovedGroundTruth


@dataclass(frozen=True)
class ReviewRecord:
    """What the approval run gets beyond the registration itself."""

    policy_sha256: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    reviews: int = 0


def add_review_options(parser: argparse.ArgumentParser) -> None:
    """``--policy`` and ``--reviews`` of ``register-dataset``."""
    parser.add_argument(
        "--policy",
        type=Path,
        metavar="POLICY",
        help="check every approved file's whole approval chain against this policy first "
        "(refused, nothing registered, if one fails); the run records the policy's "
        "fingerprint",
    )
    parser.add_argument(
        "--reviews",
        type=Path,
        metavar="REVIEW_FILE_OR_FOLDER",
        help="the review files (with their reviewers' layers) behind the approved cases: "
        "their reviewer agreement becomes metrics of the approval run",
    )


def _chained(sources: list[Path], policy_path: Path) -> tuple[list[ApprovedGroundTruth], str]:
    """Every approved file, its whole chain verified against the policy (the first
    failure is raised, naming the file)."""
    from docevals_mlflow.groundtruth.approval_chain import load_chained_ground_truth
    from docevals_mlflow.groundtruth.chain_policy import load_policy
    from docevals_mlflow.tracking.approved_cases import approved_files

    policy = load_policy(policy_path)
    cases = [
        load_chained_ground_truth(file, policy)[0]
        for source in sources
        for file in approved_files(source)
    ]
    return cases, policy.fingerprint()


def _review_metrics(path: Path, digests: set[str | None]) -> tuple[dict[str, float], int]:
    """The agreement metrics of the review files under ``path`` behind the approved
    cases (``digests``: their records' review digests)."""
    from docevals_mlflow.groundtruth.review_layers import load_many, review_files
    from docevals_mlflow.tracking.review_metrics import review_agreement_metrics

    behind = [layers for layers in load_many(review_files(path)) if layers.review_sha256 in digests]
    if not behind:
        raise InputError(
            "no review file here is behind an approved case (none has the review digest an "
            "approval record names)",
            source=str(path),
            expected="the review files the approved cases were approved from",
        )
    return review_agreement_metrics(behind), len(behind)


def checked_sources(args: argparse.Namespace) -> tuple[list[Any], ReviewRecord | None]:
    """What to register (the ``--from`` paths, or with ``--policy`` the cases whose
    chains were verified) and what the run records of the review (``None``: neither
    ``--policy`` nor ``--reviews``).

    Raises:
        InputError: ``--policy`` with ``--public-key`` or ``--allow-unsigned``; review
            files behind none of the cases.
        ApprovalError: a chain fails the policy (nothing is registered).
    """
    policy_path: Path | None = getattr(args, "policy", None)
    reviews: Path | None = getattr(args, "reviews", None)
    if policy_path is None and reviews is None:
        return list(args.sources), None
    sources: list[Any] = list(args.sources)
    fingerprint = None
    if policy_path is not None:
        if args.public_key or args.allow_unsigned:
            raise InputError(
                "--policy takes the approvers' keys from the policy: leave out --public-key "
                "and --allow-unsigned"
            )
        sources, fingerprint = _chained(list(args.sources), policy_path)
    metrics: dict[str, float] = {}
    count = 0
    if reviews is not None:
        if policy_path is None:
            from docevals_mlflow.groundtruth.approval import read_approved_file
            from docevals_mlflow.tracking.approved_cases import approved_files

            cases = [read_approved_file(f) for s in args.sources for f in approved_files(s)]
        else:
            cases = sources
        digests = {case.record.review_sha256 for case in cases}
        metrics, count = _review_metrics(reviews, digests)
    return sources, ReviewRecord(policy_sha256=fingerprint, metrics=metrics, reviews=count)


def record_review(run_id: str, tracking_uri: str | None, record: ReviewRecord) -> list[str]:
    """Record ``record`` in the approval run ``run_id``; returns the lines to print."""
    from docevals_mlflow.tracking.approval_runs import record_approval_review

    logged = record_approval_review(
        run_id, tracking_uri, policy_sha256=record.policy_sha256, metrics=record.metrics
    )
    lines = []
    if record.policy_sha256 is not None:
        lines.append(f"chains verified against the policy: fingerprint {record.policy_sha256}")
    if record.reviews:
        lines.append(
            f"reviewer agreement of {record.reviews:,} review(s): {logged:,} metric(s) logged"
        )
    return lines


__all__ = ["ReviewRecord", "add_review_options", "checked_sources", "record_review"]
