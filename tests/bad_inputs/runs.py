"""Bad inputs for ``log``, ``register-dataset``, ``datasets``, ``compare`` and
``quickstart``: run bundles, approved files, tracking stores and run references."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from docevals_mlflow.groundtruth.approval import write_approved
from docevals_mlflow.tracking.bundle import ARTIFACTS, BundleWriter, DatasetInput
from tests.bad_inputs.case import (
    OPENAI_KEY,
    STORE,
    Corpus,
    deep_json,
    fifo,
    folder,
    put,
    put_bytes,
    symlink,
)
from tests.bad_inputs.groundtruth import ROWS
from tests.groundtruth.approval_fakes import approved
from tests.helpers import write_jsonl
from tests.tracking.test_bundle_entries import a_bundle

log = Corpus("log")
register = Corpus("register-dataset")
datasets = Corpus("datasets")
compare = Corpus("compare")
quickstart = Corpus("quickstart")

DAMAGED_STORE = b"SQLite format 3\x00" + b"\x00" * 84 + b"this is no database page" * 40
"""The SQLite header, then garbage: a store that is damaged, not missing."""


# -------------------------------------------------------------------------- log


def bundle() -> str:
    """A good bundle, ``bundle.run`` (one param, one Markdown artifact)."""
    return str(a_bundle(Path(".")))


def edited_manifest(edit: Callable[[dict[str, Any]], None]) -> str:
    folder_ = bundle()
    manifest = Path(folder_, "run.json")
    data = json.loads(manifest.read_text(encoding="utf-8"))
    edit(data)
    manifest.write_text(json.dumps(data), encoding="utf-8")
    return folder_


def log_argv(folder_: str = "bundle.run", *extra: str) -> list[str]:
    return ["log", folder_, "--tracking-uri", STORE, *extra]


def with_file(name: str, text: str) -> Callable[[], str]:
    """A good bundle with ``name`` (inside it) replaced by ``text``."""

    def make() -> str:
        folder_ = bundle()
        put(f"{folder_}/{name}", text)
        return folder_

    return make


def with_symlink_out() -> str:
    folder_ = bundle()
    put("notes.txt", "not for the tracking server\n")
    symlink(f"{folder_}/{ARTIFACTS}/notes.txt", "../../notes.txt")
    return folder_


def with_fifo() -> str:
    folder_ = bundle()
    fifo(f"{folder_}/{ARTIFACTS}/report/pipe")
    return folder_


def without_manifest() -> str:
    folder(f"bundle.run/{ARTIFACTS}")
    return "bundle.run"


BUNDLES: Sequence[tuple[str, str, Callable[[], str], tuple[str, ...]]] = [
    # (name, kind, the bundle, fragments)
    (
        "symlink-out-of-the-bundle",
        "bundle-entry",
        with_symlink_out,
        ("bundle.run: bundle entry artifacts/notes.txt is a symbolic link; nothing was logged",),
    ),
    (
        "fifo-entry",
        "bundle-entry",
        with_fifo,
        ("bundle.run: bundle entry artifacts/report/pipe is a FIFO; nothing was logged",),
    ),
    (
        "manifest-malformed",
        "malformed",
        with_file("run.json", '{"format": "docevals-run/1",'),
        ("bundle.run/run.json: malformed JSON at line 1, column 29",),
    ),
    (
        "manifest-repeated-key",
        "repeated-key",
        with_file("run.json", '{"format": "docevals-run/1", "kind": "evaluation", "kind": "x"}'),
        ("bundle.run/run.json, at $.kind: duplicate key 'kind' at line 1, column 52",),
    ),
    (
        "manifest-nan-metric",
        "bad-number",
        with_file("run.json", '{"format": "docevals-run/1", "metrics": {"f1": NaN}}'),
        ("bundle.run/run.json, at $.metrics.f1: NaN is not valid JSON at line 1, column 48",),
    ),
    (
        "manifest-nested-10000",
        "deep-nesting",
        with_file("run.json", deep_json()),
        ("bundle.run/run.json, at $.a.a.a", "nesting deeper than 1,000 levels"),
    ),
    (
        "manifest-unknown-kind",
        "unknown-enum",
        lambda: edited_manifest(lambda data: data.update(kind="training")),
        ("bundle.run/run.json, at kind: invalid RunBundle", "(got 'training')"),
    ),
    (
        "manifest-unknown-key",
        "unknown-key",
        lambda: edited_manifest(lambda data: data.update(artefacts=[])),
        ("bundle.run/run.json, at artefacts: invalid RunBundle", "Extra inputs are not permitted"),
    ),
    (
        "manifest-params-a-list",
        "wrong-shape",
        lambda: edited_manifest(lambda data: data.update(params=["a=1"])),
        ("bundle.run/run.json, at params: invalid RunBundle", "Input should be a valid dictionary"),
    ),
    (
        "manifest-missing",
        "missing",
        without_manifest,
        ("bundle.run: not a docevals run bundle (no run.json)",),
    ),
    (
        "manifest-empty",
        "empty",
        with_file("run.json", ""),
        ("bundle.run/run.json: the file is empty",),
    ),
    (
        "records-outside-the-bundle",
        "tampered",
        lambda: bundle_with_records("../../other.parquet"),
        ("bundle.run/run.json: input 'gt' names records '../../other.parquet', which is not",),
    ),
]

for _name, _kind, _make, _fragments in BUNDLES:

    def _build(make: Callable[[], str] = _make) -> list[str]:
        return log_argv(make())

    log.add(_name, _kind, _build, *_fragments, store=True)


def bundle_with_records(records: str) -> str:
    writer = BundleWriter()
    writer.dataset(
        DatasetInput(name="gt", digest="d", source="s", records="inputs/gt.parquet"),
        pd.DataFrame({"a": [1]}),
    )
    root = writer.write(Path("bundle.run"))
    pd.DataFrame({"a": [2]}).to_parquet("other.parquet")
    manifest = root / "run.json"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("inputs/gt.parquet", records),
        encoding="utf-8",
    )
    return str(root)


@log.case(
    "bundle-is-a-file",
    "not-a-file",
    "case.json: not a folder (expected a run bundle folder)",
    store=True,
)
def _() -> list[str]:
    put("case.json", "{}\n")
    return log_argv("case.json")


@log.case(
    "run-id-unknown",
    "bad-run",
    "MLflow refused the run: Run with id=0123456789abcdef0123456789abcdef not found",
    store=True,
)
def _() -> list[str]:
    return log_argv(bundle(), "--run-id", "0123456789abcdef0123456789abcdef")


@log.case(
    "damaged-store",
    "malformed",
    "damaged.db: not an SQLite database (file is not a database)",
)
def _() -> list[str]:
    put_bytes("damaged.db", DAMAGED_STORE)
    return ["log", bundle(), "--tracking-uri", "sqlite:///damaged.db"]


# -------------------------------------------------------------- register-dataset


def approved_files(*cases: tuple[str, str]) -> None:
    """``(case id, file)`` pairs, each a signed approval of :data:`ROWS`."""
    for case_id, name in cases:
        write_approved(approved(case_id, ROWS), Path(name))


def register_argv(*extra: str, name: str = "invoices") -> list[str]:
    return ["register-dataset", name, "--tracking-uri", STORE, *extra]


@register.case("name-invalid", "bad-option", "invalid dataset name 'bad@name'", store=True)
def _() -> list[str]:
    approved_files(("inv-a", "approved/inv-a.json"))
    return register_argv("--from", "approved", name="bad@name")


@register.case("from-missing", "missing", "nope.json: approved file not found", store=True)
def _() -> list[str]:
    return register_argv("--from", "nope.json")


@register.case("from-empty-folder", "empty", "approved: folder has no .json files", store=True)
def _() -> list[str]:
    folder("approved")
    return register_argv("--from", "approved")


@register.case(
    "from-fifo", "not-a-file", "inv-a.json: this is a named pipe, not a file", store=True
)
def _() -> list[str]:
    fifo("inv-a.json")
    return register_argv("--from", "inv-a.json")


@register.case(
    "rows-changed", "tampered", "approved/inv-a.json: content digest mismatch", store=True
)
def _() -> list[str]:
    approved_files(("inv-a", "approved/inv-a.json"))
    path = Path("approved/inv-a.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["rows"][1]["expected"] = 11
    path.write_text(json.dumps(data), encoding="utf-8")
    return register_argv("--from", "approved")


@register.case(
    "unsigned",
    "tampered",
    "inv-c.json: unsigned record: the approval carries no signature",
    store=True,
)
def _() -> list[str]:
    write_approved(approved("inv-c", ROWS, key=None), Path("inv-c.json"))
    return register_argv("--from", "inv-c.json")


@register.case(
    "duplicate-case",
    "duplicate-id",
    "again/inv-a.json: case 'inv-a' is given twice (also in approved/inv-a.json)",
    store=True,
)
def _() -> list[str]:
    approved_files(("inv-a", "approved/inv-a.json"), ("inv-a", "again/inv-a.json"))
    return register_argv("--from", "approved", "--from", "again")


@register.case(
    "malformed-in-folder",
    "malformed",
    "approved/inv-b.json: malformed JSON at line 1, column 21",
    store=True,
)
def _() -> list[str]:
    approved_files(("inv-a", "approved/inv-a.json"))
    put("approved/inv-b.json", '{"case_id": "inv-b",,}')
    return register_argv("--from", "approved")


@register.case(
    "public-key-mismatch", "tampered", "inv-a.json: key mismatch: signed by key", store=True
)
def _() -> list[str]:
    from docevals_mlflow.groundtruth.signing import generate_keypair

    approved_files(("inv-a", "inv-a.json"))
    generate_keypair(Path("keys/bob"))
    return register_argv("--from", "inv-a.json", "--public-key", "keys/bob.pub")


@register.case(
    "damaged-store", "malformed", "damaged.db: not an SQLite database (file is not a database)"
)
def _() -> list[str]:
    approved_files(("inv-a", "inv-a.json"))
    put_bytes("damaged.db", DAMAGED_STORE)
    return ["register-dataset", "invoices", "--from", "inv-a.json",
            "--tracking-uri", "sqlite:///damaged.db"]  # fmt: skip


# ---------------------------------------------------------------------- datasets


@datasets.case(
    "unknown-name", "dangling-reference", "no ground-truth dataset named 'nope'", store=True
)
def _() -> list[str]:
    return ["datasets", "nope", "--tracking-uri", STORE]


@datasets.case(
    "damaged-store", "malformed", "damaged.db: not an SQLite database (file is not a database)"
)
def _() -> list[str]:
    put_bytes("damaged.db", DAMAGED_STORE)
    return ["datasets", "--tracking-uri", "sqlite:///damaged.db"]


@datasets.case("store-is-a-folder", "not-a-file", "store.db: this is a folder, not a file")
def _() -> list[str]:
    folder("store.db")
    return ["datasets", "--tracking-uri", "sqlite:///store.db"]


@datasets.case("store-fifo", "not-a-file", "store.db: this is a named pipe, not a file")
def _() -> list[str]:
    fifo("store.db")
    return ["datasets", "--tracking-uri", "sqlite:///store.db"]


@datasets.case("name-invalid", "bad-option", "invalid dataset name 'bad@name'", store=True)
def _() -> list[str]:
    return ["datasets", "bad@name", "--tracking-uri", STORE]


@datasets.case(
    "tracking-uri-unknown-scheme",
    "non-http-url",
    "gopher://127.0.0.1:9/: MLflow cannot use this tracking URI",
    "got unsupported URI 'gopher://",
)
def _() -> list[str]:
    # The key in the URI's user-info is never shown.
    return ["datasets", "--tracking-uri", f"gopher://corpus:{OPENAI_KEY}@127.0.0.1:9/"]


# ----------------------------------------------------------------------- compare


def fields_report(name: str, total: int = 1) -> str:
    """A real ``fields`` report, made by the command itself."""
    from docevals_mlflow.cli import main

    write_jsonl(
        Path("gt.jsonl"), [{"id": "a", "data": {"total": 1}}, {"id": "b", "data": {"total": 2}}]
    )
    write_jsonl(
        Path(f"{name}.jsonl"),
        [{"id": "a", "data": {"total": total}}, {"id": "b", "data": {"total": 2}}],
    )
    argv = ["fields", "--expected", "gt.jsonl", "--predicted", f"{name}.jsonl",
            "--output", f"{name}.json", "--no-mlflow"]  # fmt: skip
    assert main(argv) == 0
    return f"{name}.json"


def case_report(name: str) -> str:
    from docevals_mlflow.cli import main

    put(f"{name}-p.json", '{"total": 1}')
    argv = ["evaluate-case", "--prediction", f"{name}-p.json", "--ground-truth", f"{name}-p.json",
            "--output", f"{name}.json", "--no-mlflow"]  # fmt: skip
    assert main(argv) == 0
    return f"{name}.json"


def compare_argv(*runs: str, extra: Sequence[str] = ()) -> list[str]:
    return ["compare", *runs, "--no-mlflow", "--resamples", "100", *extra]


@compare.case(
    "unknown-run-names",
    "bad-run",
    "run prompt-v1: no run of that id or name",
    store=True,
)
def _() -> list[str]:
    return compare_argv("prompt-v1", "prompt-v2", extra=("--tracking-uri", STORE))


@compare.case(
    "runs-of-different-kinds",
    "bad-run",
    "runs v1 and case: cannot compare a document run with a case run",
)
def _() -> list[str]:
    return compare_argv(fields_report("v1"), case_report("case"))


@compare.case("report-malformed", "malformed", "v2.json: malformed JSON at line 1, column 20")
def _() -> list[str]:
    put("v2.json", '{"kind": "fields", ')
    return compare_argv(fields_report("v1"), "v2.json")


@compare.case("report-empty", "empty", "v2.json: the file is empty")
def _() -> list[str]:
    put("v2.json", "")
    return compare_argv(fields_report("v1"), "v2.json")


@compare.case(
    "report-of-no-known-kind",
    "wrong-shape",
    "v2.json: invalid report: Input tag 'quarterly' found using 'kind'",
)
def _() -> list[str]:
    put("v2.json", '{"kind": "quarterly", "rows": []}')
    return compare_argv(fields_report("v1"), "v2.json")


@compare.case("report-fifo", "not-a-file", "v2.json: this is a named pipe, not a file")
def _() -> list[str]:
    fifo("v2.json")
    return compare_argv(fields_report("v1"), "v2.json")


@compare.case(
    "bundle-without-manifest",
    "bad-run",
    "run v2.run: no run of that id or name: the tracking store",
    "mlflow.db does not exist",
)
def _() -> list[str]:
    folder("v2.run/artifacts")
    return compare_argv(fields_report("v1"), "v2.run")


@compare.case("metric-unknown", "unknown-enum", "unknown metric 'auc'")
def _() -> list[str]:
    return compare_argv(fields_report("v1"), fields_report("v2", 3), extra=("--metric", "auc"))


@compare.case("alpha-nan", "bad-number", "--alpha nan (expected a level between 0 and 1)")
def _() -> list[str]:
    return compare_argv(fields_report("v1"), fields_report("v2", 3), extra=("--alpha", "nan"))


@compare.case("confidence-inf", "bad-number", "--confidence inf (expected a level between 0 and 1)")
def _() -> list[str]:
    return compare_argv(fields_report("v1"), fields_report("v2", 3), extra=("--confidence", "inf"))


@compare.case("resamples-too-few", "bad-number", "--resamples 10 (expected at least 100)")
def _() -> list[str]:
    return compare_argv(fields_report("v1"), fields_report("v2", 3), extra=("--resamples", "10"))


@compare.case(
    "output-dir-table-is-a-run",
    "output-clash",
    "--output-dir file effects.csv is the same file as run effects.csv",
)
def _() -> list[str]:
    os.replace(fields_report("v1"), "effects.csv")
    return compare_argv("effects.csv", fields_report("v2", 3), extra=("--output-dir", "."))


@compare.case(
    "output-dir-is-a-file", "output-clash", "--output-dir out is a file (expected a folder)"
)
def _() -> list[str]:
    put("out", "x\n")
    return compare_argv(fields_report("v1"), fields_report("v2", 3), extra=("--output-dir", "out"))


@compare.case(
    "output-dir-inside-a-bundle",
    "output-clash",
    "--output-dir v1.run/out is inside run v1.run, a folder this command reads",
)
def _() -> list[str]:
    writer = BundleWriter(run_name="v1")
    writer.param("docevals.version", "test")
    writer.write(Path("v1.run"))
    return compare_argv("v1.run", fields_report("v2", 3), extra=("--output-dir", "v1.run/out"))


# -------------------------------------------------------------------- quickstart


def quickstart_argv(*extra: str) -> list[str]:
    return ["quickstart", "--no-mlflow", *extra]


@quickstart.case(
    "documents-zero", "bad-number", "--documents 0 is out of range (expected a number of invoices"
)
def _() -> list[str]:
    return quickstart_argv("--documents", "0")


@quickstart.case("documents-too-many", "bad-number", "--documents 1001 is out of range")
def _() -> list[str]:
    return quickstart_argv("--documents", "1001")


@quickstart.case(
    "documents-nan", "bad-number", "argument --documents: invalid int value: 'nan'", usage=True
)
def _() -> list[str]:
    return quickstart_argv("--documents", "nan")


@quickstart.case(
    "output-dir-is-a-file", "output-clash", "--output-dir qs is a file (expected a folder)"
)
def _() -> list[str]:
    put("qs", "x\n")
    return quickstart_argv("--output-dir", "qs")


@quickstart.case(
    "output-dir-under-a-file",
    "output-clash",
    "--output-dir qs/run: qs is a file, so nothing can be created in it",
)
def _() -> list[str]:
    put("qs", "x\n")
    return quickstart_argv("--output-dir", "qs/run")


@quickstart.case("output-file-is-a-folder", "output-clash", "qs/schema.yaml", "folder")
def _() -> list[str]:
    folder("qs/schema.yaml")
    return quickstart_argv("--output-dir", "qs", "--documents", "2")


CASES = [*log.cases, *register.cases, *datasets.cases, *compare.cases, *quickstart.cases]
