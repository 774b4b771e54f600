"""The values of registered ground-truth datasets: a version, a loaded dataset, and
``NAME[@VERSION]`` specs. No MLflow here; :mod:`.datasets` makes and loads them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, PrivateAttr

from docevals_mlflow.core.artifacts import ReferenceArtifact
from docevals_mlflow.core.model import DocEvalsModel, FrozenModel
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.groundtruth.documents import rows_to_document
from docevals_mlflow.groundtruth.records import ApprovedGroundTruth
from docevals_mlflow.tracking.dataset_content import SignatureState, check_dataset_name

VersionSpec = int | Literal["latest"]


class DatasetNotFoundError(DocEvalsError, LookupError):
    """No registered dataset (or version, or case) by that name."""


class DatasetVersion(FrozenModel):
    """One registered version of a ground-truth dataset."""

    name: str
    version: int
    run_id: str
    """The approval run that holds it."""
    experiment_id: str
    digest: str
    """Content digest (32 hex characters; see :mod:`.dataset_content`)."""
    cases: int
    records: int
    """Approved rows (one per case and path)."""
    approvers: list[str] = Field(default_factory=list)
    key_ids: list[str] = Field(default_factory=list)
    """Ids of the keys that signed the approval records."""
    signatures: SignatureState = "unsigned"
    """What registration verified: ``trusted`` (every record signed by the public key
    given), ``unpinned`` (every record signed, each checked against its own embedded
    key: integrity, not identity) or ``unsigned`` (unsigned records, accepted
    explicitly)."""
    created_at: str
    """UTC time of the registration, ISO 8601 with ``Z``."""
    tracking_uri: str
    """The tracking store, without any credentials it may carry."""
    description: str = ""
    genai_dataset_id: str | None = None
    """The MLflow GenAI evaluation dataset that mirrors the latest version."""
    warnings: list[str] = Field(default_factory=list)
    already_registered: bool = False
    """True when the content equalled the latest version, which was returned as is."""

    @property
    def spec(self) -> str:
        """``name@version``, as ``--ground-truth-dataset`` takes it."""
        return f"{self.name}@{self.version}"


class GroundTruthDataset(DocEvalsModel):
    """A loaded, checked dataset version: approved cases and their references."""

    name: str
    version: int
    digest: str
    run_id: str
    experiment_id: str
    created_at: str
    approvers: list[str] = Field(default_factory=list)
    description: str = ""
    signatures: SignatureState = "unsigned"
    """What loading verified (see :attr:`DatasetVersion.signatures`): ``trusted`` only
    when a public key was given (or ``DOCEVALS_PUBLIC_KEY`` set) and signed every case."""
    cases: dict[str, ApprovedGroundTruth]
    """Per case id: the approved rows and their approval record."""

    # References are made when asked for: an evaluation of one case should not pay
    # for building thousands.
    _references: dict[str, ReferenceArtifact] = PrivateAttr(default_factory=dict)

    @property
    def spec(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    @property
    def case_ids(self) -> list[str]:
        """Every case id, sorted."""
        return sorted(self.cases)

    def reference(self, case_id: str) -> ReferenceArtifact:
        """The ground-truth reference of ``case_id``.

        Raises:
            DatasetNotFoundError: the dataset has no such case (the message lists some
                of the ids it has).
        """
        found = self._references.get(case_id)
        if found is not None:
            return found
        approved = self.cases.get(case_id)
        if approved is None:
            raise DatasetNotFoundError(
                f"dataset {self.spec} has no case {case_id!r}",
                expected="one of " + some_of(self.case_ids),
            )
        from docevals_mlflow.groundtruth.approval import approved_reference

        # The approval record travels in the metadata (approved_from_reference can
        # verify it again); the dataset coordinates say where it was registered.
        found = approved_reference(
            approved,
            metadata={
                "dataset": self.name,
                "dataset_version": self.version,
                "dataset_digest": self.digest,
                "case_id": case_id,
            },
        )
        self._references[case_id] = found
        return found

    @property
    def references(self) -> dict[str, ReferenceArtifact]:
        """Per case id: the approved rows as a reference with ``authority="ground_truth"``
        (its metadata names the dataset, version and digest, and holds the approval)."""
        return {case_id: self.reference(case_id) for case_id in self.case_ids}

    def document(self, case_id: str) -> Any:
        """The approved document of ``case_id`` (rows rebuilt into nested data)."""
        self.reference(case_id)
        return rows_to_document(self.cases[case_id].rows, source=f"{self.spec}/{case_id}")

    def run_params(self) -> dict[str, str]:
        """``dataset.name``, ``dataset.version`` and ``dataset.digest`` for an evaluation run."""
        return {
            "dataset.name": self.name,
            "dataset.version": str(self.version),
            "dataset.digest": self.digest,
        }


def some_of(items: list[str], limit: int = 10) -> str:
    shown = ", ".join(repr(item) for item in items[:limit])
    return shown + (f" … ({len(items)} in all)" if len(items) > limit else "")


def parse_dataset_spec(spec: str) -> tuple[str, VersionSpec]:
    """``NAME``, ``NAME@latest`` or ``NAME@3`` → ``(name, version)``.

    Raises:
        InputError: the name is invalid or the version is not a positive integer.
    """
    name, sep, version = spec.strip().partition("@")
    check_dataset_name(name)
    if not sep or version == "latest":
        return name, "latest"
    return name, version_number(version, spec)


def version_number(value: Any, spec: Any) -> int:
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
        raise InputError(
            f"invalid dataset version in {spec!r}", expected="a positive integer or 'latest'"
        )
    return int(text)
