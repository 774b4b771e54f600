"""Reading data files (text, JSON, YAML) with errors that name the file and place.

Every file a user hands to docevals is read through here, so the limits below hold
for documents, schemas, pipelines, cases, review files and bundles alike (they are
documented in ``docs/configuration.md``, "Limits of every input file"):

* only **regular files** are read: a named pipe, a device or a folder where a file is
  expected (and a file where a folder is) is refused before it is opened, since
  reading a pipe blocks forever and a device never ends;
* JSON is **strict**: ``NaN``/``Infinity``, numbers beyond a 64-bit float, a key
  twice in one object and lone UTF-16 surrogates (``"\\ud800"``) are errors naming the
  line, column and field path;
* objects and arrays (YAML mappings and sequences) nest at most :data:`MAX_NESTING`
  levels;
* YAML anchors and aliases may repeat at most :data:`YAML_ALIAS_NODES` nodes in all
  (a "billion laughs" file is refused instead of expanding forever), and an alias
  inside the node it names is refused.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from docevals_mlflow.core.paths import FieldPath, format_path
from docevals_mlflow.errors import InputError, InputFileNotFoundError

if TYPE_CHECKING:
    from yaml.nodes import Node

MAX_NESTING = 1000
"""The deepest nesting of JSON objects and arrays (YAML mappings and sequences) read.

Far beyond any real document. Checked here rather than left to the parsers, whose
own limits depend on the Python version and on how much stack the caller already
uses (and PyYAML's recursive composer fails far earlier)."""

YAML_ALIAS_NODES = 10_000
"""How many nodes YAML aliases (``*name``, merge keys ``<<: *name``) may repeat in one
file, counted as if every alias were written out. Generous for shared defaults; a
"billion laughs" file reaches it within a few lines."""

UTF8_BOM = b"\xef\xbb\xbf"


# ---------------------------------------------------------------------------- files


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _cannot_read(path: Path, exc: OSError) -> InputError:
    return InputError(f"cannot read: {exc.strerror or exc}", source=str(path))


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        raise InputFileNotFoundError(f"{what} not found", source=str(path)) from None
    except OSError as exc:  # PermissionError on a folder on the way, ELOOP, ...
        raise _cannot_read(path, exc) from None


def check_file(path: Path, *, what: str = "file") -> None:
    """Refuse, before anything opens it, a ``path`` that is not a regular file (a
    symbolic link to one is fine).

    Raises:
        InputFileNotFoundError: nothing is there (``"<what> not found"``).
        InputError: a folder, named pipe, device or socket, or not accessible.
    """
    mode = _stat(path, what).st_mode
    if not stat.S_ISREG(mode):
        raise InputError(f"this is {_kind(mode)}, not a file", source=str(path))


def check_folder(path: Path, *, what: str = "folder") -> None:
    """Refuse a ``path`` that is not a folder (the counterpart of :func:`check_file`)."""
    mode = _stat(path, what).st_mode
    if not stat.S_ISDIR(mode):
        raise InputError(f"this is {_kind(mode)}, not a folder", source=str(path))


def is_folder_input(path: Path, *, what: str = "input") -> bool:
    """Whether an input that may be a file or a folder is a folder; anything but a
    regular file or a folder is refused before it is opened."""
    mode = _stat(path, what).st_mode
    if stat.S_ISDIR(mode):
        return True
    if not stat.S_ISREG(mode):
        raise InputError(f"this is {_kind(mode)}, not a file or folder", source=str(path))
    return False


# O_NONBLOCK: if the path is swapped for a named pipe between the check and the open,
# the open returns at once instead of waiting for a writer, and fstat refuses it.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_OPEN_FLAGS = os.O_RDONLY | _NONBLOCK | getattr(os, "O_BINARY", 0)


def open_file(path: Path, *, what: str = "file") -> IO[bytes]:
    """Open a regular file for reading in binary mode (see :func:`check_file`).

    Raises:
        InputFileNotFoundError: nothing is there.
        InputError: not a regular file, or it cannot be opened (permissions).
    """
    check_file(path, what=what)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise InputFileNotFoundError(f"{what} not found", source=str(path)) from None
    except OSError as exc:
        raise _cannot_read(path, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"this is {_kind(mode)}, not a file", source=str(path))
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes_file(path: Path, *, what: str = "file") -> bytes:
    """The bytes of a regular file (see :func:`open_file`)."""
    with open_file(path, what=what) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise _cannot_read(path, exc) from None


def _line_column(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a byte offset."""
    start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[start:offset].decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


def decode_text(
    data: bytes,
    *,
    source: str | None,
    record: str | None = None,
    one_line: bool = False,
    bom: bool = True,
) -> str:
    """UTF-8 text (a leading BOM is dropped unless ``bom`` is false); undecodable bytes
    are an :class:`InputError` naming the line and column (only the column for
    ``one_line``, a JSON Lines record whose line is the ``record``)."""
    skipped = len(UTF8_BOM) if bom and data.startswith(UTF8_BOM) else 0
    try:
        return data[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_column(exc.object, exc.start)
        where = f"column {column}" if one_line else f"line {line}, column {column}"
        raise InputError(
            f"not valid UTF-8 text (byte {exc.start + skipped}: {exc.reason}) at {where}",
            source=source,
            record=record,
        ) from None


def read_text_file(path: Path, *, what: str = "file") -> str:
    """Read UTF-8 text (a BOM is tolerated) from a regular file.

    Raises:
        InputFileNotFoundError: nothing is there.
        InputError: not a regular file, unreadable, or not UTF-8 (line and column).
    """
    return decode_text(read_bytes_file(path, what=what), source=str(path))


# ---------------------------------------------------------------------------- JSON


class _Refused(ValueError):
    """Raised by the decoder's hooks; :func:`_locate` then finds where and why."""


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


_PATH_SHOWN = 80


@dataclass(eq=False)
class _Problem(Exception):
    """A refused value and where it is: a 0-based character offset (JSON) or a line
    and column (YAML), and the field path."""

    problem: str
    path: FieldPath = ()
    offset: int | None = None
    line: int | None = None
    column: int | None = None
    expected: str | None = None

    def error(
        self, *, source: str | None, record: str | None, text: str | None, one_line: bool
    ) -> InputError:
        line, column = self.line, self.column
        if self.offset is not None and text is not None:
            line = text.count("\n", 0, self.offset) + 1
            column = self.offset - (text.rfind("\n", 0, self.offset) + 1) + 1
        if column is None:
            where = ""
        elif one_line or line is None:
            where = f" at column {column}"
        else:
            where = f" at line {line}, column {column}"
        shown = format_path(self.path) if self.path else None
        if shown is not None and len(shown) > _PATH_SHOWN:
            # Nesting errors sit a thousand levels down; the line and column say where.
            shown = shown[: _PATH_SHOWN - 3] + "..."
        return InputError(
            f"{self.problem}{where}",
            source=source,
            record=record,
            path=shown,
            expected=self.expected,
        )


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
    """A container being read by :func:`_locate`."""

    is_object: bool
    keys: set[str] = field(default_factory=set)
    key: str | None = None
    index: int = 0
    want_key: bool = True


def _locate(text: str) -> _Problem | None:
    """The first refused value of a JSON text, with its offset and field path.

    Only run once the fast decoder has refused the text (or found something to look
    at), so it is written for clarity, not speed; it is iterative, so any nesting
    depth is safe. ``None`` when nothing is refused up to the first syntax error
    (which the decoder reports itself).
    """
    stack: list[_Open] = []

    def path() -> FieldPath:
        return tuple(
            (frame.key if frame.key is not None else "") if frame.is_object else frame.index
            for frame in stack
        )

    position = 0
    while True:
        match = _TOKEN.match(text, position)
        if match is None:
            return None
        position = match.end()
        kind = match.lastgroup or ""
        start = match.start(kind)
        token = match.group(kind)
        frame = stack[-1] if stack else None
        if kind == "punct":
            if token in "[{":
                if len(stack) >= MAX_NESTING:
                    return _Problem(
                        f"nesting deeper than {MAX_NESTING:,} levels",
                        path(),
                        start,
                        expected=f"objects and arrays nested at most {MAX_NESTING:,} deep",
                    )
                stack.append(_Open(is_object=token == "{"))
            elif token in "]}":
                if not stack:
                    return None
                stack.pop()
            elif token == "," and frame is not None:
                if frame.is_object:
                    frame.want_key = True
                else:
                    frame.index += 1
            continue
        if kind == "string":
            lone = _lone_surrogate(token)
            is_key = frame is not None and frame.is_object and frame.want_key
            if lone is not None:
                return _Problem(
                    "a lone UTF-16 surrogate (half of a character) in a string",
                    path()[:-1] if is_key else path(),
                    start + lone,
                    expected="both halves of a surrogate pair, or the character itself",
                )
            if is_key:
                assert frame is not None
                key = json.loads(token)
                if key in frame.keys:
                    return _Problem(
                        f"duplicate key {key!r}",
                        (*path()[:-1], key),
                        start,
                        expected="each key once per object",
                    )
                frame.keys.add(key)
                frame.key = key
                frame.want_key = False
        elif kind == "number":
            if match.group("fraction"):
                if not math.isfinite(float(token)):
                    shown = token if len(token) <= 24 else f"{token[:20]}..."
                    return _Problem(
                        f"{shown} does not fit a 64-bit float",
                        path(),
                        start,
                        expected="finite numbers",
                    )
            else:
                limit = sys.get_int_max_str_digits()
                digits = len(token.lstrip("-"))
                if limit and digits > limit:
                    return _Problem(
                        f"an integer of {digits:,} digits is too long to read",
                        path(),
                        start,
                        expected=f"integers of at most {limit:,} digits",
                    )
        elif kind == "constant":
            return _Problem(f"{token} is not valid JSON", path(), start, expected="finite numbers")


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
    # _locate then checks exactly.
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
    """Strict JSON. Raises :class:`json.JSONDecodeError` (syntax) or :class:`_Problem`
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
        problem = _locate(text)
        if problem is not None:
            raise problem from None
        if not isinstance(exc, RecursionError):
            raise _Problem(str(exc)) from None
        try:
            with _room_for_nesting():
                value = decoder.decode(text)
        except RecursionError:
            raise _Problem(f"nesting too deep to read (limit {MAX_NESTING:,})") from None
        return value
    if reread:
        return value
    # Accepted by the decoder, which does not see these two.
    if "\\" in text and _SURROGATE_ESCAPE.search(text):
        problem = _locate(text)
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
            problem = _locate(text)
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
    except _Problem as exc:
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
    except _Problem as exc:
        raise exc.error(source=source, record=record, text=text, one_line=bool(one_line)) from None


def load_json_file(path: Path, *, what: str = "file") -> Any:
    """Parse a JSON file (strict, see :func:`parse_json`); an empty file is an error."""
    data = read_bytes_file(path, what=what).removeprefix(UTF8_BOM)
    if not data.strip():
        raise InputError("the file is empty", source=str(path), expected="a JSON value")
    return parse_json(data, source=str(path))


# ---------------------------------------------------------------------------- YAML


_SURROGATE_CHARACTER = re.compile("[\ud800-\udfff]")


@functools.cache
def _bounded_loader() -> type[Any]:
    """PyYAML's safe loader with the limits of this module (built on first use, so
    that importing this module does not import PyYAML)."""
    import yaml
    from yaml.composer import ComposerError
    from yaml.events import (
        AliasEvent,
        MappingEndEvent,
        MappingStartEvent,
        ScalarEvent,
        SequenceEndEvent,
    )
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    def problem(message: str, mark: Any, path: FieldPath, expected: str | None) -> _Problem:
        return _Problem(
            message, path, line=mark.line + 1, column=mark.column + 1, expected=expected
        )

    @dataclass
    class Open:
        node: MappingNode | SequenceNode
        anchor: str | None
        size: int = 1
        key: Node | None = None

    def path_of(stack: list[Open]) -> FieldPath:
        segments: list[str | int] = []
        for frame in stack:
            if isinstance(frame.node, SequenceNode):
                segments.append(len(frame.node.value))
            elif isinstance(frame.key, ScalarNode):
                segments.append(str(frame.key.value))
            else:
                break
        return tuple(segments)

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._sizes: dict[str, int] = {}
            self._open: set[str] = set()
            self._repeated = 0

        def compose_node(self, parent: Node | None, index: int) -> Node | None:
            # Iterative, unlike PyYAML's own: nesting costs no Python stack, so the
            # depth limit (not the interpreter's recursion limit) decides what is
            # too deep. Path resolvers are not supported (safe loading has none).
            loader: Any = self  # PyYAML's stubs leave the event methods untyped
            stack: list[Open] = []
            while True:
                node: Node
                if stack and loader.check_event(SequenceEndEvent, MappingEndEvent):
                    end = loader.get_event()
                    frame = stack.pop()
                    frame.node.end_mark = end.end_mark
                    node, size = frame.node, frame.size
                    if frame.anchor is not None:
                        self._sizes[frame.anchor] = size
                        self._open.discard(frame.anchor)
                else:
                    event = loader.get_event()
                    anchor = event.anchor
                    mark: Any = event.start_mark  # the stubs' two Mark classes disagree
                    if isinstance(event, AliasEvent):
                        if anchor not in self.anchors:
                            raise ComposerError(
                                None, None, f"found undefined alias {anchor!r}", mark
                            )
                        if anchor in self._open:
                            raise problem(
                                f"alias *{anchor} inside the node it names (a cycle)",
                                mark,
                                path_of(stack),
                                "aliases to nodes that are complete",
                            )
                        node, size = self.anchors[anchor], self._sizes[anchor]
                        self._repeated += size
                        if self._repeated > YAML_ALIAS_NODES:
                            raise problem(
                                f"aliases repeat more than {YAML_ALIAS_NODES:,} nodes",
                                mark,
                                path_of(stack),
                                "fewer or smaller aliases (this looks like an alias bomb)",
                            )
                    else:
                        if anchor is not None and anchor in self.anchors:
                            first = self.anchors[anchor].start_mark
                            raise ComposerError(
                                None,
                                None,
                                f"anchor &{anchor} defined twice (first at line "
                                f"{first.line + 1 if first else '?'})",
                                mark,
                            )
                        tag = event.tag
                        if isinstance(event, ScalarEvent):
                            if _SURROGATE_CHARACTER.search(event.value):
                                raise problem(
                                    "a lone UTF-16 surrogate (half of a character) in a string",
                                    mark,
                                    path_of(stack),
                                    "characters, not halves of surrogate pairs",
                                )
                            if tag is None or tag == "!":
                                tag = loader.resolve(ScalarNode, event.value, event.implicit)
                            end_mark: Any = event.end_mark
                            node = ScalarNode(tag, event.value, mark, end_mark, event.style)
                            size = 1
                            if anchor is not None:
                                self.anchors[anchor] = node
                                self._sizes[anchor] = 1
                        else:
                            if len(stack) >= MAX_NESTING:
                                raise problem(
                                    f"nesting deeper than {MAX_NESTING:,} levels",
                                    mark,
                                    path_of(stack),
                                    f"mappings and sequences nested at most {MAX_NESTING:,} deep",
                                )
                            collection = (
                                MappingNode
                                if isinstance(event, MappingStartEvent)
                                else SequenceNode
                            )
                            if tag is None or tag == "!":
                                tag = loader.resolve(collection, None, event.implicit)
                            opened = collection(tag, [], mark, None, flow_style=event.flow_style)
                            if anchor is not None:
                                self.anchors[anchor] = opened
                                self._open.add(anchor)
                            stack.append(Open(opened, anchor))
                            continue
                if not stack:
                    return node
                parent_frame = stack[-1]
                parent_frame.size += size
                if isinstance(parent_frame.node, SequenceNode):
                    parent_frame.node.value.append(node)
                elif parent_frame.key is None:
                    parent_frame.key = node
                else:
                    parent_frame.node.value.append((parent_frame.key, node))
                    parent_frame.key = None

        def compose_document(self) -> Node | None:
            node = super().compose_document()
            self._sizes, self._open = {}, set()
            return node

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            if isinstance(node, MappingNode):
                # PyYAML keeps the last of repeated keys; merged keys (<<) may be
                # overridden on purpose, so only the mapping's own keys are checked.
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=False)
                    try:
                        repeated = key in seen
                    except TypeError:  # unhashable: PyYAML's own error follows
                        continue
                    if repeated:
                        raise problem(
                            f"duplicate key {key!r}",
                            key_node.start_mark,
                            (),
                            "each key once per mapping",
                        )
                    seen.add(key)
            return dict(super().construct_mapping(node, deep=deep))

        def construct_yaml_float(self, node: Any) -> float:
            number = float(super().construct_yaml_float(node))
            if not math.isfinite(number):
                raise problem(
                    f"{node.value} is not a finite number", node.start_mark, (), "finite numbers"
                )
            return number

        def construct_yaml_int(self, node: Any) -> int:
            try:
                return int(super().construct_yaml_int(node))
            except ValueError:
                raise problem(
                    f"an integer of {len(node.value):,} digits is too long to read",
                    node.start_mark,
                    (),
                    f"integers of at most {sys.get_int_max_str_digits():,} digits",
                ) from None

    BoundedLoader.add_constructor("tag:yaml.org,2002:float", BoundedLoader.construct_yaml_float)
    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    return BoundedLoader


def load_yaml_text(text: str, *, source: str | None) -> Any:
    """Safe-load one YAML document with the limits of this module; a text with no
    document (empty, or only comments) is an error.

    Raises:
        InputError: malformed YAML or a limit reached, naming the line and column.
    """
    import yaml

    loader: Any = None
    try:
        # Inside the try: the reader refuses control characters as it is built.
        loader = _bounded_loader()(text)
        node = loader.get_single_node()
        if node is None:
            raise InputError(
                "the file is empty (no YAML document)", source=source, expected="a YAML document"
            )
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"malformed YAML{where}: {problem}", source=source) from None
    except _Problem as exc:
        raise exc.error(source=source, record=None, text=None, one_line=False) from None
    except RecursionError:
        # Only complex keys (a mapping or sequence used as a key) and merge chains
        # still recurse in PyYAML's constructor.
        raise InputError(
            f"nesting too deep to read (limit {MAX_NESTING:,})", source=source
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def load_data_file(path: Path, *, what: str = "file") -> Any:
    """Parse a JSON (``.json``) or YAML (``.yaml``/``.yml``) file (see the limits in
    the module docstring)."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return load_yaml_text(read_text_file(path, what=what), source=str(path))
    return load_json_file(path, what=what)


# ---------------------------------------------------------------------------- folders


def json_files(folder: Path, *, expected: str) -> list[Path]:
    """The ``.json`` files of a folder, sorted by name; an empty folder is an error
    (``expected`` says what it should hold, such as "one <id>.json file per document").
    A ``.json`` entry that is not a regular file (a folder, a named pipe) is an error.
    """
    check_folder(folder)
    # Dot files are skipped: macOS leaves ``._name.json`` resource forks next to real
    # files on shared volumes, and they are binary. Sorted for a stable order.
    try:
        entries = sorted(
            entry
            for entry in folder.iterdir()
            if entry.suffix.lower() == ".json" and not entry.name.startswith(".")
        )
    except OSError as exc:
        raise InputError(f"cannot list folder: {exc.strerror or exc}", source=str(folder)) from None
    files = []
    for entry in entries:
        try:
            mode = entry.stat().st_mode
        except OSError as exc:
            raise InputError(
                f"cannot read {entry.name}: {exc.strerror or exc}", source=str(folder)
            ) from None
        if not stat.S_ISREG(mode):
            raise InputError(
                f"{entry.name} is {_kind(mode)}, not a file", source=str(folder), expected=expected
            )
        files.append(entry)
    if not files:
        raise InputError("folder has no .json files", source=str(folder), expected=expected)
    return files


_UNSAFE_FILE_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]+")


def safe_file_name(name: str, *, fallback: str = "item", limit: int = 120) -> str:
    """``name`` made safe as one file or folder name on any platform (ids such as
    ``invoice 7/a`` become ``invoice_7_a``); ``fallback`` when nothing is left."""
    return _UNSAFE_FILE_CHARACTERS.sub("_", name).strip("._")[:limit] or fallback
