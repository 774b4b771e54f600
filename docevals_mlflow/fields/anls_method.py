"""``ANLS_STAR``: the ANLS* score of a value (text, number, list, dict or None) as a field
method, so a schema can score free-form values the way Stickler 1.0 scores undeclared
dicts (the metric itself is :func:`docevals_mlflow.docmetrics.anls.anls_star`)."""

from __future__ import annotations

from typing import Any

from docevals_mlflow.docmetrics.anls import anls_star
from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.comparator import SimpleComparator, format_threshold


class AnlsStarComparator(SimpleComparator):
    """Scores a pair by ANLS*: values keep their structure (lists are matched item to
    item, dicts key by key), text is compared trimmed and lower-cased."""

    def __init__(self, *, threshold: float) -> None:
        super().__init__(
            "ANLS_STAR", threshold, f"ANLS_STAR (threshold: {format_threshold(threshold)})"
        )

    def prepare(self, value: Any) -> Any:
        # A tuple is the ground truth's list of alternatives in ANLS*; a value read
        # from JSON has none, so a tuple here is a list.
        return list(value) if isinstance(value, tuple) else value

    def score(self, expected: Any, predicted: Any) -> float:
        try:
            return anls_star(expected, predicted)
        except InputError as error:
            raise InputError(f"ANLS_STAR: {error}") from None
