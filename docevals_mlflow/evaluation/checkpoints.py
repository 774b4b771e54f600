"""Stage checkpoints: reuse finished stages, never a stale or corrupt one."""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.fingerprints import canonical_json, sha256_json
from docevals_mlflow.core.reports import EvaluationReport, reference_digest
from docevals_mlflow.core.secrets import redact_data
from docevals_mlflow.errors import CheckpointWarning, DocEvalsError, InputError
from docevals_mlflow.evaluation.metrics import Metric, metric_config

CHECKPOINT_FORMAT = "docevals-checkpoint/1"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def checkpoint_fingerprint(
    pipeline_id: str,
    stage: EvaluationCase,
    metrics: Sequence[Metric],
    context: Mapping[str, Any] | None,
) -> str:
    """Fingerprint of everything that can change a stage's result.

    Covers the pipeline id, the stage *after* spec resolution, each metric's
    configuration, the caller's ``checkpoint_context`` (judge provider, model,
    temperature, ...), the package version and the bytes of every file reference.
    """
    return sha256_json(
        {
            "format": CHECKPOINT_FORMAT,
            "package_version": __version__,
            "pipeline_id": pipeline_id,
            "stage": stage,
            "metrics": [metric_config(metric) for metric in metrics],
            "context": dict(context or {}),
            "reference_bytes": {
                reference.id: reference_digest(reference)
                for reference in stage.references
                if not reference.is_inline
            },
        }
    )


class CheckpointStore:
    """One JSON file per stage under ``directory``: ``{NN}-{stage_id}.json``.

    Files are written atomically, without any registered secret (see
    :mod:`docevals_mlflow.core.secrets`); reports read back are redacted again. On
    load, a file that cannot be parsed, has the wrong shape or a different
    fingerprint is reported with a :class:`~docevals_mlflow.errors.CheckpointWarning`
    and ignored, so its stage is recomputed (and the file then replaced).
    """

    def __init__(
        self, directory: str | os.PathLike[str], context: Mapping[str, Any] | None
    ) -> None:
        self.directory = Path(directory)
        try:
            canonical_json(dict(context or {}))
        except DocEvalsError as exc:
            raise InputError(f"checkpoint_context is not JSON data: {exc}") from None
        self.context = dict(context or {})

    def path_for(self, index: int, stage_id: str) -> Path:
        """The file for the ``index``-th stage in execution order."""
        safe = _UNSAFE.sub("_", stage_id).strip("._")[:80] or "stage"
        return self.directory / f"{index:02d}-{safe}.json"

    def load(
        self, path: Path, stage_id: str, fingerprint: str
    ) -> tuple[EvaluationReport | None, str]:
        """The stored report if valid and current, else ``None`` and why not."""
        if not path.exists():
            return None, "missing"
        problem = None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
                problem = "corrupt: not a docevals checkpoint"
            elif data.get("stage_id") != stage_id:
                problem = f"corrupt: written for stage {data.get('stage_id')!r}"
            elif data.get("fingerprint") != fingerprint:
                problem = "stale: the stage, its metrics, references or context changed"
            else:
                # Redacted on reading too: a checkpoint written before a secret was
                # known (or by an older version) must not carry it into the report.
                report = EvaluationReport.model_validate(redact_data(data.get("report")))
                if report.stage_id != stage_id:
                    problem = "corrupt: the stored report is for another stage"
                else:
                    return report, "reused"
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, DocEvalsError) as exc:
            problem = f"corrupt: {type(exc).__name__}: {str(exc)[:200]}"
        warnings.warn(
            f"checkpoint {path} for stage {stage_id!r} is {problem}; recomputing the stage",
            CheckpointWarning,
            stacklevel=3,
        )
        return None, problem

    def save(self, path: Path, stage_id: str, fingerprint: str, report: EvaluationReport) -> None:
        """Write a stage's report atomically."""
        payload = {
            "format": CHECKPOINT_FORMAT,
            "stage_id": stage_id,
            "fingerprint": fingerprint,
            "report": redact_data(report.model_dump(mode="json")),
        }
        atomic_write_text(path, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
