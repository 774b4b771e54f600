"""A run bundle: everything one MLflow run will hold, as files on disk.

An evaluation is turned into a bundle first (params, metrics, tags, dataset inputs
in ``run.json``; artifacts under ``artifacts/``) and the bundle is then logged. When
the tracking server cannot be reached, the bundle stays on disk and
``docevals log DIR`` logs it later, exactly as it would have been logged.

Every key, name and value is made legal for MLflow as it is added
(:mod:`~docevals_mlflow.tracking.keys`), so ``run.json`` holds exactly what is logged.
Reading a bundle back and keeping it on disk is
:mod:`~docevals_mlflow.tracking.bundle_folders`.

This module does not import mlflow.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from docevals_mlflow._version import __version__
from docevals_mlflow.core.atomic import atomic_write_bytes, atomic_write_text
from docevals_mlflow.core.fingerprints import sha256_bytes
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.secrets import redact_data, redact_text, registered_secrets
from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking.keys import (
    MAX_PARAM_VALUE_LENGTH,
    MAX_TAG_VALUE_LENGTH,
    KeyNames,
    legal_run_name,
    legal_tag_value,
    storable_text,
)

BUNDLE_FORMAT: Literal["docevals-run/1"] = "docevals-run/1"
MANIFEST = "run.json"
ARTIFACTS = "artifacts"
METRICS_INDEX = "metrics_index.json"
MAX_PARAM_LENGTH = MAX_PARAM_VALUE_LENGTH
MAX_NOTE_LENGTH = MAX_TAG_VALUE_LENGTH
NOTE_TAG = "mlflow.note.content"
_SURROGATES = re.compile(r"[\ud800-\udfff]")
# Bytes, not characters: file systems limit a name to 255 bytes.
_MAX_FILE_NAME_BYTES = 200

RunKind = Literal["evaluation", "generation", "approval", "comparison"]


class DatasetInput(DocEvalsModel):
    """A dataset the run used (ground truth), logged with ``mlflow.log_input``."""

    name: str
    digest: str
    source: str
    context: str = "ground_truth"
    records: str
    """Bundle-relative path of a Parquet table describing the records."""
    tags: dict[str, str] = Field(default_factory=dict)


class RunBundle(DocEvalsModel):
    """The manifest of a bundle (``run.json``)."""

    format: Literal["docevals-run/1"] = BUNDLE_FORMAT
    package_version: str = __version__
    kind: RunKind = "evaluation"
    run_name: str | None = None
    params: dict[str, str] = Field(default_factory=dict)
    metrics: dict[str, float] = Field(default_factory=dict)
    tags: dict[str, str] = Field(default_factory=dict)
    inputs: list[DatasetInput] = Field(default_factory=list)


class BundleWriter:
    """Collects a bundle's parts and writes them under one folder.

    Keys, the run name and values are made legal for MLflow as they are added
    (:mod:`~docevals_mlflow.tracking.keys`): two keys that come out the same get
    ``_2``, ``_3`` .... Params longer than MLflow allows are never truncated: the full
    text goes to ``params/<name>.txt`` and the param holds ``sha256:<digest>`` of it.
    """

    def __init__(self, kind: RunKind = "evaluation", run_name: str | None = None) -> None:
        self.bundle = RunBundle(kind=kind, run_name=legal_run_name(run_name))
        self.files: dict[str, bytes] = {}
        self._param_keys = KeyNames()
        self._metric_keys = KeyNames()
        self._tag_keys = KeyNames()

    def param(self, key: str, value: Any) -> None:
        """Add a param (converted to text); long values become artifacts."""
        if value is None:
            return
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        text = redact_text(text)
        key = self._param_keys.key(key)
        existing = self.bundle.params.get(key)
        text, data = legal_param_value(text)
        if existing is not None and existing != text and not existing.startswith("sha256:"):
            raise InputError(
                f"param {key!r} would be logged twice with different values "
                f"({existing!r} and {text!r})"
            )
        if data is not None:
            self.files[param_file(key)] = data
        self.bundle.params[key] = text

    def metric(self, key: str, value: float | int | None) -> None:
        """Add a metric; ``None`` (an undefined ratio) is not logged."""
        if value is None:
            return
        self.bundle.metrics[self._metric_keys.key(key)] = float(value)

    def tag(self, key: str, value: str) -> None:
        """Add a tag (the run note is cut to MLflow's limit with a marker)."""
        key = self._tag_keys.key(key)
        self.bundle.tags[key] = legal_tag(key, redact_text(value))

    def extras(
        self, *, params: Mapping[str, Any] | None = None, tags: Mapping[str, str] | None = None
    ) -> None:
        """Add a caller's own params (say, the prompt version) and tags."""
        for key, value in (params or {}).items():
            self.param(key, value)
        for key, value in (tags or {}).items():
            self.tag(key, value)

    def text(self, path: str, content: str) -> None:
        """Add a text artifact (UTF-8; a lone surrogate, which has no UTF-8 form,
        becomes U+FFFD). Secrets this process uses are removed, the last guard before
        anything reaches MLflow."""
        content = redact_text(content)
        try:
            self.files[path] = content.encode("utf-8")
        except UnicodeEncodeError:
            self.files[path] = _SURROGATES.sub("\ufffd", content).encode("utf-8")

    def json(self, path: str, content: Any) -> None:
        """Add a JSON artifact (compact: the C encoder is many times faster than the
        indenting one on large reports, and the MLflow UI indents JSON itself)."""
        content = redact_data(content)
        options: dict[str, Any] = {"default": str, "separators": (",", ":")}
        text = json.dumps(content, ensure_ascii=False, **options)
        try:
            data = (text + "\n").encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (JSON input may hold "\ud800"): ASCII escapes keep it
            # exactly, and are still valid JSON.
            data = (json.dumps(content, ensure_ascii=True, **options) + "\n").encode("ascii")
        self.files[path] = data

    def parquet(self, path: str, frame: Any) -> None:
        """Add a pandas DataFrame as a Parquet artifact (strings stay strings; secrets
        this process uses are removed from them)."""
        if registered_secrets():
            frame = frame.copy()
            for column in frame.columns:
                if frame[column].dtype == object:
                    frame[column] = frame[column].map(
                        lambda cell: redact_text(cell) if isinstance(cell, str) else cell
                    )
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        self.files[path] = buffer.getvalue()

    def dataset(self, dataset: DatasetInput, frame: Any) -> None:
        """Add a dataset input and the table describing its records."""
        self.parquet(dataset.records, frame)
        self.bundle.inputs.append(dataset)

    def write(self, directory: str | os.PathLike[str]) -> Path:
        """Write the bundle (artifacts first, manifest last, each atomically)."""
        root = Path(directory)
        for relative, data in self.files.items():
            atomic_write_bytes(root / ARTIFACTS / relative, data)
        atomic_write_text(root / MANIFEST, self.bundle.model_dump_json(indent=1) + "\n")
        return root


def legal_param_value(text: str) -> tuple[str, bytes | None]:
    """A param value MLflow stores whole, and the full text when it is too long (the
    value is then ``sha256:<digest>`` of that text, which goes to an artifact)."""
    text = storable_text(text)
    if len(text) <= MAX_PARAM_LENGTH:
        return text, None
    data = text.encode("utf-8")
    return f"sha256:{sha256_bytes(data)}", data


def param_file(key: str) -> str:
    """The artifact path that holds the full text of a long param."""
    name = key.replace("/", "_")
    if len(name.encode("utf-8")) > _MAX_FILE_NAME_BYTES:
        # A key of 250 characters may be 1,000 bytes; keep a readable start and a hash.
        digest = sha256_bytes(key.encode("utf-8"))[:12]
        name = name.encode("utf-8")[: _MAX_FILE_NAME_BYTES - 13].decode("utf-8", "ignore")
        name = f"{name}_{digest}"
    return f"params/{name}.txt"


def legal_tag(key: str, value: str) -> str:
    """A tag value MLflow stores whole; the run note is cut with a pointer to the report."""
    value = storable_text(value)
    if key == NOTE_TAG and len(value) > MAX_NOTE_LENGTH:
        marker = "\n\n*(summary shortened; see report/report.md)*"
        return value[: MAX_NOTE_LENGTH - len(marker)].rstrip() + marker
    return legal_tag_value(value)


@dataclass(frozen=True)
class LegalBundle:
    """A bundle as MLflow will take it (see :func:`legal_bundle`).

    Attributes:
        bundle: the manifest, every key, name and value legal.
        renamed_metrics: ``{key in run.json: key logged}`` for metric keys that changed.
        long_params: ``{artifact path: full text}`` of params too long to log whole.
    """

    bundle: RunBundle
    renamed_metrics: dict[str, str]
    long_params: dict[str, str]


def legal_bundle(bundle: RunBundle) -> LegalBundle:
    """``bundle`` with every key, name and value made legal for MLflow.

    A bundle written by :class:`BundleWriter` comes back unchanged; one written by an
    older version (keys ending in ``~2``) or by hand is fixed here, so that it can
    still be logged.
    """
    params: dict[str, str] = {}
    long_params: dict[str, str] = {}
    param_keys, metric_keys, tag_keys = KeyNames(), KeyNames(), KeyNames()
    for source, value in bundle.params.items():
        key = param_keys.key(source)
        params[key], data = legal_param_value(value)
        if data is not None:
            long_params[param_file(key)] = data.decode("utf-8")
    metrics = {metric_keys.key(source): value for source, value in bundle.metrics.items()}
    tags: dict[str, str] = {}
    for source, value in bundle.tags.items():
        key = tag_keys.key(source)
        tags[key] = legal_tag(key, value)
    legal = bundle.model_copy(
        update={
            "run_name": legal_run_name(bundle.run_name),
            "params": params,
            "metrics": metrics,
            "tags": tags,
        }
    )
    return LegalBundle(bundle=legal, renamed_metrics=metric_keys.renamed(), long_params=long_params)
