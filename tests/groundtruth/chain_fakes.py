"""A review with its whole approval chain on disk: keys for five people, a policy,
reviewer layers written through ``record_answer`` and signed, for the approval-chain
tests (library, CLI and register-dataset)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.groundtruth.chain_signing import sign_review
from docevals_mlflow.groundtruth.key_files import generate_keypair
from docevals_mlflow.groundtruth.review import write_ground_truth_review
from docevals_mlflow.groundtruth.review_layers import record_answer
from tests.groundtruth.approval_fakes import generation_report

PEOPLE = {
    "pat": ["preparer"],
    "alice": ["reviewer"],
    "bob": ["reviewer"],
    "judy": ["adjudicator"],
    "carol": ["approver"],
}

AGREED: dict[str, tuple[str, Any]] = {
    "$.currency": ("accept", None),
    "$.items[0].sku": ("accept", None),
    "$.amount": ("set", "12.50"),
    "$.account_name": ("set", "ACME Ltd"),
    "$.iban": ("absent", None),
}
"""Every field's answer; they decide the rows of ``approval_fakes.APPROVED_ROWS``."""


@dataclass
class Chain:
    folder: Path
    review: Path
    policy: Path
    keys: dict[str, Path]
    """Private key file by person (``<key>.pub`` beside it)."""


def write_policy(path: Path, **settings: Any) -> Path:
    """A policy naming each person's ``keys/<person>.pub`` (relative to the policy)."""
    people = {
        person: {"roles": roles, "public_key": f"keys/{person}.pub"}
        for person, roles in settings.pop("people", PEOPLE).items()
    }
    policy = {"reviewers": 2, "adjudication": "on_disagreement", "people": people, **settings}
    path.write_text(json.dumps(policy, indent=2), encoding="utf-8")
    return path


def answer(
    chain: Chain, person: str, answers: dict[str, tuple[str, Any]], role: str = "reviewer"
) -> None:
    for path, (action, value) in answers.items():
        reason = "checked on the page" if role == "adjudicator" else None
        record_answer(chain.review, person, path, action, value, role=role, reason=reason)  # type: ignore[arg-type]


def new_chain(tmp_path: Path, *, extra_people: dict[str, list[str]] | None = None) -> Chain:
    """A review, keys for every person and the default policy; nothing answered yet."""
    folder = tmp_path / "chain"
    folder.mkdir(parents=True)
    review = write_ground_truth_review(generation_report(), folder / "statement.review.json")
    people = {**PEOPLE, **(extra_people or {})}
    keys = {}
    for person in people:
        private, _ = generate_keypair(folder / "keys" / person)
        keys[person] = private
    policy = write_policy(folder / "policy.json", people=people)
    return Chain(folder, review, policy, keys)


def complete_chain(tmp_path: Path, *, disagree: bool = False) -> Chain:
    """Prepared, reviewed by alice and bob (bob disagreeing on ``$.amount`` when
    ``disagree``, then adjudicated by judy), every act signed; ready to approve."""
    chain = new_chain(tmp_path)
    sign_review(chain.review, "pat", "preparer", chain.keys["pat"])
    answer(chain, "alice", AGREED)
    bob = dict(AGREED)
    if disagree:
        bob["$.amount"] = ("set", "12.05")
    answer(chain, "bob", bob)
    sign_review(chain.review, "alice", "reviewer", chain.keys["alice"])
    sign_review(chain.review, "bob", "reviewer", chain.keys["bob"])
    if disagree:
        answer(chain, "judy", {"$.amount": ("set", "12.50")}, role="adjudicator")
        sign_review(chain.review, "judy", "adjudicator", chain.keys["judy"])
    return chain
