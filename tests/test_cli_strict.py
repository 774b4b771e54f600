"""Strict where silence is wrong: NaN and infinite numbers, booleans where numbers are
due, options a method never reads, worker counts the machine cannot hold and ids too
long to name files. Each exits 2 with one line (the worker count is lowered with a
one-line warning instead), and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from docevals_mlflow.fields import parallel
from tests.file_tree import tree
from tests.helpers import assert_one_line_error, run, write_json, write_jsonl, write_text

GROUND_TRUTH = [{"id": "a", "data": {"total": 1, "date": "2024-01-02"}}]


def refused(
    capsys: pytest.CaptureFixture[str], root: Path, *argv: str | Path, fragments: tuple[str, ...]
) -> None:
    before = tree(root)
    code, out, err = run(capsys, *argv)
    assert code == 2, out + err
    assert_one_line_error(err, *fragments)
    assert tree(root) == before


# ------------------------------------------------------------------- numeric options


@pytest.mark.parametrize("option", ["--absolute-tolerance", "--relative-tolerance"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-0.5"])
def test_tolerances_must_be_finite_and_not_negative(capsys, tmp_path, option, value):
    prediction = write_json(tmp_path / "p.json", {"total": 1})
    truth = write_json(tmp_path / "t.json", {"total": 2})
    refused(
        capsys,
        tmp_path,
        "evaluate-case",
        "--prediction",
        prediction,
        "--ground-truth",
        truth,
        "--output",
        tmp_path / "r.json",
        f"{option}={value}",
        fragments=(f"{option} {value} (expected a finite number ≥ 0)",),
    )


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_the_judge_temperature_must_be_finite(capsys, tmp_path, value):
    prediction = write_json(tmp_path / "p.json", {"total": 1})
    truth = write_json(tmp_path / "t.json", {"total": 2})
    refused(
        capsys,
        tmp_path,
        "evaluate-case",
        "--prediction",
        prediction,
        "--ground-truth",
        truth,
        "--output",
        tmp_path / "r.json",
        "--judge",
        "openai-compatible",
        "--temperature",
        value,
        fragments=(f"--temperature {value} (expected a finite number ≥ 0)",),
    )


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_fields_thresholds_must_be_finite(capsys, tmp_path, value):
    expected = write_jsonl(tmp_path / "gt.jsonl", GROUND_TRUTH)
    refused(
        capsys,
        tmp_path,
        "fields",
        "--expected",
        expected,
        "--predicted",
        expected,
        "--output",
        tmp_path / "r.json",
        "--fail-under",
        f"f1={value}",
        fragments=(f"--fail-under 'f1={value}' (expected a VALUE between 0 and 1)",),
    )


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_the_kappa_threshold_must_be_finite(capsys, tmp_path, value):
    labels = write_text(tmp_path / "labels.jsonl", '{"case_id": "c", "label": "pass"}\n')
    report = write_json(tmp_path / "case.json", {})
    refused(
        capsys,
        tmp_path,
        "calibrate",
        report,
        "--labels",
        labels,
        "--output",
        tmp_path / "c.json",
        "--min-kappa",
        value,
        fragments=(f"--min-kappa {value} (expected a value between -1 and 1)",),
    )


# ------------------------------------------------------------------ schema settings

SCHEMA = """\
classes:
  - name: Invoice
    fields:
      total: {{method: NUMERIC_EXACT, threshold: 0.01}}
      date: {field}
"""


@pytest.mark.parametrize(
    ("field", "fragments"),
    [
        (
            "{method: FUZZY, threshold: true}",
            ("at classes[0].fields.date.threshold", "a number is due here, not the boolean true"),
        ),
        (
            "{method: FUZZY, threshold: false}",
            ("fields.date.threshold", "not the boolean false"),
        ),
        (
            "{method: NUMERIC_EXACT, relative_tolerance: '1e999'}",
            ("fields.date.relative_tolerance",),
        ),
        (
            "{method: NUMERIC_EXACT, threshold: '1e999'}",
            ("fields.date.threshold", "finite number"),
        ),
        (
            "{method: DATE, fuzzy_scorer: ratio}",
            ("'fuzzy_scorer' applies to FUZZY fields only (this field: method DATE)",),
        ),
        (
            "{method: EXACT, match_threshold: 0.5}",
            ("'match_threshold' applies to lists ('items') only (this field: method EXACT)",),
        ),
        (
            "{method: FUZZY, pairing: stickler}",
            ("'pairing' applies to lists ('items') only",),
        ),
        (
            "{items: {method: EXACT}, weight: true}",
            ("fields.date.weight", "not the boolean true"),
        ),
    ],
)
def test_schema_settings_that_cannot_be_meant(capsys, tmp_path, field, fragments):
    schema = write_text(tmp_path / "schema.yaml", SCHEMA.format(field=field))
    expected = write_jsonl(tmp_path / "gt.jsonl", GROUND_TRUTH)
    refused(
        capsys,
        tmp_path,
        "fields",
        "--schema",
        schema,
        "--expected",
        expected,
        "--predicted",
        expected,
        "--output",
        tmp_path / "r.json",
        fragments=(f"{schema}, record class 'Invoice'", *fragments),
    )


def test_a_field_metric_schema_in_a_pipeline_is_checked_too(capsys, tmp_path):
    write_text(tmp_path / "schema.yaml", SCHEMA.format(field="{method: DATE, fuzzy_scorer: ratio}"))
    config = write_text(
        tmp_path / "pipeline.yaml",
        """\
        pipeline_id: p
        metrics:
          default: [{type: field, schema: schema.yaml}]
        stages:
          - stage_id: s
            prediction: {total: 1}
            references: [{value: {total: 1}, id: t, authority: ground_truth}]
        """,
    )
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "r.json",
        fragments=("schema.yaml", "'fuzzy_scorer' applies to FUZZY fields only"),
    )


# ----------------------------------------------------------------------------- workers


def test_more_workers_than_the_machine_holds_are_lowered_with_a_warning(capsys, tmp_path):
    expected = write_jsonl(tmp_path / "gt.jsonl", GROUND_TRUTH)
    limit, reason = parallel.worker_limit()
    code, _, err = run(
        capsys, "fields", "--expected", expected, "--predicted", expected,
        "--output", tmp_path / "r.json", "--workers", "100000",
    )  # fmt: skip
    assert code == 0, err
    assert err == (
        "docevals: warning: --workers 100000: more workers than this machine can hold "
        f"({reason}); using {limit}\n"
    )
    assert (tmp_path / "r.json").is_file()


def test_the_open_file_limit_caps_the_workers(monkeypatch):
    resource = pytest.importorskip("resource")
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (128, 4096))
    monkeypatch.setattr(parallel, "cpu_count", lambda: 64)
    limit, reason = parallel.worker_limit()
    assert limit == (128 - parallel.RESERVED_FILES) // parallel.FILES_PER_WORKER == 8
    assert reason == "the open-file limit of 128 (ulimit -n)"
    assert parallel.capped_workers("100000") == (
        8,
        "100000: more workers than this machine can hold (the open-file limit of 128 "
        "(ulimit -n)); using 8",
    )
    assert parallel.capped_workers(8) == (8, None)


def test_a_tiny_open_file_limit_still_leaves_one_worker(monkeypatch):
    resource = pytest.importorskip("resource")
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (20, 20))
    assert parallel.worker_limit()[0] == 1


def test_resolve_workers_warns_when_it_caps(monkeypatch):
    monkeypatch.setattr(parallel, "worker_limit", lambda: (3, "test"))
    with pytest.warns(parallel.DocEvalsWarning, match=r"workers=10: .*\(test\); using 3"):
        assert parallel.resolve_workers(10) == 3
    assert parallel.resolve_workers(2) == 2


# --------------------------------------------------------------------------- long ids

GENERATION = """\
instruction: Extract the total.
expected_fields: [$.total]
generators:
  - {name: one, provider: openai-compatible, model: m1, base_url: "http://127.0.0.1:9/v1"}
  - {name: two, provider: openai-compatible, model: m2, base_url: "http://127.0.0.1:9/v1"}
"""


def test_a_5000_character_case_id_is_refused(capsys, tmp_path):
    config = write_text(tmp_path / "gen.yaml", GENERATION)
    source = write_text(tmp_path / "src" / "x.txt", "total 1\n")
    refused(
        capsys,
        tmp_path,
        "generate",
        "--config",
        config,
        "--source",
        source,
        "--case-id",
        "c" * 5000,
        "--output-dir",
        tmp_path / "out",
        "--no-mlflow",
        fragments=(
            "--case-id 'cccc",
            "is 5000 bytes long, too long to name the case's files",
            "at most 200 bytes",
        ),
    )


def test_a_case_named_by_a_long_file_stem_is_refused(capsys, tmp_path):
    config = write_text(tmp_path / "gen.yaml", GENERATION)
    sources = tmp_path / "sources"
    write_text(sources / ("s" * 240 + ".txt"), "total 1\n")
    refused(
        capsys,
        tmp_path,
        "generate",
        "--config",
        config,
        "--sources-dir",
        sources,
        "--output-dir",
        tmp_path / "out",
        "--no-mlflow",
        fragments=(f"{sources}: case 'ssss", "is 240 bytes long"),
    )
