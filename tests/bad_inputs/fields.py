"""Bad inputs for ``docevals fields``: documents, schemas, options, judges, outputs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tests.bad_inputs.case import (
    ALIAS_BOMB,
    JUDGE_KEY_ENV,
    OPENAI_KEY,
    UNSET_KEY_ENV,
    Corpus,
    deep_json,
    fifo,
    folder,
    hard_link,
    locked,
    put,
    put_bytes,
    symlink,
)
from tests.helpers import write_json, write_jsonl

corpus = Corpus("fields")
CASES = corpus.cases

GROUND_TRUTH = [{"id": "a", "data": {"total": 1}}, {"id": "b", "data": {"total": 2}}]
GOOD_LINE = '{"id": "a", "data": {"total": 1}}\n'


def documents(expected: str | None = None, predicted: str | None = None) -> None:
    """``gt.jsonl`` and ``pred.jsonl``: the text given, else two good records."""
    for name, text in (("gt.jsonl", expected), ("pred.jsonl", predicted)):
        if text is None:
            write_jsonl(Path(name), GROUND_TRUTH)
        else:
            put_bytes(name, text.encode("utf-8", "surrogatepass"))


def fields(
    *extra: str, expected: str = "gt.jsonl", predicted: str = "pred.jsonl", output: str = "r.json"
) -> list[str]:
    """The command line over ``gt.jsonl`` and ``pred.jsonl`` (written when missing)."""
    if not Path("gt.jsonl").exists() and not Path("pred.jsonl").exists():
        documents()
    return [
        "fields", "--expected", expected, "--predicted", predicted, "--output", output,
        "--no-mlflow", *extra,
    ]  # fmt: skip


# ------------------------------------------------------------------- documents

DOCUMENTS: Sequence[tuple[str, str, str, str, tuple[str, ...]]] = [
    # (name, kind, side, JSON Lines text, fragments)
    (
        "malformed-jsonl",
        "malformed",
        "expected",
        GOOD_LINE + '{"id": "b", "data": {"total": 2}\n',
        ("gt.jsonl, record line 2: malformed JSON at column 33",),
    ),
    (
        "repeated-key",
        "repeated-key",
        "expected",
        GOOD_LINE + '{"id": "b", "data": {"total": 2, "total": 3}}\n',
        ("gt.jsonl, record line 2, at $.data.total: duplicate key 'total' at column",),
    ),
    (
        "nested-10000",
        "deep-nesting",
        "predicted",
        '{"id": "a", "data": ' + deep_json() + "}\n",
        ("pred.jsonl, record line 1, at $.data.a.a.a", "nesting deeper than 1,000 levels"),
    ),
    (
        "lone-surrogate",
        "surrogate",
        "predicted",
        GOOD_LINE.replace("1}}", '1, "vendor": "AC\\udc00ME"}}'),
        ("pred.jsonl, record line 1, at $.data.vendor", "lone UTF-16 surrogate"),
    ),
    (
        "nan",
        "bad-number",
        "expected",
        '{"id": "a", "data": {"total": NaN}}\n',
        ("gt.jsonl, record line 1, at $.data.total: NaN is not valid JSON",),
    ),
    (
        "number-beyond-float",
        "bad-number",
        "predicted",
        '{"id": "a", "data": {"total": 1e400}}\n',
        ("pred.jsonl, record line 1, at $.data.total", "1e400 does not fit a 64-bit float"),
    ),
    (
        "empty-file",
        "empty",
        "expected",
        "",
        ("gt.jsonl: no records: the input is empty",),
    ),
    (
        "blank-lines",
        "empty",
        "predicted",
        "\n   \n\t\n",
        ("pred.jsonl: no records: the input is empty or holds only blank lines",),
    ),
    (
        "record-is-a-list",
        "wrong-shape",
        "expected",
        GOOD_LINE + '[{"id": "b", "data": {"total": 2}}]\n',
        ("gt.jsonl, record line 2: a record must be a JSON object, got an array",),
    ),
    (
        "record-without-data",
        "wrong-shape",
        "predicted",
        GOOD_LINE + '{"id": "b", "class": "Invoice"}\n',
        ("pred.jsonl, record line 2: record has no 'data'",),
    ),
    (
        "record-unknown-key",
        "unknown-key",
        "predicted",
        GOOD_LINE + '{"id": "b", "data": {"total": 2}, "confidense": {}}\n',
        ("pred.jsonl, record line 2: unknown record key(s) 'confidense'",),
    ),
    (
        "duplicate-id",
        "duplicate-id",
        "expected",
        GOOD_LINE + GOOD_LINE,
        ("gt.jsonl, record line 2: duplicate id 'a' (line 1 and line 2)",),
    ),
    (
        "confidence-not-a-number",
        "bad-number",
        "predicted",
        '{"id": "a", "data": {"total": 1}, "confidence": {"$.total": true}}\n',
        ("pred.jsonl, record line 1, at $.total: confidence must be a number, got True",),
    ),
]

for _name, _kind, _side, _text, _fragments in DOCUMENTS:

    def _build(side: str = _side, text: str = _text) -> list[str]:
        documents(**{side: text})
        return fields()

    corpus.add(_name, _kind, _build, *_fragments)


@corpus.case("invalid-utf8", "invalid-utf8", "pred.jsonl, record line 2: not valid UTF-8")
def _() -> list[str]:
    documents()
    put_bytes("pred.jsonl", GOOD_LINE.encode() + b'{"id": "b", "data": {"total": "\xff"}}\n')
    return fields()


@corpus.case("expected-fifo", "not-a-file", "gt.jsonl: this is a named pipe, not a file or folder")
def _() -> list[str]:
    write_jsonl(Path("pred.jsonl"), GROUND_TRUTH)
    fifo("gt.jsonl")
    return fields()


@corpus.case("predicted-device", "not-a-file", "/dev/zero: this is a device, not a file or folder")
def _() -> list[str]:
    documents()
    return fields(predicted="/dev/zero")


@corpus.case("fifo-in-documents-folder", "not-a-file", "gt: b.json is a named pipe, not a file")
def _() -> list[str]:
    documents()
    write_json(Path("gt/a.json"), {"total": 1})
    fifo("gt/b.json")
    return fields(expected="gt")


@corpus.case("empty-documents-folder", "empty", "gt: folder has no .json files")
def _() -> list[str]:
    documents()
    folder("gt")
    return fields(expected="gt")


@corpus.case("parquet-not-parquet", "malformed", "gt.parquet: cannot read gt.parquet as Parquet")
def _() -> list[str]:
    documents()
    put("gt.parquet", '{"id": "a", "data": {"total": 1}}\n')
    return fields(expected="gt.parquet")


@corpus.case("missing-predicted", "missing", "nope.jsonl: predicted input not found")
def _() -> list[str]:
    documents()
    return fields(predicted="nope.jsonl")


@corpus.case(
    "shape-mismatch",
    "wrong-shape",
    "gt.jsonl, record line 2, at $.total: document 'b': the ground truth holds a list where "
    "the schema declares a single value (1 affected in all)",
)
def _() -> list[str]:
    documents(expected=GOOD_LINE + '{"id": "b", "data": {"total": [2, 3]}}\n')
    put("schema.yaml", "classes:\n  - name: Invoice\n    fields:\n      total: {method: EXACT}\n")
    return fields("--schema", "schema.yaml")


@corpus.case(
    "shape-mismatch-allowed",
    "wrong-shape",
    "1 document left out of the figures: ground truth of the wrong shape (first: gt.jsonl, "
    "line 2, document 'b' at $.total",
    warning=True,
    writes=("r.json",),
)
def _() -> list[str]:
    documents(expected=GOOD_LINE + '{"id": "b", "data": {"total": [2, 3]}}\n')
    put("schema.yaml", "classes:\n  - name: Invoice\n    fields:\n      total: {method: EXACT}\n")
    return fields("--schema", "schema.yaml", "--allow-shape-mismatch")


# ------------------------------------------------------------------- schemas


SCHEMA = """\
classes:
  - name: Invoice
    fields:
      total: {method: NUMERIC_EXACT, threshold: 0.01}
      lines:
        items: {fields: {sku: {method: EXACT}}}
"""

SCHEMAS: Sequence[tuple[str, str, str, str, tuple[str, ...]]] = [
    # (name, kind, file name, text, fragments)
    (
        "schema-malformed-yaml",
        "malformed",
        "schema.yaml",
        "classes:\n  - name: Invoice\n    fields: {total: {method: EXACT}\n",
        ("schema.yaml: malformed YAML at line 4, column 1",),
    ),
    (
        "schema-malformed-json",
        "malformed",
        "schema.json",
        '{"classes": [{"name": "Invoice",, "fields": {}}]}',
        ("schema.json: malformed JSON at line 1, column 33",),
    ),
    (
        "schema-repeated-key",
        "repeated-key",
        "schema.yaml",
        SCHEMA.replace("threshold: 0.01}", "threshold: 0.01, threshold: 0.5}"),
        ("schema.yaml: duplicate key 'threshold' at line 4, column 55",),
    ),
    (
        "schema-alias-bomb",
        "alias-bomb",
        "schema.yaml",
        ALIAS_BOMB,
        ("schema.yaml, at $.e[0]: aliases repeat more than 10,000 nodes",),
    ),
    (
        "schema-nested-10000",
        "deep-nesting",
        "schema.json",
        deep_json(),
        ("schema.json, at $.a.a.a", "nesting deeper than 1,000 levels at line 1"),
    ),
    (
        "schema-empty",
        "empty",
        "schema.yaml",
        "# to do\n",
        ("schema.yaml: the file is empty",),
    ),
    (
        "schema-unknown-key",
        "unknown-key",
        "schema.yaml",
        SCHEMA.replace("{method: EXACT}", "{methd: EXACT}"),
        (
            "schema.yaml, record class 'Invoice', at "
            "classes[0].fields.lines.items.fields.sku.methd",
            "Extra inputs are not permitted",
        ),
    ),
    (
        "schema-unknown-method",
        "unknown-enum",
        "schema.yaml",
        SCHEMA.replace("NUMERIC_EXACT", "NUMERIC_CLOSE"),
        (
            "schema.yaml, record class 'Invoice', at classes[0].fields.total.method",
            "(got 'NUMERIC_CLOSE')",
        ),
    ),
    (
        "schema-unknown-pairing",
        "unknown-enum",
        "schema.yaml",
        SCHEMA.replace("items: {fields", "pairing: greedy\n        items: {fields"),
        (
            "schema.yaml, record class 'Invoice', at classes[0].fields.lines.pairing",
            "(got 'greedy')",
        ),
    ),
    (
        "schema-threshold-inf",
        "bad-number",
        "schema.yaml",
        SCHEMA.replace("threshold: 0.01", "threshold: .inf"),
        ("schema.yaml: .inf is not a finite number at line 4",),
    ),
    (
        "schema-threshold-boolean",
        "bad-number",
        "schema.yaml",
        SCHEMA.replace("threshold: 0.01", "threshold: true"),
        (
            "schema.yaml, record class 'Invoice', at classes[0].fields.total.threshold",
            "a number is due here, not the boolean true",
        ),
    ),
    (
        "schema-classes-a-mapping",
        "wrong-shape",
        "schema.yaml",
        "classes:\n  Invoice:\n    fields: {total: {method: EXACT}}\n",
        ("schema.yaml, at classes: invalid DocumentSchema", "Input should be a valid list"),
    ),
    (
        "schema-is-a-list",
        "wrong-shape",
        "schema.json",
        '[{"name": "Invoice", "fields": {}}]',
        ("schema.json: a schema file must hold an object",),
    ),
    (
        "schema-duplicate-class",
        "duplicate-id",
        "schema.yaml",
        SCHEMA + "  - name: Invoice\n    fields: {}\n",
        ("schema.yaml: invalid DocumentSchema: duplicate class names: Invoice",),
    ),
    (
        "schema-default-class-unknown",
        "dangling-reference",
        "schema.yaml",
        "default_class: Receipt\n" + SCHEMA,
        ("schema.yaml: invalid DocumentSchema: default_class 'Receipt' is not one of the classes",),
    ),
    (
        "schema-invalid-utf8",
        "invalid-utf8",
        "schema.yaml",
        SCHEMA.replace("Invoice", "Invoice\udcff"),
        ("schema.yaml: not valid UTF-8 text", "at line 2, column 18"),
    ),
    (
        "schema-json-schema-bad-type",
        "unknown-enum",
        "schema.json",
        json.dumps({"type": "object", "properties": {"total": {"type": "money"}}}),
        ("schema.json, record document, at total", "unknown type 'money'"),
    ),
]

for _name, _kind, _file, _text, _fragments in SCHEMAS:

    def _build(file: str = _file, text: str = _text) -> list[str]:
        put_bytes(file, text.encode("utf-8", "surrogateescape"))
        return fields("--schema", file)

    corpus.add(_name, _kind, _build, *_fragments)


@corpus.case("schema-is-a-folder", "not-a-file", "schema.yaml: this is a folder, not a file")
def _() -> list[str]:
    folder("schema.yaml")
    return fields("--schema", "schema.yaml")


# ------------------------------------------------------------------- options


@corpus.case("fail-over-inf", "bad-number", "--fail-over 'far=inf'", "between 0 and 1")
def _() -> list[str]:
    return fields("--fail-over", "far=inf")


@corpus.case(
    "fail-under-unknown-metric",
    "unknown-enum",
    "--fail-under 'auc=0.5' (expected METRIC=VALUE with METRIC one of precision",
)
def _() -> list[str]:
    return fields("--fail-under", "auc=0.5")


@corpus.case(
    "list-pairing-unknown",
    "unknown-enum",
    "argument --list-pairing: invalid choice: 'greedy'",
    usage=True,
)
def _() -> list[str]:
    return fields("--list-pairing", "greedy")


@corpus.case("traces-word", "bad-option", "argument --traces: invalid value 'some'", usage=True)
def _() -> list[str]:
    return fields("--traces", "some")


@corpus.case("traces-negative", "bad-number", "argument --traces: invalid value '-3'", usage=True)
def _() -> list[str]:
    return fields("--traces=-3")


@corpus.case("workers-nan", "bad-number", "--workers: invalid worker count 'nan'")
def _() -> list[str]:
    return fields("--workers", "nan")


@corpus.case("spark-with-workers", "bad-option", "--workers is for one machine; with --spark")
def _() -> list[str]:
    return fields("--spark", "--workers", "2")


@corpus.case("prompt-is-empty", "empty", "argument --prompt: prompt.txt is empty", usage=True)
def _() -> list[str]:
    put("prompt.txt", "\n")
    return fields("--prompt", "prompt.txt")


@corpus.case(
    "prompt-holds-a-key",
    "secret",
    "argument --prompt: prompt.txt holds an API key",
    usage=True,
    secret_inputs=("prompt.txt",),
)
def _() -> list[str]:
    put("prompt.txt", f"Extract the total. Use key {OPENAI_KEY} for the tool.\n")
    return fields("--prompt", "prompt.txt")


@corpus.case(
    "param-reserved-namespace",
    "bad-option",
    "argument --param: param key 'schema.id' is one docevals writes itself",
    usage=True,
)
def _() -> list[str]:
    return fields("--param", "schema.id=mine")


# --------------------------------------------------------- judges and embeddings

LLM_SCHEMA = "classes:\n  - name: Invoice\n    fields:\n      vendor: {method: LLM}\n"
SEMANTIC_SCHEMA = "classes:\n  - name: Invoice\n    fields:\n      vendor: {method: SEMANTIC}\n"


@corpus.case("llm-field-without-judge", "bad-option", "at $.vendor: method LLM needs a provider")
def _() -> list[str]:
    put("schema.yaml", LLM_SCHEMA)
    return fields("--schema", "schema.yaml")


@corpus.case(
    "judge-base-url-file",
    "non-http-url",
    "--judge openai-compatible",
    "base_url must be an http:// or https:// URL with a host (got file://, no host)",
)
def _() -> list[str]:
    put("schema.yaml", LLM_SCHEMA)
    return fields(
        "--schema", "schema.yaml", "--judge", "openai-compatible", "--model", "m",
        "--base-url", "file:///etc/passwd", "--api-key-env", JUDGE_KEY_ENV,
    )  # fmt: skip


@corpus.case(
    "embeddings-url-ftp",
    "non-http-url",
    "--embeddings-url: base_url must be an http:// or https:// URL with a host (got ftp://)",
)
def _() -> list[str]:
    put("schema.yaml", SEMANTIC_SCHEMA)
    return fields(
        "--schema", "schema.yaml", "--embeddings-model", "e5",
        "--embeddings-url", "ftp://127.0.0.1/v1", "--embeddings-key-env", JUDGE_KEY_ENV,
    )  # fmt: skip


@corpus.case(
    "reasoning-effort-unknown",
    "unknown-enum",
    "--judge openai: invalid JudgeConfig: reasoning_effort",
    "(got 'extreme')",
)
def _() -> list[str]:
    put("schema.yaml", LLM_SCHEMA)
    return fields(
        "--schema", "schema.yaml", "--judge", "openai", "--reasoning-effort", "extreme",
    )  # fmt: skip


@corpus.case(
    "judge-key-variable-unset",
    "missing",
    f"--judge openai needs an API key: set {UNSET_KEY_ENV} in the environment",
)
def _() -> list[str]:
    put("schema.yaml", LLM_SCHEMA)
    return fields(
        "--schema", "schema.yaml", "--judge", "openai", "--api-key-env", UNSET_KEY_ENV,
    )  # fmt: skip


@corpus.case("temperature-nan", "bad-number", "--temperature nan")
def _() -> list[str]:
    put("schema.yaml", LLM_SCHEMA)
    return fields(
        "--schema", "schema.yaml", "--judge", "openai", "--temperature", "nan",
    )  # fmt: skip


@corpus.case(
    "prices-alias-bomb", "alias-bomb", "prices.yaml, at $.e[0]: aliases repeat more than 10,000"
)
def _() -> list[str]:
    put("prices.yaml", ALIAS_BOMB)
    return fields("--prices", "prices.yaml")


# ------------------------------------------------------------------- outputs


@corpus.case("output-is-expected", "output-clash", "--output gt.jsonl is the same file as")
def _() -> list[str]:
    documents()
    return fields(output="gt.jsonl")


@corpus.case(
    "output-links-to-predicted",
    "output-clash",
    "--output link.json",
    "is the same file as --predicted pred.jsonl",
)
def _() -> list[str]:
    documents()
    symlink("link.json", "pred.jsonl")
    return fields(output="link.json")


@corpus.case(
    "markdown-hard-link-to-schema",
    "output-clash",
    "--markdown copy.md is the same file as --schema schema.yaml",
)
def _() -> list[str]:
    put("schema.yaml", SCHEMA)
    hard_link("copy.md", "schema.yaml")
    return fields("--schema", "schema.yaml", "--markdown", "copy.md")


@corpus.case(
    "markdown-equals-output",
    "output-clash",
    "--output r.json and --markdown r.json are the same path",
)
def _() -> list[str]:
    return fields("--markdown", "r.json")


@corpus.case("output-is-a-folder", "output-clash", "--output r.json is a folder")
def _() -> list[str]:
    folder("r.json")
    return fields()


@corpus.case(
    "output-inside-expected-folder",
    "output-clash",
    "--output gt/r.json is inside --expected gt",
)
def _() -> list[str]:
    documents()
    write_json(Path("gt/a.json"), {"total": 1})
    return fields(expected="gt", output="gt/r.json")


@corpus.case(
    "unreadable-expected",
    "permission",
    "gt.jsonl: cannot read: Permission denied",
    as_user=True,
)
def _() -> list[str]:
    documents()
    locked("gt.jsonl")
    return fields()


@corpus.case(
    "unwritable-output-folder",
    "permission",
    "--output out/r.json: this user may not write in out",
    as_user=True,
)
def _() -> list[str]:
    documents()
    folder("out")
    Path("out").chmod(0o555)
    return fields(output="out/r.json")
