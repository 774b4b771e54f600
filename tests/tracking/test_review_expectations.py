"""Reviewers' answers and final values as MLflow Expectations on a generation run's
document traces (``docevals review log``), and reviewer agreement as run metrics."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main
from docevals_mlflow.groundtruth.review import write_ground_truth_review
from docevals_mlflow.groundtruth.review_layers import load_many, record_answer
from docevals_mlflow.tracking import review_expectations
from docevals_mlflow.tracking.generation_runs import log_generation
from docevals_mlflow.tracking.generation_traces import GENERATION_TAG, generation_traces
from docevals_mlflow.tracking.review_expectations import (
    ABSENT,
    FINAL_SOURCE,
    REVIEW_KEY,
    log_review_expectations,
)
from docevals_mlflow.tracking.trace_policy import parse_trace_policy
from tests.groundtruth.approval_fakes import generation_report

T0 = dt.datetime(2026, 3, 1, 9, 30, tzinfo=dt.UTC)


def at(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


@pytest.fixture
def generated(mlflow_store: str, tmp_path: Path) -> tuple[str, list[Path]]:
    """A logged generation run of two cases and their review files."""
    reports = [generation_report("doc-1"), generation_report("doc-2")]
    folder = tmp_path / "reviews"
    folder.mkdir()
    reviews = [
        write_ground_truth_review(report, folder / f"{report.case_id}.review.json")
        for report in reports
    ]
    run = log_generation(reports, review_files=reviews, tracking_uri=mlflow_store)
    return run.run_id, reviews


def answer_both(review: Path, *, bob_amount: str = "12.05") -> None:
    record_answer(review, "alice", "$.currency", "accept", now=at(1))
    record_answer(review, "alice", "$.amount", "set", "12.50", now=at(2))
    record_answer(review, "alice", "$.iban", "absent", now=at(3))
    record_answer(review, "bob", "$.currency", "accept", now=at(4))
    record_answer(review, "bob", "$.amount", "set", bob_amount, now=at(5))
    record_answer(review, "bob", "$.iban", "absent", now=at(6))
    record_answer(review, "bob", "$.account_name", "unreadable", now=at(7))


def expectations(client: MlflowClient, trace_id: str, *, valid_only: bool = True) -> list:
    found = [
        a
        for a in client.get_trace(trace_id).info.assessments
        if a.expectation is not None and a.source.source_type == "HUMAN"
    ]
    return [a for a in found if a.valid is not False] if valid_only else found


def run_traces(client: MlflowClient, run_id: str) -> list:
    experiment = client.get_run(run_id).info.experiment_id
    return list(client.search_traces(run_id=run_id, locations=[experiment]))


def case_traces(client: MlflowClient, run_id: str) -> dict[str, str]:
    traces = run_traces(client, run_id)
    return {t.info.tags["docevals.case.id"]: t.info.trace_id for t in traces}


def test_a_generation_run_logs_one_trace_per_case(generated):
    run_id, _reviews = generated
    client = MlflowClient()
    traces = run_traces(client, run_id)
    assert len(traces) == 2
    trace = next(t for t in traces if t.info.tags["docevals.case.id"] == "doc-1")
    report = generation_report("doc-1")
    assert trace.info.tags[GENERATION_TAG] == report.digest
    assert json.loads(trace.info.request_preview) == {
        "case_id": "doc-1",
        "sources": ["page-001.png"],
    }
    feedback = {a.name: a for a in trace.info.assessments if a.feedback is not None}
    assert feedback["$.currency"].feedback.value == 1.0
    assert feedback["$.currency"].metadata["status"] == "agreed"
    assert feedback["$.amount"].feedback.value == 0.5
    assert feedback["$.amount"].metadata["status"] == "disputed"
    assert feedback["$.amount"].rationale == "conflict"
    assert feedback["panel_agreement"].feedback.value == 0.5
    assert client.get_run(run_id).data.tags["docevals.traces"] == "2"


def test_review_log_writes_each_answer_and_the_final_value(generated, mlflow_store):
    run_id, reviews = generated
    answer_both(reviews[0])
    record_answer(
        reviews[0], "carol", "$.amount", "set", "12.50", role="adjudicator", reason="page 1"
    )
    logged = log_review_expectations(load_many(reviews), tracking_uri=mlflow_store)
    assert (logged.matched, logged.unmatched) == (2, [])
    client = MlflowClient()
    trace_id = case_traces(client, run_id)["doc-1"]
    found = {(a.name, a.source.source_id): a for a in expectations(client, trace_id)}
    assert set(found) == {
        ("$.currency", "alice"),
        ("$.amount", "alice"),
        ("$.iban", "alice"),
        ("$.currency", "bob"),
        ("$.amount", "bob"),
        ("$.iban", "bob"),
        ("$.account_name", "bob"),
        ("$.amount", "carol"),
        ("$.currency", FINAL_SOURCE),
        ("$.amount", FINAL_SOURCE),
        ("$.iban", FINAL_SOURCE),
        ("$.account_name", FINAL_SOURCE),
    }
    for assessment in found.values():
        assert assessment.source.source_type == "HUMAN"
    alice = found["$.amount", "alice"]
    assert alice.expectation.value == "12.50"
    assert alice.metadata["role"] == "reviewer"
    assert alice.metadata["action"] == "set"
    assert alice.metadata["at"] == "2026-03-01T09:32:00.000000Z"
    assert json.loads(alice.metadata["previous"]) is None  # a disputed field: no proposal
    assert found["$.currency", "bob"].expectation.value == "EUR"
    assert found["$.iban", "bob"].expectation.value == ABSENT
    assert found["$.account_name", "bob"].expectation.value == ABSENT
    assert found["$.account_name", "bob"].metadata["action"] == "unreadable"
    assert found["$.amount", "carol"].metadata["role"] == "adjudicator"
    final = found["$.amount", FINAL_SOURCE]
    assert final.expectation.value == "12.50"
    assert final.metadata["status"] == "adjudicated"
    assert final.metadata["reason"] == "page 1"
    assert found["$.currency", FINAL_SOURCE].metadata["status"] == "agreed"
    assert found["$.iban", FINAL_SOURCE].expectation.value == ABSENT
    assert found["$.iban", FINAL_SOURCE].metadata["action"] == "absent"
    # The other case was not answered: nothing on its trace.
    assert expectations(client, case_traces(client, run_id)["doc-2"]) == []


def test_logging_again_adds_only_what_is_new(generated, mlflow_store):
    run_id, reviews = generated
    answer_both(reviews[0])
    first = log_review_expectations(load_many(reviews), tracking_uri=mlflow_store)
    assert (first.added, first.overridden, first.unchanged) == (10, 0, 0)
    again = log_review_expectations(load_many(reviews), tracking_uri=mlflow_store)
    assert (again.added, again.overridden, again.unchanged) == (0, 0, 10)
    # bob changes his mind: his new answer overrides the old one, and the field is
    # now agreed, so its final value is new too.
    record_answer(reviews[0], "bob", "$.amount", "set", "12.50", now=at(9))
    third = log_review_expectations(load_many(reviews), tracking_uri=mlflow_store)
    assert (third.added, third.overridden, third.unchanged) == (2, 1, 9)
    client = MlflowClient()
    trace_id = case_traces(client, run_id)["doc-1"]
    everything = expectations(client, trace_id, valid_only=False)
    bob = [a for a in everything if (a.name, a.source.source_id) == ("$.amount", "bob")]
    assert len(bob) == 2
    old, new = sorted(bob, key=lambda a: a.metadata["at"])
    assert old.valid is False
    assert new.valid is not False
    assert new.overrides == old.assessment_id
    assert new.expectation.value == "12.50"
    assert json.loads(new.metadata["previous"]) == "12.05"
    keys = [a.metadata[REVIEW_KEY] for a in everything]
    assert len(keys) == len(set(keys))  # never a duplicate


def test_the_generic_path_writes_what_the_sql_path_writes(generated, mlflow_store, monkeypatch):
    run_id, reviews = generated
    answer_both(reviews[0])
    with monkeypatch.context() as patched:
        patched.setattr(review_expectations, "_is_sql", lambda store: False)
        first = log_review_expectations(
            load_many(reviews), tracking_uri=mlflow_store, run_id=run_id
        )
    assert (first.matched, first.added) == (2, 10)
    record_answer(reviews[0], "bob", "$.amount", "set", "12.50", now=at(9))
    # The SQL path reads what the generic one wrote.
    second = log_review_expectations(load_many(reviews), tracking_uri=mlflow_store)
    assert (second.added, second.overridden, second.unchanged) == (2, 1, 9)
    client = MlflowClient()
    valid = expectations(client, case_traces(client, run_id)["doc-1"])
    assert len(valid) == 11
    assert {a.source.source_id for a in valid} == {"alice", "bob", FINAL_SOURCE}


def test_a_review_without_a_traced_generation_is_reported(mlflow_store, tmp_path):
    review = write_ground_truth_review(generation_report("lone"), tmp_path / "lone.review.json")
    answer_both(review)
    logged = log_review_expectations(load_many([review]), tracking_uri=mlflow_store)
    assert (logged.matched, logged.added, logged.unmatched) == (0, 0, [str(review)])


def test_cli_review_log_logs_answers_and_agreement_metrics(generated, mlflow_store, capsys):
    run_id, reviews = generated
    answer_both(reviews[0])
    answer_both(reviews[1], bob_amount="12.50")
    folder = reviews[0].parent
    assert main(["review", "log", str(folder), "--tracking-uri", mlflow_store]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 review file(s) matched" in out
    assert "21 expectation(s) added" in out
    metrics = MlflowClient().get_run(run_id).data.metrics
    assert metrics["Summary/reviewed_documents"] == 2
    # 6 units (3 fields x 2 documents), all agreed but doc-1's amount: 5/6.
    assert metrics["Summary/reviewer_agreement"] == pytest.approx(5 / 6)
    assert "Summary/reviewer_kappa" in metrics
    assert metrics["agreement/overall/units"] == 6
    assert metrics["agreement/amount/observed_agreement"] == pytest.approx(0.5)
    assert metrics["agreement/currency/observed_agreement"] == 1.0
    history = MlflowClient().get_metric_history(run_id, "Summary/reviewer_agreement")
    assert main(["review", "log", str(folder), "--tracking-uri", mlflow_store]) == 0
    out = capsys.readouterr().out
    assert "0 expectation(s) added" in out
    assert "0 agreement metric(s) logged" in out
    assert MlflowClient().get_metric_history(run_id, "Summary/reviewer_agreement") == history


def test_the_traces_policy_picks_the_documents_that_need_review_first():
    clean = generation_report("clean").model_copy(update={"disagreements": []})
    disputed = generation_report("disputed")
    assert not clean.requires_human_review
    reports = [clean, disputed]
    assert [t.inputs["case_id"] for t in generation_traces(reports, parse_trace_policy(1))] == [
        "disputed"
    ]
    assert generation_traces(reports, parse_trace_policy("none")) == []
    assert len(generation_traces(reports, parse_trace_policy("all"))) == 2
