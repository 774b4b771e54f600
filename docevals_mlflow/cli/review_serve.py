"""``docevals review serve``: review generated ground truth in the browser."""

from __future__ import annotations

import argparse
import getpass
import os
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.common import EXIT_OK
from docevals_mlflow.cli.light_constants import SIGNING_KEY_VARIABLE
from docevals_mlflow.errors import ConfigurationError

SERVE_ROLES = ("reviewer", "adjudicator", "approver")
TOKEN_VARIABLE = "DOCEVALS_REVIEW_TOKEN"


def register(review_commands: Any) -> None:
    """Add ``review serve`` to the ``review`` subcommands."""
    parser = review_commands.add_parser(
        "serve",
        help="review in the browser: pages beside the fields, keyboard-first",
        description="Serve a review file, or a folder of *.review.json files, as a local web "
        "page: each document's pages beside the proposed fields, the panel's votes and the "
        "models' evidence; answers go to your reviewer layer (X.review.layers/NAME.json), "
        "never into the review file. Binds 127.0.0.1; another host needs --allow-remote "
        "and a token.",
    )
    parser.add_argument("target", type=Path, help="review file (X.review.json) or folder")
    parser.add_argument("--person", metavar="NAME", help="your person id (default: your user name)")
    parser.add_argument("--role", choices=SERVE_ROLES, default="reviewer", help="your role")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (0: a free one)")
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host other than loopback (then a token is required)",
    )
    parser.add_argument(
        "--token",
        help=f"the token every request must carry (default: ${TOKEN_VARIABLE}; with "
        "--allow-remote and none given, a new one is made and printed in the URL)",
    )
    parser.add_argument(
        "--reviewers",
        type=int,
        default=2,
        metavar="N",
        help="reviewers each field needs before it counts as agreed (2)",
    )
    parser.add_argument(
        "--residual",
        type=float,
        default=0.02,
        metavar="SHARE",
        help="target share of documents left with an error, for the estimate of "
        "documents left to review (0.02)",
    )
    parser.add_argument(
        "--policy",
        type=Path,
        metavar="POLICY",
        help="approval policy: you must hold --role in it; its reviewer count is used, and "
        "answers by people it does not name are flagged in the page (required for "
        "--role approver)",
    )
    _add_chain_options(parser)
    parser.set_defaults(handler=run_serve)


def _add_chain_options(parser: Any) -> None:
    parser.add_argument(
        "--signing-key",
        metavar="KEY",
        help="your Ed25519 private key, to sign your layer in the page (reviewer, "
        f"adjudicator) or the approvals (approver); default: ${SIGNING_KEY_VARIABLE} when "
        "set. With --policy it must be your key in the policy",
    )
    parser.add_argument(
        "--approved-dir",
        type=Path,
        metavar="DIR",
        help="where the approver's page writes approved files (default: approved/ in the "
        "served folder; a/x.review.json is approved as DIR/a/x.json)",
    )


def run_serve(args: argparse.Namespace) -> int:
    """Check the options, print the URL and serve until Ctrl-C."""
    from docevals_mlflow.groundtruth.layer_records import check_person
    from docevals_mlflow.reviewapp.server import new_token, serve

    person = args.person or getpass.getuser()
    try:
        check_person(person)
    except ValueError as exc:
        raise ConfigurationError(f"--person: {exc}") from None
    if not 1 <= args.port <= 65535 and args.port != 0:
        raise ConfigurationError(f"--port {args.port}", expected="0 to 65535")
    if not 0.0 < args.residual < 1.0:
        raise ConfigurationError(f"--residual {args.residual:g}", expected="a share in (0, 1)")
    if args.reviewers < 1:
        raise ConfigurationError(f"--reviewers {args.reviewers}", expected="1 or more")
    known_people = None
    required = args.reviewers
    policy = None
    if args.role == "approver" and args.policy is None:
        raise ConfigurationError(
            "--role approver needs --policy P (the chain is checked against it)"
        )
    if args.policy is not None:
        from docevals_mlflow.groundtruth.chain_policy import load_policy

        policy = load_policy(args.policy)
        entry = policy.people.get(person)
        if entry is None or args.role not in entry.roles:
            raise ConfigurationError(
                f"--person {person} is not a {args.role} in the policy",
                source=str(args.policy),
                expected=f"one of: {', '.join(policy.holders(args.role)) or 'nobody'}",
            )
        known_people = frozenset(policy.people)
        required = policy.reviewers
    signing_key = _signing_key(args, person, policy)
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    if args.allow_remote and token is None:
        token = new_token()
    serve(
        args.target,
        person=person,
        role=args.role,
        host=args.host,
        port=args.port,
        allow_remote=args.allow_remote,
        token=token,
        residual=args.residual,
        required_reviewers=required,
        known_people=known_people,
        policy=policy,
        signing_key=signing_key,
        approved_dir=args.approved_dir,
    )
    return EXIT_OK


def _signing_key(args: argparse.Namespace, person: str, policy: Any) -> Any:
    """The person's key (checked against the policy), or None when none was given."""
    value = args.signing_key or os.environ.get(SIGNING_KEY_VARIABLE)
    if not value:
        if args.role == "approver":
            raise ConfigurationError(
                f"--role approver needs --signing-key KEY (or {SIGNING_KEY_VARIABLE})"
            )
        return None
    from docevals_mlflow.groundtruth.signing import load_signing_key
    from docevals_mlflow.reviewapp.chain import check_key

    key = load_signing_key(value)
    if policy is not None:
        check_key(policy, person, key)
    return key
