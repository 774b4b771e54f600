"""The sample-size planner: hand-computed variances, scipy quantiles, simulated sanity."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from docevals_mlflow.cli.plan import PLAN_METRIC_CHOICES
from docevals_mlflow.core.statistics.planner import (
    PLAN_METRICS,
    cluster_variance,
    documents_for_difference,
    documents_for_half_width,
    leaf_variance,
    linearised,
    minimum_detectable_difference,
    plan_sample_size,
)
from docevals_mlflow.errors import InputError

# tp, fa, fd, fn, tn per document
HAND = np.array([[2, 0, 0, 0, 0], [1, 0, 1, 0, 0], [0, 0, 1, 0, 0]])


def test_the_linearised_contributions_match_a_hand_computation() -> None:
    # accuracy: y = [2, 1, 0], x = [2, 2, 1], R = 3/5, mean(x) = 5/3
    value, u = linearised(HAND, "accuracy")
    assert value == pytest.approx(0.6)
    assert u == pytest.approx([0.48, -0.12, -0.36])
    assert cluster_variance(HAND, "accuracy") == pytest.approx(0.3744 / 2)
    # F1: y = 2TP = [4, 2, 0], x = 2TP + FP + FN = [4, 3, 1], R = 6/8
    value, u = linearised(HAND, "f1")
    assert value == pytest.approx(0.75)
    assert u == pytest.approx(np.array([1.0, -0.25, -0.75]) / (8 / 3))


def test_the_leaf_variance_is_the_binomial_one_for_accuracy() -> None:
    # Five independent leaves, three right: R(1 - R) / (L - 1) with the sample variance.
    assert leaf_variance(HAND.sum(axis=0), "accuracy") == pytest.approx(0.6 * 0.4 * 5 / 4 / 5)
    assert math.isnan(leaf_variance([0, 0, 0, 0, 3], "f1"))


def test_sizes_and_detectable_differences_use_normal_quantiles() -> None:
    z = norm.ppf(0.975)
    assert documents_for_half_width(0.1872, 0.1) == math.ceil(z**2 * 0.1872 / 0.01) == 72
    expected = (norm.ppf(0.975) + norm.ppf(0.8)) * math.sqrt(0.05 / 400)
    assert minimum_detectable_difference(0.05, 400) == pytest.approx(expected)
    one_sided = (norm.ppf(0.95) + norm.ppf(0.9)) * math.sqrt(0.05 / 400)
    assert minimum_detectable_difference(0.05, 400, power=0.9, one_sided=True) == pytest.approx(
        one_sided
    )
    # The size for a difference is the inverse of the detectable difference.
    n = documents_for_difference(0.05, expected)
    assert n in (400, 401)
    assert math.isnan(minimum_detectable_difference(0.05, 1))


def _beta_binomial(rng, documents, leaves, accuracy, icc):
    scale = (1 - icc) / icc
    p = rng.beta(accuracy * scale, (1 - accuracy) * scale, documents)
    right = rng.binomial(leaves, p)
    cells = np.zeros((documents, 5), dtype=np.int64)
    cells[:, 0], cells[:, 2] = right, leaves - right
    return cells


def _report(cells_by_field: dict[str, np.ndarray], ids=None) -> dict:
    documents = next(iter(cells_by_field.values())).shape[0]
    ids = ids or [f"d{index}" for index in range(documents)]
    entries = []
    for index in range(documents):
        rows, totals = [], np.zeros(5, dtype=np.int64)
        for template, cells in cells_by_field.items():
            totals += cells[index]
            for outcome, count in zip(("TP", "FA", "FD", "FN", "TN"), cells[index], strict=True):
                rows += [{"template": template, "outcome": outcome}] * int(count)
        counts = dict(zip(("tp", "fa", "fd", "fn", "tn"), map(int, totals), strict=True))
        entries.append({"id": ids[index], "counts": counts, "rows": rows})
    return {"kind": "fields", "documents": entries}


def test_the_plan_recovers_the_intra_document_correlation() -> None:
    rng = np.random.default_rng(7)
    cells = _beta_binomial(rng, 6000, 10, 0.8, 0.3)
    plan = plan_sample_size(_report({"$.a": cells}), half_width=0.02, metric="accuracy")
    (overall, field) = plan.fields
    assert [overall.field, field.field] == ["overall", "$.a"]
    assert field.intra_document_correlation == pytest.approx(0.3, abs=0.05)
    assert field.design_effect == pytest.approx(1 + 9 * 0.3, rel=0.15)
    assert field.difference_source == "assumed r=0.5"
    assert any("r=0.5" in text for text in field.assumptions)


def test_planned_sizes_cover_as_promised_in_simulation() -> None:
    # Loose bounds: the planned size gives a 95% interval of about ±k.
    rng = np.random.default_rng(11)
    pilot = _beta_binomial(rng, 4000, 5, 0.85, 0.2)
    plan = plan_sample_size(_report({"$.a": pilot}), half_width=0.03, field="$.a")
    (field,) = plan.fields
    n = field.required_documents
    truth = 2 * 0.85 / (2 * 0.85 + 0.15)
    draws = _beta_binomial(rng, 2000 * n, 5, 0.85, 0.2).reshape(2000, n, 5).sum(axis=1)
    estimate = 2 * draws[:, 0] / (2 * draws[:, 0] + draws[:, 2])
    inside = np.mean(np.abs(estimate - truth) <= 0.03)
    assert 0.92 <= inside <= 0.975


def test_two_reports_give_the_paired_variance_of_differences() -> None:
    rng = np.random.default_rng(3)
    first = _beta_binomial(rng, 300, 4, 0.8, 0.2)
    second = first.copy()
    second[:10, 0] -= 1
    second[:10, 2] += 1
    ids = [f"d{index}" for index in range(300)]
    # The other report lists the documents in another order: pairing is by id.
    plan = plan_sample_size(
        _report({"$.a": first}, ids),
        field="$.a",
        metric="accuracy",
        other=_report({"$.a": second[::-1]}, ids[::-1]),
        difference=0.05,
    )
    (field,) = plan.fields
    _, u_a = linearised(first, "accuracy")
    _, u_b = linearised(second, "accuracy")
    assert field.difference_source == "paired"
    assert field.difference_variance == pytest.approx(float((u_b - u_a).var(ddof=1)))
    assert field.documents_for_difference == documents_for_difference(
        field.difference_variance, 0.05
    )


def test_a_report_file_without_rows_plans_the_overall_figure(tmp_path) -> None:
    report = _report({"$.a": np.array([[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [1, 0, 0, 1, 0]])})
    for entry in report["documents"]:
        del entry["rows"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    plan = plan_sample_size(path)
    assert [unit.field for unit in plan.fields] == ["overall"]
    assert "no per-document rows" in plan.notes[0]
    data = plan.as_dict()
    json.dumps(data, allow_nan=False)  # NaN became None
    assert data["fields"][0]["documents"] == 3


@pytest.mark.parametrize(
    ("report", "kwargs", "fragment"),
    [
        ({"kind": "cases"}, {}, "not a field comparison report"),
        ({"kind": "fields", "documents": []}, {}, "lists no documents"),
        ({"kind": "fields", "documents": [{"id": "a", "counts": {}}]}, {}, "documents[0].counts"),
        (None, {"field": "$.nope"}, "unknown field '$.nope'"),
        (None, {"half_width": 3}, "half-width 3"),
        (None, {"power": 1.5}, "power 1.5"),
        (None, {"metric": "macro_f1"}, "unknown metric"),
    ],
)
def test_bad_input_is_one_clear_error(report, kwargs, fragment) -> None:
    report = report or _report({"$.a": HAND})
    with pytest.raises(InputError, match=None) as caught:
        plan_sample_size(report, **kwargs)
    assert fragment in str(caught.value)


def test_the_cli_choices_equal_the_planner_metrics() -> None:
    assert PLAN_METRIC_CHOICES == PLAN_METRICS
