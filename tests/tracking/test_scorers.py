"""The ``mlflow.genai`` field comparison scorer: direct calls, names, and one evaluation."""

from __future__ import annotations

import json
import socket
from typing import Any

import mlflow
import pytest
from mlflow.entities import AssessmentSource, Feedback
from mlflow.tracking import MlflowClient
from mlflow.utils.validation import _validate_metric_name

from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking.scorers import (
    MAX_LISTED,
    SCORER_METRICS,
    FieldComparisonScorer,
)

SCHEMA: dict[str, Any] = {
    "schema_id": "receipts",
    "classes": [
        {
            "name": "Receipt",
            "fields": {
                "number": {"method": "EXACT"},
                "total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                "vendor name": {"method": "EXACT"},
            },
        }
    ],
}
EXPECTED = {"number": "2", "total": "5.00", "vendor name": "Bolt"}
PREDICTED = {"number": "3", "total": 5}
"""number FD, total TP, vendor name FN: precision 1/2, recall 1/2, F1 2/4."""


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # No test here may reach the network: MLflow's usage telemetry is switched off,
    # and any socket that is not local fails loudly instead of hanging or leaking.
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    connect = socket.socket.connect

    def local_only(self: socket.socket, address: Any) -> Any:
        if self.family != socket.AF_UNIX and address[0] not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"network access attempted: {address!r}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", local_only)


def by_name(feedback: list[Feedback]) -> dict[str, Feedback]:
    return {item.name: item for item in feedback}


def test_direct_call_gives_exact_values_and_names_the_wrong_fields():
    feedback = FieldComparisonScorer(SCHEMA)(outputs=PREDICTED, expectations=EXPECTED)
    assert [item.name for item in feedback] == [
        "docevals/f1",
        "docevals/precision",
        "docevals/recall",
    ]
    assert [item.value for item in feedback] == [0.5, 0.5, 0.5]
    for item in feedback:
        assert isinstance(item, Feedback)
        assert item.source == AssessmentSource(source_type="CODE", source_id="docevals")
        assert item.error is None
    rationale = feedback[0].rationale
    assert rationale.startswith("f1 = 0.5000 (TP 1, FA 0, FD 1, FN 1, TN 0).")
    assert '$.number: expected "2", got "3" (FD, EXACT)' in rationale
    assert '$.vendor name: expected "Bolt", got null (FN, EXACT)' in rationale
    assert "$.total" not in rationale  # right fields are not listed


def test_metrics_and_fields_are_chosen_by_the_caller():
    scorer = FieldComparisonScorer(
        SCHEMA, name="receipt", metrics=["recall", "fd", "accuracy"], fields=["$.number", "total"]
    )
    values = {item.name: item.value for item in scorer(outputs=PREDICTED, expectations=EXPECTED)}
    assert values == {
        "receipt/recall": 0.5,
        "receipt/fd": 1.0,
        "receipt/accuracy": 1 / 3,
        "receipt/field/number/recall": None,  # FD is a false positive: TP + FN = 0
        "receipt/field/number/fd": 1.0,
        "receipt/field/number/accuracy": 0.0,
        "receipt/field/total/recall": 1.0,
        "receipt/field/total/fd": 0.0,
        "receipt/field/total/accuracy": 1.0,
    }
    assert list(values) == scorer.feedback_names()


def test_field_feedback_lists_only_that_fields_errors():
    scorer = FieldComparisonScorer(SCHEMA, metrics=["f1"], fields=["number"])
    field = by_name(scorer(outputs=PREDICTED, expectations=EXPECTED))["docevals/field/number/f1"]
    assert field.value == 0.0
    assert "$.number" in field.rationale
    assert "vendor" not in field.rationale


def test_undefined_metrics_are_none_with_the_reason():
    scorer = FieldComparisonScorer(SCHEMA, metrics=["precision", "recall", "f1"], fields=["gone"])
    feedback = by_name(scorer(outputs={}, expectations={"vendor name": "Bolt"}))
    assert feedback["docevals/precision"].value is None
    assert feedback["docevals/precision"].rationale.startswith(
        "precision is undefined: nothing was predicted (TP + FP = 0)."
    )
    assert feedback["docevals/recall"].value == 0.0
    assert feedback["docevals/f1"].value == 0.0
    assert feedback["docevals/field/gone/f1"].value is None
    assert (
        "Field 'gone' was not compared in this record."
        in feedback["docevals/field/gone/f1"].rationale
    )
    # Feedback with None is still a valid assessment (MLflow leaves it out of the mean).
    assert all(item.error is None for item in feedback.values())


def test_feedback_names_are_legal_metric_keys():
    scorer = FieldComparisonScorer(
        None,
        name="doc evals (v2) #1",
        metrics=SCORER_METRICS,
        fields=["$['Amount ($)']", "Transactions[].Amount", "a//b", "x=y"],
    )
    names = scorer.feedback_names()
    assert len(names) == len(set(names)) == 5 * len(SCORER_METRICS)
    for name in names:
        _validate_metric_name(name)
        _validate_metric_name(f"{name}/mean")  # what mlflow.genai.evaluate logs
    assert "doc evals _v2_ _1/field/Amount ___/f1" in names
    assert "doc evals _v2_ _1/field/Transactions.Amount/f1" in names


def test_outputs_may_be_json_text_and_expectations_may_be_nested():
    scorer = FieldComparisonScorer(SCHEMA, metrics=["f1"], expectation_key="document")
    feedback = scorer(outputs=json.dumps(PREDICTED), expectations={"document": EXPECTED})
    assert feedback[0].value == 0.5
    with pytest.raises(InputError, match=r"no 'document' entry \(they have: 'other'\)"):
        scorer(outputs=PREDICTED, expectations={"other": EXPECTED})


def test_document_class_selects_the_rules():
    schema = {
        "classes": [
            {"name": "Receipt", "fields": {"total": {"method": "NUMERIC_EXACT"}}},
            {"name": "Letter", "fields": {"total": {"method": "EXACT"}}},
        ]
    }
    outputs, expectations = {"total": 5}, {"total": "5.00"}
    receipt = FieldComparisonScorer(schema, metrics=["f1"], document_class="Receipt")
    letter = FieldComparisonScorer(schema, metrics=["f1"], document_class="Letter")
    assert receipt(outputs=outputs, expectations=expectations)[0].value == 1.0
    assert letter(outputs=outputs, expectations=expectations)[0].value == 0.0


def test_long_lists_of_wrong_fields_are_cut():
    expected = {f"f{index}": "a" for index in range(MAX_LISTED + 5)}
    feedback = FieldComparisonScorer(None, metrics=["f1"])(outputs={}, expectations=expected)
    assert feedback[0].rationale.endswith("; and 5 more")


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"metrics": ["f1", "f2"]}, "unknown scorer metrics: 'f2'"),
        ({"metrics": []}, "at least one metric"),
        ({"fields": ["total", ""]}, "fields must be field templates"),
        ({"fields": ["total", "$.total"]}, r"fields 'total' and '\$.total' name the same field"),
    ],
)
def test_bad_options_fail_when_the_scorer_is_built(options, problem):
    with pytest.raises(InputError, match=problem):
        FieldComparisonScorer(SCHEMA, **options)


@pytest.mark.parametrize(
    ("outputs", "expectations", "problem"),
    [
        ("{not json", EXPECTED, "outputs is not valid JSON"),
        (["a"], EXPECTED, "outputs is a list, not an object"),
        (PREDICTED, None, "no expectations"),
    ],
)
def test_bad_records_raise_input_errors(outputs, expectations, problem):
    with pytest.raises(InputError, match=problem):
        FieldComparisonScorer(SCHEMA)(outputs=outputs, expectations=expectations)


def test_mlflow_run_passes_only_what_the_scorer_takes():
    # Scorer.run is how mlflow.genai.evaluate calls a scorer; inputs and trace are dropped.
    feedback = FieldComparisonScorer(SCHEMA, metrics=["f1"]).run(
        inputs={"file": "r2.pdf"}, outputs=PREDICTED, expectations=EXPECTED, trace=None
    )
    assert [(item.name, item.value) for item in feedback] == [("docevals/f1", 0.5)]


# mlflow.genai.evaluate imports mlflow.pyfunc, which warns about MLflow's own `Any` type
# hints (mlflow.types.responses) the first time; nothing this test passes.
@pytest.mark.filterwarnings(r"ignore:.*Any type hint is inferred as AnyType:UserWarning:mlflow\..*")
def test_genai_evaluate_logs_mean_feedback_as_run_metrics(mlflow_store):
    records = [
        {"inputs": {"file": "r1.pdf"}, "outputs": EXPECTED, "expectations": EXPECTED},
        {"inputs": {"file": "r2.pdf"}, "outputs": PREDICTED, "expectations": EXPECTED},
        # Nothing expected and nothing predicted: precision, recall, F1 undefined.
        {"inputs": {"file": "r3.pdf"}, "outputs": {}, "expectations": {}},
    ]
    scorer = FieldComparisonScorer(SCHEMA, name="doc evals (v2)", fields=["vendor name"])
    with mlflow.start_run() as run:
        result = mlflow.genai.evaluate(data=records, scorers=[scorer])
    metrics = MlflowClient(mlflow_store).get_run(run.info.run_id).data.metrics
    # Means over the records where a metric is defined (r1: 1.0, r2: 0.5).
    assert metrics["doc evals _v2_/f1/mean"] == 0.75
    assert metrics["doc evals _v2_/precision/mean"] == 0.75
    assert metrics["doc evals _v2_/recall/mean"] == 0.75
    # vendor name: r1 TP (1.0), r2 FN (recall 0, precision undefined).
    assert metrics["doc evals _v2_/field/vendor name/recall/mean"] == 0.5
    assert metrics["doc evals _v2_/field/vendor name/precision/mean"] == 1.0
    assert result.metrics == pytest.approx(metrics)
    # One row per record (in no promised order); the undefined F1 shows as missing.
    f1 = result.result_df["doc evals _v2_/f1/value"]
    assert sorted(f1.dropna().tolist()) == [0.5, 1.0]
    assert f1.isna().sum() == 1
