"""``docevals review sign``: a person signs their part of a review's approval chain
(the preparer the review file, a reviewer or adjudicator their layer)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import EXIT_OK
from docevals_mlflow.cli.light_constants import SIGNING_KEY_VARIABLE
from docevals_mlflow.errors import InputError

SIGNING_ROLES = ("preparer", "reviewer", "adjudicator")


def register(review_commands: Any) -> None:
    """Add ``review sign`` to the ``review`` subcommands."""
    parser = review_commands.add_parser(
        "sign",
        help="sign your part of a review's approval chain",
        description="Sign a review file as its preparer (the signature is written beside it, "
        "to X.review.preparer.json), or sign your reviewer or adjudicator layer (the "
        "signature is written into X.review.layers/PERSON.json). A layer answered again "
        "after signing loses its signature: sign again. With --policy, you, your role and "
        "your key are checked against the policy first, and nothing is signed if they do "
        "not match it.",
    )
    parser.add_argument("file", type=Path, help="review file (X.review.json)")
    parser.add_argument("--person", required=True, metavar="NAME", help="your person id")
    parser.add_argument("--role", required=True, choices=SIGNING_ROLES, help="your role")
    parser.add_argument(
        "--signing-key",
        metavar="PATH",
        help=f"your Ed25519 private key (default: {SIGNING_KEY_VARIABLE})",
    )
    parser.add_argument(
        "--policy", type=Path, metavar="POLICY", help="approval policy to check against first"
    )
    parser.set_defaults(handler=run_sign)


def run_sign(args: argparse.Namespace) -> int:
    """Sign and say what was signed, with which key, and where it was written."""
    from docevals_mlflow.groundtruth.approval_chain import Actor, actor_problem
    from docevals_mlflow.groundtruth.chain_policy import load_policy
    from docevals_mlflow.groundtruth.chain_signing import preparer_path, sign_review
    from docevals_mlflow.groundtruth.review_layers import layer_path
    from docevals_mlflow.groundtruth.signing import load_signing_key

    value = args.signing_key or os.environ.get(SIGNING_KEY_VARIABLE)
    if not value:
        raise InputError(
            f"no signing key: pass --signing-key PATH or set {SIGNING_KEY_VARIABLE} "
            "(docevals keygen --out PREFIX makes one)"
        )
    key = load_signing_key(value)
    if args.policy is not None:
        problem = actor_problem(Actor(args.role, args.person, key.key_id), load_policy(args.policy))
        if problem:
            raise InputError(f"not signed: {problem}", source=str(args.policy))
    act = sign_review(args.file, args.person, args.role, key)
    where = (
        preparer_path(args.file) if args.role == "preparer" else layer_path(args.file, args.person)
    )
    print(
        f"signed {args.file} as {act.role} {act.person} with key {act.key_id}: "
        f"digest {act.digest} at {act.at}"
    )
    print(f"wrote {where}")
    return EXIT_OK
