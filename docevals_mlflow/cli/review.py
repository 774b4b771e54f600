"""``docevals review``, ``approve``, ``keygen`` and ``verify``: from generated ground truth
to a signed approval anyone can check.

This module registers the four commands and holds ``review``, which lists a review
file's pending items or records decisions on them; the other three live in
:mod:`docevals_mlflow.cli.approval`. ``docevals review <subcommand>`` (``answer``,
``agreement``, ``status``: :mod:`docevals_mlflow.cli.review_layers`) works on the
reviewers' layers."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli import approval, review_layers, review_log, review_serve, review_sign
from docevals_mlflow.cli.common import EXIT_OK, Parser, check_text_arguments
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.groundtruth.records import ReviewFile


def register(commands: Any) -> None:
    """Add the ``review``, ``approve``, ``keygen`` and ``verify`` subcommands."""
    _register_review(commands)
    approval.register_approve(commands)
    approval.register_keygen(commands)
    approval.register_verify(commands)


# --- review -------------------------------------------------------------------------

NESTED_COMMANDS: tuple[Any, ...] = (review_layers, review_serve, review_sign, review_log)
"""Modules whose ``register(review_commands)`` adds ``docevals review <name>``
subcommands (``answer``, ``agreement``, ``status``, ...)."""


class _ReviewParser(Parser):
    """``docevals review FILE [--set ...]``, or ``docevals review <subcommand> ...``.

    argparse cannot give one command both a file argument and subcommands, so the
    first argument decides: a subcommand's name goes to the nested parser, anything
    else is the review file as before (a file named like a subcommand: ``./answer``).
    """

    nested: Parser
    names: frozenset[str] = frozenset()

    def parse_known_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if args and args[0] in self.names:
            found, rest = self.nested.parse_known_args(args, namespace)
            handler = found.handler
            found.handler = lambda parsed: _run_nested(self.nested, handler, parsed)
            return found, rest
        return super().parse_known_args(args, namespace)


def _run_nested(nested: Parser, handler: Any, args: argparse.Namespace) -> int:
    # The top-level check sees only `review`'s own options; check the subcommand's.
    check_text_arguments(
        nested, argparse.Namespace(**{**vars(args), "command": args.review_command})
    )
    code: int = handler(args)
    return code


def _register_review(commands: Any) -> None:
    parser = commands.add_parser(
        "review",
        help="list a review file's pending items, or record decisions on them; "
        "reviewers' layers: review answer / agreement / status",
        description="Without options: list the disputed fields of a ground-truth review "
        "file with each provider's candidate values. With --set/--omit/--reopen: record "
        "the decisions and rewrite the file atomically (refused if it changed meanwhile).",
    )
    nested = Parser(prog="docevals review")
    review_commands = nested.add_subparsers(
        dest="review_command", required=True, parser_class=Parser
    )
    for module in NESTED_COMMANDS:
        module.register(review_commands)
    parser.__class__ = _ReviewParser
    parser.nested = nested
    parser.names = frozenset(review_commands.choices)
    parser.epilog = (
        f"Subcommands for several reviewers: {', '.join(sorted(review_commands.choices))} "
        "(docevals review SUBCOMMAND --help)."
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
    from docevals_mlflow.groundtruth.records import canonical_field_path
    from docevals_mlflow.groundtruth.review import (
        apply_decisions,
        load_review,
        write_ground_truth_review,
    )

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
    from docevals_mlflow.core.datafiles import loads_strict

    try:
        return loads_strict(raw)
    except ValueError:
        return raw


def _shown(value: Any, limit: int = 80) -> str:
    from docevals_mlflow.core.fingerprints import canonical_json

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
