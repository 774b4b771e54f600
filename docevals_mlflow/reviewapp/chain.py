"""Signing and approving from the page, through the approval-chain API only.

A reviewer or adjudicator signs their own layer with
:func:`~docevals_mlflow.groundtruth.chain_signing.sign_review` (the layer's lock,
the layer's digest: what ``docevals review sign`` does). The approver's view shows,
per document, what :func:`~docevals_mlflow.groundtruth.approval_chain.check_chain`
finds with this approver and key about to sign, so its list of problems is the one
``docevals approve --policy`` refuses with; approving calls
:func:`~docevals_mlflow.groundtruth.approval_chain.approve_chain` and
:func:`~docevals_mlflow.groundtruth.approval.write_approved`, as that command does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.reviewapp.folder import REVIEW_SUFFIX, ReviewFolder, confined

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.chain_policy import ChainPolicy
    from docevals_mlflow.groundtruth.keys import SigningKey

APPROVED_DIR = "approved"
"""Approved files go here, inside the served folder, unless ``--approved-dir`` says otherwise."""


@dataclass(frozen=True)
class PersonState:
    """One person's part in a document's chain."""

    person: str
    role: str
    answered: int
    signed: bool


@dataclass(frozen=True)
class ChainState:
    """A document's approval chain as the approver's page shows it."""

    id: str
    case_id: str
    people: tuple[PersonState, ...]
    signatures: tuple[str, ...]
    """``role person`` of every valid-looking signature found, in chain order."""
    problems: tuple[str, ...]
    """What ``approve --policy`` would refuse with (empty: ready)."""
    approved: str | None
    """The approved file's path relative to the folder, when it exists."""

    @property
    def ready(self) -> bool:
        return not self.problems and self.approved is None


def approved_path(folder: ReviewFolder, approved_dir: Path | None, document_id: str) -> Path:
    """Where the approved file of a review goes: ``<dir>/<relative name>.json``
    (``a/x.review.json`` → ``approved/a/x.json``)."""
    relative = PurePosixPath(document_id.removesuffix(REVIEW_SUFFIX) + ".json").as_posix()
    if approved_dir is None:
        return confined(folder.root, f"{APPROVED_DIR}/{relative}")
    return approved_dir.joinpath(*PurePosixPath(relative).parts)


def sign_layer(
    folder: ReviewFolder, document_id: str, person: str, role: str, key: SigningKey
) -> str:
    """Sign ``person``'s layer of a review; returns a one-line summary.

    Raises:
        InputError: no layer yet, a layer of another role, or a stale layer.
    """
    from docevals_mlflow.groundtruth.chain_signing import sign_review

    if role not in ("reviewer", "adjudicator"):
        raise InputError(f"a {role} signs nothing here", expected="reviewer or adjudicator")
    act = sign_review(folder.review_path(document_id), person, role, key)  # type: ignore[arg-type]
    return f"signed {person}'s {role} layer (digest {act.digest[:12]}…, key {act.key_id[:12]}…)"


def chain_state(
    folder: ReviewFolder,
    document_id: str,
    policy: ChainPolicy,
    approver: str,
    key: SigningKey | None,
    approved_dir: Path | None = None,
    known: frozenset[str] | None = None,
) -> ChainState:
    """The document's chain checked against ``policy`` with ``approver`` (and key) about
    to sign: the same check ``approve --policy`` makes before it writes anything.

    Raises:
        PathRefused: the id is not a review file of the folder.
        InputError: the review or a layer is malformed (its one-line error).
    """
    from docevals_mlflow.groundtruth.approval_chain import check_chain

    review_path = folder.review_path(document_id, known)
    report = check_chain(
        review_path,
        policy,
        approver=approver,
        approver_key_id=key.key_id if key is not None else None,
    )
    layers = report.layers
    assert layers is not None
    people = tuple(
        PersonState(
            person,
            layer.role,
            len({entry.path for entry in layer.entries}),
            layer.signature is not None,
        )
        for person, layer in sorted(layers.layers.items())
    )
    target = approved_path(folder, approved_dir, document_id)
    problems = list(report.problems)
    if key is None:
        problems.append("no signing key: start the server with --signing-key KEY")
    return ChainState(
        id=document_id,
        case_id=layers.review.case_id,
        people=people,
        signatures=tuple(f"{act.role} {act.person}" for act in report.acts),
        problems=tuple(problems),
        approved=_shown(folder, target) if target.exists() else None,
    )


def approve_document(
    folder: ReviewFolder,
    document_id: str,
    policy: ChainPolicy,
    approver: str,
    key: SigningKey,
    approved_dir: Path | None = None,
    *,
    notes: str = "",
) -> str:
    """Approve a review under ``policy`` and write the approved file, as
    ``docevals approve REVIEW --policy P --approved-by NAME --signing-key KEY
    --output FILE`` does; returns a one-line summary.

    Raises:
        ApprovalError: the chain is incomplete (one line, every problem).
        OutputError: the approved file exists already (an approval is never replaced).
    """
    from docevals_mlflow.groundtruth.approval import write_approved
    from docevals_mlflow.groundtruth.approval_chain import approve_chain

    target = approved_path(folder, approved_dir, document_id)
    approved = approve_chain(folder.review_path(document_id), policy, approver, key, notes=notes)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_approved(approved, target)
    record = approved.record
    assert record.chain is not None
    acts = ", ".join(f"{act.role} {act.person}" for act in record.chain.signatures)
    return (
        f"approved case {approved.case_id}: {len(approved.rows)} row(s); chain: {acts}; "
        f"wrote {_shown(folder, target)}"
    )


def check_key(policy: ChainPolicy, person: str, key: SigningKey) -> None:
    """Refuse a signing key that is not ``person``'s key in the policy.

    Raises:
        InputError: the person is not in the policy, or the keys differ.
    """
    try:
        expected = policy.key(person).key_id
    except (KeyError, DocEvalsError):
        raise InputError(f"{person} has no key in the policy") from None
    if expected != key.key_id:
        raise InputError(
            f"--signing-key is not {person}'s key in the policy (key {key.key_id[:12]}…)",
            expected=f"the private key of {expected[:12]}…",
        )


def _shown(folder: ReviewFolder, path: Path) -> str:
    try:
        return path.relative_to(folder.root).as_posix()
    except ValueError:
        return str(path)
