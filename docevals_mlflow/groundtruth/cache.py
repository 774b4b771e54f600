"""An opt-in, on-disk cache of generators' answers: a rerun of the same generation
costs nothing.

The key covers what decides an answer: the request fingerprint (prompt, task,
schema, source bytes) and the generator's identity (provider, model, sampling
settings). Only usable answers are stored; failures are always asked again.
Registered secrets (:mod:`docevals_mlflow.core.secrets`) are removed when an entry is
written and when it is read. Entries
live beside a :class:`~docevals_mlflow.judges.cache.JudgeCache`'s (same directory
layout, their own format), so one cache directory serves judges and generators.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from docevals_mlflow.core.atomic import atomic_write_text
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.secrets import redact_data
from docevals_mlflow.errors import DocEvalsError
from docevals_mlflow.groundtruth.models import ProviderGeneration
from docevals_mlflow.judges.request import JudgeRequest

CACHE_FORMAT = "docevals-generation-cache/1"


class GenerationCache:
    """Generators' answers as JSON files under ``directory`` (``ab/abcdef....json``)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.hits = 0
        self.misses = 0

    @classmethod
    def coerce(cls, value: Any) -> GenerationCache | None:
        """A cache from ``None``, a directory, a :class:`GenerationCache`, or a judge
        cache (whose directory is shared)."""
        if value is None or isinstance(value, GenerationCache):
            return value
        if isinstance(value, (str, os.PathLike)):
            return cls(value)
        directory = getattr(value, "directory", None)
        if isinstance(directory, (str, os.PathLike)):
            return cls(directory)
        raise TypeError(
            f"cache must be a directory, a GenerationCache or a JudgeCache, "
            f"not {type(value).__name__}"
        )

    def key(self, request: JudgeRequest, generator: dict[str, Any]) -> str:
        """The cache key of a request for a generator."""
        return sha256_json(
            {"format": CACHE_FORMAT, "request": request.fingerprint, "generator": generator}
        )

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ProviderGeneration | None:
        """The stored answer, or ``None`` (a missing or unreadable entry is a miss)."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            if data.get("format") != CACHE_FORMAT or data.get("key") != key:
                raise ValueError("not an entry for this key")
            generation = ProviderGeneration.model_validate(redact_data(data["generation"]))
        except (OSError, ValueError, KeyError, AttributeError, ValidationError, DocEvalsError):
            self.misses += 1
            return None
        self.hits += 1
        return generation

    def put(self, key: str, generation: ProviderGeneration) -> None:
        """Store an answer atomically."""
        payload = {
            "format": CACHE_FORMAT,
            "key": key,
            "generation": redact_data(generation.model_dump(mode="json")),
        }
        # Not fsynced, like the judge cache: a lost entry is only a miss.
        atomic_write_text(
            self._path(key), json.dumps(payload, ensure_ascii=False) + "\n", durable=False
        )
