"""Bounded, strict reading of user files: JSON, YAML, and what is not a file at all.

Every refusal is an :class:`InputError` whose one line names the file, the line and
column (or the record) and the field path; nothing escapes as a traceback, and
nothing reads forever.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.core import input_files, strict_json
from docevals_mlflow.core.datafiles import (
    MAX_NESTING,
    YAML_ALIAS_NODES,
    check_file,
    check_folder,
    is_folder_input,
    json_files,
    load_data_file,
    load_json_file,
    load_yaml_text,
    loads_strict,
    parse_json,
    read_text_file,
)
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from tests.helpers import needs_fifo


def error_of(call: Callable[[], object]) -> InputError:
    with pytest.raises(InputError) as caught:
        call()
    error = caught.value
    assert error.__cause__ is None  # nothing chained into a traceback
    assert "\n" not in str(error)
    return error


def json_error(text: str | bytes, **kwargs: Any) -> InputError:
    return error_of(lambda: parse_json(text, source="doc.json", **kwargs))


# ----------------------------------------------------------------- JSON: repeated keys


def test_duplicate_key_names_line_column_key_and_path() -> None:
    error = json_error('{\n  "items": [\n    {"code": 1,\n     "code": 2}\n  ]\n}')
    assert str(error) == (
        "doc.json, at $.items[0].code: duplicate key 'code' at line 4, column 6 "
        "(expected each key once per object)"
    )
    assert error.path == "$.items[0].code"


def test_duplicate_key_in_a_json_lines_record_names_the_column() -> None:
    error = json_error(
        b'{"id": 1, "data": {"a": 1, "a": 2}}',
        record="line 7",
        one_line="one JSON object per line",
    )
    assert str(error).startswith(
        "doc.json, record line 7, at $.data.a: duplicate key 'a' at column 28"
    )


def test_same_key_in_different_objects_is_fine() -> None:
    assert parse_json('[{"a": 1}, {"a": 2}, {"a": {"a": 3}}]', source=None) == [
        {"a": 1},
        {"a": 2},
        {"a": {"a": 3}},
    ]


def test_keys_equal_once_unescaped_are_duplicates() -> None:
    error = json_error('{"a": 1, "\\u0061": 2}')
    assert "duplicate key 'a'" in str(error)


def test_reread_skips_the_checks_made_on_the_first_read() -> None:
    # A reader's second pass over text it already accepted does not pay for them.
    assert parse_json('{"a": 1, "a": 2}', source=None, reread=True) == {"a": 2}


# ----------------------------------------------------------------- JSON: numbers


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_literals_name_the_field(literal: str) -> None:
    error = json_error(f'{{"total": [1, {literal}]}}')
    assert str(error) == (
        f"doc.json, at $.total[1]: {literal} is not valid JSON at line 1, column 15 "
        "(expected finite numbers)"
    )


def test_a_number_beyond_a_float_names_the_field() -> None:
    error = json_error('{"a": {"b": 1e400}}')
    assert error.path == "$.a.b"
    assert "1e400 does not fit a 64-bit float at line 1, column 13" in str(error)


def test_a_long_integer_stays_exact() -> None:
    # Integers are exact in Python: kept as they are. Where a float is needed (a
    # confidence) the consumer refuses it; a numeric field compares it as text.
    digits = "9" * 400
    assert parse_json(f'{{"a": {digits}}}', source=None) == {"a": int(digits)}


def test_an_integer_too_long_to_read_names_the_field() -> None:
    error = json_error('{"a": ' + "7" * 5000 + "}")
    assert error.path == "$.a"
    assert "an integer of 5,000 digits is too long to read at line 1, column 7" in str(error)


# ----------------------------------------------------------------- JSON: text


@pytest.mark.parametrize(
    ("text", "path", "column"),
    [
        ('{"a": "x\\ud800"}', "$.a", 9),  # a high half alone
        ('{"a": "\\udc00"}', "$.a", 8),  # a low half alone
        ('{"a": ["\\ud800\\ud800\\udc00"]}', "$.a[0]", 9),  # a high half, then a pair
        ('{"a": "\\ud83d", "b": 1}', "$.a", 8),  # the other half is elsewhere
    ],
)
def test_lone_surrogates_name_line_column_and_field(text: str, path: str, column: int) -> None:
    error = json_error(text)
    assert error.path == path
    assert (
        f"a lone UTF-16 surrogate (half of a character) in a string at line 1, column {column}"
        in str(error)
    )


def test_lone_surrogate_in_a_key_names_its_object() -> None:
    error = json_error('{"a": {"\\udfff": 1}}')
    assert error.path == "$.a"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "\\ud83d\\ude00"}',  # a pair: one character
        '{"a": "\\\\ud800"}',  # an escaped backslash, then plain text
        '{"a": "\\\\\\ud83d\\ude00"}',  # a backslash, then a pair
    ],
)
def test_surrogate_pairs_and_escaped_backslashes_are_fine(text: str) -> None:
    value = parse_json(text, source=None)
    assert value == json.loads(text)
    value["a"].encode("utf-8")  # no lone surrogate got through


def test_invalid_utf8_names_line_and_column() -> None:
    error = json_error(b'{\n  "a": "ok",\n  "b": "\xc3\x28"\n}')
    assert str(error) == (
        "doc.json: not valid UTF-8 text (byte 23: invalid continuation byte) at line 3, column 9"
    )


def test_invalid_utf8_in_a_record_names_the_column() -> None:
    error = json_error(b'{"a": "\xe2\x82"}', record="line 2", one_line="x")
    assert str(error).startswith("doc.json, record line 2: not valid UTF-8 text")
    assert str(error).endswith("at column 8")


def test_invalid_utf8_in_a_file_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"line one\nline \xff two\n")
    error = error_of(lambda: read_text_file(path))
    assert (
        str(error)
        == f"{path}: not valid UTF-8 text (byte 14: invalid start byte) at line 2, column 6"
    )


# ----------------------------------------------------------------- JSON: nesting


def nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def nested_object(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize("make", [nested_list, nested_object])
def test_nesting_up_to_the_limit_is_read(make: Callable[[int], str]) -> None:
    value = parse_json(make(MAX_NESTING), source=None)
    depth = 0
    while isinstance(value, (list, dict)) and value:
        value = value[0] if isinstance(value, list) else value["a"]
        depth += 1
    assert depth >= MAX_NESTING - 1


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 10_000, 1_000_000])
def test_nesting_beyond_the_limit_is_an_error_not_a_recursion_error(
    depth: int, deadline: None
) -> None:
    error = json_error(nested_list(depth))
    assert "nesting deeper than 1,000 levels at line 1, column 1001" in str(error)
    assert error.expected == "objects and arrays nested at most 1,000 deep"
    assert len(str(error)) < 300  # the path is shortened, not a thousand segments


def test_nesting_error_names_the_line() -> None:
    text = '{"ok": [1, 2],\n "deep":\n' + "[\n" * (MAX_NESTING + 5) + "]" * (MAX_NESTING + 5) + "}"
    error = json_error(text)
    assert f"at line {MAX_NESTING + 2}, column 1" in str(error)
    assert str(error.path).startswith("$.deep[0][0]")


def test_deep_nesting_in_a_big_document_is_found() -> None:
    # Many shallow siblings first, so the check cannot stop at the count of brackets.
    siblings = ", ".join(['{"a": [1, {"b": "[[[["}]}'] * 3000)
    text = f"[{siblings}, {nested_list(MAX_NESTING)}]"
    assert "nesting deeper than 1,000 levels" in str(json_error(text))
    shallow = f"[{siblings}, {nested_list(MAX_NESTING - 1)}]"
    assert len(parse_json(shallow, source=None)) == 3001


def test_brackets_inside_strings_do_not_count() -> None:
    text = '{"a": "' + "[" * 5000 + '", "b": "\\"' + "{" * 5000 + '"}'
    assert parse_json(text, source=None)["a"] == "[" * 5000


def test_the_limit_holds_with_the_stack_already_in_use() -> None:
    # Python 3.11's decoder counts nesting against the interpreter's recursion limit:
    # a document within the limit must still read when called from deep code.
    def descend(levels: int) -> Any:
        if levels:
            return descend(levels - 1)
        return parse_json(nested_list(MAX_NESTING - 1), source=None)

    assert isinstance(descend(sys.getrecursionlimit() // 2), list)


@pytest.mark.parametrize("uses_recursion_limit", [True, False])
def test_the_limit_holds_with_a_raised_recursion_limit(
    monkeypatch: pytest.MonkeyPatch, uses_recursion_limit: bool
) -> None:
    # With room on the stack the decoder itself reads deeper; the limit still holds
    # (and, as on Python 3.12+, it is checked on what the decoder accepted).
    monkeypatch.setattr(strict_json, "_DECODER_USES_RECURSION_LIMIT", uses_recursion_limit)
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(before + 4 * MAX_NESTING)
    try:
        error = json_error('{"a": ' + nested_list(MAX_NESTING) + "}")
        assert len(parse_json(nested_list(MAX_NESTING), source=None)) == 1
    finally:
        sys.setrecursionlimit(before)
    assert "nesting deeper than 1,000 levels at line 1, column 1006" in str(error)


def test_depth_check_agrees_with_a_reference() -> None:
    rng = random.Random(5)
    strings = ["[", "]]", "{", '"[', "\\[", "", "\\\\", '"', "}}{"]

    def build(level: int) -> Any:
        roll = rng.random()
        if roll < 0.25:
            return rng.choice([*strings, 1, None])
        count = 1 if rng.random() < 0.7 else rng.randint(0, 3)
        if roll < 0.6:
            return [build(level + 1) for _ in range(count)]
        return {rng.choice(strings) + str(i): build(level + 1) for i in range(count)}

    def depth(value: Any) -> int:
        if isinstance(value, list):
            return 1 + max((depth(item) for item in value), default=0)
        if isinstance(value, dict):
            return 1 + max((depth(item) for item in value.values()), default=0)
        return 0

    for _ in range(500):
        value = build(0)
        data = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode()
        actual = depth(value)
        for limit in range(actual + 2):
            assert strict_json._deeper_than(data, limit) is (actual > limit), (data, limit)


def test_loads_strict_refuses_with_value_errors() -> None:
    refused = {
        '{"a": 1, "a": 2}': "duplicate key 'a'",
        "NaN": "NaN is not valid JSON",
        nested_list(MAX_NESTING + 1): "nesting deeper than",
        '"\\ud800"': "a lone UTF-16 surrogate",
    }
    for text, message in refused.items():
        with pytest.raises(ValueError, match=message):
            loads_strict(text)
    assert loads_strict('{"a": [1.5]}') == {"a": [1.5]}


# ----------------------------------------------------------------- JSON files


def test_an_empty_json_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "truth.json"
    path.write_bytes(b"\xef\xbb\xbf \n")
    error = error_of(lambda: load_json_file(path))
    assert str(error) == f"{path}: the file is empty (expected a JSON value)"


def test_a_missing_file_is_named_by_what_it_is(tmp_path: Path) -> None:
    with pytest.raises(InputFileNotFoundError, match=r"review file not found$"):
        load_json_file(tmp_path / "nope.json", what="review file")


# ----------------------------------------------------------------- not a file


@needs_fifo
@pytest.mark.parametrize("name", ["input.json", "input.yaml", "input.txt"])
def test_a_named_pipe_is_refused_before_it_is_opened(
    tmp_path: Path, name: str, deadline: None
) -> None:
    pipe = tmp_path / name
    os.mkfifo(pipe)
    for read in (load_data_file, read_text_file):
        error = error_of(lambda read=read: read(pipe))
        assert str(error) == f"{pipe}: this is a named pipe, not a file"


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_a_device_is_refused(deadline: None) -> None:
    error = error_of(lambda: load_json_file(Path("/dev/zero")))
    assert str(error) == "/dev/zero: this is a device, not a file"


def test_a_folder_where_a_file_is_expected(tmp_path: Path) -> None:
    folder = tmp_path / "schema.json"
    folder.mkdir()
    error = error_of(lambda: load_data_file(folder))
    assert str(error) == f"{folder}: this is a folder, not a file"


def test_a_file_where_a_folder_is_expected(tmp_path: Path) -> None:
    file = tmp_path / "docs"
    file.write_text("{}", encoding="utf-8")
    error = error_of(lambda: json_files(file, expected="one <id>.json file per document"))
    assert str(error) == f"{file}: this is a file, not a folder"
    error = error_of(lambda: check_folder(file))
    assert "this is a file, not a folder" in str(error)


@needs_fifo
def test_an_input_that_is_neither_file_nor_folder(tmp_path: Path) -> None:
    pipe = tmp_path / "docs.jsonl"
    os.mkfifo(pipe)
    error = error_of(lambda: is_folder_input(pipe))
    assert str(error) == f"{pipe}: this is a named pipe, not a file or folder"
    assert is_folder_input(tmp_path) is True


@needs_fifo
def test_a_folder_entry_that_is_not_a_file(tmp_path: Path, deadline: None) -> None:
    (tmp_path / "a.json").write_text("{}", encoding="utf-8")
    os.mkfifo(tmp_path / "b.json")
    error = error_of(lambda: json_files(tmp_path, expected="documents"))
    assert str(error) == f"{tmp_path}: b.json is a named pipe, not a file (expected documents)"


def test_a_folder_named_like_a_json_file_inside_a_folder(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{}", encoding="utf-8")
    (tmp_path / "b.json").mkdir()
    error = error_of(lambda: json_files(tmp_path, expected="documents"))
    assert "b.json is a folder, not a file" in str(error)


def test_permission_denied_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "truth.json"
    path.write_text("{}", encoding="utf-8")

    def refuse(*args: Any, **kwargs: Any) -> int:
        raise PermissionError(13, "Permission denied")

    # Tests may run as root, where chmod 000 does not stop a read: refuse the open.
    monkeypatch.setattr(input_files.os, "open", refuse)
    error = error_of(lambda: load_json_file(path))
    assert str(error) == f"{path}: cannot read: Permission denied"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_and_folder(tmp_path: Path) -> None:
    path = tmp_path / "truth.json"
    path.write_text("{}", encoding="utf-8")
    path.chmod(0)
    assert str(error_of(lambda: load_json_file(path))) == f"{path}: cannot read: Permission denied"
    folder = tmp_path / "closed"
    folder.mkdir()
    (folder / "a.json").write_text("{}", encoding="utf-8")
    folder.chmod(0)
    try:
        error = error_of(lambda: json_files(folder, expected="documents"))
        assert "Permission denied" in str(error)
        error = error_of(lambda: check_file(folder / "a.json"))
        assert "Permission denied" in str(error)
    finally:
        folder.chmod(0o755)


# ----------------------------------------------------------------- YAML


def yaml_error(text: str) -> InputError:
    return error_of(lambda: load_yaml_text(text, source="config.yaml"))


BILLION_LAUGHS = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""


def test_an_alias_bomb_is_refused_at_once(deadline: None) -> None:
    error = yaml_error(BILLION_LAUGHS)
    assert str(error) == (
        "config.yaml, at $.e[0]: aliases repeat more than 10,000 nodes at line 5, column 8 "
        "(expected fewer or smaller aliases (this looks like an alias bomb))"
    )


def test_aliases_within_the_budget_are_expanded() -> None:
    text = "base: &base {a: 1, b: [1, 2]}\nx:\n  <<: *base\n  b: 3\ny: *base\n"
    assert load_yaml_text(text, source=None) == {
        "base": {"a": 1, "b": [1, 2]},
        "x": {"a": 1, "b": 3},
        "y": {"a": 1, "b": [1, 2]},
    }
    many = "".join(f"k{i}: *v\n" for i in range(YAML_ALIAS_NODES // 3))
    assert len(load_yaml_text("v: &v [1, 2]\n" + many, source=None)) == YAML_ALIAS_NODES // 3 + 1


def test_an_alias_inside_its_own_node_is_refused() -> None:
    error = yaml_error("a: &loop\n  - 1\n  - *loop\n")
    assert str(error).startswith("config.yaml, at $.a[1]: alias *loop inside the node it names")
    assert "at line 3, column 5" in str(error)


def test_duplicate_yaml_keys_name_the_line() -> None:
    error = yaml_error("pipeline_id: p\nstages: []\npipeline_id: q\n")
    assert str(error) == (
        "config.yaml: duplicate key 'pipeline_id' at line 3, column 1 "
        "(expected each key once per mapping)"
    )
    assert "duplicate key 'x'" in str(yaml_error("a: {x: 1, x: 2}\n"))


@pytest.mark.parametrize("literal", [".inf", "-.inf", ".nan", ".NaN"])
def test_yaml_non_finite_floats_are_refused(literal: str) -> None:
    error = yaml_error(f"threshold: {literal}\n")
    assert str(error) == (
        f"config.yaml: {literal} is not a finite number at line 1, column 12 "
        "(expected finite numbers)"
    )


def test_yaml_integer_too_long_to_read() -> None:
    assert "an integer of 5,000 digits is too long to read" in str(yaml_error("a: " + "1" * 5000))
    assert load_yaml_text("a: " + "1" * 400, source=None) == {"a": int("1" * 400)}


def test_yaml_lone_surrogate_is_refused() -> None:
    error = yaml_error('name: "x\\ud800"\n')
    assert error.path == "$.name"
    assert "a lone UTF-16 surrogate" in str(error)


def test_yaml_nesting_up_to_the_limit_is_read() -> None:
    value = load_yaml_text(nested_list(MAX_NESTING), source=None)
    assert isinstance(value, list)


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 100_000])
def test_yaml_nesting_beyond_the_limit(depth: int, deadline: None) -> None:
    # The mapping holding "x" is the first level: the 1,000th bracket is one too many.
    error = yaml_error("x: " + nested_list(depth))
    assert "nesting deeper than 1,000 levels at line 1, column 1003" in str(error)


def test_yaml_block_nesting_beyond_the_limit() -> None:
    text = "".join("  " * level + "a:\n" for level in range(MAX_NESTING + 1)) + "  " * 1001 + "b\n"
    error = yaml_error(text)
    assert f"nesting deeper than 1,000 levels at line {MAX_NESTING + 1}" in str(error)


@pytest.mark.parametrize("text", ["", "\n\n", "# nothing here yet\n"])
def test_a_yaml_file_without_a_document_is_an_error(text: str) -> None:
    assert str(yaml_error(text)) == (
        "config.yaml: the file is empty (no YAML document) (expected a YAML document)"
    )


def test_an_explicit_null_document_is_read() -> None:
    assert load_yaml_text("~\n", source=None) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [1, 2\n", "malformed YAML at line 2, column 1"),
        ("a: *nowhere\n", "found undefined alias 'nowhere'"),
        ("a: &x 1\nb: &x 2\n", "anchor &x defined twice (first at line 1)"),
        ("a: 1\n---\nb: 2\n", "malformed YAML at line 2, column 1"),
        ("a: \x07\n", "unacceptable character #x0007"),
        ("a: !!python/object:os.system x\n", "could not determine a constructor"),
    ],
)
def test_malformed_yaml_is_one_line(text: str, message: str) -> None:
    error = yaml_error(text)
    assert message in str(error)


def test_yaml_files_go_through_the_same_loader(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.yml"
    path.write_text(BILLION_LAUGHS, encoding="utf-8")
    error = error_of(lambda: load_data_file(path))
    assert str(error).startswith(f"{path}, at $.e[0]: aliases repeat more than")
