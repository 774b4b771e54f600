"""Strict JSON: what Python's decoder accepts but docevals refuses, found fast.

``NaN``/``Infinity``, numbers beyond a 64-bit float, a key twice in one object, lone
UTF-16 surrogates (``"\\ud800"``) and nesting beyond
:data:`~docevals_mlflow.core.refusals.MAX_NESTING` are errors naming the line, column
and field path. The common case (valid JSON) costs one C decoder pass plus byte-speed
scans; :func:`~docevals_mlflow.core.json_locate.locate_refusal` runs only when
something is refused.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import accumulate
from pathlib import Path
from typing import Any

from docevals_mlflow.core.input_files import UTF8_BOM, decode_text, read_bytes_file
from docevals_mlflow.core.json_locate import locate_refusal
from docevals_mlflow.core.refusals import MAX_NESTING, Refusal
from docevals_mlflow.errors import InputError


class _Refused(ValueError):
    """Raised by the decoder's hooks; :func:`locate_refusal` then finds where and why."""


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Refused(f"{text} does not fit a 64-bit float")
    return number


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # The cheapest exact check there is: a repeated key makes the dict shorter.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Refused("duplicate key")
    return obj


# One decoder for every call: ``json.loads`` with hooks builds a new one each time,
# which costs as much as decoding a small record.
_STRICT = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys
)
# Without the repeated-key check, which costs about half as much again as decoding
# (the decoder builds a list of pairs for the hook): for text read a second time.
_REREAD = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


_ESCAPED_QUOTE_OR_BACKSLASH = re.compile(rb'\\[\\"]')
_STRING_SKELETON = re.compile(rb'"[^"]*"')
_STRUCTURE = bytes.maketrans(b"[]{}", b"()()")
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'[]{}"')
_STEP = [0] * 256
_STEP[ord("(")], _STEP[ord(")")] = 1, -1


def _deeper_than(data: bytes, limit: int) -> bool:
    """Whether valid JSON nests objects and arrays more than ``limit`` deep, at close
    to the speed of copying it."""
    if b"\\" in data:
        # Only escaped quotes could end a string early below; other escapes are inert.
        data = _ESCAPED_QUOTE_OR_BACKSLASH.sub(b"", data)
    # The brackets and quotes: '(""(""""))' for [{"a": "b"}].
    skeleton = data.translate(_STRUCTURE, _NOT_STRUCTURE)
    if skeleton.count(b"(") <= limit:
        return False
    # Quotes next to each other are an empty string or one string's end and the
    # next one's start with nothing structural between: either way dropping them
    # leaves what is outside strings alone. What is left are strings holding
    # brackets, which are rare.
    skeleton = skeleton.replace(b'""', b"")
    if b'"' in skeleton:
        skeleton = _STRING_SKELETON.sub(b"", skeleton)
    # Each pass removes exactly one level (every innermost pair, left to right); real
    # documents are shallow and vanish in a few passes at bytes speed. Whatever is
    # left is measured exactly, in one pass.
    for _ in range(8):
        if not skeleton:
            return limit < 0
        skeleton = skeleton.replace(b"()", b"")
        limit -= 1
    return max(accumulate(map(_STEP.__getitem__, skeleton)), default=0) > limit


_SURROGATE_ESCAPE = re.compile(
    # A high half not followed by a low one, or a low half not preceded by a high one
    # (unless a backslash precedes that, which may escape it): candidates only, which
    # locate_refusal then checks exactly.
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<![^\\]\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)

# CPython before 3.12 counts each level the C decoder enters against the interpreter's
# recursion limit (later versions against a separate, higher C limit).
_DECODER_USES_RECURSION_LIMIT = sys.implementation.name == "cpython" and sys.version_info < (3, 12)

_STACK_LOCK = threading.Lock()


@contextmanager
def _room_for_nesting() -> Iterator[None]:
    # Python 3.11's C decoder counts nesting against the interpreter's recursion
    # limit, so a document within MAX_NESTING can fail when the stack is already in
    # use; one retry with room for MAX_NESTING more levels reads it. (Newer Pythons
    # use a separate C limit above MAX_NESTING.)
    with _STACK_LOCK:
        before = sys.getrecursionlimit()
        sys.setrecursionlimit(before + MAX_NESTING + 100)
        try:
            yield
        finally:
            sys.setrecursionlimit(before)


def _decode(text: str, data: bytes | None = None, *, reread: bool = False) -> Any:
    """Strict JSON. Raises :class:`json.JSONDecodeError` (syntax) or :class:`Refusal`
    (a refused value, located).

    ``reread``: the text passed these checks before (a reader's second pass), so
    repeated keys, lone surrogates and nesting are not looked for again.
    """
    decoder = _REREAD if reread else _STRICT
    try:
        value = decoder.decode(text)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as exc:
        problem = locate_refusal(text)
        if problem is not None:
            raise problem from None
        if not isinstance(exc, RecursionError):
            raise Refusal(str(exc)) from None
        try:
            with _room_for_nesting():
                value = decoder.decode(text)
        except RecursionError:
            raise Refusal(f"nesting too deep to read (limit {MAX_NESTING:,})") from None
        return value
    if reread:
        return value
    # Accepted by the decoder, which does not see these two.
    if "\\" in text and _SURROGATE_ESCAPE.search(text):
        problem = locate_refusal(text)
        if problem is not None:
            raise problem
    # Nesting deeper than MAX_NESTING takes more characters than this; and where the
    # decoder counts nesting against a recursion limit of at most MAX_NESTING, what
    # it read is shallower already.
    if len(text) > 2 * MAX_NESTING and not (
        _DECODER_USES_RECURSION_LIMIT and sys.getrecursionlimit() <= MAX_NESTING
    ):
        raw = data if data is not None else text.encode("utf-8", "surrogatepass")
        if _deeper_than(raw, MAX_NESTING):
            problem = locate_refusal(text)
            if problem is not None:
                raise problem
    return value


def loads_strict(text: str) -> Any:
    """Strict JSON: ``NaN``, ``Infinity``, numbers too large for a float, repeated keys,
    lone surrogates and nesting beyond :data:`MAX_NESTING` are refused.

    Raises:
        ValueError: not strict JSON (:class:`json.JSONDecodeError` for a syntax error).
    """
    try:
        return _decode(text)
    except Refusal as exc:
        raise ValueError(exc.problem) from None


def parse_json(
    data: str | bytes,
    *,
    source: str | None,
    record: str | None = None,
    one_line: str | None = None,
    reread: bool = False,
) -> Any:
    """Strict JSON (see :func:`loads_strict`) from text or UTF-8 bytes, with errors
    that name ``source``, ``record``, the line and column, and the field path.

    ``one_line`` marks a JSON Lines record: an error then names the column only (the
    line is the record) and a syntax error says that ``one_line`` was expected.
    ``reread`` is for text this function accepted before (a reader's second pass
    over its input): repeated keys, lone surrogates and nesting are not checked again.
    """
    raw: bytes | None = None
    if isinstance(data, bytes):
        raw = data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            # A BOM is the caller's to drop (only a file's first line has one).
            text = decode_text(
                data, source=source, record=record, one_line=bool(one_line), bom=False
            )
    else:
        text = data
    try:
        return _decode(text, raw, reread=reread)
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}" if one_line else f"line {exc.lineno}, column {exc.colno}"
        raise InputError(
            f"malformed JSON at {where}: {exc.msg}", source=source, record=record, expected=one_line
        ) from None
    except Refusal as exc:
        raise exc.error(source=source, record=record, text=text, one_line=bool(one_line)) from None


def load_json_file(path: Path, *, what: str = "file") -> Any:
    """Parse a JSON file (strict, see :func:`parse_json`); an empty file is an error."""
    data = read_bytes_file(path, what=what).removeprefix(UTF8_BOM)
    if not data.strip():
        raise InputError("the file is empty", source=str(path), expected="a JSON value")
    return parse_json(data, source=str(path))
