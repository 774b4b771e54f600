"""References to stages, operations, pipelines and cases that do not exist exit 2 with
one line naming the file, the record and the name, before anything is evaluated or
written: metrics configured for a missing stage, reruns and actions for stages that
are not there, human labels for cases no report holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.file_tree import tree
from tests.helpers import assert_one_line_error, run, write_json, write_text
from tests.judges.test_calibration import judge_labels, judge_reports, write_labels
from tests.test_cli_calibrate import write_reports

PIPELINE = """\
pipeline_id: invoice-1
{metrics}
stages:
  - stage_id: extract
    operation: parse
    prediction: {{total: 2}}
    references:
      - {{value: {{total: 3}}, id: truth, authority: ground_truth}}
  - stage_id: total
    operation: sum_total
    depends_on: [extract]
    prediction: {{total: 2}}
    references:
      - {{value: {{total: 3}}, id: truth, authority: ground_truth}}
"""


def refused(
    capsys: pytest.CaptureFixture[str], root: Path, *argv: str | Path, fragments: tuple[str, ...]
) -> None:
    before = tree(root)
    code, out, err = run(capsys, *argv)
    assert code == 2, out + err
    assert_one_line_error(err, *fragments)
    assert tree(root) == before


def pipeline(tmp_path: Path, metrics: str = "") -> Path:
    return write_text(tmp_path / "pipeline.yaml", PIPELINE.format(metrics=metrics))


def test_metrics_for_a_stage_that_does_not_exist(capsys, tmp_path):
    config = pipeline(tmp_path, "metrics:\n  stages:\n    extrct: [{type: exact}]")
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "r.json",
        fragments=(
            f"{config}, at metrics.stages.extrct: metrics are configured for stage 'extrct', "
            "which no pipeline has (expected one of the stages: 'extract', 'total')",
        ),
    )


def test_metrics_for_an_operation_that_does_not_exist(capsys, tmp_path):
    config = pipeline(tmp_path, "metrics:\n  operations:\n    sum_totals: [{type: exact}]")
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "r.json",
        fragments=(
            f"{config}, at metrics.operations.sum_totals:",
            "operation 'sum_totals', which no pipeline has",
            "'parse', 'sum_total'",
        ),
    )


def test_a_dependency_on_a_stage_that_does_not_exist(capsys, tmp_path):
    config = write_text(
        tmp_path / "pipeline.yaml",
        PIPELINE.format(metrics="").replace("depends_on: [extract]", "depends_on: [extrct]"),
    )
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "r.json",
        fragments=(str(config), "unknown dependency 'extrct'"),
    )


@pytest.mark.parametrize(
    ("rerun", "fragment"),
    [
        (
            {"pipeline_id": "invoice-1", "stage_id": "totl", "prediction": {"total": 3}},
            "recorded rerun for stage 'totl', which pipeline 'invoice-1' does not have "
            "(expected one of its stages: 'extract', 'total')",
        ),
        (
            {"pipeline_id": "invoice-9", "stage_id": "total", "prediction": {"total": 3}},
            "recorded rerun for pipeline 'invoice-9', which is not evaluated",
        ),
    ],
)
def test_reruns_for_stages_that_do_not_exist(capsys, tmp_path, rerun, fragment):
    config = pipeline(tmp_path)
    reruns = write_json(
        tmp_path / "reruns.json",
        [{"pipeline_id": "invoice-1", "stage_id": "total", "prediction": {"total": 3}}, rerun],
    )
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "r.json",
        "--reruns",
        reruns,
        fragments=(f"{reruns}, record rerun 2: {fragment}",),
    )


def test_an_action_for_a_stage_that_does_not_exist(capsys, tmp_path):
    config = pipeline(tmp_path)
    refused(
        capsys,
        tmp_path,
        "evaluate-pipeline",
        config,
        "--output",
        tmp_path / "r.json",
        "--action",
        "totl=json:loads",
        fragments=(
            "action 'totl' names neither a stage nor an operation of the pipelines "
            "(expected a stage id or an operation: 'extract', 'parse', 'sum_total', 'total')",
        ),
    )


def test_actions_and_reruns_that_exist_are_used(capsys, tmp_path):
    config = pipeline(tmp_path)
    reruns = write_json(
        tmp_path / "reruns.json",
        [{"pipeline_id": "invoice-1", "stage_id": "total", "prediction": {"total": 3}}],
    )
    code, out, err = run(
        capsys, "evaluate-pipeline", config, "--output", tmp_path / "r.json",
        "--reruns", reruns, "--action", "sum_total=json:dumps",
    )  # fmt: skip
    assert code == 1, err  # the pipeline fails; the rerun says why
    assert "total=fail/caused_by_upstream" in out


# ----------------------------------------------------------------------- calibration


@pytest.fixture
def reports(tmp_path: Path) -> list[str]:
    return write_reports(tmp_path, judge_reports())


def test_a_label_for_a_case_no_report_holds(capsys, tmp_path, reports):
    labels = write_labels(
        tmp_path / "labels.jsonl",
        [*judge_labels(extra=False), *judge_labels()[-2:-1]],  # the last adds case c99
    )
    position = len(judge_labels(extra=False)) + 1
    refused(
        capsys,
        tmp_path,
        "calibrate",
        *reports,
        "--labels",
        labels,
        "--output",
        tmp_path / "c.json",
        fragments=(
            f"{labels}, record label {position}: label for case 'c99', which no report holds",
            "expected a case of the reports: 'c01'",
        ),
    )


def test_a_label_for_a_stage_the_case_does_not_have(capsys, tmp_path, reports):
    labels = write_text(
        tmp_path / "labels.csv", "case_id,stage_id,label\nc01,output,pass\nc02,extract,fail\n"
    )
    refused(
        capsys,
        tmp_path,
        "calibrate",
        *reports,
        "--labels",
        labels,
        "--output",
        tmp_path / "c.json",
        fragments=(
            f"{labels}, record label 2: label for case 'c02' stage 'extract'",
            "expected stage_id one of 'output'",
        ),
    )
