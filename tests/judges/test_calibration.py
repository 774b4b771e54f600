"""Judge calibration: kappa arithmetic, pairing labels with judge answers, label files.

Every expected number below is worked out by hand in the comment next to it, from
the integer form kappa = (n*a - S) / (n*n - S), where n is the number of pairs, a the
agreeing ones and S = sum over categories of (human count x judge count).
"""

from __future__ import annotations

import csv
import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow import EvaluationCase, artifact_from_value
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.errors import ConfigurationError, InputError, InputFileNotFoundError
from docevals_mlflow.evaluation.evaluator import Evaluator
from docevals_mlflow.evaluation.exact import ExactStructuredMetric
from docevals_mlflow.evaluation.llm_metric import LLMJudgeMetric
from docevals_mlflow.evaluation.panel_metric import JudgePanelMetric, JudgeVariant
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.judges.calibration import (
    CalibrationReport,
    HumanLabel,
    calibrate,
    cohen_kappa,
    fleiss_kappa,
    kappa_strength,
    load_human_labels,
)
from docevals_mlflow.judges.testing import ScriptedAdapter, answer
from docevals_mlflow.reports.calibration_markdown import render_calibration_markdown

# What a scripted judge says about the two prediction claims of a case (p00001 is
# $.name, p00002 $.total; the one reference claim r00001 is always "matched").
PASS: Any = "correct"
FAIL: Any = {"p00002": "incorrect"}
UNSURE: Any = "not_verifiable"


def make_case(case_id: str, stage_id: str = "output") -> EvaluationCase:
    return EvaluationCase(
        case_id=case_id,
        stage_id=stage_id,
        prediction={"total": 5, "name": "ACME"},
        references=[artifact_from_value({"total": 5}, authority="ground_truth", artifact_id="gt")],
    )


def scripted_judge(script: dict[str, Any], *, name: str = "judge") -> LLMJudgeMetric:
    def respond(request, repair):
        return answer(request, prediction=script[request.task["case_id"]])

    return LLMJudgeMetric(ScriptedAdapter(respond), name=name)


# Scenario A, one judge on eleven cases. Judge verdicts and human case labels:
#   c01-c04 pass/pass, c05 fail/pass, c06 pass/fail, c07-c09 fail/fail,
#   c10 uncertain/pass, c11 pass/(unlabelled).
JUDGE_SCRIPT = {
    "c01": PASS,
    "c02": PASS,
    "c03": PASS,
    "c04": PASS,
    "c05": FAIL,
    "c06": PASS,
    "c07": FAIL,
    "c08": FAIL,
    "c09": FAIL,
    "c10": UNSURE,
    "c11": PASS,
}
HUMAN_CASES = {
    "c01": "pass",
    "c02": "pass",
    "c03": "pass",
    "c04": "pass",
    "c05": "pass",
    "c06": "fail",
    "c07": "fail",
    "c08": "fail",
    "c09": "fail",
    "c10": "pass",
}
# Claim labels (human / judge on the correct-incorrect scale):
#   c01 p00001 correct/correct, c01 p00002 incorrect/correct,
#   c01 r00001 matched=correct/matched=correct, c05 p00002 incorrect/incorrect,
#   c05 r00001 missing=incorrect/matched=correct, c10 p00001 correct/not_verifiable.
HUMAN_CLAIMS = [
    ("c01", "p00001", "correct"),
    ("c01", "p00002", "incorrect"),
    ("c01", "r00001", "matched"),
    ("c05", "p00002", "incorrect"),
    ("c05", "r00001", "missing"),
    ("c10", "p00001", "correct"),
]


@cache
def _judge_reports() -> tuple[EvaluationReport, ...]:
    # Built once: the reports are immutable inputs, and hypothesis runs many examples.
    cases = [make_case(case_id) for case_id in JUDGE_SCRIPT]
    return tuple(Evaluator([scripted_judge(JUDGE_SCRIPT)]).evaluate_batch(cases))


def judge_reports() -> list[EvaluationReport]:
    """Scenario A's eleven case reports."""
    return list(_judge_reports())


def judge_labels(*, extra: bool = True) -> list[HumanLabel]:
    """Scenario A's labels; ``extra`` adds two that match nothing."""
    labels = [HumanLabel(case_id=case_id, label=label) for case_id, label in HUMAN_CASES.items()]
    labels += [
        HumanLabel(case_id=case_id, claim_id=claim_id, label=label, labeler="ann")
        for case_id, claim_id, label in HUMAN_CLAIMS
    ]
    if extra:
        labels += [
            HumanLabel(case_id="c99", label="pass"),
            HumanLabel(case_id="c01", claim_id="p00009", label="correct"),
        ]
    return labels


def write_labels(path: Path, labels: list[HumanLabel]) -> Path:
    lines = [label.model_dump_json(exclude_none=True) for label in labels]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# Scenario B, a panel of three single-model variants on five cases:
#          a     b     c           panel   human
#   p1   pass  pass  pass          pass    pass
#   p2   fail  fail  fail          fail    fail
#   p3   pass  pass  fail          pass    fail
#   p4   fail  fail  uncertain     fail    fail
#   p5   pass  fail  pass          pass    pass
PANEL_VOTES = {
    "p1": (PASS, PASS, PASS),
    "p2": (FAIL, FAIL, FAIL),
    "p3": (PASS, PASS, FAIL),
    "p4": (FAIL, FAIL, UNSURE),
    "p5": (PASS, FAIL, PASS),
}
PANEL_HUMANS = {"p1": "pass", "p2": "fail", "p3": "fail", "p4": "fail", "p5": "pass"}


def panel_variant(index: int, name: str, votes: dict[str, tuple[Any, ...]]) -> JudgeVariant:
    def respond(request, repair):
        return answer(request, prediction=votes[request.task["case_id"]][index])

    return JudgeVariant(name=name, judge=ScriptedAdapter(respond, provider=name, model=name))


def panel_reports(
    votes: dict[str, tuple[Any, ...]] = PANEL_VOTES, names: str = "abc"
) -> list[EvaluationReport]:
    panel = JudgePanelMetric([panel_variant(i, name, votes) for i, name in enumerate(names)])
    return Evaluator([panel]).evaluate_batch([make_case(case_id) for case_id in votes])


def case_labels(humans: dict[str, str]) -> list[HumanLabel]:
    return [HumanLabel(case_id=case_id, label=label) for case_id, label in humans.items()]


# --------------------------------------------------------------------- kappa arithmetic


def test_cohen_kappa_of_a_textbook_two_by_two_table():
    # Wikipedia's example: 50 proposals, both raters yes 20, A yes B no 5, A no B yes 10,
    # both no 15. p_o = 35/50 = 0.7; A says yes 25/50, B 30/50, so
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5 and kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    first = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    second = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)


def test_cohen_kappa_with_a_category_one_rater_never_uses():
    # Human pass,pass,fail,fail; judge pass,uncertain,fail,pass. n=4, a=2;
    # human counts pass 2, fail 2; judge pass 2, fail 1, uncertain 1:
    # S = 2*2 + 2*1 + 0*1 = 6; kappa = (4*2 - 6) / (16 - 6) = 0.2.
    human = ["pass", "pass", "fail", "fail"]
    judge = ["pass", "uncertain", "fail", "pass"]
    assert cohen_kappa(human, judge) == pytest.approx(0.2)


def test_cohen_kappa_is_undefined_without_variance_or_items():
    assert cohen_kappa(["pass"] * 3, ["pass"] * 3) is None
    assert cohen_kappa([], []) is None
    # One rater constant is still defined: S = 3*2 = 6, kappa = (3*2 - 6)/(9 - 6) = 0.
    assert cohen_kappa(["pass"] * 3, ["pass", "pass", "fail"]) == 0.0
    with pytest.raises(ConfigurationError, match="different numbers of items"):
        cohen_kappa(["pass"], [])


# Wikipedia's worked example of Fleiss' kappa: 10 subjects, 14 raters, 5 categories.
FLEISS_WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_of_the_wikipedia_example():
    # Sum of squared counts: 196+60+70+94+74+98+58+46+66+66 = 828, ratings 140, so
    # P-bar = (828 - 140) / (10*14*13) = 688/1820 = 172/455.
    # Column totals 20, 28, 39, 21, 32: P_e = (400+784+1521+441+1024)/140^2
    # = 4170/19600 = 417/1960. Over 25480: P-bar = 9632/25480, P_e = 5421/25480,
    # 1 - P_e = 20059/25480, so kappa = 4211/20059 = 0.20993... (Wikipedia: 0.210).
    kappa = fleiss_kappa(FLEISS_WIKIPEDIA)
    assert kappa == pytest.approx(4211 / 20059, abs=1e-15)
    assert round(kappa, 3) == 0.210


def test_fleiss_kappa_edges():
    assert fleiss_kappa([]) is None
    assert fleiss_kappa([[3, 0], [3, 0]]) is None  # every rating in one category
    # Perfect agreement across two categories: P-bar = 1, P_e = 1/2, kappa = 1.
    assert fleiss_kappa([[2, 0], [0, 2]]) == 1.0
    with pytest.raises(ConfigurationError, match=r"row 1 .* 3 ratings, not 2"):
        fleiss_kappa([[2, 0], [2, 1]])
    with pytest.raises(ConfigurationError, match="at least two"):
        fleiss_kappa([[1, 0], [0, 1]])
    with pytest.raises(ConfigurationError, match="non-negative"):
        fleiss_kappa([[3, -1], [2, 0]])


@pytest.mark.parametrize(
    ("kappa", "word"),
    [
        (-0.01, "poor"),
        (0.0, "slight"),
        (0.20, "slight"),
        (0.21, "fair"),
        (0.40, "fair"),
        (0.41, "moderate"),
        (0.60, "moderate"),
        (0.61, "substantial"),
        (0.80, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
    ],
)
def test_landis_koch_words(kappa, word):
    assert kappa_strength(kappa) == word


ratings = st.lists(
    st.tuples(st.sampled_from("abc"), st.sampled_from("abcd")), min_size=1, max_size=40
)


@given(ratings)
def test_cohen_kappa_is_symmetric_bounded_and_ignores_category_names(pairs):
    first = [a for a, _ in pairs]
    second = [b for _, b in pairs]
    kappa = cohen_kappa(first, second)
    assert kappa == cohen_kappa(second, first)
    renamed = {"a": "z", "b": "y", "c": "x", "d": "w"}
    assert kappa == cohen_kappa([renamed[a] for a in first], [renamed[b] for b in second])
    if kappa is not None:
        assert -1.0 <= kappa <= 1.0
    assert cohen_kappa(first, first) in (1.0, None)


@given(ratings)
def test_fleiss_kappa_of_two_raters_is_scotts_pi(pairs):
    # With two raters, P_i is 1 when they agree and 0 otherwise, so P-bar is p_o and
    # P_e uses the pooled category shares: Scott's pi, computed here directly.
    categories = "abcd"
    table = [[(a == c) + (b == c) for c in categories] for a, b in pairs]
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    pooled = [sum(row[j] for row in table) / (2 * n) for j in range(len(categories))]
    expected = sum(share * share for share in pooled)
    kappa = fleiss_kappa(table)
    if expected == 1:
        assert kappa is None
    else:
        assert kappa == pytest.approx((observed - expected) / (1 - expected))


@given(
    st.lists(
        st.lists(st.integers(min_value=0, max_value=4), min_size=3, max_size=3),
        min_size=1,
        max_size=12,
    ),
    st.permutations([0, 1, 2]),
)
def test_fleiss_kappa_ignores_order_of_subjects_and_categories(raw, order):
    # Pad each row so that every subject has 12 ratings.
    table = [[row[0], row[1], 12 - row[0] - row[1]] for row in raw if row[0] + row[1] <= 12]
    if not table:
        return
    kappa = fleiss_kappa(table)
    shuffled = [[row[j] for j in order] for row in reversed(table)]
    if kappa is None:
        assert fleiss_kappa(shuffled) is None
    else:
        assert fleiss_kappa(shuffled) == pytest.approx(kappa)
        assert kappa <= 1.0


# ----------------------------------------------------------- one judge, cases and claims


def test_case_level_figures_match_the_hand_computed_table():
    report = calibrate(judge_reports(), judge_labels())
    cases = report.cases
    # Rows human, columns judge: pass -> 4 pass, 1 fail, 1 uncertain; fail -> 1 pass,
    # 3 fail. n=10, a=7 (agreement 0.7).
    assert cases.confusion == {
        "pass": {"pass": 4, "fail": 1, "uncertain": 1},
        "fail": {"pass": 1, "fail": 3, "uncertain": 0},
    }
    assert (cases.n, cases.agreement) == (10, 0.7)
    # Human counts pass 6, fail 4; judge pass 5, fail 4, uncertain 1:
    # S = 6*5 + 4*4 = 46; kappa = (10*7 - 46) / (100 - 46) = 24/54 = 4/9.
    assert cases.kappa == pytest.approx(4 / 9)
    # Decided subset (c10 left out): n=9, a=7; human pass 5, fail 4; judge pass 5,
    # fail 4: S = 25 + 16 = 41; kappa = (63 - 41) / (81 - 41) = 22/40 = 0.55.
    assert (cases.decided_n, cases.decided_agreement) == (9, pytest.approx(7 / 9))
    assert cases.kappa_decided == pytest.approx(0.55)
    assert (cases.abstentions, cases.abstention_rate) == (1, 0.1)
    assert cases.abstention_counts == {"uncertain": 1}
    # Judge fail calls: c05, c07, c08, c09 (3 right); human fails: c06-c09 (3 caught).
    assert (cases.precision, cases.recall) == (0.75, 0.75)
    assert cases.judge_categories == ["pass", "fail", "uncertain"]
    assert report.metrics_used == ["judge"]


def test_confusion_matrix_as_a_dataframe():
    frame = calibrate(judge_reports(), judge_labels(), bootstrap=0).confusion_frame("cases")
    expected = pd.DataFrame(
        [[4, 1, 1], [1, 3, 0]],
        index=pd.Index(["pass", "fail"], name="human"),
        columns=pd.Index(["pass", "fail", "uncertain"], name="judge"),
    )
    pd.testing.assert_frame_equal(frame, expected)


def test_claim_level_pools_prediction_and_reference_claims():
    claims = calibrate(judge_reports(), judge_labels()).claims
    assert claims.confusion == {
        "correct": {"correct": 2, "incorrect": 0, "not_verifiable": 1},
        "incorrect": {"correct": 2, "incorrect": 1, "not_verifiable": 0},
    }
    # n=6, a=3. Human correct 3, incorrect 3; judge correct 4, incorrect 1,
    # not_verifiable 1: S = 3*4 + 3*1 = 15; kappa = (18 - 15) / (36 - 15) = 1/7.
    assert (claims.n, claims.agreement) == (6, 0.5)
    assert claims.kappa == pytest.approx(1 / 7)
    # Decided: n=5, a=3; human correct 2, incorrect 3; judge correct 4, incorrect 1:
    # S = 8 + 3 = 11; kappa = (15 - 11) / (25 - 11) = 4/14 = 2/7.
    assert claims.kappa_decided == pytest.approx(2 / 7)
    # One judge "incorrect" call, and it is right; humans marked 3 incorrect.
    assert (claims.precision, claims.recall) == (1.0, pytest.approx(1 / 3))
    by_id = {(pair.case_id, pair.claim_id): pair for pair in claims.pairs}
    reference = by_id["c05", "r00001"]
    assert (reference.claim_kind, reference.human_label, reference.judge_answer) == (
        "reference",
        "missing",
        "matched",
    )
    assert (reference.human, reference.judge, reference.agrees) == ("incorrect", "correct", False)
    assert by_id["c01", "p00001"].labeler == "ann"
    # Claims of one case are not independent: the intervals resample the 3 cases.
    assert claims.agreement_ci is not None
    assert (claims.agreement_ci.cases, claims.agreement_ci.observations) == (3, 6)
    assert not any("optimistic" in note for note in claims.notes)


def test_unmatched_labels_and_unlabelled_items_are_listed():
    report = calibrate(judge_reports(), judge_labels())
    reasons = {
        (item.label.case_id, item.label.claim_id): item.reason for item in report.unmatched_labels
    }
    assert reasons == {
        ("c99", None): "no such case and stage in the reports",
        ("c01", "p00009"): "the judge's answer has no claim 'p00009'",
    }
    assert [(item.case_id, item.judge_answer) for item in report.unlabelled_cases] == [
        ("c11", "pass")
    ]
    # 11 cases x 3 claims, of which 6 are labelled.
    assert len(report.unlabelled_claims) == 33 - 6
    assert ("c01", "r00001") not in {
        (item.case_id, item.claim_id) for item in report.unlabelled_claims
    }


def test_labels_on_other_stages_or_unjudged_stages_are_unmatched():
    exact = Evaluator([ExactStructuredMetric()]).evaluate(make_case("x1"))
    staged = Evaluator([scripted_judge({"s1": PASS})]).evaluate(make_case("s1", "extract"))
    labels = [
        HumanLabel(case_id="x1", label="pass"),
        HumanLabel(case_id="s1", label="pass"),  # stage defaults to "output"
        HumanLabel(case_id="s1", stage_id="extract", label="pass"),
    ]
    report = calibrate([exact, staged], labels, bootstrap=0)
    assert [item.reason for item in report.unmatched_labels] == [
        "the stage has no judge or panel metric",
        "no such case and stage in the reports",
    ]
    assert report.cases.n == 1
    named = calibrate(
        [exact, staged],
        [*labels, HumanLabel(case_id="x1", claim_id="p00001", label="correct")],
        metric="exact_structured",
        bootstrap=0,
    )
    assert [item.reason for item in named.unmatched_labels] == [
        "no such case and stage in the reports",
        "the stage has no metric 'exact_structured'",
        "metric 'exact_structured' gives no claim verdicts",
    ]
    # A deterministic metric's verdict can be calibrated too, at the case level.
    assert [(pair.case_id, pair.judge) for pair in named.cases.pairs] == [("x1", "pass")]


# ---------------------------------------------------------------- bootstrap intervals


def test_intervals_are_deterministic_for_a_seed_and_hold_the_estimate():
    first = calibrate(judge_reports(), judge_labels(), seed=7)
    second = calibrate(judge_reports(), judge_labels(), seed=7)
    assert first == second
    for level in (first.cases, first.claims):
        assert level.agreement_ci is not None
        assert level.kappa_ci is not None
        assert level.agreement is not None
        assert level.kappa is not None
        assert 0 <= level.agreement_ci.low <= level.agreement <= level.agreement_ci.high <= 1
        assert -1 <= level.kappa_ci.low <= level.kappa <= level.kappa_ci.high <= 1
        assert level.bootstrap_resamples == 2000


def test_case_intervals_do_not_depend_on_the_claim_labels():
    # Each level draws from its own stream of the seed.
    with_claims = calibrate(judge_reports(), judge_labels(), seed=3)
    cases_only = calibrate(
        judge_reports(), [label for label in judge_labels() if label.claim_id is None], seed=3
    )
    assert with_claims.cases.agreement_ci == cases_only.cases.agreement_ci
    assert with_claims.cases.kappa_ci == cases_only.cases.kappa_ci


def test_intervals_of_tiny_samples():
    reports = judge_reports()
    # One case says nothing about the spread between cases: no interval, and a note.
    one = calibrate(reports, [HumanLabel(case_id="c01", label="pass")], bootstrap=50)
    assert one.cases.agreement_ci is None
    assert "no intervals: fewer than 2 cases (1)" in one.cases.notes
    # Two cases, one agreeing: the Wilson interval of 1 in 2 (by hand, z = 1.95996:
    # centre 0.5, half-width 1.95996 * sqrt(0.125 + z²/16) / (1 + z²/2) = 0.40547).
    two = calibrate(
        reports,
        [HumanLabel(case_id="c01", label="pass"), HumanLabel(case_id="c02", label="fail")],
    )
    found = two.cases.agreement_ci
    assert found is not None
    assert (found.low, found.high) == (
        pytest.approx(0.09453, abs=1e-5),
        pytest.approx(0.90547, abs=1e-5),
    )
    assert (found.cases, found.observations, found.method) == (2, 2, "wilson")


def test_no_bootstrap_means_no_intervals():
    report = calibrate(judge_reports(), judge_labels(), bootstrap=0)
    assert report.cases.agreement_ci is None
    assert report.cases.kappa_ci is None
    assert report.cases.kappa == pytest.approx(4 / 9)
    assert report.verdict_line() == (
        "judge agrees with humans on 70.0% of cases, κ 0.4444 (moderate)"
    )


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(sorted(JUDGE_SCRIPT)), st.sampled_from(["pass", "fail"]), min_size=1
    ),
    st.integers(min_value=0, max_value=2**32),
)
def test_agreement_interval_holds_the_estimate(humans, seed):
    report = calibrate(judge_reports(), case_labels(humans), bootstrap=200, seed=seed)
    cases = report.cases
    judged = {item.case_id: item.judge for item in cases.pairs}
    assert cases.n == len(humans)
    assert cases.agreement == sum(judged[c] == label for c, label in humans.items()) / len(humans)
    assert cases.kappa == cohen_kappa(list(humans.values()), [judged[c] for c in humans])
    assert cases.agreement is not None
    # One labelled case has no interval (nothing about the spread between cases).
    assert (cases.agreement_ci is None) == (len(humans) < 2)
    if cases.agreement_ci is not None:
        assert 0 <= cases.agreement_ci.low <= cases.agreement <= cases.agreement_ci.high <= 1
    again = calibrate(judge_reports(), case_labels(humans), bootstrap=200, seed=seed)
    assert again.cases.agreement_ci == cases.agreement_ci


# ----------------------------------------------------------- abstentions and no variance


def test_skipped_claims_and_failed_judges_are_abstentions_or_listed():
    def respond(request, repair):
        if request.task["case_id"] == "broken":
            return "no JSON here"
        reply = answer(request)
        reply["prediction_claims"] = reply["prediction_claims"][:1]  # skip p00002
        return reply

    metric = LLMJudgeMetric(ScriptedAdapter(respond), name="judge")
    reports = Evaluator([metric]).evaluate_batch([make_case("skips"), make_case("broken")])
    labels = [
        HumanLabel(case_id="skips", claim_id="p00002", label="incorrect"),
        HumanLabel(case_id="broken", label="fail"),
        HumanLabel(case_id="broken", claim_id="p00001", label="correct"),
    ]
    report = calibrate(reports, labels, bootstrap=0)
    (claim,) = report.claims.pairs
    assert (claim.judge_answer, claim.judge) == ("unanswered", "unanswered")
    assert report.claims.abstention_counts == {"unanswered": 1}
    (case,) = report.cases.pairs
    assert (case.judge, report.cases.abstentions) == ("uncertain", 1)
    assert [item.reason for item in report.unmatched_labels] == [
        "the judge gave no usable answer for this case, so its claims are unknown"
    ]
    assert any("hold no usable judge answer" in note for note in report.notes)


def test_all_one_category_gives_no_kappa_and_a_note():
    labels = case_labels({"c01": "pass", "c02": "pass", "c03": "pass"})
    report = calibrate(judge_reports(), labels)
    cases = report.cases
    assert (cases.agreement, cases.kappa, cases.kappa_decided) == (1.0, None, None)
    assert cases.kappa_ci is None
    assert cases.kappa_resamples == 0
    assert "κ is undefined: humans and judge used one category only (pass)" in cases.notes
    assert report.verdict_line().endswith("κ undefined (one category only)")
    assert report.claims.n == 0
    assert report.verdict_line("claims") == "no labelled claims to compare with the judge"


# ---------------------------------------------------------------------------- panels


def test_panel_fleiss_kappa_and_variant_kappas():
    report = calibrate(panel_reports(), case_labels(PANEL_HUMANS), bootstrap=0)
    panel = report.panel
    assert panel is not None
    # Rows (pass, fail, uncertain): (3,0,0) (0,3,0) (2,1,0) (0,2,1) (2,1,0).
    # Sum of squares 9+9+5+5+5 = 33, ratings 15: P-bar = (33-15)/(5*3*2) = 0.6.
    # Totals 7, 7, 1: P_e = 99/225 = 0.44; kappa = 0.16/0.56 = 2/7.
    assert panel.category_counts == {"pass": 7, "fail": 7, "uncertain": 1}
    assert (panel.cases, panel.raters) == (5, 3)
    assert panel.observed_agreement == pytest.approx(0.6)
    assert panel.fleiss_kappa == pytest.approx(2 / 7)
    variants = {variant.name: variant for variant in panel.variant_calibration}
    # a = panel: n=5, a=4; human pass 2, fail 3; judge pass 3, fail 2:
    # S = 6 + 6 = 12; kappa = (20-12)/(25-12) = 8/13.
    assert variants["a"].kappa == pytest.approx(8 / 13)
    assert report.cases.kappa == pytest.approx(8 / 13)
    # b: a=3; judge pass 2, fail 3: S = 4 + 9 = 13; kappa = (15-13)/(25-13) = 1/6.
    assert (variants["b"].agreement, variants["b"].kappa) == (0.6, pytest.approx(1 / 6))
    # c: a=4; judge pass 2, fail 2, uncertain 1: S = 4 + 6 = 10;
    # kappa = (20-10)/(25-10) = 2/3; without p4 all four agree: kappa 1.
    assert variants["c"].kappa == pytest.approx(2 / 3)
    assert (variants["c"].kappa_decided, variants["c"].abstentions) == (1.0, 1)


def test_panel_claim_labels_use_the_consensus_answer():
    labels = [
        # p4: a and b say correct, c not_verifiable: consensus correct.
        HumanLabel(case_id="p4", claim_id="p00001", label="correct"),
        # p5: only b calls the total incorrect, so the consensus is correct.
        HumanLabel(case_id="p5", claim_id="p00002", label="incorrect"),
    ]
    claims = calibrate(panel_reports(), labels, bootstrap=0).claims
    assert [(pair.judge_answer, pair.agrees) for pair in claims.pairs] == [
        ("correct", True),
        ("correct", False),
    ]
    assert claims.pairs[0].metric == "judge_panel"


def test_fleiss_kappa_needs_panels_of_one_size():
    three = panel_reports({"p1": (PASS, PASS, FAIL)})
    two = panel_reports({"p2": (PASS, FAIL)}, names="de")
    panel = calibrate([*three, *two], [], bootstrap=0).panel
    assert panel is not None
    assert panel.fleiss_kappa is None
    assert panel.variants == ["a", "b", "c", "d", "e"]
    assert "panels differ in size (2, 3 variants)" in panel.notes[0]
    single = calibrate(panel_reports({"p1": (PASS,)}, names="a"), [], bootstrap=0).panel
    assert single is not None
    assert single.fleiss_kappa is None
    assert single.notes == ["a panel of one variant: Fleiss' κ needs at least two"]


def test_single_judges_have_no_panel_section():
    assert calibrate(judge_reports(), judge_labels(), bootstrap=0).panel is None


# ------------------------------------------------------------------ choosing the metric


def two_judges_report() -> EvaluationReport:
    metrics = [
        scripted_judge({"m": PASS}, name="judge_a"),
        scripted_judge({"m": FAIL}, name="judge_b"),
    ]
    return Evaluator(metrics).evaluate(make_case("m"))


def test_two_judges_on_a_stage_need_a_metric_name():
    report = two_judges_report()
    with pytest.raises(ConfigurationError, match=r"several judge metrics \(judge_a, judge_b\)"):
        calibrate([report], [HumanLabel(case_id="m", label="fail")])
    chosen = calibrate([report], [HumanLabel(case_id="m", label="fail")], metric="judge_b")
    assert (chosen.cases.pairs[0].judge, chosen.metrics_used) == ("fail", ["judge_b"])


def test_unknown_metric_lists_what_there_is():
    with pytest.raises(
        ConfigurationError, match=r"no report has a metric 'nope'.*judge_a, judge_b"
    ):
        calibrate([two_judges_report()], [], metric="nope")
    exact = Evaluator([ExactStructuredMetric()]).evaluate(make_case("x"))
    with pytest.raises(ConfigurationError, match="no report has a judge or panel metric"):
        calibrate([exact], [])


def test_bad_reports_and_settings_are_refused():
    reports = judge_reports()
    with pytest.raises(InputError, match="suite report 'suite' holds no per-case verdicts"):
        calibrate([build_suite_report(reports, suite_id="suite")], [])
    with pytest.raises(InputError, match="case 'c01' stage 'output' is in more than one report"):
        calibrate([*reports, reports[0]], [])
    with pytest.raises(ConfigurationError, match="bootstrap"):
        calibrate(reports, [], bootstrap=-1)
    with pytest.raises(ConfigurationError, match="confidence"):
        calibrate(reports, [], confidence=1.0)


def test_a_label_of_the_wrong_claim_kind_is_an_error():
    label = HumanLabel(case_id="c01", claim_id="p00001", label="matched")
    with pytest.raises(InputError, match="is a prediction claim, but its label is 'matched'"):
        calibrate(judge_reports(), [label])


def test_a_label_given_twice_is_an_error():
    label = HumanLabel(case_id="c01", label="pass")
    with pytest.raises(InputError, match="labelled twice"):
        calibrate(judge_reports(), [label, label])


# ---------------------------------------------------------------- report and Markdown


def test_report_round_trips_and_renders():
    report = calibrate(judge_reports(), judge_labels(), seed=1)
    assert CalibrationReport.model_validate_json(report.model_dump_json()) == report
    ci = report.cases.agreement_ci
    assert ci is not None
    line = report.verdict_line()
    assert line == (
        f"judge agrees with humans on 70.0% of cases (95% CI {ci.low * 100:.1f}–"
        f"{ci.high * 100:.1f}%), κ 0.4444 (moderate)"
    )
    markdown = render_calibration_markdown(report)
    assert line in markdown
    assert "| pass | 4 | 1 | 1 |" in markdown
    assert "| fail | 1 | 3 | 0 |" in markdown
    assert "## Unmatched labels (2)" in markdown
    assert "1 judged case(s) and 27 judged claim(s) have no human label." in markdown
    panel_markdown = render_calibration_markdown(
        calibrate(panel_reports(), case_labels(PANEL_HUMANS))
    )
    assert "Fleiss' κ across 3 variants on 5 cases: 0.2857 (fair)" in panel_markdown


def test_markdown_shortens_long_lists():
    labels = [HumanLabel(case_id=f"gone{i}", label="pass") for i in range(5)]
    markdown = render_calibration_markdown(
        calibrate(judge_reports(), labels, bootstrap=0), max_rows=2
    )
    assert "... and 3 more (see the JSON report)." in markdown


# ------------------------------------------------------------------------ label files


def test_jsonl_labels_with_defaults_and_blank_lines(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"case_id": "c01", "label": " PASS "}\n'
        "\n"
        '{"case_id": "c01", "stage_id": "extract", "claim_id": "r00001", "label": "missing",'
        ' "labeler": "bo", "notes": null}\n',
        encoding="utf-8",
    )
    assert load_human_labels(path) == [
        HumanLabel(case_id="c01", label="pass"),
        HumanLabel(
            case_id="c01", stage_id="extract", claim_id="r00001", label="missing", labeler="bo"
        ),
    ]


def test_csv_labels_with_empty_cells(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(
        "case_id,stage_id,claim_id,label,labeler\nc01,,,fail,ann\nc02,extract,p00002,Incorrect,\n",
        encoding="utf-8",
    )
    assert load_human_labels(path) == [
        HumanLabel(case_id="c01", label="fail", labeler="ann"),
        HumanLabel(case_id="c02", stage_id="extract", claim_id="p00002", label="incorrect"),
    ]


def test_a_bad_label_names_the_file_and_line(tmp_path):
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(
        '{"case_id": "a", "label": "pass"}\n\n{"case_id": "b", "label": "maybe"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        load_human_labels(jsonl)
    assert str(caught.value).startswith(
        f"{jsonl}, record line 3, at label: invalid HumanLabel: label:"
    )
    assert "'maybe'" in str(caught.value)
    # A quoted note over two lines: the bad row after it starts on line 4.
    table = tmp_path / "labels.csv"
    table.write_text('case_id,label,notes\na,pass,"two\nlines"\nb,sure,\n', encoding="utf-8")
    with pytest.raises(
        InputError, match=r"labels\.csv, record line 4, at label: invalid HumanLabel"
    ):
        load_human_labels(table)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "l.jsonl",
            '{"case_id": "a", "label": "correct"}\n',
            r"record line 1: .*judges a claim, but no claim_id is given",
        ),
        (
            "l.jsonl",
            '{"case_id": "a", "claim_id": "p00001", "label": "pass"}\n',
            r"record line 1: .*judges a case, but claim_id 'p00001' is given",
        ),
        ("l.jsonl", '{"case_id": "a", "label": "pass"}\n{"case_id": ', r"record line 2: malformed"),
        ("l.jsonl", "[1, 2]\n", r"record line 1: expected a JSON object, got list"),
        (
            "l.jsonl",
            '{"case_id": "a", "label": "pass", "lable": 1}\n',
            r"record line 1, at lable: .*Extra inputs",
        ),
        ("l.jsonl", "\n\n", "holds no labels"),
        (
            "l.jsonl",
            '{"case_id": "a", "label": "pass"}\n{"case_id": "a", "label": "fail"}\n',
            r"case 'a' stage 'output' is labelled twice \(labels 1 and 2\)",
        ),
        ("l.csv", "case_id,lable\na,pass\n", r"record line 1: unknown column\(s\) 'lable'"),
        ("l.csv", "case_id,claim_id\na,p1\n", r"record line 1: missing column\(s\) label"),
        ("l.csv", "case_id,label\na,pass,extra\n", r"record line 2: 3 cells in a row of 2"),
        ("l.txt", "case_id,label\n", r"unknown labels format '\.txt'"),
    ],
)
def test_label_file_errors(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_human_labels(path)


def test_missing_labels_file(tmp_path):
    with pytest.raises(InputFileNotFoundError, match="labels file not found"):
        load_human_labels(tmp_path / "none.jsonl")


identifiers = st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True)
texts = st.from_regex(r'[a-z](?:[a-z ,"\n]{0,10}[a-z])?', fullmatch=True)
case_label = st.builds(
    HumanLabel,
    case_id=identifiers,
    stage_id=identifiers,
    label=st.sampled_from(["pass", "fail"]),
    labeler=st.none() | identifiers,
    notes=st.none() | texts,
)
claim_label = st.builds(
    HumanLabel,
    case_id=identifiers,
    stage_id=identifiers,
    claim_id=identifiers,
    label=st.sampled_from(["correct", "incorrect", "matched", "missing"]),
    labeler=st.none() | identifiers,
    notes=st.none() | texts,
)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        case_label | claim_label,
        min_size=1,
        max_size=8,
        unique_by=lambda x: (x.case_id, x.stage_id, x.claim_id),
    )
)
def test_labels_round_trip_through_jsonl_and_csv(labels):
    with tempfile.TemporaryDirectory() as folder:
        jsonl = write_labels(Path(folder) / "labels.jsonl", labels)
        assert load_human_labels(jsonl) == labels
        table = Path(folder) / "labels.csv"
        with table.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(
                handle, ["case_id", "stage_id", "claim_id", "label", "labeler", "notes"]
            )
            writer.writeheader()
            for label in labels:
                writer.writerow({key: "" if value is None else value for key, value in label})
        assert load_human_labels(table) == labels


def test_labels_written_by_the_helper_load_back(tmp_path):
    labels = judge_labels()
    assert load_human_labels(write_labels(tmp_path / "l.jsonl", labels)) == labels
    assert json.loads((tmp_path / "l.jsonl").read_text().splitlines()[0]) == {
        "case_id": "c01",
        "stage_id": "output",
        "label": "pass",
    }
