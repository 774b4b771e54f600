"""Where strict JSON is refused: the offset and field path of the first refused value.

Only run once the fast decoder in :mod:`docevals_mlflow.core.strict_json` has refused a
text (or found something to look at), so it is written for clarity, not speed; it is
iterative, so any nesting depth is safe.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field

from docevals_mlflow.core.paths import FieldPath
from docevals_mlflow.core.refusals import MAX_NESTING, Refusal

_TOKEN = re.compile(
    r"""[ \t\n\r]*(?:
      (?P<string>"[^"\\]*(?:\\.[^"\\]*)*")
    | (?P<number>-?(?:0|[1-9][0-9]*)(?P<fraction>(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?))
    | (?P<constant>NaN|-?Infinity)
    | (?P<literal>true|false|null)
    | (?P<punct>[\[\]{},:])
    )""",
    re.VERBOSE | re.DOTALL,
)
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def _lone_surrogate(token: str) -> int | None:
    """Offset in a JSON string token of a ``\\uXXXX`` escape naming half of a
    surrogate pair without the other half, or ``None``."""
    high: int | None = None
    high_end = -1
    for match in _ESCAPE.finditer(token):
        code = match.group(1)
        value = int(code, 16) if code is not None else -1
        if high is not None:
            if 0xDC00 <= value <= 0xDFFF and match.start() == high_end:
                high = None
                continue
            return high
        if 0xD800 <= value <= 0xDBFF:
            high, high_end = match.start(), match.end()
        elif 0xDC00 <= value <= 0xDFFF:
            return match.start()
    return high


@dataclass
class _Open:
    """A container being read by :func:`locate_refusal`."""

    is_object: bool
    keys: set[str] = field(default_factory=set)
    key: str | None = None
    index: int = 0
    want_key: bool = True


class _Containers:
    """The containers open at the current token, and the checks each token kind needs."""

    def __init__(self) -> None:
        self.stack: list[_Open] = []

    def path(self) -> FieldPath:
        return tuple(
            (frame.key if frame.key is not None else "") if frame.is_object else frame.index
            for frame in self.stack
        )

    def punct(self, token: str, start: int) -> Refusal | None:
        stack = self.stack
        if token in "[{":
            if len(stack) >= MAX_NESTING:
                return Refusal(
                    f"nesting deeper than {MAX_NESTING:,} levels",
                    self.path(),
                    start,
                    expected=f"objects and arrays nested at most {MAX_NESTING:,} deep",
                )
            stack.append(_Open(is_object=token == "{"))
        elif token in "]}":
            stack.pop()
        elif token == "," and stack:
            frame = stack[-1]
            if frame.is_object:
                frame.want_key = True
            else:
                frame.index += 1
        return None

    def string(self, token: str, start: int) -> Refusal | None:
        frame = self.stack[-1] if self.stack else None
        lone = _lone_surrogate(token)
        is_key = frame is not None and frame.is_object and frame.want_key
        if lone is not None:
            return Refusal(
                "a lone UTF-16 surrogate (half of a character) in a string",
                self.path()[:-1] if is_key else self.path(),
                start + lone,
                expected="both halves of a surrogate pair, or the character itself",
            )
        if is_key:
            assert frame is not None
            key = json.loads(token)
            if key in frame.keys:
                return Refusal(
                    f"duplicate key {key!r}",
                    (*self.path()[:-1], key),
                    start,
                    expected="each key once per object",
                )
            frame.keys.add(key)
            frame.key = key
            frame.want_key = False
        return None

    def number(self, token: str, start: int, *, fraction: bool) -> Refusal | None:
        if fraction:
            if not math.isfinite(float(token)):
                shown = token if len(token) <= 24 else f"{token[:20]}..."
                return Refusal(
                    f"{shown} does not fit a 64-bit float",
                    self.path(),
                    start,
                    expected="finite numbers",
                )
            return None
        limit = sys.get_int_max_str_digits()
        digits = len(token.lstrip("-"))
        if limit and digits > limit:
            return Refusal(
                f"an integer of {digits:,} digits is too long to read",
                self.path(),
                start,
                expected=f"integers of at most {limit:,} digits",
            )
        return None


def locate_refusal(text: str) -> Refusal | None:
    """The first refused value of a JSON text, with its offset and field path.

    ``None`` when nothing is refused up to the first syntax error (which the decoder
    reports itself).
    """
    containers = _Containers()
    position = 0
    while (match := _TOKEN.match(text, position)) is not None:
        position = match.end()
        kind = match.lastgroup or ""
        start = match.start(kind)
        token = match.group(kind)
        problem: Refusal | None = None
        if kind == "punct":
            if token in "]}" and not containers.stack:
                return None
            problem = containers.punct(token, start)
        elif kind == "string":
            problem = containers.string(token, start)
        elif kind == "number":
            problem = containers.number(token, start, fraction=bool(match.group("fraction")))
        elif kind == "constant":
            problem = Refusal(
                f"{token} is not valid JSON", containers.path(), start, expected="finite numbers"
            )
        if problem is not None:
            return problem
    return None
