"""The quickstart example runs as the README says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from docevals_mlflow import PipelineEvaluationReport, SuiteReport, load_report

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart.py"

STAGE_LINES = [
    "  extract    fail   failure context: current_stage",
    "  calculate  pass   failure context: upstream",
    "  classify   fail   failure context: upstream_or_combined",
]
REPORT_FILES = [
    "pipeline-report.json",
    "pipeline-report.md",
    "suite-report.json",
    "suite-report.md",
]


def run_quickstart(cwd: Path, output: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(QUICKSTART), str(output)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def readme_output_block() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```text\n(.*?)```", readme, flags=re.DOTALL)
    [block] = [b for b in blocks if "combined verdict" in b]
    return block.splitlines()


def test_readme_shows_the_stage_lines() -> None:
    assert readme_output_block() == [
        "pipeline invoice-0042: combined verdict fail",
        *STAGE_LINES,
    ]


def test_quickstart_runs_and_reuses_checkpoints(tmp_path: Path) -> None:
    output = tmp_path / "out"
    first = run_quickstart(tmp_path, output)
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""
    assert first.stdout.splitlines() == [
        *readme_output_block(),
        f"reports written to {output}/ (pipeline-report.md, suite-report.md)",
    ]
    for name in REPORT_FILES:
        assert (output / name).is_file(), name
    report = load_report(output / "pipeline-report.json")
    assert isinstance(report, PipelineEvaluationReport)
    assert [(s.stage_id, s.verdict, s.failure_context) for s in report.stage_reports] == [
        ("extract", "fail", "current_stage"),
        ("calculate", "pass", "upstream"),
        ("classify", "fail", "upstream_or_combined"),
    ]
    assert report.checkpoint is not None
    assert report.checkpoint.computed == ["extract", "calculate", "classify"]
    assert report.checkpoint.reused == []
    suite = load_report(output / "suite-report.json")
    assert isinstance(suite, SuiteReport)
    assert (suite.suite_id, suite.case_count, suite.stage_count) == ("quickstart", 1, 3)

    second = run_quickstart(tmp_path, output)
    assert second.returncode == 0, second.stderr
    assert second.stderr == ""
    assert second.stdout == first.stdout
    again = load_report(output / "pipeline-report.json")
    assert isinstance(again, PipelineEvaluationReport)
    assert again.checkpoint is not None
    assert again.checkpoint.reused == ["extract", "calculate", "classify"]
    assert again.checkpoint.computed == []
    assert again.checkpoint.invalidated == {}
    assert [s.from_checkpoint for s in again.stage_reports] == [True, True, True]


def test_quickstart_default_output_folder(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(QUICKSTART)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[1:4] == STAGE_LINES
    assert (tmp_path / "docevals-output" / "pipeline-report.md").is_file()
