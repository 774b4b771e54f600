"""A reviewer's decisions applied to a review: ``set``, ``omit`` or ``reopen`` by field
path, giving a new, re-validated review."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from docevals_mlflow.core.fingerprints import canonical_json
from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.records import ReviewFile, canonical_field_path
from docevals_mlflow.groundtruth.review_rows import validated_review


def apply_decisions(
    review: ReviewFile,
    *,
    set: Mapping[str, Any] | None = None,
    omit: Iterable[str] = (),
    reopen: Iterable[str] = (),
    notes: str | None = None,
) -> ReviewFile:
    """A new review with decisions applied; the input is not changed.

    Args:
        set: field path → value: decide ``set`` with that value.
        omit: field paths to decide ``omit`` (left out of the ground truth).
        reopen: field paths to put back to ``unresolved``.
        notes: the reviewer's note, stored on every item decided or reopened here.

    Paths may be written in any equivalent spelling (``total``, ``$.total``,
    ``$['total']``). A review whose status was ``approved`` goes back to
    ``needs_review`` when its decisions change, since the approval no longer
    describes its content.

    Raises:
        InputError: a path names no review item (the message lists the pending
            ones), names an agreed claim, or is given twice; a ``set`` value is empty
            or not JSON data. Nothing is applied then.
    """
    current = validated_review(review)
    targets = _Targets(current)
    changes: dict[int, dict[str, Any]] = {}
    for path, value in (set or {}).items():
        index = targets.index(path, "--set")
        changes[index] = {"decision": "set", "expected": _set_value(path, value)}
    for path in _paths(omit, "omit"):
        changes[targets.index(path, "--omit")] = {"decision": "omit", "expected": None}
    for path in _paths(reopen, "reopen"):
        changes[targets.index(path, "--reopen")] = {"decision": "unresolved", "expected": None}
    if not changes:
        return current
    data = current.model_dump(mode="python")
    for index, update in changes.items():
        if notes is not None:
            update["notes"] = notes
        data["review_items"][index].update(update)
    if data["status"] == "approved":
        data["status"] = "needs_review"
    edited = ReviewFile.model_validate(data)
    edited._origin_sha256 = review._origin_sha256
    return edited


class _Targets:
    """The review items that decisions name, each field at most once per call."""

    def __init__(self, review: ReviewFile) -> None:
        self.review = review
        self.by_path = {
            canonical_field_path(item.path): i for i, item in enumerate(review.review_items)
        }
        self.claims = {canonical_field_path(claim.path) for claim in review.claims}
        self.given: dict[str, str] = {}

    def index(self, path: str, option: str) -> int:
        """The index of the review item ``path`` names (``option`` is for messages)."""
        try:
            key = canonical_field_path(path)
        except InputError as exc:
            raise InputError(f"{option} {path}: {exc.message}") from None
        if key in self.given:
            raise InputError(f"one field given twice: {self.given[key]} and {option} {path}")
        self.given[key] = f"{option} {path}"
        if key in self.by_path:
            return self.by_path[key]
        if key in self.claims:
            raise InputError(
                f"{option} {path}: this field is an agreed claim, not a review item; to "
                "correct it, edit its 'expected' under 'claims' in the review file"
            )
        raise InputError(
            f"{option} {path}: no review item has this path", expected=_pending(self.review)
        )


def _set_value(path: str, value: Any) -> Any:
    """``value`` as plain JSON data, refused when empty."""
    if is_empty(value):
        raise InputError(f"--set {path}: the value is empty; to leave the field out use --omit")
    try:
        return json.loads(canonical_json(value))
    except InputError as exc:
        raise InputError(f"--set {path}: {exc.message}", expected=exc.expected) from None


def _paths(paths: Iterable[str], name: str) -> list[str]:
    if isinstance(paths, str):
        # A lone string would otherwise be taken one character at a time.
        raise InputError(f"{name} takes a list of field paths, not one string")
    return list(paths)


def _pending(review: ReviewFile) -> str:
    pending = [item.path for item in review.pending()]
    decided = len(review.review_items) - len(pending)
    if not pending:
        return f"a review item; none is pending ({decided} decided)"
    return f"a pending item: {', '.join(pending)}" + (f" ({decided} decided)" if decided else "")
