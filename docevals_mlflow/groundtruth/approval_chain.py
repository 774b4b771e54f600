"""Approval chains: a review approved only when the signed acts of preparer,
reviewers, adjudicator and approver satisfy a policy
(:mod:`~docevals_mlflow.groundtruth.chain_policy`), and the check anyone can run
again offline from the approved file alone.

:func:`check_chain` lists every problem of a review's chain (nothing is written);
:func:`approve_chain` refuses, in one line, unless there is none, then builds an
approval record whose ``chain`` lists every signature and signs it with the
approver's key; :func:`verify_chain` checks an approved file against a policy.
Signing the acts: :mod:`~docevals_mlflow.groundtruth.chain_signing`.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.errors import ApprovalError, InputError
from docevals_mlflow.groundtruth.approval import approve_review, read_approved_file, sign_record
from docevals_mlflow.groundtruth.chain_policy import ChainPolicy
from docevals_mlflow.groundtruth.chain_records import ActSignature, ApprovalChain, Role
from docevals_mlflow.groundtruth.chain_signing import (
    check_act_signature,
    layer_act,
    load_preparer_signature,
    preparer_path,
)
from docevals_mlflow.groundtruth.key_loading import load_signing_key
from docevals_mlflow.groundtruth.keys import SigningKey, SigningKeyLike
from docevals_mlflow.groundtruth.records import (
    ApprovalRecord,
    ApprovalVerification,
    ApprovedGroundTruth,
)
from docevals_mlflow.groundtruth.verification import verify_record

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.review_layers import ReviewLayers

_LISTED = 5


class Actor(NamedTuple):
    """Who acted in which role, with which key."""

    role: Role
    person: str
    key_id: str


@dataclass
class ChainReport:
    """What :func:`check_chain` found."""

    review_path: Path
    review_sha256: str
    acts: list[ActSignature]
    """The signatures found, in chain order (preparer, reviewers, adjudicators)."""
    disputed: list[str]
    """Field paths on which the reviewers' answers differ."""
    problems: list[str] = field(default_factory=list)
    layers: ReviewLayers | None = None

    @property
    def ok(self) -> bool:
        """Whether the chain is complete and satisfies the policy."""
        return not self.problems


@dataclass(frozen=True)
class ChainVerification:
    """What :func:`verify_chain` established."""

    signatures: list[ActSignature]
    policy_matches: bool
    """The chain was approved under this very policy (same fingerprint); ``False``
    means another version of it, which the chain satisfies as well."""


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:_LISTED])
    return shown + (f" and {len(items) - _LISTED} more" if len(items) > _LISTED else "")


def _short(key_id: str) -> str:
    return key_id[:16]


def actor_problem(actor: Actor, policy: ChainPolicy) -> str | None:
    """Why ``actor`` may not act as they did under ``policy`` (``None``: they may)."""
    entry = policy.people.get(actor.person)
    if entry is None:
        return f"{actor.person} ({actor.role}) is not in the policy"
    if actor.role not in entry.roles:
        return (
            f"{actor.person} may not act as {actor.role} (policy roles: {', '.join(entry.roles)})"
        )
    expected = policy.key(actor.person).key_id
    if expected != actor.key_id:
        return (
            f"{actor.person}'s {actor.role} signature is made with key {_short(actor.key_id)}…, "
            f"not the policy's key for {actor.person} ({_short(expected)}…)"
        )
    return None


def policy_problems(actors: list[Actor], policy: ChainPolicy, *, disputed: list[str]) -> list[str]:
    """Every way ``actors`` fall short of ``policy`` (empty: they satisfy it)."""
    problems = [problem for actor in actors if (problem := actor_problem(actor, policy))]
    by_role: dict[str, list[str]] = {}
    for actor in actors:
        people = by_role.setdefault(actor.role, [])
        if actor.person not in people:
            people.append(actor.person)
    if policy.needs_preparer and not by_role.get("preparer"):
        problems.append("no preparer signature (docevals review sign REVIEW --role preparer)")
    reviewers = by_role.get("reviewer", [])
    if len(reviewers) < policy.reviewers:
        problems.append(
            f"{len(reviewers)} of {policy.reviewers} signed reviewer layers"
            + (f" ({', '.join(reviewers)})" if reviewers else "")
        )
    adjudicators = by_role.get("adjudicator", [])
    if policy.adjudication == "required" and not adjudicators:
        problems.append("the policy requires adjudication, but no adjudicator signed")
    elif policy.adjudication == "on_disagreement" and disputed and not adjudicators:
        problems.append(
            f"reviewers disagree on {_listed(disputed)}: the policy needs an adjudicator "
            "then, and none signed"
        )
    elif policy.adjudication == "never" and adjudicators:
        problems.append(
            f"the policy allows no adjudication, but {', '.join(adjudicators)} adjudicated"
        )
    for first, second in policy.separated():
        for person in by_role.get(first, []):
            if person in by_role.get(second, []):
                problems.append(
                    f"{person} holds two roles the policy separates: {first} and {second}"
                )
    return problems


def check_chain(
    review_path: str | os.PathLike[str],
    policy: ChainPolicy,
    *,
    approver: str | None = None,
    approver_key_id: str | None = None,
) -> ChainReport:
    """Check a review's chain (its preparer signature and signed layers) against
    ``policy``, and the approver about to sign; nothing is written.

    Raises:
        InputError: the review or a layer file is malformed (its own one-line error).
    """
    from docevals_mlflow.groundtruth.review_layers import load_layers

    path = Path(review_path)
    layers = load_layers(path)
    review_sha256: str = layers.review_sha256
    problems: list[str] = []
    acts: list[ActSignature] = []
    _collect_acts(path, layers, problems, acts)
    acts.sort(key=lambda act: (_ORDER[act.role], act.person))
    disputed = sorted(
        {
            entry.path
            for entry in layers.disagreements(required_reviewers=policy.reviewers)
            if entry.kind == "differ"
        }
    )
    actors = [Actor(act.role, act.person, act.key_id) for act in acts]
    if approver is not None:
        actors.append(Actor("approver", approver, approver_key_id or ""))
    problems += policy_problems(actors, policy, disputed=disputed)
    unresolved = sorted(
        path
        for path, final in layers.final_values(policy.reviewers).items()
        if final.status == "unresolved"
    )
    if unresolved:
        problems.append(f"{len(unresolved)} field(s) unresolved: {_listed(unresolved)}")
    return ChainReport(path, review_sha256, acts, disputed, problems, layers)


def _collect_acts(
    path: Path, layers: ReviewLayers, problems: list[str], acts: list[ActSignature]
) -> None:
    """The preparer's and the layers' signatures into ``acts``; what is wrong with
    them (missing, changed after signing, stale) into ``problems``."""
    review_sha256 = layers.review_sha256
    preparer = load_preparer_signature(path)
    if preparer is not None:
        try:
            check_act_signature(preparer)
        except ApprovalError:
            problems.append(
                f"the preparer's signature ({preparer_path(path).name}) does not verify: it "
                "was changed after signing"
            )
        if preparer.digest != review_sha256 or preparer.review_sha256 != review_sha256:
            problems.append(
                f"the review file changed after {preparer.person} signed it as preparer "
                "(sign it again)"
            )
        acts.append(preparer)
    for stale in layers.stale:
        problems.append(
            f"{stale.person}'s layer answers another version of the review file (stale)"
        )
    for person, layer in sorted(layers.layers.items()):
        act = layer_act(layer)
        if act is None:
            problems.append(
                f"{person}'s {layer.role} layer is not signed (docevals review sign REVIEW "
                f"--person {person} --role {layer.role} --signing-key KEY)"
            )
            continue
        try:
            check_act_signature(act)
        except ApprovalError:
            problems.append(
                f"{person}'s layer was changed after it was signed (its signature no longer "
                "matches its content)"
            )
        acts.append(act)


_ORDER = {"preparer": 0, "reviewer": 1, "adjudicator": 2, "approver": 3}


def approve_chain(
    review_path: str | os.PathLike[str],
    policy: ChainPolicy,
    approved_by: str,
    signing_key: SigningKeyLike,
    *,
    notes: str = "",
    now: _dt.datetime | None = None,
) -> ApprovedGroundTruth:
    """Approve a review under ``policy``, signed with the approver's key; nothing is
    written (see :func:`~docevals_mlflow.groundtruth.approval.write_approved`).

    Raises:
        ApprovalError: ``reason="chain"``, one line listing every problem (missing
            signatures, stale or changed layers, a person in two separated roles,
            people or keys not in the policy, unresolved fields).
    """
    key = load_signing_key(signing_key)
    report = check_chain(review_path, policy, approver=approved_by, approver_key_id=key.key_id)
    if not report.ok:
        raise ApprovalError(
            f"cannot approve under the policy: {'; '.join(report.problems)}",
            reason="chain",
            source=str(review_path),
        )
    assert report.layers is not None
    approved = approve_review(
        report.layers.to_review_file(policy.reviewers),
        approved_by,
        notes=notes,
        now=now,
        sign=False,
    )
    signed = _signed_record(approved.record, report, policy, approved_by, key)
    return ApprovedGroundTruth(case_id=approved.case_id, rows=approved.rows, record=signed)


def _signed_record(
    record: ApprovalRecord,
    report: ChainReport,
    policy: ChainPolicy,
    approved_by: str,
    key: SigningKey,
) -> ApprovalRecord:
    """``record`` with the chain, signed by the approver, the approver's entry last."""
    chain = ApprovalChain(
        policy_sha256=policy.fingerprint(), signatures=report.acts, disputed=report.disputed
    )
    # The record names the review file the chain signed, not the decided copy of it.
    unsigned = ApprovalRecord.model_validate(
        {
            **record.model_dump(mode="json"),
            "review_sha256": report.review_sha256,
            "chain": chain.model_dump(mode="json"),
        }
    )
    record = sign_record(unsigned, key)
    assert record.signature is not None
    assert record.public_key is not None
    assert record.key_id is not None
    assert record.chain is not None
    approver_act = ActSignature(
        role="approver",
        person=approved_by,
        key_id=record.key_id,
        public_key=record.public_key,
        digest=sha256_json(record.signed_payload()),
        review_sha256=report.review_sha256,
        at=record.approved_at,
        signature=record.signature,
    )
    signatures = [*record.chain.signatures, approver_act]
    return record.model_copy(
        update={"chain": record.chain.model_copy(update={"signatures": signatures})}
    )


def verify_chain(approved: ApprovedGroundTruth, policy: ChainPolicy) -> ChainVerification:
    """Check an approved case's whole chain against ``policy``, offline: its content
    and the approver's signature (with the policy's key for the approver), every
    other signature, and the policy's rules.

    Raises:
        ApprovalError: ``reason="chain"`` with every problem in one line (or the
            reason of the content or approver-signature check that failed first).
    """
    record = approved.record
    chain = record.chain
    if chain is None:
        raise ApprovalError(
            "the approval carries no chain (a single-signature approval: verify it with "
            "--public-key)",
            reason="chain",
        )
    person = policy.people.get(record.approved_by)
    trusted = policy.key(record.approved_by) if person is not None else None
    verify_record(record, approved.rows, trusted, require_signature=True)
    problems = _record_problems(record, chain)
    actors = [Actor(act.role, act.person, act.key_id) for act in chain.signatures]
    problems += policy_problems(actors, policy, disputed=chain.disputed)
    if problems:
        raise ApprovalError(
            f"the approval chain fails the policy: {'; '.join(problems)}", reason="chain"
        )
    return ChainVerification(
        signatures=list(chain.signatures),
        policy_matches=chain.policy_sha256 == policy.fingerprint(),
    )


def load_chained_ground_truth(
    path: str | os.PathLike[str], policy: ChainPolicy
) -> tuple[ApprovedGroundTruth, ChainVerification]:
    """Read an approved file and verify its whole chain against ``policy`` (the
    approver's key comes from the policy, never from the environment).

    Raises:
        InputFileNotFoundError, InputError: no such file, or malformed.
        ApprovalError: it fails verification (naming the file and what failed).
    """
    approved = read_approved_file(path)
    try:
        verification = verify_chain(approved, policy)
    except (ApprovalError, InputError) as exc:
        raise exc.located(source=str(Path(path))) from None
    record = approved.record
    approved._verification = ApprovalVerification(signed=True, key_id=record.key_id, trusted=True)
    return approved, verification


def _record_problems(record: ApprovalRecord, chain: ApprovalChain) -> list[str]:
    problems: list[str] = []
    approvers = chain.acts("approver")
    expected: dict[str, Any] = {
        "person": record.approved_by,
        "key_id": record.key_id,
        "signature": record.signature,
        "digest": sha256_json(record.signed_payload()),
        "review_sha256": record.review_sha256,
        "at": record.approved_at,
    }
    if len(approvers) != 1 or any(
        getattr(approvers[0], name) != value for name, value in expected.items()
    ):
        problems.append("the approver's entry in the chain does not match the record's signature")
    for act in chain.signatures:
        if act.role == "approver":
            continue
        try:
            check_act_signature(act)
        except ApprovalError:
            problems.append(f"{act.person}'s {act.role} signature does not verify")
        if act.review_sha256 != record.review_sha256 or (
            act.role == "preparer" and act.digest != record.review_sha256
        ):
            problems.append(f"{act.person}'s {act.role} signature is for another review file")
    return problems
