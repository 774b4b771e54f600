"""The errors of talking to a tracking store (re-exported by
:mod:`~docevals_mlflow.tracking.runs`, where they have always been imported from).

Kept apart so that the modules :mod:`~docevals_mlflow.tracking.runs` builds on can
raise them without importing it.
"""

from __future__ import annotations

from docevals_mlflow.errors import DocEvalsError


class TrackingError(DocEvalsError, RuntimeError):
    """MLflow refused what was asked of it (for example a run whose params differ), or
    the tracking store cannot be used as it is (a half-migrated SQLite file)."""


class TrackingUnavailableError(DocEvalsError, ConnectionError):
    """The tracking server could not be reached; nothing was logged."""


__all__ = ["TrackingError", "TrackingUnavailableError"]
