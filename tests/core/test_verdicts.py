import pytest
from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.core.literals import VERDICTS
from docevals_mlflow.core.verdicts import combine_verdicts, failure_context


@pytest.mark.parametrize(
    ("verdicts", "combined"),
    [
        ([], "not_applicable"),
        (["not_applicable"], "not_applicable"),
        (["not_applicable", "pass"], "pass"),
        (["pass", "not_applicable", "uncertain"], "uncertain"),
        (["uncertain", "fail", "pass"], "fail"),
        (["fail", "not_applicable"], "fail"),
        (["pass", "pass"], "pass"),
    ],
)
def test_combine_verdicts_precedence(verdicts, combined):
    assert combine_verdicts(verdicts) == combined
    assert combine_verdicts(iter(verdicts)) == combined


def _expected_combination(verdicts):
    for verdict in ("fail", "uncertain", "pass"):
        if verdict in verdicts:
            return verdict
    return "not_applicable"


@given(
    st.lists(st.sampled_from(VERDICTS), max_size=8).flatmap(
        lambda items: st.tuples(st.just(items), st.permutations(items))
    )
)
def test_combine_verdicts_is_order_independent(pair):
    verdicts, shuffled = pair
    assert combine_verdicts(verdicts) == combine_verdicts(shuffled)
    assert combine_verdicts(verdicts) == _expected_combination(verdicts)


@pytest.mark.parametrize(
    ("own", "upstream", "context"),
    [
        ("pass", {}, "none"),
        ("pass", {"a": "pass", "b": "pass"}, "none"),
        ("fail", {}, "current_stage"),
        ("fail", {"a": "pass", "b": "pass"}, "current_stage"),
        ("pass", {"a": "pass", "b": "fail"}, "upstream"),
        ("fail", {"a": "fail"}, "upstream_or_combined"),
        ("fail", {"a": "pass", "b": "fail"}, "upstream_or_combined"),
        ("uncertain", {}, "indeterminate"),
        ("uncertain", {"a": "pass"}, "indeterminate"),
        ("not_applicable", {}, "indeterminate"),
        ("not_applicable", {"a": "fail"}, "indeterminate"),
        ("pass", {"a": "not_applicable"}, "indeterminate"),
        ("fail", {"a": "uncertain", "b": "fail"}, "indeterminate"),
        ("pass", {"a": "fail", "b": "uncertain"}, "indeterminate"),
    ],
)
def test_failure_context(own, upstream, context):
    assert failure_context(own, upstream) == context
