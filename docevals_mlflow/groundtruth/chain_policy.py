"""Approval-chain policies: how many reviewers, when adjudication is needed, who may
act in which role with which key, and which roles one person may not combine.

A policy file is YAML or JSON::

    reviewers: 2                  # signed reviewer layers needed
    adjudication: on_disagreement # required | on_disagreement | never
    people:
      pat:   {roles: [preparer], public_key: keys/pat.pub}
      alice: {roles: [reviewer], public_key: keys/alice.pub}
      bob:   {roles: [reviewer, adjudicator], public_key: keys/bob.pub}
      carol: {roles: [approver], public_key: keys/carol.pub}
    separate: [[reviewer, approver]]  # default: every pair of distinct roles

A ``public_key`` is a path (relative to the policy file's folder) or the key itself
(an OpenSSH line, PEM or base64). A preparer's signature is required when the policy
names anyone with the ``preparer`` role. Unknown keys are refused; every error is one
line naming the file and the key.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from docevals_mlflow.core.datafiles import load_data_file
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.model import DocEvalsModel, WholeNumber
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.chain_records import ROLES, Role
from docevals_mlflow.groundtruth.key_loading import load_public_key
from docevals_mlflow.groundtruth.keys import PublicKey
from docevals_mlflow.groundtruth.layer_records import check_person

Adjudication = Literal["required", "on_disagreement", "never"]


class PolicyPerson(DocEvalsModel):
    """One person of a policy: the roles they may take and their public key."""

    roles: list[Role] = Field(min_length=1)
    public_key: str = Field(min_length=1)

    @field_validator("roles")
    @classmethod
    def _unique(cls, value: list[Role]) -> list[Role]:
        if len(set(value)) != len(value):
            raise ValueError("a role is listed twice")
        return value


class ChainPolicy(DocEvalsModel):
    """An approval-chain policy (see the module docstring)."""

    reviewers: Annotated[WholeNumber, Field(ge=1)]
    adjudication: Adjudication = "on_disagreement"
    people: dict[str, PolicyPerson] = Field(min_length=1)
    separate: list[tuple[Role, Role]] | None = None
    """Pairs of roles one person may not both take in one chain; ``None`` (the
    default) separates every pair of distinct roles."""

    _keys: dict[str, PublicKey] = PrivateAttr(default_factory=dict)

    @field_validator("people")
    @classmethod
    def _person_ids(cls, value: dict[str, PolicyPerson]) -> dict[str, PolicyPerson]:
        for person in value:
            check_person(person)
        return value

    @field_validator("separate")
    @classmethod
    def _pairs(cls, value: list[tuple[Role, Role]] | None) -> list[tuple[Role, Role]] | None:
        for index, (first, second) in enumerate(value or []):
            if first == second:
                raise ValueError(f"[{index}] pairs {first!r} with itself (name two roles)")
        return value

    @model_validator(mode="after")
    def _satisfiable(self) -> ChainPolicy:
        holders = {role: self.holders(role) for role in ROLES}
        if not holders["approver"]:
            raise InputError(
                "nobody may approve", path="people", expected="a person with role approver"
            )
        if len(holders["reviewer"]) < self.reviewers:
            raise InputError(
                f"{self.reviewers} reviewers are needed but only {len(holders['reviewer'])} "
                "person(s) have the reviewer role",
                path="reviewers",
            )
        if self.adjudication != "never" and not holders["adjudicator"]:
            raise InputError(
                f"adjudication is {self.adjudication!r} but nobody has the adjudicator role",
                path="adjudication",
                expected="a person with role adjudicator, or adjudication: never",
            )
        return self

    def holders(self, role: Role) -> list[str]:
        """The people who may take ``role``, in file order."""
        return [person for person, entry in self.people.items() if role in entry.roles]

    def separated(self) -> list[tuple[Role, Role]]:
        """The separated pairs, each once and in role order."""
        pairs = self.separate if self.separate is not None else itertools.combinations(ROLES, 2)
        return sorted({tuple(sorted(pair, key=ROLES.index)) for pair in pairs})  # type: ignore[misc]

    @property
    def needs_preparer(self) -> bool:
        """Whether a preparer must sign (the policy names a preparer)."""
        return bool(self.holders("preparer"))

    def key(self, person: str) -> PublicKey:
        """The public key of ``person`` (loaded by :func:`load_policy`)."""
        return self._keys[person]

    def fingerprint(self) -> str:
        """SHA-256 of what the policy decides (keys by their id, not their file)."""
        return sha256_json(
            {
                "reviewers": self.reviewers,
                "adjudication": self.adjudication,
                "separate": [list(pair) for pair in self.separated()],
                "people": {
                    person: {"roles": sorted(entry.roles), "key_id": self.key(person).key_id}
                    for person, entry in sorted(self.people.items())
                },
            }
        )


def load_policy(path: str | os.PathLike[str]) -> ChainPolicy:
    """Read and check a policy file, loading every person's public key.

    Raises:
        InputFileNotFoundError: no such file (or a key file is missing).
        InputError: malformed, an unknown key, an unsatisfiable policy, a key that is
            not an Ed25519 public key, or one key given to two people; the message
            names the file and the key (``people.bob.public_key``).
    """
    file_path = Path(path)
    source = str(file_path)
    data = load_data_file(file_path, what="approval policy")
    if not isinstance(data, dict):
        raise InputError(
            f"the policy is a {type(data).__name__}", source=source, expected="a mapping"
        )
    try:
        policy = ChainPolicy.model_validate(data)
    except InputError as exc:
        raise exc.located(source=source) from None
    owners: dict[str, str] = {}
    for person, entry in policy.people.items():
        where = f"people.{person}.public_key"
        try:
            key = load_public_key(_key_reference(entry.public_key, file_path.parent))
        except (InputError, InputFileNotFoundError) as exc:
            detail = f"{exc.message}: {exc.source}" if exc.source else exc.message
            raise type(exc)(detail, source=source, path=where) from None
        if key.key_id in owners:
            raise InputError(
                f"the same key as {owners[key.key_id]}'s; each person signs with their own key",
                source=source,
                path=where,
            )
        owners[key.key_id] = person
        policy._keys[person] = key
    return policy


def _key_reference(value: str, folder: Path) -> str:
    text = value.strip()
    if text.startswith(("ssh-", "-----BEGIN")):
        return text
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = folder / path  # relative to the policy, wherever the command runs
    if path.exists() or "/" in text or text.endswith((".pub", ".pem")):
        return str(path)
    return text  # the base64 of the raw key
