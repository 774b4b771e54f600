"""The files of several reviewers' work: one layer per person beside a review file.

Data only; reading, appending and combining layers live in
:mod:`~docevals_mlflow.groundtruth.review_layers`. A layer is a user-facing file, so
unknown keys are refused (``extra="forbid"``) with the path of the offending key.

A layer is append-only: an edit appends an entry, and a person's current answer for
a field path is the last entry for it. Each entry says what the answer was before
(``previous``), so the file reads as a history: who answered what, when, instead of
what.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.model import DocEvalsModel, FrozenModel, input_error_from_validation
from docevals_mlflow.groundtruth.models import Candidate, DisagreementReason

LAYER_SCHEMA_VERSION = "1"

PERSON_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
"""A person id: 1-64 characters of ``[A-Za-z0-9._@+-]``, starting with a letter or
digit (so a layer file is never hidden and never a relative path)."""

Action = Literal["accept", "set", "absent", "unreadable"]
"""``accept``: the proposed value; ``set``: a value the person typed; ``absent``: the
document does not hold the field; ``unreadable``: it does, but cannot be read."""
Role = Literal["reviewer", "adjudicator"]

_SHA256 = re.compile(r"[0-9a-f]{64}")
_UTC_TIME_PATTERN = (
    r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?Z$"
)


def check_person(person: str) -> str:
    """``person`` if it is a valid person id, else :class:`ValueError` saying why."""
    if not isinstance(person, str) or not PERSON_PATTERN.fullmatch(person):
        raise ValueError(
            f"{person!r} is not a person id (1-64 characters of letters, digits and "
            "._@+-, starting with a letter or digit)"
        )
    return person


def utc_now_text(now: _dt.datetime | None = None) -> str:
    """``now`` (default: the current time) as ISO 8601 UTC with a ``Z``, to the
    microsecond (two answers in one second keep their order)."""
    moment = now if now is not None else _dt.datetime.now(_dt.UTC)
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("the answer time has no time zone")
    return moment.astimezone(_dt.UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


class _Entry(BaseModel):
    # Why not FrozenModel: pydantic calls a model's own __init__ for every nested
    # instance, and DocEvalsModel has one; a review's layers hold tens of thousands of
    # entries. Validated inside LayerFile (a DocEvalsModel), errors still become
    # InputError naming the entry; direct construction goes through make_entry.
    model_config = ConfigDict(extra="forbid", frozen=True)


class LayerEntry(_Entry):
    """One answer a person gave for one field path."""

    path: str
    """The field path, in its canonical spelling (``$.total``)."""
    action: Action
    value: Any = None
    """The typed value (``set`` only)."""
    previous: Any = None
    """The value this person's answer held before (``None`` for absent/unreadable),
    or the proposed value when this is the person's first answer for the path."""
    previous_action: Action | None = None
    """The action of this person's answer before; ``None`` for a first answer."""
    at: str = Field(pattern=_UTC_TIME_PATTERN)
    """UTC time, ISO 8601 with a ``Z`` suffix (checked by pattern: a layer holds
    thousands of entries, and a Python validator per entry would double the load time
    of a review)."""
    reason: str | None = None
    """Why (required for an adjudicator's entries)."""

    @model_validator(mode="after")
    def _value_only_for_set(self) -> LayerEntry:
        if self.action == "set" and self.value is None:
            raise ValueError("action 'set' needs a value (use 'absent' for no value)")
        if self.action != "set" and self.value is not None:
            raise ValueError(f"action {self.action!r} takes no value (only 'set' does)")
        if self.reason is not None and not self.reason.strip():
            raise ValueError("reason is blank (leave it out, or say why)")
        return self


def make_entry(**fields: Any) -> LayerEntry:
    """A :class:`LayerEntry`, with invalid fields raised as ``InputError``."""
    try:
        return LayerEntry(**fields)
    except ValidationError as exc:
        raise input_error_from_validation(exc, title="LayerEntry") from None


class LayerSignature(FrozenModel):
    """An Ed25519 signature over :func:`layer_digest` (written by ``review sign``)."""

    algorithm: Literal["ed25519"] = "ed25519"
    key_id: str
    public_key: str
    signature: str
    at: str

    @field_validator("key_id")
    @classmethod
    def _digest(cls, value: str) -> str:
        if not _SHA256.fullmatch(value):
            raise ValueError("expected a SHA-256 digest: 64 lowercase hexadecimal characters")
        return value


class LayerFile(DocEvalsModel):
    """One person's answers to one review file."""

    schema_version: Literal["1"] = "1"
    review_sha256: str
    """The review digest (``review_digest``) of the review file these answers are about."""
    person: str
    role: Role = "reviewer"
    entries: list[LayerEntry] = Field(default_factory=list)
    signature: LayerSignature | None = None

    @field_validator("review_sha256")
    @classmethod
    def _digest(cls, value: str) -> str:
        if not _SHA256.fullmatch(value):
            raise ValueError("expected a SHA-256 digest: 64 lowercase hexadecimal characters")
        return value

    @field_validator("person")
    @classmethod
    def _person(cls, value: str) -> str:
        return check_person(value)


def layer_digest(layer: LayerFile) -> str:
    """SHA-256 of a layer's canonical JSON without its signature: what a signature
    covers (formatting-proof)."""
    return sha256_json(layer.model_dump(mode="json", exclude={"signature"}))


class Answer(FrozenModel):
    """A person's current answer for one field path (their last entry for it)."""

    person: str
    role: Role
    path: str
    action: Action
    value: Any = None
    """The value the answer gives: the proposed value for ``accept``, the typed one
    for ``set``, ``None`` for ``absent`` and ``unreadable``."""
    at: str
    reason: str | None = None
    edits: int = 1
    """How many entries this person made for the path (1: answered once)."""

    @property
    def absent(self) -> bool:
        """Whether the answer leaves the field out (absent or unreadable)."""
        return self.action in ("absent", "unreadable")


class FinalValue(FrozenModel):
    """What the review layers decide for one field path."""

    path: str
    status: Literal["adjudicated", "agreed", "unresolved"]
    action: Action | None = None
    """The deciding answers' action (``None`` while unresolved)."""
    value: Any = None
    reason: str | None = None
    """The adjudicator's reason, when adjudicated."""

    @property
    def absent(self) -> bool:
        """Whether the field is decided out of the ground truth."""
        return self.status != "unresolved" and self.action in ("absent", "unreadable")


class Disputed(FrozenModel):
    """A field path whose reviewers' answers differ, or too few answered."""

    path: str
    kind: Literal["differ", "incomplete"]
    answers: dict[str, Answer]
    """Reviewers' current answers by person."""
    adjudicated: bool = False


class FieldView(FrozenModel):
    """Everything a review page shows for one field path."""

    path: str
    kind: Literal["claim", "item"]
    """An agreed claim of the panel, or a disputed review item."""
    proposed: Any = None
    has_proposal: bool
    """Whether there is a value to accept (a claim's, or a disputed item's majority)."""
    reason: DisagreementReason | None = None
    """Why the panel disputed the field (items only)."""
    agreement: float | None = None
    """Share of the panel's voters behind the proposed (or best) value."""
    candidates: list[Candidate] = Field(default_factory=list)
    """The panel's values with their providers and votes (for a claim: one)."""
    omitted_by: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    reference_ids: list[str] = Field(default_factory=list)
    confidence: float | None = None
    """The lowest confidence any provider stated for the path (``None``: none did)."""
    failed_providers: list[str] = Field(default_factory=list)
    """Providers whose whole answer was unusable (error, malformed, refused...)."""
    failed_upstream: bool = False
    """Nothing usable came from upstream for the field: no provider gave it, too few
    voters, an unresolved adjudication, or a provider's answer failed."""
    answers: dict[str, Answer] = Field(default_factory=dict)
    final: FinalValue


class StaleLayer(FrozenModel):
    """A layer written for another version of its review file (left out, reported)."""

    person: str
    file: str
    review_sha256: str
    """The review digest the layer answers (not the review file's current one)."""
    entries: int
