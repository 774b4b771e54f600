"""An opt-in, on-disk cache of judge answers: a rerun of the same requests is free.

The key covers everything that decides an answer: the request fingerprint (prompt,
task, schema, attachment bytes) and the judge's identity (provider, model, sampling
settings). Only usable answers are stored; failures are always retried. Entries
are redacted of every registered secret (see :mod:`docevals_mlflow.core.secrets`)
when written and again when read, so an entry written by an older version that
kept a quoted key never brings it back into a report.

Besides judge results, the cache keeps other structured answers (say, the LLM field
method's pair decisions) under keys of their own ``kind``
(:meth:`JudgeCache.answer_key`, :meth:`JudgeCache.get_answer`,
:meth:`JudgeCache.put_answer`), so one ``--judge-cache`` directory serves both.
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
from docevals_mlflow.judges.judge import JudgeResult
from docevals_mlflow.judges.request import JudgeRequest

CACHE_FORMAT = "docevals-judge-cache/1"


class JudgeCache:
    """Judge answers as JSON files under ``directory`` (``ab/abcdef....json``)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.hits = 0
        self.misses = 0

    def key(
        self, request: JudgeRequest, judge: dict[str, Any], *, fingerprint: str | None = None
    ) -> str:
        """The cache key of a request for a judge (``fingerprint``: the request's, when
        already computed)."""
        fingerprint = fingerprint or request.fingerprint
        return sha256_json({"format": CACHE_FORMAT, "request": fingerprint, "judge": judge})

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> JudgeResult | None:
        """The stored result, or ``None`` (a missing or unreadable entry is a miss)."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != CACHE_FORMAT or data.get("key") != key:
                raise ValueError("not an entry for this key")
            result = JudgeResult.model_validate(redact_data(data["result"]))
        except (OSError, ValueError, KeyError, AttributeError, ValidationError, DocEvalsError):
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, key: str, result: JudgeResult) -> None:
        """Store a result atomically."""
        payload = {
            "format": CACHE_FORMAT,
            "key": key,
            "result": redact_data(result.model_dump(mode="json")),
        }
        # Not fsynced: an entry lost to a power cut is a miss, and a rerun refills it;
        # a synchronous fsync per answer would stall every other request in flight.
        atomic_write_text(
            self._path(key), json.dumps(payload, ensure_ascii=False) + "\n", durable=False
        )

    def answer_key(self, kind: str, request: JudgeRequest, judge: dict[str, Any]) -> str:
        """The key of another kind of answer (``kind`` keeps it apart from judge
        results and from other kinds) to ``request`` from ``judge``."""
        return sha256_json(
            {"format": CACHE_FORMAT, "kind": kind, "request": request.fingerprint, "judge": judge}
        )

    def get_answer(self, key: str) -> Any:
        """The stored answer (any JSON value), or ``None`` on a miss."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            if data.get("format") != CACHE_FORMAT or data.get("key") != key:
                raise ValueError("not an entry for this key")
            answer = redact_data(data["answer"])
        except (OSError, ValueError, KeyError, AttributeError):
            self.misses += 1
            return None
        self.hits += 1
        return answer

    def put_answer(self, key: str, answer: Any) -> None:
        """Store an answer (any JSON value) atomically."""
        payload = {"format": CACHE_FORMAT, "key": key, "answer": redact_data(answer)}
        # Not fsynced: an entry lost to a power cut is a miss, and a rerun refills it;
        # a synchronous fsync per answer would stall every other request in flight.
        atomic_write_text(
            self._path(key), json.dumps(payload, ensure_ascii=False) + "\n", durable=False
        )
