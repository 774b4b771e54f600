"""Turning documents into what templates show, and typed text into values."""

from __future__ import annotations

import json
import math
from typing import Any

from docevals_mlflow.core.datafiles import loads_strict
from docevals_mlflow.core.formatting import percent_text
from docevals_mlflow.errors import InputError
from docevals_mlflow.reviewapp.model import AnswerRow, FieldRow

ABSENT_TEXT = {"absent": "— absent", "unreadable": "⊘ unreadable"}


def shown(value: Any) -> str:
    """A value as a reviewer reads it: text as is, anything else as compact JSON."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ": "))


def answer_text(answer: AnswerRow | None) -> str:
    if answer is None:
        return ""
    if answer.action in ABSENT_TEXT:
        return ABSENT_TEXT[answer.action]
    return shown(answer.value)


def share(value: float | None) -> str:
    return "n/a" if value is None else percent_text(value)


def typed_value(text: str, like: Any) -> Any:
    """The value a reviewer typed, of the kind the field already holds.

    A text field keeps the text exactly (``007`` stays ``"007"``); a number, a
    boolean, a list or an object must parse as JSON of that kind. Without anything
    to go by, JSON when the text parses as JSON, else the text.

    Raises:
        InputError: the text is blank, or does not parse as the field's kind.
    """
    if not text.strip():
        raise InputError("the typed value is blank", expected="a value, or x for absent")
    if isinstance(like, str):
        return text
    try:
        parsed = loads_strict(text)
    except ValueError:
        if like is None:
            return text
        raise InputError(
            f"{text!r} is not a {_kind(like)}", expected=f"a {_kind(like)} like {shown(like)}"
        ) from None
    if like is None or _kind(parsed) == _kind(like):
        if isinstance(parsed, float) and not math.isfinite(parsed):
            raise InputError("the number is not finite", expected="a finite number")
        return parsed
    raise InputError(f"{text!r} is not a {_kind(like)}", expected=f"a {_kind(like)}")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false value"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "JSON list"
    if isinstance(value, dict):
        return "JSON object"
    return "text"


def example_value(row: FieldRow) -> Any:
    """What a typed value should look like: the proposal, else the first candidate."""
    if row.has_proposal and row.proposed is not None:
        return row.proposed
    for candidate in row.candidates:
        if candidate.value is not None:
            return candidate.value
    return None


def choices(row: FieldRow, *, with_reviewers: bool) -> list[dict[str, Any]]:
    """The values keys 1-9 pick: reviewers' (adjudication) then the panel's candidates."""
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    if with_reviewers:
        for answer in row.answers:
            if answer.role != "reviewer":
                continue
            key = f"{answer.action}:{json.dumps(answer.value, sort_keys=True)}"
            if key not in seen:
                seen.add(key)
                label = f"{answer_text(answer)}  ({answer.person})"
                found.append({"action": answer.action, "value": answer.value, "label": label})
    for candidate in row.candidates:
        key = f"set:{json.dumps(candidate.value, sort_keys=True)}"
        if candidate.value is None or key in seen:
            continue
        seen.add(key)
        label = f"{shown(candidate.value)}  ({', '.join(candidate.providers)}, {candidate.votes:g})"
        found.append({"action": "set", "value": candidate.value, "label": label})
    return found[:9]
