"""Bad inputs for ``docevals text``: folders and JSON Lines of pages, options, outputs."""

from __future__ import annotations

from pathlib import Path

from tests.bad_inputs.case import Corpus, fifo, folder, put, put_bytes
from tests.helpers import write_jsonl

text = Corpus("text")
CASES = text.cases


def pages(**predicted: str) -> None:
    """``gt/a.txt`` and ``gt/t.html``, and the predictions given (``pred/NAME``)."""
    put("gt/a.txt", "The quick brown fox")
    put("gt/t.html", "<table><tr><td>a</td></tr></table>")
    for name, content in predicted.items():
        put(f"pred/{name.replace('_', '.')}", content)


def argv(*extra: str, expected: str = "gt", predicted: str = "pred") -> list[str]:
    return ["text", expected, predicted, "--no-mlflow", *extra]


@text.case("prediction-not-utf8", "invalid-utf8", "pred/a.txt: not valid UTF-8 text (byte 4")
def _() -> list[str]:
    pages(t_html="<table></table>")
    put_bytes("pred/a.txt", b"The \xff quick")
    return argv()


@text.case("empty-folder", "empty", "pred: folder has no .txt, .md or .html files")
def _() -> list[str]:
    pages()
    folder("pred")
    return argv()


@text.case("empty-jsonl", "empty", "gt.jsonl: no records")
def _() -> list[str]:
    put("gt.jsonl", "\n\n")
    write_jsonl(Path("pred.jsonl"), [{"id": "a", "text": "x"}])
    return argv(expected="gt.jsonl", predicted="pred.jsonl")


@text.case("malformed-jsonl", "malformed", "pred.jsonl, record line 2: malformed JSON")
def _() -> list[str]:
    write_jsonl(Path("gt.jsonl"), [{"id": "a", "text": "x"}])
    put("pred.jsonl", '{"id": "a", "text": "x"}\n{"id": "b", "text": }\n')
    return argv(expected="gt.jsonl", predicted="pred.jsonl")


@text.case(
    "duplicate-id", "duplicate-id", "gt.jsonl", "duplicate record: id 'a' is on lines 1 and 2"
)
def _() -> list[str]:
    write_jsonl(Path("gt.jsonl"), [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}])
    write_jsonl(Path("pred.jsonl"), [{"id": "a", "text": "x"}])
    return argv(expected="gt.jsonl", predicted="pred.jsonl")


@text.case("grid-as-text", "wrong-shape", "gt.jsonl, record line 1, at text: invalid text list")
def _() -> list[str]:
    write_jsonl(Path("gt.jsonl"), [{"id": "a", "text": [["x"]]}])
    write_jsonl(Path("pred.jsonl"), [{"id": "a", "text": "x"}])
    return argv(expected="gt.jsonl", predicted="pred.jsonl")


@text.case("page-zero", "bad-number", "gt.jsonl, record line 1, at page: invalid page 0")
def _() -> list[str]:
    write_jsonl(Path("gt.jsonl"), [{"id": "a", "page": 0, "text": "x"}])
    write_jsonl(Path("pred.jsonl"), [{"id": "a", "text": "x"}])
    return argv(expected="gt.jsonl", predicted="pred.jsonl")


@text.case("folder-against-file", "wrong-shape", "gt is a folder but pred.jsonl is a file")
def _() -> list[str]:
    pages()
    write_jsonl(Path("pred.jsonl"), [{"id": "a", "text": "x"}])
    return argv(predicted="pred.jsonl")


@text.case("missing-predicted", "missing", "predicted input not found")
def _() -> list[str]:
    pages()
    return argv()


@text.case("fifo-page", "not-a-file", "pred/a.txt: this is a named pipe, not a file")
def _() -> list[str]:
    pages(t_html="<table></table>")
    fifo("pred/a.txt")
    return argv()


@text.case("bad-expected-table", "wrong-shape", "t.html (expected)", "colspan='x'")
def _() -> list[str]:
    pages(a_txt="The quick brown fox", t_html="<table></table>")
    put("gt/t.html", '<table><tr><td colspan="x">a</td></tr></table>')
    return argv()


@text.case("worst-negative", "bad-option", "--worst -1 (expected a count >= 0)")
def _() -> list[str]:
    pages(a_txt="x")
    return argv("--worst", "-1")


@text.case("max-cer-infinite", "bad-number", "--max-cer inf")
def _() -> list[str]:
    pages(a_txt="x")
    return argv("--max-cer", "inf")


@text.case("unknown-kind", "unknown-enum", "argument --kind: invalid choice: 'pdf'", usage=True)
def _() -> list[str]:
    pages(a_txt="x")
    return argv("--kind", "pdf")


@text.case("output-in-input", "output-clash", "--output", "is inside EXPECTED")
def _() -> list[str]:
    pages(a_txt="x")
    return argv("--output", "gt/report.json")


@text.case(
    "missing-prediction",
    "empty",
    "1 expected page has no prediction and is scored as an empty prediction",
    "'t.html'",
    warning=True,
    writes=("r.json",),
)
def _() -> list[str]:
    pages(a_txt="The quick brown fox")
    return argv("--output", "r.json")
