"""Inputs are never outputs: every command compares the paths it writes with the paths
it reads (and with each other) before any work, and a clash exits 2 with one line
naming both paths and roles, with nothing created, changed or removed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docevals_mlflow.cli import paths
from docevals_mlflow.cli.paths import Input, Output, check_paths
from docevals_mlflow.errors import InputError
from tests.file_tree import tree
from tests.helpers import assert_one_line_error, run, write_json, write_jsonl, write_text

GROUND_TRUTH = [{"id": "a", "data": {"total": 1}}, {"id": "b", "data": {"total": 2}}]
PREDICTIONS = [{"id": "a", "data": {"total": 1}}, {"id": "b", "data": {"total": 3}}]


@pytest.fixture
def documents(tmp_path: Path) -> tuple[Path, Path]:
    """``gt.jsonl`` and ``pred.jsonl`` for ``docevals fields``."""
    return write_jsonl(tmp_path / "gt.jsonl", GROUND_TRUTH), write_jsonl(
        tmp_path / "pred.jsonl", PREDICTIONS
    )


def refused(
    capsys: pytest.CaptureFixture[str], root: Path, *argv: str | Path, fragments: tuple[str, ...]
) -> None:
    """``docevals ARGV`` exits 2 with one line holding ``fragments``, and ``root`` is
    exactly as it was: nothing created, changed or removed."""
    before = tree(root)
    code, out, err = run(capsys, *argv)
    assert code == 2, out + err
    assert_one_line_error(err, *fragments)
    assert tree(root) == before


def fields(expected: Path, predicted: Path, *extra: str | Path) -> list[str | Path]:
    return ["fields", "--expected", expected, "--predicted", predicted, *extra]


# ------------------------------------------------------------------- docevals fields


def test_the_report_cannot_be_the_ground_truth(capsys, tmp_path, documents):
    expected, predicted = documents
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", expected),
        fragments=(f"--output {expected} is the same file as --expected {expected}",),
    )


def test_the_report_cannot_be_the_predictions(capsys, tmp_path, documents):
    expected, predicted = documents
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", predicted),
        fragments=(f"--output {predicted} is the same file as --predicted {predicted}",),
    )


def test_the_same_file_through_a_symlink_or_a_hard_link(capsys, tmp_path, documents):
    expected, predicted = documents
    (tmp_path / "soft.jsonl").symlink_to(expected.name)
    os.link(predicted, tmp_path / "hard.jsonl")
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", tmp_path / "soft.jsonl"),
        fragments=("--output", "soft.jsonl", f"--expected {expected}", "same file"),
    )
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", "r.json", "--markdown", tmp_path / "hard.jsonl"),
        fragments=("--markdown", "hard.jsonl", f"--predicted {predicted}", "same file"),
    )


def test_the_same_file_spelled_another_way(capsys, tmp_path, documents, monkeypatch):
    monkeypatch.chdir(tmp_path)
    refused(
        capsys,
        tmp_path,
        *fields(Path("gt.jsonl"), Path("pred.jsonl"), "--output", "missing/../gt.jsonl"),
        fragments=("--output missing/../gt.jsonl is the same file as --expected gt.jsonl",),
    )


def test_markdown_equal_to_the_report_is_refused(capsys, tmp_path, documents):
    expected, predicted = documents
    report = tmp_path / "r.json"
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", report, "--markdown", report),
        fragments=(f"--output {report} and --markdown {report} are the same path",),
    )


def test_an_existing_report_is_not_touched_by_a_refused_run(capsys, tmp_path, documents):
    expected, predicted = documents
    report = write_text(tmp_path / "r.json", "the old report\n")
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", report, "--markdown", expected),
        fragments=("--markdown", "--expected"),
    )
    assert report.read_text(encoding="utf-8") == "the old report\n"


def test_a_report_inside_the_ground_truth_folder_is_refused(capsys, tmp_path):
    expected = tmp_path / "expected"
    write_json(expected / "a.json", {"total": 1})
    predicted = write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS[:1])
    output = expected / "report.json"
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", output),
        fragments=(f"--output {output} is inside --expected {expected}, a folder this command",),
    )


def test_a_markdown_path_that_is_a_folder_is_refused_before_any_work(capsys, tmp_path, documents):
    expected, predicted = documents
    folder = tmp_path / "md"
    folder.mkdir()
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", tmp_path / "r.json", "--markdown", folder),
        fragments=(f"--markdown {folder} is a folder (expected a file path)",),
    )


def test_an_output_under_a_file_is_refused(capsys, tmp_path, documents):
    expected, predicted = documents
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", expected / "r.json"),
        fragments=(f"{expected} is a file, so nothing can be created in it",),
    )


def test_a_file_name_too_long_is_refused(capsys, tmp_path, documents):
    expected, predicted = documents
    output = tmp_path / ("r" * 250 + ".json")
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", output),
        fragments=("--output", "255 bytes long", "at most"),
    )


def test_the_prompt_file_is_an_input(capsys, tmp_path, documents):
    expected, predicted = documents
    prompt = write_text(tmp_path / "prompt.txt", "Extract the total.\n")
    refused(
        capsys,
        tmp_path,
        *fields(
            expected, predicted, "--prompt", prompt, "--output", "r.json", "--markdown", prompt
        ),
        fragments=(f"--markdown {prompt} is the same file as --prompt {prompt}",),
    )


def test_the_run_bundle_cannot_be_an_input_folder(capsys, tmp_path, monkeypatch):
    # The bundle is kept at <output>.run when MLflow cannot be reached.
    monkeypatch.delenv("DOCEVALS_NO_MLFLOW")
    expected = tmp_path / "data.run"
    write_json(expected / "a.json", {"total": 1})
    predicted = write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS[:1])
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", tmp_path / "data.json"),
        fragments=("the run bundle", "is the same folder as --expected"),
    )


def test_the_judge_cache_cannot_hold_an_input(capsys, tmp_path, documents):
    expected, predicted = documents
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", tmp_path / "out" / "r.json"),
        "--judge-cache",
        tmp_path,
        fragments=(f"is inside --judge-cache {tmp_path}", "fills with files of its own"),
    )


# ------------------------------------------------------------ evaluate-case and suite


def test_evaluate_case_report_cannot_be_the_ground_truth(capsys, tmp_path):
    prediction = write_json(tmp_path / "p.json", {"total": 1})
    truth = write_json(tmp_path / "t.json", {"total": 1})
    refused(
        capsys,
        tmp_path,
        "evaluate-case",
        "--prediction",
        prediction,
        "--ground-truth",
        truth,
        "--output",
        truth,
        fragments=(f"--output {truth} is the same file as --ground-truth {truth}",),
    )


def test_evaluate_case_markdown_cannot_be_the_evidence(capsys, tmp_path):
    prediction = write_json(tmp_path / "p.json", {"total": 1})
    truth = write_json(tmp_path / "t.json", {"total": 1})
    evidence = write_text(tmp_path / "scan.txt", "Total: 1\n")
    refused(
        capsys,
        tmp_path,
        "evaluate-case",
        "--prediction",
        prediction,
        "--ground-truth",
        truth,
        "--evidence",
        evidence,
        "--output",
        tmp_path / "r.json",
        "--markdown",
        evidence,
        fragments=(f"--markdown {evidence} is the same file as --evidence {evidence}",),
    )


def test_suite_report_cannot_replace_a_report_it_reads(capsys, tmp_path):
    prediction = write_json(tmp_path / "p.json", {"total": 1})
    truth = write_json(tmp_path / "t.json", {"total": 1})
    case = tmp_path / "case.json"
    code, _, err = run(
        capsys, "evaluate-case", "--prediction", prediction, "--ground-truth", truth,
        "--output", case,
    )  # fmt: skip
    assert code == 0, err
    refused(
        capsys,
        tmp_path,
        "suite",
        case,
        "--output",
        case,
        fragments=(f"--output {case} is the same file as report {case}",),
    )


# ------------------------------------------------------------------ evaluate-pipeline

PIPELINE = """\
pipeline_id: invoice-1
stages:
  - stage_id: extract
    prediction_file: extract.json
    references:
      - {path: evidence/truth.json, authority: ground_truth}
  - stage_id: total
    depends_on: [extract]
    prediction: {total: 3}
    references:
      - {value: {total: 3}, id: truth, authority: ground_truth}
"""


@pytest.fixture
def pipeline(tmp_path: Path) -> Path:
    write_json(tmp_path / "extract.json", {"total": 3})
    write_json(tmp_path / "evidence" / "truth.json", {"total": 3})
    return write_text(tmp_path / "pipeline.yaml", PIPELINE)


def test_a_checkpoint_folder_holding_the_evidence_is_refused(capsys, tmp_path, pipeline):
    evidence = tmp_path / "evidence"
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        pipeline,
        "--output",
        tmp_path / "r.json",
        "--checkpoint-dir",
        evidence,
        fragments=(
            f"stage 'extract' reference {evidence / 'truth.json'} is inside --checkpoint-dir "
            f"{evidence}",
        ),
    )


def test_a_checkpoint_folder_holding_the_configuration_is_refused(capsys, tmp_path, pipeline):
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        pipeline,
        "--output",
        tmp_path / "out" / "r.json",
        "--checkpoint-dir",
        tmp_path,
        fragments=(f"the configuration {pipeline} is inside --checkpoint-dir {tmp_path}",),
    )


def test_the_pipeline_report_cannot_replace_a_prediction_file(capsys, tmp_path, pipeline):
    prediction = tmp_path / "extract.json"
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        pipeline,
        "--output",
        prediction,
        fragments=(f"--output {prediction} is the same file as stage 'extract' prediction_file",),
    )


def test_the_report_cannot_go_inside_the_checkpoint_folder(capsys, tmp_path, pipeline):
    checkpoints = tmp_path / "ckpt"
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        pipeline,
        "--output",
        checkpoints / "r.json",
        "--checkpoint-dir",
        checkpoints,
        fragments=(f"--output {checkpoints / 'r.json'} is inside --checkpoint-dir {checkpoints}",),
    )


def test_a_checkpoint_folder_that_is_a_file_is_refused(capsys, tmp_path, pipeline):
    not_a_folder = write_text(tmp_path / "ckpt", "x")
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        pipeline,
        "--output",
        tmp_path / "r.json",
        "--checkpoint-dir",
        not_a_folder,
        fragments=(f"--checkpoint-dir {not_a_folder} is a file (expected a folder)",),
    )


BATCH = """\
pipelines:
  - pipeline_id: {first}
    stages:
      - stage_id: s
        prediction: {{a: 1}}
        references: [{{value: {{a: 1}}, id: t, authority: ground_truth}}]
  - pipeline_id: {second}
    stages:
      - stage_id: s
        prediction: {{a: 2}}
        references: [{{value: {{a: 1}}, id: t, authority: ground_truth}}]
"""


def test_pipeline_ids_that_make_one_file_name_are_refused(capsys, tmp_path):
    config = write_text(tmp_path / "batch.yaml", BATCH.format(first="'inv/1'", second="inv_1"))
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "batch.json",
        "--checkpoint-dir",
        tmp_path / "ckpt",
        fragments=("pipeline ids 'inv/1' and 'inv_1' both make the file name 'inv_1'",),
    )


def test_long_pipeline_ids_sharing_a_prefix_get_distinct_files(capsys, tmp_path):
    first, second = "x" * 130 + "-1", "x" * 130 + "-2"
    config = write_text(tmp_path / "batch.yaml", BATCH.format(first=first, second=second))
    code, _, err = run(
        capsys, "evaluate-pipeline", config, "--output", tmp_path / "batch.json",
        "--checkpoint-dir", tmp_path / "ckpt", "--fail-on", "never",
    )  # fmt: skip
    assert code == 0, err
    reports = sorted(path.name for path in (tmp_path / "batch.pipelines").iterdir())
    folders = sorted(path.name for path in (tmp_path / "ckpt").iterdir())
    assert len(reports) == len(folders) == 2
    assert all(len(name) == 120 + len(".json") for name in reports)
    assert [name.removesuffix(".json") for name in reports] == folders


# --------------------------------------------------------- split, calibrate, compare


def test_split_heatmap_equal_to_the_report_is_refused(capsys, tmp_path):
    packet = {"sections": [{"section_id": "1", "document_class": "invoice", "page_indices": [0]}]}
    expected = write_json(tmp_path / "expected" / "p1.json", packet)
    predicted = write_json(tmp_path / "predicted" / "p1.json", packet)
    report = tmp_path / "split.json"
    refused(
        capsys,
        tmp_path,
        "split",
        "--expected",
        expected.parent,
        "--predicted",
        predicted.parent,
        "--output",
        report,
        "--heatmap",
        report,
        fragments=(f"--output {report} and --heatmap {report} are the same path",),
    )


def test_split_report_inside_the_predicted_folder_is_refused(capsys, tmp_path):
    packet = {"sections": [{"section_id": "1", "document_class": "invoice", "page_indices": [0]}]}
    write_json(tmp_path / "expected" / "p1.json", packet)
    predicted = write_json(tmp_path / "predicted" / "p1.json", packet).parent
    refused(
        capsys,
        tmp_path,
        "split",
        "--expected",
        tmp_path / "expected",
        "--predicted",
        predicted,
        "--output",
        predicted / "split.json",
        fragments=(f"is inside --predicted {predicted}",),
    )


def test_calibrate_report_cannot_be_the_labels(capsys, tmp_path):
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
        "--markdown",
        labels,
        fragments=(f"--markdown {labels} is the same file as --labels {labels}",),
    )


def test_compare_output_folder_cannot_be_a_run_bundle_it_reads(capsys, tmp_path):
    baseline, candidate = tmp_path / "base.run", tmp_path / "cand.run"
    write_json(baseline / "run.json", {})
    write_json(candidate / "run.json", {})
    refused(
        capsys,
        tmp_path,
        "compare",
        baseline,
        candidate,
        "--output-dir",
        baseline,
        "--no-mlflow",
        fragments=(f"--output-dir {baseline} is the same folder as run {baseline}",),
    )


def test_compare_output_folder_that_is_a_file_is_refused(capsys, tmp_path):
    not_a_folder = write_text(tmp_path / "out", "x")
    refused(
        capsys,
        tmp_path,
        "compare",
        "run-a",
        "run-b",
        "--output-dir",
        not_a_folder,
        "--no-mlflow",
        fragments=(f"--output-dir {not_a_folder} is a file (expected a folder)",),
    )


def test_quickstart_output_folder_that_is_a_file_is_refused(capsys, tmp_path):
    not_a_folder = write_text(tmp_path / "qs", "x")
    refused(
        capsys,
        tmp_path,
        "quickstart",
        "--output-dir",
        not_a_folder,
        "--no-mlflow",
        fragments=(f"--output-dir {not_a_folder} is a file (expected a folder)",),
    )


# --------------------------------------------------------- approve, keygen, generate


def test_approve_never_replaces_the_review_file_even_with_force(capsys, tmp_path):
    review = write_json(tmp_path / "case.review.json", {"case_id": "c"})
    refused(
        capsys,
        tmp_path,
        "approve",
        review,
        "--approved-by",
        "ann",
        "--unsigned",
        "--force",
        "--output",
        review,
        fragments=(f"--output {review} is the same file as review file {review}",),
    )


def test_keygen_into_a_folder_is_refused(capsys, tmp_path):
    folder = tmp_path / "keys"
    folder.mkdir()
    refused(
        capsys,
        tmp_path,
        "keygen",
        "--out",
        folder,
        fragments=(f"--out {folder} is a folder (expected a file path)",),
    )


GENERATION = """\
instruction: Extract the total.
expected_fields: [$.total]
generators:
  - {name: one, provider: openai-compatible, model: m1, base_url: "http://127.0.0.1:9/v1"}
  - {name: two, provider: openai-compatible, model: m2, base_url: "http://127.0.0.1:9/v1"}
"""


def test_generate_never_writes_over_a_source(capsys, tmp_path):
    # Refused before any provider is asked (the base URLs lead nowhere).
    config = write_text(tmp_path / "gen.yaml", GENERATION)
    source = write_json(tmp_path / "x.generation.json", {"total": 1})
    refused(
        capsys,
        tmp_path,
        "generate",
        "--config",
        config,
        "--source",
        source,
        "--case-id",
        "x",
        "--output-dir",
        tmp_path,
        "--no-mlflow",
        fragments=(f"case 'x' generation report {source} is the same file as case 'x' source",),
    )


def test_generate_never_deletes_a_source_named_like_a_stage_report(capsys, tmp_path):
    # A generation without adjudication removes <case>.generation.adjudication.json.
    config = write_text(tmp_path / "gen.yaml", GENERATION)
    source = write_json(tmp_path / "x.generation.adjudication.json", {"total": 1})
    refused(
        capsys,
        tmp_path,
        "generate",
        "--config",
        config,
        "--source",
        source,
        "--case-id",
        "x",
        "--output-dir",
        tmp_path,
        "--no-mlflow",
        fragments=("case 'x' adjudication report", "is the same file as case 'x' source"),
    )


def test_generate_output_folder_that_is_a_file_is_refused(capsys, tmp_path):
    config = write_text(tmp_path / "gen.yaml", GENERATION)
    source = write_text(tmp_path / "src" / "x.txt", "total 1\n")
    not_a_folder = write_text(tmp_path / "out", "x")
    refused(
        capsys,
        tmp_path,
        "generate",
        "--config",
        config,
        "--source",
        source,
        "--output-dir",
        not_a_folder,
        "--no-mlflow",
        fragments=(f"--output-dir {not_a_folder} is a file (expected a folder)",),
    )


# ------------------------------------------------------------- folders this user cannot use


def test_an_unwritable_output_folder_is_refused(capsys, tmp_path, documents, monkeypatch):
    # As root every folder is writable, so the permission check itself is replaced
    # here; test_unreadable_folders_as_a_user below runs the real thing.
    expected, predicted = documents
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setattr(paths, "_accessible", lambda path, mode: Path(path) != locked)
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", locked / "r.json"),
        fragments=(f"--output {locked / 'r.json'}: this user may not write in {locked}",),
    )
    refused(
        capsys,
        tmp_path,
        *fields(expected, predicted, "--output", "r.json", "--judge-cache", locked),
        fragments=(f"--judge-cache {locked}: this user may not read and write the folder",),
    )


def _as_a_user() -> list[str] | None:
    """A command prefix that drops root's power to ignore file permissions, or ``[]``
    when this is not root; ``None`` when neither is possible."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--inh-caps=-all", "--bounding-set=-all"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or _as_a_user() is None, reason="needs setpriv")
def test_unreadable_folders_as_a_user(tmp_path, documents):
    expected, predicted = documents
    locked = tmp_path / "locked"
    locked.mkdir()
    pipeline = write_text(
        tmp_path / "p.yaml",
        "pipeline_id: p\nstages:\n  - {stage_id: s, prediction: {a: 1}, references: "
        "[{value: {a: 1}, id: t, authority: ground_truth}]}\n",
    )
    prefix = _as_a_user()
    assert prefix is not None
    env = {**os.environ, "DOCEVALS_NO_MLFLOW": "1"}
    commands = [
        (
            ["fields", "--expected", expected, "--predicted", predicted, "--output"],
            locked / "sub" / "r.json",
            "this user may not look inside a folder on the way",
        ),
        (["evaluate-pipeline", pipeline, "--output", tmp_path / "r.json", "--checkpoint-dir"],
         locked, "this user may not read and write the folder"),
    ]  # fmt: skip
    locked.chmod(0)
    try:
        before = tree(tmp_path)
        for argv, path, fragment in commands:
            completed = subprocess.run(
                [*prefix, sys.executable, "-m", "docevals_mlflow", *map(str, argv), str(path)],
                capture_output=True,
                text=True,
                env=env,
                check=False,
                timeout=120,
            )
            assert completed.returncode == 2, completed.stderr
            assert_one_line_error(completed.stderr, str(path), fragment)
        assert tree(tmp_path) == before
    finally:
        locked.chmod(0o755)


# ------------------------------------------------------------------------ check_paths


def test_check_paths_accepts_distinct_paths_and_missing_inputs(tmp_path):
    data = write_json(tmp_path / "in.json", {})
    check_paths(
        [Input("--in", data), Input("--gone", tmp_path / "gone.json"), None],
        [Output("--out", tmp_path / "out.json"), Output("--dir", tmp_path / "d", "owned"), None],
    )


def test_check_paths_refuses_an_owned_folder_inside_another(tmp_path):
    with pytest.raises(InputError, match=r"--inner .* is inside --outer"):
        check_paths(
            [],
            [
                Output("--outer", tmp_path / "a", "owned"),
                Output("--inner", tmp_path / "a" / "b", "owned"),
            ],
        )


def test_check_paths_allows_named_files_in_a_folder_output(tmp_path):
    # A folder output (not owned) receives named files, each checked on its own.
    source = write_json(tmp_path / "out" / "source.json", {})
    check_paths(
        [Input("--source", source)],
        [Output("--output-dir", tmp_path / "out", "folder"), Output("report", source.parent / "r")],
    )


def test_check_paths_refuses_a_symlink_loop(tmp_path):
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(InputError, match=r"--out .*loop"):
        check_paths([], [Output("--out", tmp_path / "loop" / "r.json")])


def test_compare_checks_every_file_it_may_write():
    # --output-dir files are checked before any run is loaded, by name: the names
    # must cover every table a comparison writes.
    import numpy as np

    from docevals_mlflow.cli.compare import OUTPUT_FILES
    from docevals_mlflow.compare import compare_runs
    from tests.compare.synthetic import field_run, simulate_cells

    cells = simulate_cells(np.random.default_rng(1), 20, [0.1] * 5)
    comparison = compare_runs(
        field_run("a", cells), field_run("b", cells), field_run("c", cells), resamples=100
    )
    written = {"comparison.md", "comparison.html", *(f"{n}.csv" for n in comparison.tables())}
    assert written <= set(OUTPUT_FILES)
