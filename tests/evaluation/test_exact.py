from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow import (
    EvaluationCase,
    ExactStructuredMetric,
    artifact_from_path,
    artifact_from_value,
)


def case(prediction, *references):
    return EvaluationCase(case_id="c", prediction=prediction, references=list(references))


def truth(value, authority="ground_truth", ref_id="truth", **kwargs):
    return artifact_from_value(value, authority=authority, artifact_id=ref_id, **kwargs)


def rows(result):
    return {row["path"]: (row["outcome"], row["status"]) for row in result.details["fields"]}


def test_all_five_outcomes_and_scores():
    expected = {"a": "x", "b": 2, "c": None, "d": None, "e": "gone"}
    predicted = {"a": "X ", "b": 3, "c": None, "d": "extra", "e": ""}
    result = ExactStructuredMetric().evaluate(case(predicted, truth(expected)))
    assert rows(result) == {
        "$.a": ("TP", "correct"),
        "$.b": ("FD", "incorrect"),
        "$.c": ("TN", "correct"),
        "$.d": ("FA", "incorrect"),
        "$.e": ("FN", "missing"),
    }
    assert result.counts == {
        "expected_fields": 5,
        "correct": 2,
        "incorrect": 2,
        "missing": 1,
        "tp": 1,
        "tn": 1,
        "fa": 1,
        "fd": 1,
        "fn": 1,
        "unexpected": 0,
    }
    assert result.scores == {
        "field_accuracy": pytest.approx(2 / 5),
        "accuracy_when_present": pytest.approx(2 / 4),
        "missing_rate": pytest.approx(1 / 5),
        "precision": pytest.approx(1 / 3),
        "recall": pytest.approx(1 / 2),
        "f1": pytest.approx(2 / 5),
    }
    assert result.verdict == "fail"
    assert result.basis == "ground_truth"


def test_numeric_text_bool_and_null_equality():
    expected = {"n": "3", "m": "3.0", "f": 0.1 + 0.2, "t": "TRUE", "z": None, "id": "007"}
    predicted = {"n": 3.0, "m": 3, "f": 0.3, "t": True, "z": "", "id": "007"}
    result = ExactStructuredMetric().evaluate(case(predicted, truth(expected)))
    assert result.verdict == "pass"
    assert result.counts["correct"] == 6


def test_leading_zero_identifier_is_not_a_number():
    result = ExactStructuredMetric().evaluate(case({"id": 7}, truth({"id": "007"})))
    assert rows(result) == {"$.id": ("FD", "incorrect")}


def test_bool_never_equals_one():
    result = ExactStructuredMetric().evaluate(case({"flag": 1}, truth({"flag": True})))
    assert result.verdict == "fail"


def test_case_policy_is_configurable():
    reference = truth({"name": "ACME Corp"})
    assert (
        ExactStructuredMetric().evaluate(case({"name": "acme  corp"}, reference)).verdict == "pass"
    )
    strict = ExactStructuredMetric(case_sensitive=True)
    assert strict.evaluate(case({"name": "acme corp"}, reference)).verdict == "fail"


def test_tolerances():
    reference = truth({"x": 100.0})
    assert ExactStructuredMetric().evaluate(case({"x": 100.00001}, reference)).verdict == "pass"
    assert ExactStructuredMetric().evaluate(case({"x": 100.01}, reference)).verdict == "fail"
    loose = ExactStructuredMetric(absolute_tolerance=0.05)
    assert loose.evaluate(case({"x": 100.04}, reference)).verdict == "pass"


def test_escaped_keys_do_not_collide():
    reference = truth({"a.b": 1, "a": {"b": 2}})
    result = ExactStructuredMetric().evaluate(case({"a.b": 1, "a": {"b": 2}}, reference))
    assert set(rows(result)) == {"$['a.b']", "$.a.b"}
    assert result.verdict == "pass"
    swapped = ExactStructuredMetric().evaluate(case({"a.b": 2, "a": {"b": 1}}, reference))
    assert swapped.counts["fd"] == 2


def test_unexpected_prediction_fields_lower_precision_only():
    result = ExactStructuredMetric().evaluate(case({"a": 1, "extra": "x"}, truth({"a": 1})))
    assert result.counts["unexpected"] == 1
    assert result.scores["precision"] == pytest.approx(0.5)
    assert result.scores["recall"] == 1.0
    assert result.verdict == "pass"
    assert rows(result)["$.extra"] == ("FA", "unexpected")
    strict = ExactStructuredMetric(fail_on_unexpected=True)
    assert strict.evaluate(case({"a": 1, "extra": "x"}, truth({"a": 1}))).verdict == "fail"


def test_path_tables_do_not_count_unmentioned_fields(tmp_path):
    table = tmp_path / "truth.csv"
    table.write_text("path,expected\n$.items[0].qty,3\n$.status,OK\n", encoding="utf-8")
    reference = artifact_from_path(table, authority="ground_truth")
    result = ExactStructuredMetric().evaluate(
        case({"items": [{"qty": 3.0, "sku": "A"}], "status": "ok", "other": 1}, reference)
    )
    assert result.verdict == "pass"
    assert "unexpected" not in result.counts
    assert result.scores["precision"] == 1.0
    assert {row["row"] for row in result.details["fields"]} == {1, 2}


def test_ground_truth_preferred_over_generated_and_evidence_ignored():
    generated = truth({"a": 2}, authority="generated", ref_id="gen")
    evidence = truth({"a": 3}, authority="evidence", ref_id="ev")
    ground = truth({"a": 1}, ref_id="gt")
    result = ExactStructuredMetric().evaluate(case({"a": 1}, evidence, generated, ground))
    assert result.verdict == "pass"
    assert result.details["references"] == ["gt"]


def test_generated_reference_gives_provisional_basis():
    generated = truth({"a": 1}, authority="generated", ref_id="gen")
    result = ExactStructuredMetric().evaluate(case({"a": 1}, generated))
    assert result.verdict == "pass"
    assert result.basis.startswith("generated (provisional")


def test_not_applicable_without_usable_reference():
    evidence = truth({"a": 1}, authority="evidence", ref_id="ev")
    semantic = truth({"a": 1}, ref_id="sem", comparison_mode="semantic")
    notes = truth("the total is 5", ref_id="notes")
    result = ExactStructuredMetric().evaluate(case({"a": 1}, evidence, semantic, notes))
    assert result.verdict == "not_applicable"
    assert result.scores == {}
    assert "evidence is never used as truth" in result.notes[0]


def test_disagreeing_references_are_noted():
    first, second = truth({"a": 1}, ref_id="one"), truth({"a": 2}, ref_id="two")
    result = ExactStructuredMetric().evaluate(case({"a": 1}, first, second))
    assert result.counts["tp"] == 1
    assert result.counts["fd"] == 1
    assert result.notes == ["references 'one' and 'two' disagree at $.a"]


def test_zero_denominators_give_none():
    result = ExactStructuredMetric().evaluate(case({"a": None}, truth({"a": None})))
    assert result.verdict == "pass"
    assert result.scores["precision"] is None
    assert result.scores["recall"] is None
    assert result.scores["f1"] is None
    assert result.scores["field_accuracy"] == 1.0


def test_container_where_scalar_expected_is_wrong_value():
    result = ExactStructuredMetric().evaluate(case({"a": {"b": 1}}, truth({"a": "x"})))
    assert rows(result)["$.a"] == ("FD", "incorrect")


def test_negative_tolerance_rejected():
    with pytest.raises(ValueError, match="tolerances"):
        ExactStructuredMetric(relative_tolerance=-1)


leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.text(alphabet="abc 01.", max_size=4),
)
documents = st.dictionaries(st.sampled_from(["a", "b", "c.d", "e"]), leaf, min_size=1)


@given(documents, documents)
def test_cells_always_partition_the_expected_fields(expected, predicted):
    result = ExactStructuredMetric().evaluate(case(predicted, truth(expected)))
    counts = result.counts
    assert counts["tp"] + counts["tn"] + counts["fa"] + counts["fd"] + counts["fn"] == len(expected)
    assert counts["correct"] + counts["incorrect"] + counts["missing"] == len(expected)
    assert (result.verdict == "pass") == (counts["incorrect"] + counts["missing"] == 0)


@given(documents)
def test_prediction_equal_to_truth_always_passes(document):
    result = ExactStructuredMetric().evaluate(case(document, truth(document)))
    assert result.verdict == "pass"
    assert result.counts["unexpected"] == 0
