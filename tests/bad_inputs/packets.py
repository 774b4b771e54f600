"""Bad inputs for ``docevals split``: packets of pages, options, outputs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.bad_inputs.case import (
    Corpus,
    deep_json,
    fifo,
    folder,
    locked,
    put_bytes,
    symlink,
)
from tests.helpers import write_json, write_jsonl
from tests.split.test_seed_metrics import EXPECTED, PREDICTED

split = Corpus("split")
CASES = split.cases


def packets(expected: Any = None, predicted: Any = None) -> None:
    """``gt/a.json`` and ``pred/a.json``: the packets given, else the seed's."""
    write_json(Path("gt/a.json"), {"sections": EXPECTED} if expected is None else expected)
    write_json(Path("pred/a.json"), {"sections": PREDICTED} if predicted is None else predicted)


def split_argv(
    *extra: str, expected: str = "gt", predicted: str = "pred", output: str = "split.json"
) -> list[str]:
    if not Path("gt").exists() and expected == "gt":
        packets()
    return [
        "split", "--expected", expected, "--predicted", predicted, "--output", output,
        "--no-mlflow", *extra,
    ]  # fmt: skip


def section(section_id: str, document_class: Any, pages: list[Any]) -> dict[str, Any]:
    return {"section_id": section_id, "document_class": document_class, "page_indices": pages}


PACKETS: Sequence[tuple[str, str, Any, tuple[str, ...]]] = [
    # (name, kind, the predicted packet pred/a.json, fragments)
    (
        "page-index-boolean",
        "bad-number",
        {"sections": [section("s1", "Invoice", [0, True])]},
        (
            "pred/a.json, record a, at sections[0].page_indices[1]: page index True is not an "
            "integer",
        ),
    ),
    (
        "page-index-negative",
        "bad-number",
        {"sections": [section("s1", "Invoice", [-1])]},
        ("pred/a.json, record a, at sections[0].page_indices[0]: negative page index -1",),
    ),
    (
        "page-in-two-sections",
        "wrong-shape",
        {"sections": [section("s1", "Invoice", [0, 1]), section("s2", "W2", [1])]},
        (
            "pred/a.json, record a, at sections[1].page_indices[0]: page 1 is in sections 's1' "
            "and 's2'",
        ),
    ),
    (
        "duplicate-section-id",
        "duplicate-id",
        {"sections": [section("s1", "Invoice", [0]), section("s1", "W2", [1])]},
        ("pred/a.json, record a, at sections[1].section_id: section id 's1' is used twice",),
    ),
    (
        "class-a-number",
        "wrong-shape",
        {"sections": [section("s1", 7, [0])]},
        ("pred/a.json, record a, at sections[0].document_class: invalid document_class 7",),
    ),
    (
        "page-class-a-list",
        "wrong-shape",
        {"pages": ["Invoice", ["W2"]]},
        ("pred/a.json, record a", "invalid page class"),
    ),
    (
        "sections-an-object",
        "wrong-shape",
        {"sections": {"s1": section("s1", "Invoice", [0])}},
        ("pred/a.json, record a, at sections: 'sections' must be a list",),
    ),
]

for _name, _kind, _packet, _fragments in PACKETS:

    def _build(packet: Any = _packet) -> list[str]:
        packets(predicted=packet)
        return split_argv()

    split.add(_name, _kind, _build, *_fragments)


FILES: Sequence[tuple[str, str, str, bytes, tuple[str, ...]]] = [
    # (name, kind, file name of the expected side, bytes, fragments)
    (
        "malformed-jsonl",
        "malformed",
        "gt.jsonl",
        b'{"id": "a", "sections": []}\n{"id": "b", "sections": [}\n',
        ("gt.jsonl, record line 2: malformed JSON at column 26",),
    ),
    (
        "repeated-key",
        "repeated-key",
        "gt.jsonl",
        json.dumps({"id": "a", "sections": EXPECTED}).encode()[:-1] + b', "id": "b"}\n',
        ("gt.jsonl, record line 1, at $.id: duplicate key 'id'",),
    ),
    (
        "duplicate-packet-id",
        "duplicate-id",
        "gt.jsonl",
        (json.dumps({"id": "a", "sections": EXPECTED}) + "\n").encode() * 2,
        ("gt.jsonl, record line 2: duplicate packet id 'a' (line 1 and line 2)",),
    ),
    (
        "nested-10000",
        "deep-nesting",
        "gt.json",
        ('{"id": "a", "sections": [' + deep_json() + "]}").encode(),
        ("gt.json, at $.sections[0].a.a.a", "nesting deeper than 1,000 levels"),
    ),
    (
        "blank-lines",
        "empty",
        "gt.jsonl",
        b"\n\n\n",
        ("gt.jsonl: no packets: the input is empty or holds only blank lines",),
    ),
    (
        "invalid-utf8",
        "invalid-utf8",
        "gt.json",
        b'{"id": "a", "sections": [{"section_id": "\xc0\xaf", "document_class": "x", '
        b'"page_indices": [0]}]}',
        ("gt.json: not valid UTF-8 text (byte 41: invalid start byte) at line 1, column 42",),
    ),
    (
        "lone-surrogate",
        "surrogate",
        "gt.json",
        b'{"id": "a", "sections": [{"section_id": "s\\udc80", "document_class": "x", '
        b'"page_indices": [0]}]}',
        ("gt.json, at $.sections[0].section_id: a lone UTF-16 surrogate",),
    ),
]

for _name, _kind, _file, _data, _fragments in FILES:

    def _build(file: str = _file, data: bytes = _data) -> list[str]:
        packets()
        put_bytes(file, data)
        return split_argv(expected=file)

    split.add(_name, _kind, _build, *_fragments)


@split.case("empty-folder", "empty", "empty: folder has no .json files")
def _() -> list[str]:
    packets()
    folder("empty")
    return split_argv(expected="empty")


@split.case("fifo-in-folder", "not-a-file", "pred: b.json is a named pipe, not a file")
def _() -> list[str]:
    packets()
    fifo("pred/b.json")
    return split_argv()


@split.case(
    "no-common-packet",
    "dangling-reference",
    "other.jsonl: no packet is on both sides (1 expected, 1 predicted)",
)
def _() -> list[str]:
    packets()
    write_jsonl(Path("other.jsonl"), [{"id": "zzz", "sections": EXPECTED}])
    return split_argv(predicted="other.jsonl")


@split.case(
    "fail-under-nan", "bad-number", "--fail-under 'page_accuracy=nan' (expected a VALUE between"
)
def _() -> list[str]:
    return split_argv("--fail-under", "page_accuracy=nan")


@split.case(
    "fail-under-unknown-metric",
    "unknown-enum",
    "--fail-under 'recall=0.5' (expected METRIC=VALUE with METRIC one of page_accuracy",
)
def _() -> list[str]:
    return split_argv("--fail-under", "recall=0.5")


@split.case("max-packets-negative", "bad-number", "--max-packets -1 (expected a count >= 0)")
def _() -> list[str]:
    return split_argv("--max-packets", "-1")


@split.case(
    "heatmap-equals-output",
    "output-clash",
    "--output split.json and --heatmap split.json are the same path",
)
def _() -> list[str]:
    return split_argv("--heatmap", "split.json")


@split.case(
    "output-inside-predicted",
    "output-clash",
    "--output pred/split.json is inside --predicted pred",
)
def _() -> list[str]:
    packets()
    return split_argv(output="pred/split.json")


@split.case(
    "markdown-links-to-expected",
    "output-clash",
    "--markdown link.md is the same file as --expected gt.json",
)
def _() -> list[str]:
    write_json(Path("gt.json"), {"sections": EXPECTED})
    write_json(Path("pred.json"), {"sections": PREDICTED})
    symlink("link.md", "gt.json")
    return split_argv("--markdown", "link.md", expected="gt.json", predicted="pred.json")


@split.case(
    "unreadable-packet-folder",
    "permission",
    "pred: cannot list folder: Permission denied",
    as_user=True,
)
def _() -> list[str]:
    packets()
    locked("pred")
    return split_argv()
