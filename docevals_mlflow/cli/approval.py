"""``docevals approve``, ``keygen`` and ``verify``: a fully decided review file
approved and signed, the key pair that signs it, and the check anyone can run."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.common import EXIT_BAD_INPUT, EXIT_OK
from docevals_mlflow.cli.light_constants import PUBLIC_KEY_VARIABLE, SIGNING_KEY_VARIABLE
from docevals_mlflow.cli.paths import Input, Output, check_paths, existing_path
from docevals_mlflow.errors import DocEvalsError, InputError

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.records import ApprovedGroundTruth

# --- approve ------------------------------------------------------------------------


def register_approve(commands: Any) -> None:
    """Add the ``approve`` subcommand."""

    parser = commands.add_parser(
        "approve",
        help="approve a fully decided review file as ground truth (signed)",
        description="Approve a review file in which every item is decided: write the "
        "approved rows with an approval record (approver, UTC time, SHA-256 of the content, "
        "of the generation and of the review file, the resolutions) signed with Ed25519. "
        f"The signing key comes from --signing-key or {SIGNING_KEY_VARIABLE}; its "
        "passphrase, if any, from DOCEVALS_SIGNING_KEY_PASSPHRASE.",
    )
    parser.add_argument("file", type=Path, help="review file (JSON)")
    parser.add_argument(
        "--approved-by",
        metavar="NAME",
        help="who approves (may be left out when the file has status 'approved' and "
        "names approved_by)",
    )
    parser.add_argument("--output", required=True, type=Path, help="approved file to write")
    parser.add_argument(
        "--signing-key",
        metavar="PATH",
        help=f"Ed25519 private key (default: {SIGNING_KEY_VARIABLE})",
    )
    parser.add_argument(
        "--unsigned",
        action="store_true",
        help="approve without a signature (verification then needs --allow-unsigned)",
    )
    parser.add_argument("--notes", default="", help="approval notes")
    parser.add_argument("--force", action="store_true", help="replace an existing --output")
    parser.add_argument(
        "--policy",
        type=Path,
        metavar="POLICY",
        help="approve the review's signed chain (preparer, reviewer layers, adjudicator) "
        "under this approval policy: refused, with nothing written, unless the chain is "
        "complete, every signature matches the policy's keys, nobody holds two separated "
        "roles and no field is unresolved",
    )
    parser.set_defaults(handler=run_approve)


def run_approve(args: argparse.Namespace) -> int:
    """Approve, then write the approved file in one atomic step."""
    from docevals_mlflow.groundtruth.approval import approve_review, sign_record, write_approved
    from docevals_mlflow.groundtruth.records import ApprovedGroundTruth
    from docevals_mlflow.groundtruth.signing import load_signing_key

    if args.unsigned and args.signing_key:
        raise InputError("--unsigned and --signing-key contradict each other")
    if args.policy is not None:
        return _run_approve_chain(args)
    # --force replaces an approval, never the review file or the key it came from.
    key = existing_path(args.signing_key or os.environ.get(SIGNING_KEY_VARIABLE) or "")
    check_paths(
        [Input("review file", args.file), Input("the signing key", key) if key else None],
        [Output("--output", args.output)],
    )
    if not args.force and args.output.exists():
        raise InputError(
            "exists already; an approval is never replaced silently (pass --force)",
            source=str(args.output),
        )
    # The review is checked before the key is asked for, so one run reports what
    # the reviewer still has to do.
    approved = approve_review(args.file, args.approved_by, notes=args.notes, sign=False)
    if not args.unsigned:
        value = args.signing_key or os.environ.get(SIGNING_KEY_VARIABLE)
        if not value:
            raise InputError(
                "no signing key: pass --signing-key PATH or set "
                f"{SIGNING_KEY_VARIABLE} (docevals keygen --out PREFIX makes one), "
                "or --unsigned to approve without a signature"
            )
        approved = ApprovedGroundTruth(
            case_id=approved.case_id,
            rows=approved.rows,
            record=sign_record(approved.record, load_signing_key(value)),
        )
    write_approved(approved, args.output, overwrite=args.force)
    record = approved.record
    signed = f"signed with key {record.key_id}" if record.signed else "NOT signed"
    print(
        f"approved case {approved.case_id} by {record.approved_by} at {record.approved_at}: "
        f"{len(approved.rows)} row(s), {len(record.resolutions)} resolution(s); "
        f"content sha256 {record.content_sha256}; {signed}"
    )
    print(f"wrote {args.output}")
    return EXIT_OK


def _run_approve_chain(args: argparse.Namespace) -> int:
    """``approve --policy``: the chain is checked in full before anything is written."""
    from docevals_mlflow.groundtruth.approval import write_approved
    from docevals_mlflow.groundtruth.approval_chain import approve_chain
    from docevals_mlflow.groundtruth.chain_policy import load_policy

    if args.unsigned:
        raise InputError("--unsigned and --policy contradict each other (a chain is signed)")
    if not args.approved_by:
        raise InputError("--policy needs --approved-by NAME (the approver's person id)")
    value = args.signing_key or os.environ.get(SIGNING_KEY_VARIABLE) or ""
    if not value:
        raise InputError(
            f"no signing key: pass --signing-key PATH or set {SIGNING_KEY_VARIABLE} "
            "(the approver's key in the policy)"
        )
    key = existing_path(value)
    check_paths(
        [
            Input("review file", args.file),
            Input("--policy", args.policy),
            Input("the signing key", key) if key else None,
        ],
        [Output("--output", args.output)],
    )
    if not args.force and args.output.exists():
        raise InputError(
            "exists already; an approval is never replaced silently (pass --force)",
            source=str(args.output),
        )
    policy = load_policy(args.policy)
    approved = approve_chain(args.file, policy, args.approved_by, value, notes=args.notes)
    write_approved(approved, args.output, overwrite=args.force)
    record = approved.record
    assert record.chain is not None
    acts = ", ".join(f"{act.role} {act.person}" for act in record.chain.signatures)
    print(
        f"approved case {approved.case_id} by {record.approved_by} at {record.approved_at} "
        f"under policy {args.policy}: {len(approved.rows)} row(s); chain: {acts}; content "
        f"sha256 {record.content_sha256}; signed with key {record.key_id}"
    )
    print(f"wrote {args.output}")
    return EXIT_OK


# --- keygen -------------------------------------------------------------------------


def register_keygen(commands: Any) -> None:
    """Add the ``keygen`` subcommand."""
    parser = commands.add_parser(
        "keygen",
        help="create an Ed25519 key pair for signing approvals",
        description="Write a new Ed25519 private key to PREFIX (PEM PKCS#8, mode 0600) "
        "and its public key to PREFIX.pub (one OpenSSH line). Existing files are never "
        "overwritten. Keep PREFIX secret; share PREFIX.pub with whoever verifies.",
    )
    parser.add_argument("--out", required=True, type=Path, metavar="PREFIX", help="key path")
    parser.add_argument(
        "--passphrase-env",
        metavar="VARIABLE",
        help="encrypt the private key with the passphrase in this environment variable "
        "(signing then reads it from DOCEVALS_SIGNING_KEY_PASSPHRASE)",
    )
    parser.add_argument(
        "--comment", default="docevals-mlflow", help="comment in the public key line"
    )
    parser.set_defaults(handler=run_keygen)


def run_keygen(args: argparse.Namespace) -> int:
    """Write the key pair and say how to use it."""
    from docevals_mlflow.groundtruth.signing import generate_keypair, load_public_key

    check_paths(
        [],
        [
            Output("--out", args.out),
            Output("public key", args.out.with_name(args.out.name + ".pub")),
        ],
    )
    passphrase = None
    if args.passphrase_env:
        passphrase = os.environ.get(args.passphrase_env)
        if not passphrase:
            raise InputError(f"--passphrase-env: {args.passphrase_env} is not set or empty")
    private_path, public_path = generate_keypair(
        args.out, passphrase=passphrase, comment=args.comment
    )
    key_id = load_public_key(public_path).key_id
    print(f"wrote private key {private_path} (keep it secret) and public key {public_path}")
    print(f"key id {key_id}")
    print(
        f"sign with: docevals approve FILE --signing-key {private_path} ... "
        f"(or export {SIGNING_KEY_VARIABLE}={private_path}); "
        f"verify with: docevals verify APPROVED.json --public-key {public_path}"
    )
    return EXIT_OK


# --- verify -------------------------------------------------------------------------


def register_verify(commands: Any) -> None:
    """Add the ``verify`` subcommand."""

    parser = commands.add_parser(
        "verify",
        help="verify approved ground-truth files (content digest and signature)",
        description="Check that each approved file's rows are the ones approved and that "
        "its approval record carries a valid Ed25519 signature. With --public-key (or "
        f"{PUBLIC_KEY_VARIABLE}) the signer must be that key; without, the signature is "
        "checked against the key embedded in the record, which proves integrity but not "
        "who signed. Exit 2 when any file fails.",
    )
    parser.add_argument("files", nargs="+", type=Path, help="approved ground-truth files")
    parser.add_argument(
        "--public-key",
        metavar="KEY",
        help=f"trusted public key: file, PEM/OpenSSH text or base64 (default: "
        f"{PUBLIC_KEY_VARIABLE})",
    )
    parser.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="accept unsigned approvals after checking their content digest",
    )
    parser.add_argument(
        "--policy",
        type=Path,
        metavar="POLICY",
        help="verify each file's whole approval chain against this policy, offline: every "
        "signature (approver's with the policy's key), roles, keys, reviewer count, "
        "adjudication and separated roles",
    )
    parser.set_defaults(handler=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    """Verify every file; print one line each; exit 2 if any fails."""
    from docevals_mlflow.groundtruth.approval import load_approved_ground_truth
    from docevals_mlflow.groundtruth.signing import resolve_public_key

    if args.policy is not None:
        return _run_verify_chain(args)
    trusted = resolve_public_key(args.public_key)
    failed = 0
    for path in args.files:
        try:
            approved = load_approved_ground_truth(
                path, trusted, require_signature=not args.allow_unsigned
            )
        except DocEvalsError as exc:
            failed += 1
            print(f"docevals: error: {exc}", file=sys.stderr)
            continue
        print(verified_line(approved, str(path)))
    if trusted is None and failed < len(args.files):
        print(
            "note: no trusted key given; signatures were checked against the keys embedded "
            f"in the records (pass --public-key or set {PUBLIC_KEY_VARIABLE} to check who "
            "signed)"
        )
    return EXIT_BAD_INPUT if failed else EXIT_OK


def verified_line(approved: ApprovedGroundTruth, name: str) -> str:
    """``OK FILE: case ..., approved by ... at ...; content sha256 ...; signature ...``."""
    record = approved.record
    verification = approved.verification
    if verification is None or not verification.signed:
        signature = "UNSIGNED"
    elif verification.trusted:
        signature = f"signed by the trusted key {verification.key_id}"
    else:
        signature = f"signed by embedded key {verification.key_id} (not pinned)"
    return (
        f"OK {name}: case {approved.case_id}, {len(approved.rows)} row(s), approved by "
        f"{record.approved_by} at {record.approved_at}; content sha256 "
        f"{record.content_sha256}; {signature}"
    )


def _run_verify_chain(args: argparse.Namespace) -> int:
    """``verify --policy``: each file's chain, one line each; exit 2 if any fails."""
    from docevals_mlflow.groundtruth.approval_chain import load_chained_ground_truth
    from docevals_mlflow.groundtruth.chain_policy import load_policy

    if args.public_key or args.allow_unsigned:
        raise InputError(
            "--policy takes the keys from the policy: leave out --public-key and --allow-unsigned"
        )
    policy = load_policy(args.policy)
    failed = 0
    for path in args.files:
        try:
            approved, chain = load_chained_ground_truth(path, policy)
        except DocEvalsError as exc:
            failed += 1
            print(f"docevals: error: {exc}", file=sys.stderr)
            continue
        acts = ", ".join(f"{act.role} {act.person}" for act in chain.signatures)
        same = "" if chain.policy_matches else " (approved under another version of the policy)"
        print(
            f"OK {path}: case {approved.case_id}, {len(approved.rows)} row(s), approved by "
            f"{approved.record.approved_by} at {approved.record.approved_at}; chain verified "
            f"against {args.policy}{same}: {acts}"
        )
    return EXIT_BAD_INPUT if failed else EXIT_OK
