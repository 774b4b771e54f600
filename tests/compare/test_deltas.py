"""What moved: metric deltas, judge members, flips with the votes that changed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from docevals_mlflow.compare import RunSnapshot
from docevals_mlflow.compare.align import align_cases, align_documents
from docevals_mlflow.compare.deltas import (
    case_flips,
    document_flips,
    judge_deltas,
    metric_deltas,
    verdict_kappa,
)
from tests.compare.synthetic import case_run, field_run


def test_metric_deltas_name_their_subjects():
    index = {"field": {"Transactions.Amount": "$.Transactions[].Amount"}}
    first = RunSnapshot(
        run_id="a",
        metrics={"overall/f1": 0.8, "field/Transactions.Amount/f1": 0.5, "usage/cost_usd": 1.0},
        metrics_index=index,
    )
    second = RunSnapshot(
        run_id="b",
        metrics={"overall/f1": 0.9, "field/Transactions.Amount/f1": 0.75, "stage/x/pass_rate": 1.0},
        metrics_index=index,
    )
    frame = metric_deltas(first, second)
    assert frame["key"].tolist() == [
        "overall/f1",
        "field/Transactions.Amount/f1",
        "stage/x/pass_rate",
        "usage/cost_usd",
    ]
    row = frame.set_index("key").loc["field/Transactions.Amount/f1"]
    assert (row["scope"], row["subject"], row["statistic"]) == (
        "field",
        "$.Transactions[].Amount",
        "f1",
    )
    assert row["delta"] == pytest.approx(0.25)
    only_one = frame.set_index("key").loc["usage/cost_usd"]
    assert math.isnan(only_one["candidate"])
    assert math.isnan(only_one["delta"])


def test_case_flips_name_the_votes_that_changed():
    verdicts_a = {("c1", "extract"): "pass", ("c2", "extract"): "fail", ("c3", "extract"): "pass"}
    verdicts_b = {("c1", "extract"): "fail", ("c2", "extract"): "pass", ("c3", "extract"): "pass"}
    votes_a = {
        ("c1", "extract"): {"openai-a": "pass", "anthropic-b": "pass", "local-c": "fail"},
        ("c2", "extract"): {"openai-a": "fail", "anthropic-b": "fail", "local-c": "pass"},
        ("c3", "extract"): {"openai-a": "pass", "anthropic-b": "pass", "local-c": "pass"},
    }
    votes_b = {
        ("c1", "extract"): {"openai-a": "fail", "anthropic-b": "pass", "local-c": "fail"},
        ("c2", "extract"): {"openai-a": "pass", "anthropic-b": "pass", "local-c": "pass"},
        ("c3", "extract"): {"openai-a": "pass", "anthropic-b": "pass", "local-c": None},
    }
    first = case_run("a", verdicts_a, votes=votes_a)
    second = case_run("b", verdicts_b, votes=votes_b)
    aligned = align_cases(first, second)
    assert aligned is not None
    flips = case_flips(aligned, first, second).set_index("id")
    assert flips.loc["c1", "change"] == "broken"
    assert flips.loc["c1", "why"] == "panel/openai-a: pass→fail"
    assert flips.loc["c2", "change"] == "fixed"
    assert flips.loc["c2", "why"] == "panel/openai-a: fail→pass; panel/anthropic-b: fail→pass"
    assert "c3" not in flips.index  # same verdict, even though one judge did not answer

    judges = judge_deltas(first, second).set_index("member")
    assert judges.loc["openai-a", "baseline_pass_rate"] == pytest.approx(2 / 3)
    assert judges.loc["openai-a", "candidate_pass_rate"] == pytest.approx(2 / 3)
    assert judges.loc["openai-a", "votes_changed"] == 2
    assert judges.loc["anthropic-b", "votes_changed"] == 1
    # local-c: votes fail, pass, pass -> fail, pass, (no answer): 2 of 3 paired votes agree.
    assert judges.loc["local-c", "candidate_pass_rate"] == pytest.approx(1 / 2)
    assert judges.loc["local-c", "votes_matched"] == 3
    assert judges.loc["openai-a", "baseline_model"] == "openai:openai-a-model"


def test_judge_pass_rates_from_metrics_when_no_votes_were_kept():
    first = RunSnapshot(run_id="a", metrics={"judge/a/pass_rate": 0.5})
    second = RunSnapshot(run_id="b", metrics={"judge/a/pass_rate": 0.75})
    frame = judge_deltas(first, second)
    assert frame["member"].tolist() == ["a"]
    assert frame["delta"].tolist() == [pytest.approx(0.25)]


def test_document_flips_list_the_fields_that_moved():
    first = np.zeros((3, 2, 5), dtype=np.int64)
    first[..., 0] = 1
    second = first.copy()
    first[0, 1] = [0, 0, 1, 0, 0]  # doc 0 wrong on the second field ...
    second[2, 0] = [0, 0, 0, 1, 0]  # ... fixed, while doc 2 loses its first field
    aligned = align_documents(
        field_run("a", first, fields=["$.x", "$.y"]), field_run("b", second, fields=["$.x", "$.y"])
    )
    assert aligned is not None
    flips = document_flips(aligned).set_index("id")
    assert flips.loc["doc-0000", "change"] == "fixed"
    assert flips.loc["doc-0000", "baseline"] == "1 error"
    assert flips.loc["doc-0000", "why"] == "$.y errors 1→0"
    assert flips.loc["doc-0002", "change"] == "broken"
    assert flips.loc["doc-0002", "why"] == "$.x errors 0→1"
    assert len(flips) == 2


def test_verdict_kappa():
    assert verdict_kappa(["pass", "fail"], ["pass", "fail"]) == pytest.approx(1.0)
    assert math.isnan(verdict_kappa(["pass", "pass"], ["pass", "pass"]))
    assert math.isnan(verdict_kappa([], []))
