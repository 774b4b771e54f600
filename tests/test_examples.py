"""The examples run as their docs say, offline, on the documents they generate.

Each example runs in a subprocess (as a user runs it) on a small document count, in
a temporary folder, against a copy of an already migrated SQLite store (a new store
would spend seconds on MLflow's migrations per example).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow import (
    EvaluationReport,
    PipelineEvaluationReport,
    SplitReport,
    SuiteReport,
    load_approved_ground_truth,
    load_report,
)

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
QUICKSTART = EXAMPLES / "quickstart.py"

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


# ------------------------------------------------------------------ the other examples


class Ran:
    """One example's run: its output, folder and tracking store."""

    def __init__(self, completed: subprocess.CompletedProcess[str], root: Path, uri: str):
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.lines = completed.stdout.splitlines()
        self.root = root
        self.uri = uri

    def runs(self, experiment: str) -> dict[str, Any]:
        """The finished runs of an experiment, by run name."""
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=self.uri)
        found = client.get_experiment_by_name(experiment)
        assert found is not None, experiment
        return {
            run.info.run_name: run
            for run in client.search_runs([found.experiment_id])
            if run.info.status == "FINISHED"
        }


@pytest.fixture
def run_example(_mlflow_template: Path, tmp_path: Path) -> Callable[..., Ran]:
    """Run ``examples/<name>.py`` with arguments; returns a :class:`Ran`."""

    def run(name: str, *args: str) -> Ran:
        store = tmp_path / "mlflow.db"
        shutil.copy(_mlflow_template, store)
        uri = f"sqlite:///{store}"
        root = tmp_path / "out"
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("DOCEVALS_NO_MLFLOW", "MLFLOW_TRACKING_URI")
        }
        completed = subprocess.run(
            [
                sys.executable,
                str(EXAMPLES / f"{name}.py"),
                "--output-dir",
                str(root),
                "--tracking-uri",
                uri,
                *args,
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
        assert "Traceback" not in completed.stderr, completed.stderr
        assert completed.stdout.splitlines()[0] == f"working in {root}"
        # Everything stays in the example's folder or next to the store (where a
        # SQLite store keeps its artifacts), never in the working directory.
        assert sorted(path.name for path in tmp_path.iterdir()) == ["mlflow.db", "mlruns", "out"]
        return Ran(completed, root, uri)

    return run


def test_prompt_versions_compares_two_logged_runs(run_example: Callable[..., Ran]) -> None:
    ran = run_example("prompt_versions", "--documents", "8")
    root = ran.root
    assert len(list((root / "invoices" / "documents").glob("invoice-*.pdf"))) == 8
    for version in ("prompt-v1", "prompt-v2"):
        report = json.loads((root / "reports" / f"{version}.json").read_text(encoding="utf-8"))
        assert report["overall"]["documents"] == 8
    v1 = json.loads((root / "reports" / "prompt-v1.json").read_text(encoding="utf-8"))
    v2 = json.loads((root / "reports" / "prompt-v2.json").read_text(encoding="utf-8"))
    assert v2["overall"]["metrics"]["f1"] > v1["overall"]["metrics"]["f1"]
    assert (root / "comparison" / "comparison.md").is_file()

    improvement = [line for line in ran.lines if line.startswith("prompt-v2 (")]
    assert len(improvement) == 1
    assert "8 matched documents" in improvement[0]
    assert improvement[0].endswith("▲ improvement")
    assert "exit code 1: a significant regression" in ran.lines
    assert "docevals: regression: prompt-v1: overall all documents" in ran.stderr
    assert any(
        re.fullmatch(r"\d+ tests, [1-9]\d* significant after Holm's correction:", line)
        for line in ran.lines
    )

    runs = ran.runs("prompt-versions")
    assert {"prompt-v1", "prompt-v2"} <= set(runs)
    kinds = sorted(run.data.tags["docevals.kind"] for run in runs.values())
    # The reversed comparison ran with --no-mlflow: one comparison run only.
    assert kinds == ["comparison", "evaluation", "evaluation"]
    # Each run names the prompt that made its predictions; the comparison shows the diff.
    uris = {name: runs[name].data.params["prompt.uri"] for name in ("prompt-v1", "prompt-v2")}
    assert uris == {
        "prompt-v1": "prompts:/invoice-extract/1",
        "prompt-v2": "prompts:/invoice-extract/2",
    }
    assert runs["prompt-v2"].data.params["prompt.version"] == "v2"
    comparison = (root / "comparison" / "comparison.md").read_text(encoding="utf-8")
    assert "specs/prompt.txt" in comparison


def test_pipeline_attribution_charges_each_failure_to_its_stage(
    run_example: Callable[..., Ran],
) -> None:
    ran = run_example("pipeline_attribution", "--documents", "4")
    expected = {
        "invoice-001": [("pass", "none")] * 3,
        # A misread price: extraction is at fault, the routing it misled is not alone.
        "invoice-002": [
            ("fail", "current_stage"),
            ("pass", "upstream"),
            ("fail", "upstream_or_combined"),
        ],
        # The calculator's page-break bug (six items): its own fault.
        "invoice-003": [("pass", "none"), ("fail", "current_stage"), ("pass", "upstream")],
        "invoice-004": [("pass", "none")] * 3,
    }
    for invoice, stages in expected.items():
        report = load_report(ran.root / "reports" / "pipelines" / f"{invoice}.json")
        assert isinstance(report, PipelineEvaluationReport)
        assert [s.stage_id for s in report.stage_reports] == ["extract", "calculate", "classify"]
        assert [(s.verdict, s.failure_context) for s in report.stage_reports] == stages, invoice
        cells = "".join(f"{f'{v} ({c})':<29}" for v, c in stages).rstrip()
        assert f"{invoice:<12} {cells}" in ran.lines
    suite = load_report(ran.root / "reports" / "suite.json")
    assert isinstance(suite, SuiteReport)
    assert suite.case_count == 4

    metrics = ran.runs("pipeline-attribution")["invoice-pipeline"].data.metrics
    assert metrics["stage/extract/failure/current_stage"] == 0.25
    assert metrics["stage/calculate/failure/current_stage"] == 0.25
    assert metrics["stage/calculate/failure/upstream"] == 0.25
    assert metrics["stage/classify/failure/upstream"] == 0.25
    assert metrics["stage/classify/failure/upstream_or_combined"] == 0.25
    assert ["stage/classify/failure/upstream_or_combined", "0.250"] in [
        line.split() for line in ran.lines
    ]


def test_judge_panel_votes_against_the_lenient_judge(run_example: Callable[..., Ran]) -> None:
    ran = run_example("judge_panel", "--documents", "3")
    careful, second, lenient = (
        f"openai-compatible:judge-{name}" for name in ("careful", "second", "lenient")
    )
    assert (ran.root / "statements" / "statement-001.png").read_bytes()[:4] == b"\x89PNG"
    assert (
        f"statement-001: panel pass (group votes: {careful}=pass, {second}=pass, {lenient}=pass)"
        in ran.lines
    )
    for statement in ("statement-002", "statement-003"):
        assert (
            f"{statement}: panel fail (group votes: {careful}=fail, {second}=fail, {lenient}=pass)"
            in ran.lines
        )
        report = load_report(ran.root / "reports" / f"{statement}.json")
        assert isinstance(report, EvaluationReport)
        assert report.verdict == "fail"
        [panel] = [m for m in report.metric_results if m.name == "statement_panel"]
        assert panel.verdict == "fail"
        assert panel.requires_human_review
        assert [item["reason"] for item in panel.details["review_items"]] == ["minority dissent"]
    runs = ran.runs("judge-panel")
    assert sorted(runs) == ["statement-001", "statement-002", "statement-003"]
    params = runs["statement-001"].data.params
    assert params["judge.vote_rule"] == "majority"
    assert params["judge.panel"].startswith(
        "careful-cold=openai-compatible:judge-careful@0.0, careful-warm="
    )
    # Four variants, one request each: the two samples of one model are two calls.
    assert runs["statement-002"].data.metrics["usage/requests"] == 4
    assert runs["statement-002"].data.metrics["panel/statement_panel/human_review_rate"] == 1


def test_ground_truth_lifecycle_from_pdfs_to_an_evaluation(run_example: Callable[..., Ran]) -> None:
    ran = run_example("ground_truth_lifecycle", "--documents", "3")
    root = ran.root
    assert "generated 3 case(s): 2 need review, 1 fully agreed; 9 request(s)" in ran.stdout
    assert "invoices@1" in ran.lines
    assert "no item pending; approve with:" in ran.stdout
    # The tampered copy is refused, with the reason on stderr.
    assert "exit code 2: refused (the reason is on stderr)" in ran.lines
    assert "tampered.json: content digest mismatch" in ran.stderr
    public_key = root / "keys" / "reviewer.pub"
    for invoice in ("invoice-001", "invoice-002", "invoice-003"):
        approved = load_approved_ground_truth(root / "approved" / f"{invoice}.json", public_key)
        assert approved.verification is not None
        assert approved.verification.trusted
        assert approved.record.approved_by == "reviewer@example.com"
        if invoice == "invoice-002":
            # The reviewer's decision on the disputed total is what was approved.
            assert {"path": "$.total", "expected": 1894.41} in approved.rows
            assert [r.path for r in approved.record.resolutions] == ["$.total"]
    verdicts = {}
    for invoice in ("invoice-001", "invoice-002", "invoice-003"):
        report = load_report(root / "reports" / f"{invoice}.json")
        assert isinstance(report, EvaluationReport)
        verdicts[invoice] = report.verdict
    # The extractor took the customer for the vendor on invoice-002 only.
    assert verdicts == {"invoice-001": "pass", "invoice-002": "fail", "invoice-003": "pass"}
    runs = ran.runs("ground-truth-lifecycle")
    evaluation = runs["evaluate invoice-002"].data.params
    assert (evaluation["dataset.name"], evaluation["dataset.version"]) == ("invoices", "1")
    approval = ran.runs("docevals-ground-truth")["invoices v1"]
    assert approval.data.params["dataset.digest"] == evaluation["dataset.digest"]


def test_packet_split_scores_each_kind_of_mistake(run_example: Callable[..., Ran]) -> None:
    ran = run_example("packet_split", "--documents", "4")
    report = SplitReport.load(ran.root / "reports" / "split.json")
    assert report.packet_count == 4
    # 19 pages: the merged cover letter and the cut-off statement page are wrong.
    assert (report.page_level_accuracy.correct_pages, report.page_level_accuracy.total_pages) == (
        17,
        19,
    )
    # 15 sections: the merge costs two, the cut one, the reordering one more with order.
    assert report.split_accuracy_without_order.correct_sections == 12
    assert report.split_accuracy_with_order.correct_sections == 11
    assert report.split_accuracy_with_order.total_sections == 15
    by_packet = {packet.id: packet.boundaries for packet in report.packets}
    assert (by_packet["packet-002"].missed, by_packet["packet-002"].spurious) == ([1], [])
    assert (by_packet["packet-003"].missed, by_packet["packet-003"].spurious) == ([], [3])
    assert by_packet["packet-004"].missed == by_packet["packet-004"].spurious == []
    for name in ("split.md", "split.html"):
        assert (ran.root / "reports" / name).is_file()
    assert (ran.root / "packets" / "packet-001.pdf").read_bytes()[:5] == b"%PDF-"
    metrics = ran.runs("packet-split")["splitter-v1"].data.metrics
    assert metrics["Summary/page_accuracy"] == pytest.approx(17 / 19)
    assert metrics["Summary/accuracy_with_order"] == pytest.approx(11 / 15)
