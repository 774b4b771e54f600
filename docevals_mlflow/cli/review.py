"""``docevals review``, ``approve``, ``keygen`` and ``verify``: from generated ground truth
to a signed approval anyone can check."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    Input,
    Output,
    check_paths,
    existing_path,
)
from docevals_mlflow.core.datafiles import loads_strict
from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.groundtruth.approval import (
    approve_review,
    load_approved_ground_truth,
    sign_record,
    write_approved,
)
from docevals_mlflow.groundtruth.records import (
    ApprovedGroundTruth,
    ReviewFile,
    canonical_field_path,
)
from docevals_mlflow.groundtruth.review import (
    apply_decisions,
    load_review,
    write_ground_truth_review,
)
from docevals_mlflow.groundtruth.signing import (
    PUBLIC_KEY_VARIABLE,
    SIGNING_KEY_VARIABLE,
    generate_keypair,
    load_public_key,
    load_signing_key,
    resolve_public_key,
)


def register(commands: Any) -> None:
    """Add the ``review``, ``approve``, ``keygen`` and ``verify`` subcommands."""
    _register_review(commands)
    _register_approve(commands)
    _register_keygen(commands)
    _register_verify(commands)


# --- review -------------------------------------------------------------------------


def _register_review(commands: Any) -> None:
    parser = commands.add_parser(
        "review",
        help="list a review file's pending items, or record decisions on them",
        description="Without options: list the disputed fields of a ground-truth review "
        "file with each provider's candidate values. With --set/--omit/--reopen: record "
        "the decisions and rewrite the file atomically (refused if it changed meanwhile).",
    )
    parser.add_argument("file", type=Path, help="review file (JSON)")
    parser.add_argument(
        "--set",
        dest="set_values",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="decide 'set' with VALUE (parsed as JSON when it parses, e.g. 12.5, true, "
        '"007"; otherwise taken as text) (repeatable)',
    )
    parser.add_argument(
        "--omit",
        action="append",
        default=[],
        metavar="PATH",
        help="decide 'omit': leave the field out of the ground truth (repeatable)",
    )
    parser.add_argument(
        "--reopen",
        action="append",
        default=[],
        metavar="PATH",
        help="put a decided item back to 'unresolved' (repeatable)",
    )
    parser.add_argument("--notes", help="a note stored on every item decided here")
    parser.set_defaults(handler=run_review)


def run_review(args: argparse.Namespace) -> int:
    """List pending items, or apply the decisions given and rewrite the file."""
    review = load_review(args.file)
    if not (args.set_values or args.omit or args.reopen):
        if args.notes is not None:
            raise InputError("--notes needs a decision (--set, --omit or --reopen)")
        print(describe_review(review, str(args.file)))
        return EXIT_OK
    values: dict[str, Any] = {}
    for text in args.set_values:
        path, value = parse_assignment(text)
        if path in values:
            raise InputError(f"one field given twice: --set {path} and --set {path}")
        values[path] = value
    edited = apply_decisions(
        review, set=values, omit=args.omit, reopen=args.reopen, notes=args.notes
    )
    write_ground_truth_review(edited, args.file)
    # Echoed in the file's own spelling ($.currency for --set currency=...).
    for path, value in values.items():
        print(f"set {canonical_field_path(path)} = {_shown(value)}")
    for path in args.omit:
        print(f"omitted {canonical_field_path(path)}")
    for path in args.reopen:
        print(f"reopened {canonical_field_path(path)}")
    if review.status == "approved" and edited.status != "approved":
        print("status set back to needs_review: the decisions changed after approval")
    pending = edited.pending()
    if pending:
        print(f"{len(pending)} item(s) still pending: {', '.join(i.path for i in pending)}")
    else:
        print(
            f"no item pending; approve with: docevals approve {args.file} --approved-by NAME "
            "--output APPROVED.json"
        )
    return EXIT_OK


def parse_assignment(text: str) -> tuple[str, Any]:
    """``PATH=VALUE`` → ``(path, value)``; ``=`` inside ``[...]`` belongs to the path.

    The value is JSON when it parses as JSON (finite numbers only), text otherwise.
    """
    depth, quote = 0, ""
    for position, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"" and depth:
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif char == "=" and not depth:
            path, raw = text[:position].strip(), text[position + 1 :]
            if not path:
                break
            return path, parse_value(raw)
    raise InputError(f"--set {text!r}", expected="PATH=VALUE, such as $.total=12.5")


def parse_value(raw: str) -> Any:
    """JSON when ``raw`` parses as JSON (finite numbers), else the text itself."""
    try:
        return loads_strict(raw)
    except ValueError:
        return raw


def _shown(value: Any, limit: int = 80) -> str:
    text = canonical_json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_review(review: ReviewFile, name: str) -> str:
    """The listing ``docevals review FILE`` prints."""
    pending = review.pending()
    decided = [item for item in review.review_items if item.decision != "unresolved"]
    status = review.status + (f" by {review.approved_by}" if review.status == "approved" else "")
    lines = [
        f"{name}: case {review.case_id} ({status}); {len(review.claims)} agreed claim(s), "
        f"{len(review.review_items)} review item(s), {len(pending)} pending",
    ]
    if review.claims_edited:
        lines.append("  note: the agreed claims were edited after generation")
    if pending:
        lines.append("pending:")
    for item in pending:
        extra = f"; omitted by {', '.join(item.omitted_by)}" if item.omitted_by else ""
        lines.append(f"  {item.path}  ({item.reason}{extra})")
        for candidate in item.provider_candidates:
            lines.append(
                f"    {_shown(candidate.value)}  from {', '.join(candidate.providers)}"
                f" ({candidate.votes:g} vote(s))"
            )
        if not item.provider_candidates:
            lines.append("    (no provider gave a value)")
    if decided:
        lines.append("decided:")
    for item in decided:
        what = f"= {_shown(item.expected)}" if item.decision == "set" else "omitted"
        note = f"  # {item.notes}" if item.notes else ""
        lines.append(f"  {item.path} {what}{note}")
    if pending:
        lines.append(
            f"decide with: docevals review {name} --set PATH=VALUE ... --omit PATH ... "
            "[--notes TEXT]"
        )
    else:
        lines.append(
            f"nothing pending; approve with: docevals approve {name} --approved-by NAME "
            "--output APPROVED.json"
        )
    return "\n".join(lines)


# --- approve ------------------------------------------------------------------------


def _register_approve(commands: Any) -> None:
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
    parser.set_defaults(handler=run_approve)


def run_approve(args: argparse.Namespace) -> int:
    """Approve, then write the approved file in one atomic step."""
    if args.unsigned and args.signing_key:
        raise InputError("--unsigned and --signing-key contradict each other")
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


# --- keygen -------------------------------------------------------------------------


def _register_keygen(commands: Any) -> None:
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


def _register_verify(commands: Any) -> None:
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
    parser.set_defaults(handler=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    """Verify every file; print one line each; exit 2 if any fails."""
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
