"""Bad inputs for ``docevals calibrate``: human labels, judged reports, options."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.bad_inputs.case import Corpus, fifo, hard_link, locked, put, put_bytes
from tests.judges.test_calibration import judge_labels, judge_reports, write_labels
from tests.test_cli_calibrate import write_reports

calibrate = Corpus("calibrate")
CASES = calibrate.cases


def reports() -> list[str]:
    """Scenario A's judged case reports, ``reports/c01.json`` ...."""
    return write_reports(Path("."), judge_reports())


def calibrate_argv(
    *extra: str, labels: str = "labels.jsonl", reported: Sequence[str] | None = None
) -> list[str]:
    if not Path("labels.jsonl").exists() and labels == "labels.jsonl":
        write_labels(Path(labels), judge_labels(extra=False))
    found = reports() if reported is None else list(reported)
    return [
        "calibrate", *found, "--labels", labels, "--output", "calibration.json",
        "--no-mlflow", *extra,
    ]  # fmt: skip


LABELS: Sequence[tuple[str, str, str, str, tuple[str, ...]]] = [
    # (name, kind, file name, text, fragments)
    (
        "unknown-label",
        "unknown-enum",
        "labels.jsonl",
        '{"case_id": "c01", "label": "pass"}\n{"case_id": "c02", "label": "maybe"}\n',
        ("labels.jsonl, record line 2, at label: invalid HumanLabel", "(got 'maybe')"),
    ),
    (
        "malformed-jsonl",
        "malformed",
        "labels.jsonl",
        '{"case_id": "c01", "label": "pass"}\n{"case_id": "c02" "label": "fail"}\n',
        ("labels.jsonl, record line 2: malformed JSON at column 19",),
    ),
    (
        "repeated-key",
        "repeated-key",
        "labels.jsonl",
        '{"case_id": "c01", "label": "pass", "label": "fail"}\n',
        ("labels.jsonl, record line 1, at $.label: duplicate key 'label'",),
    ),
    (
        "unknown-key",
        "unknown-key",
        "labels.jsonl",
        '{"case_id": "c01", "label": "pass", "labeller": "ann"}\n',
        (
            "labels.jsonl, record line 1, at labeller: invalid HumanLabel",
            "Extra inputs are not permitted",
        ),
    ),
    (
        "case-no-report-holds",
        "dangling-reference",
        "labels.jsonl",
        '{"case_id": "c01", "label": "pass"}\n{"case_id": "c99", "label": "fail"}\n',
        ("labels.jsonl, record label 2: label for case 'c99', which no report holds",),
    ),
    (
        "csv-without-label-column",
        "wrong-shape",
        "labels.csv",
        "case_id,verdict\nc01,pass\n",
        ("labels.csv, record line 1: unknown column(s) 'verdict'",),
    ),
    (
        "tsv-separated-by-commas",
        "malformed",
        "labels.tsv",
        "case_id,label\nc01,pass\n",
        ("labels.tsv, record line 1: unknown column(s) 'case_id,label'",),
    ),
    (
        "csv-header-only",
        "empty",
        "labels.csv",
        "case_id,label\n",
        ("labels.csv: the labels file holds no labels",),
    ),
    (
        "blank-lines",
        "empty",
        "labels.jsonl",
        "\n \n",
        ("labels.jsonl: the labels file holds no labels",),
    ),
    (
        "csv-stage-the-case-lacks",
        "dangling-reference",
        "labels.csv",
        "case_id,stage_id,label\nc01,output,pass\nc02,extract,fail\n",
        ("labels.csv, record label 2: label for case 'c02' stage 'extract'",),
    ),
    (
        "unknown-extension",
        "wrong-shape",
        "labels.txt",
        "c01 pass\n",
        ("labels.txt: unknown labels format '.txt'",),
    ),
]

for _name, _kind, _file, _text, _fragments in LABELS:

    def _build(file: str = _file, text: str = _text) -> list[str]:
        put(file, text)
        return calibrate_argv(labels=file)

    calibrate.add(_name, _kind, _build, *_fragments)


@calibrate.case(
    "labels-invalid-utf8", "invalid-utf8", "labels.csv: not valid UTF-8 text", "at line 2, column 2"
)
def _() -> list[str]:
    put_bytes("labels.csv", b"case_id,label\nc\xf0\x28\x8c\x28,pass\n")
    return calibrate_argv(labels="labels.csv")


@calibrate.case("labels-fifo", "not-a-file", "labels.jsonl: this is a named pipe, not a file")
def _() -> list[str]:
    fifo("labels.jsonl")
    return calibrate_argv()


@calibrate.case(
    "report-malformed", "malformed", "reports/c01.json: malformed JSON at line 1, column 18"
)
def _() -> list[str]:
    found = reports()
    put("reports/c01.json", '{"kind": "case", ')
    return calibrate_argv(reported=found)


@calibrate.case("report-without-judge", "dangling-reference", "judge")
def _() -> list[str]:
    put("labels.jsonl", '{"case_id": "c01", "label": "pass"}\n')
    from docevals_mlflow.cli import main

    put("p.json", '{"total": 1}')
    put("t.json", '{"total": 1}')
    assert main(["evaluate-case", "--prediction", "p.json", "--ground-truth", "t.json",
                 "--case-id", "c01", "--output", "c01.json", "--no-mlflow"]) == 0  # fmt: skip
    return calibrate_argv(reported=["c01.json"])


@calibrate.case("metric-unknown", "dangling-reference", "no report has a metric 'judje'")
def _() -> list[str]:
    return calibrate_argv("--metric", "judje")


@calibrate.case("confidence-nan", "bad-number", "confidence nan is outside (0, 1)")
def _() -> list[str]:
    return calibrate_argv("--confidence", "nan")


@calibrate.case(
    "min-kappa-inf", "bad-number", "--min-kappa inf (expected a value between -1 and 1)"
)
def _() -> list[str]:
    return calibrate_argv("--min-kappa", "inf")


@calibrate.case(
    "bootstrap-not-a-number",
    "bad-number",
    "argument --bootstrap: invalid int value: '1e3'",
    usage=True,
)
def _() -> list[str]:
    return calibrate_argv("--bootstrap", "1e3")


@calibrate.case(
    "markdown-hard-link-to-labels",
    "output-clash",
    "--markdown notes.md is the same file as --labels labels.jsonl",
)
def _() -> list[str]:
    argv = calibrate_argv("--markdown", "notes.md")
    hard_link("notes.md", "labels.jsonl")
    return argv


@calibrate.case(
    "unreadable-labels",
    "permission",
    "labels.jsonl: cannot read: Permission denied",
    as_user=True,
)
def _() -> list[str]:
    argv = calibrate_argv()
    locked("labels.jsonl")
    return argv
