"""Ground truth that contradicts the schema, and what a comparison does with it.

The schema says what shape each configured field has (a single value, an object, a
list). Ground truth of another shape (``["Delaware"]`` where the schema declares one
jurisdiction) cannot be scored fairly: the model would be blamed for the data. Such
documents are found during the comparison itself (no separate pass) and are either
refused, all of them counted in one error, or left out of the figures and counted
as ``invalid_expected``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from docevals_mlflow.errors import ShapeMismatchError

if TYPE_CHECKING:
    from docevals_mlflow.fields.compare import DocumentComparison

ShapeMismatchPolicy = Literal["error", "count"]
"""``error``: wrong-shaped ground truth stops the comparison (exit 2 on the command
line); ``count``: such documents are left out of the figures and counted apart."""

DiscoveredPolicy = Literal["exclude", "include"]
"""Whether fields the schema does not name count in the headline figures."""
DISCOVERED_POLICIES: tuple[str, ...] = ("exclude", "include")

MAX_INVALID_EXAMPLES = 10
"""Wrong-shaped documents described one by one in a report (all are counted)."""


def invalid_example(document: DocumentComparison) -> dict[str, Any]:
    """One wrong-shaped document, as a report lists it: its first violation."""
    path, declared, found = document.invalid[0]
    return {
        "id": document.id,
        "source": document.source,
        "line": document.place,
        "path": path,
        "schema": declared,
        "found": found,
        "places": len(document.invalid),
    }


def shape_mismatch_error(example: dict[str, Any], total: int) -> ShapeMismatchError:
    """The error for wrong-shaped ground truth: where the first document goes wrong
    (an :func:`invalid_example`), what the schema says there, and how many documents
    are affected."""
    others = f"; {total - 1} more document{'s' if total > 2 else ''} too" if total > 1 else ""
    doc_id = example.get("id")
    where = f"document {doc_id!r}" if doc_id is not None else "the document"
    return ShapeMismatchError(
        f"{where}: the ground truth holds {example['found']} where the schema declares "
        f"{example['schema']}{others} ({total} affected in all). Fix the "
        "ground truth or the schema, or pass --allow-shape-mismatch (shape_mismatch="
        "'count') to leave such documents out of the figures and count them as "
        "invalid_expected",
        documents=total,
        declared=example["schema"],
        found=example["found"],
        source=example.get("source"),
        record=example.get("line"),
        path=example["path"],
    )
