"""Every error and warning this package raises on purpose.

One root, :class:`DocEvalsError`. Each subclass also inherits the builtin a caller
would naturally catch (``ValueError``, ``FileNotFoundError``, ...), so code written
against the builtins keeps working. Context (the file, the record, the field path or
stage, what was expected) travels with the error as attributes and is also part of
the message, so a log line alone says where the problem is.

The CLI catches :class:`DocEvalsError` once, prints ``str(error)`` and exits 2.
Anything else escaping is a bug.
"""

from __future__ import annotations

from typing import Any


def _where(
    source: str | None,
    record: str | None,
    path: str | None,
    stage: str | None,
) -> str:
    parts = []
    if source:
        parts.append(source)
    if record:
        parts.append(f"record {record}")
    if stage:
        parts.append(f"stage {stage!r}")
    if path:
        parts.append(f"at {path}")
    return ", ".join(parts)


class DocEvalsError(Exception):
    """Root of every error this package raises on purpose.

    Attributes:
        source: the file (or other origin, such as ``inline://id``) the problem is in.
        record: the record, row or item inside that source (1-based where numbered).
        path: the field path (``$.items[0].code``) or configuration key involved.
        stage: the pipeline stage id involved.
        expected: what would have been accepted.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        record: str | int | None = None,
        path: str | None = None,
        stage: str | None = None,
        expected: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.record = None if record is None else str(record)
        self.path = path
        self.stage = stage
        self.expected = expected
        text = message
        if expected:
            text = f"{text} (expected {expected})"
        where = _where(source, self.record, path, stage)
        super().__init__(f"{where}: {text}" if where else text)

    def located(
        self,
        *,
        source: str | None = None,
        record: str | int | None = None,
        stage: str | None = None,
    ) -> DocEvalsError:
        """The same error with missing context filled in (known context is kept, and
        so are a subclass's own attributes).

        Used where an error raised deep inside (say, validating one stage) passes a
        layer that knows more, such as the configuration file it came from.
        """
        if (
            (source is None or self.source is not None)
            and (record is None or self.record is not None)
            and (stage is None or self.stage is not None)
        ):
            return self
        located = type(self).__new__(type(self))
        # A subclass's own details (a provider's status code, an approval's reason)
        # come along; the base context is then rebuilt, filled in.
        located.__dict__.update(self.__dict__)
        DocEvalsError.__init__(
            located,
            self.message,
            source=self.source or source,
            record=self.record if self.record is not None else record,
            path=self.path,
            stage=self.stage or stage,
            expected=self.expected,
        )
        return located

    def context(self) -> dict[str, Any]:
        """The structured context of this error, for reports and logs."""
        return {
            "type": type(self).__name__,
            "message": self.message,
            "source": self.source,
            "record": self.record,
            "path": self.path,
            "stage": self.stage,
            "expected": self.expected,
        }


class InputError(DocEvalsError, ValueError):
    """User-supplied data or configuration is malformed or inconsistent."""


class ShapeMismatchError(InputError):
    """Ground truth whose shape contradicts the schema (a list where a single value is
    declared, an object where a list is, ...): an input error, never a model error.

    Attributes:
        documents: how many documents are affected.
        declared: what the schema declares at ``path`` (``a list``, ...).
        found: what the ground truth holds there.
    """

    def __init__(
        self,
        message: str,
        *,
        documents: int,
        declared: str,
        found: str,
        source: str | None = None,
        record: str | int | None = None,
        path: str | None = None,
    ) -> None:
        self.documents = documents
        self.declared = declared
        self.found = found
        super().__init__(message, source=source, record=record, path=path)


class PipelineDefinitionError(InputError):
    """A pipeline's stages do not form a valid dependency graph."""


class ConfigurationError(DocEvalsError, ValueError):
    """The evaluator was set up in a way that cannot evaluate the given input."""


class InputFileNotFoundError(DocEvalsError, FileNotFoundError):
    """A file named as input (prediction, reference, config) does not exist."""


class OutputError(DocEvalsError, OSError):
    """A report, checkpoint or other output could not be written."""


class MetricError(DocEvalsError, RuntimeError):
    """A metric returned something it is not allowed to return."""


class WorkerProcessError(DocEvalsError, RuntimeError):
    """A worker process (``workers`` > 1) could not start or stopped mid-run."""


class ProviderError(DocEvalsError, ConnectionError):
    """A model provider could not be reached or refused the request, after retries.

    The message carries the provider's own error message with every configured
    secret removed; it never contains an API key.

    Attributes:
        provider: the provider name (``openai``, ``anthropic``, ...).
        status_code: the last HTTP status received, ``None`` when no response came.
        attempts: how many HTTP requests were made, retries included.
        usage: what the failed call used, set by the adapter that made it (a
            ``docevals_mlflow.judges.usage.Usage``: ``requests`` counts the attempts),
            so that failed calls are counted too; ``None`` when unknown.
    """

    provider: str = ""
    status_code: int | None = None
    attempts: int = 0
    usage: Any = None

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status_code: int | None = None,
        attempts: int = 1,
        source: str | None = None,
    ) -> None:
        self.provider = provider
        self.status_code = status_code
        self.attempts = attempts
        super().__init__(message, source=source)

    def context(self) -> dict[str, Any]:
        """The structured context, with the provider, HTTP status and attempts."""
        return {
            **super().context(),
            "provider": self.provider,
            "status_code": self.status_code,
            "attempts": self.attempts,
        }


class ApprovalError(DocEvalsError, ValueError):
    """An approval record, its signature or the content it vouches for failed a check.

    Attributes:
        reason: what failed, one of ``content_digest`` (the content is not what was
            approved), ``unsigned`` (a signature is required and there is none),
            ``key_mismatch`` (signed by a key other than the trusted one),
            ``signature`` (the signature does not match the record) and ``record``
            (the record's signing fields are malformed or inconsistent).
    """

    reason: str = "record"

    def __init__(
        self,
        message: str,
        *,
        reason: str = "record",
        source: str | None = None,
        record: str | int | None = None,
        path: str | None = None,
    ) -> None:
        self.reason = reason
        super().__init__(message, source=source, record=record, path=path)

    def context(self) -> dict[str, Any]:
        """The structured context, with the reason."""
        return {**super().context(), "reason": self.reason}


class DocEvalsWarning(UserWarning):
    """Root of every warning this package emits."""


class CheckpointWarning(DocEvalsWarning):
    """A checkpoint was unreadable or stale and its stage is being recomputed."""


__all__ = [
    "ApprovalError",
    "CheckpointWarning",
    "ConfigurationError",
    "DocEvalsError",
    "DocEvalsWarning",
    "InputError",
    "InputFileNotFoundError",
    "MetricError",
    "OutputError",
    "PipelineDefinitionError",
    "ProviderError",
]
