"""A run bundle: everything one MLflow run will hold, as files on disk.

An evaluation is turned into a bundle first (params, metrics, tags, dataset inputs
in ``run.json``; artifacts under ``artifacts/``) and the bundle is then logged. When
the tracking server cannot be reached, the bundle stays on disk and
``docevals log DIR`` logs it later, exactly as it would have been logged.

This module does not import mlflow.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from docevals_mlflow._version import __version__
from docevals_mlflow.core.atomic import atomic_write_bytes, atomic_write_text
from docevals_mlflow.core.datafiles import load_json_file
from docevals_mlflow.core.fingerprints import sha256_bytes
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.errors import InputError, InputFileNotFoundError

BUNDLE_FORMAT: Literal["docevals-run/1"] = "docevals-run/1"
MANIFEST = "run.json"
ARTIFACTS = "artifacts"
MAX_PARAM_LENGTH = 6000
MAX_NOTE_LENGTH = 8000

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

    Params longer than MLflow allows are never truncated: the full text goes to
    ``params/<name>.txt`` and the param holds ``sha256:<digest>`` of it.
    """

    def __init__(self, kind: RunKind = "evaluation", run_name: str | None = None) -> None:
        self.bundle = RunBundle(kind=kind, run_name=run_name)
        self.files: dict[str, bytes] = {}

    def param(self, key: str, value: Any) -> None:
        """Add a param (converted to text); long values become artifacts."""
        if value is None:
            return
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        existing = self.bundle.params.get(key)
        if existing is not None and existing != text and not existing.startswith("sha256:"):
            raise InputError(
                f"param {key!r} would be logged twice with different values "
                f"({existing!r} and {text!r})"
            )
        if len(text) > MAX_PARAM_LENGTH:
            data = text.encode("utf-8")
            self.files[f"params/{key.replace('/', '_')}.txt"] = data
            text = f"sha256:{sha256_bytes(data)}"
        self.bundle.params[key] = text

    def metric(self, key: str, value: float | int | None) -> None:
        """Add a metric; ``None`` (an undefined ratio) is not logged."""
        if value is None:
            return
        self.bundle.metrics[key] = float(value)

    def tag(self, key: str, value: str) -> None:
        """Add a tag (the run note is cut to MLflow's limit with a marker)."""
        if key == "mlflow.note.content" and len(value) > MAX_NOTE_LENGTH:
            marker = "\n\n*(summary shortened; see report/report.md)*"
            value = value[: MAX_NOTE_LENGTH - len(marker)].rstrip() + marker
        self.bundle.tags[key] = value

    def extras(
        self, *, params: Mapping[str, Any] | None = None, tags: Mapping[str, str] | None = None
    ) -> None:
        """Add a caller's own params (say, the prompt version) and tags."""
        for key, value in (params or {}).items():
            self.param(key, value)
        for key, value in (tags or {}).items():
            self.tag(key, value)

    def text(self, path: str, content: str) -> None:
        """Add a text artifact."""
        self.files[path] = content.encode("utf-8")

    def json(self, path: str, content: Any) -> None:
        """Add a JSON artifact (compact: the C encoder is many times faster than the
        indenting one on large reports, and the MLflow UI indents JSON itself)."""
        text = json.dumps(content, ensure_ascii=False, default=str, separators=(",", ":"))
        self.text(path, text + "\n")

    def parquet(self, path: str, frame: Any) -> None:
        """Add a pandas DataFrame as a Parquet artifact (strings stay strings)."""
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


def read_bundle(directory: str | os.PathLike[str]) -> tuple[RunBundle, Path]:
    """The manifest and the artifacts folder of a bundle written by :class:`BundleWriter`."""
    root = Path(directory)
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise InputFileNotFoundError("not a docevals run bundle (no run.json)", source=str(root))
    try:
        bundle = RunBundle.model_validate(load_json_file(manifest))
    except InputError as exc:
        raise exc.located(source=str(manifest)) from None
    return bundle, root / ARTIFACTS


def keep_bundle(directory: Path, destination: Path) -> Path:
    """Move a bundle from a temporary folder to where the user can find it."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    if destination.exists():
        shutil.rmtree(destination)
    shutil.move(str(directory), str(destination))
    return destination
