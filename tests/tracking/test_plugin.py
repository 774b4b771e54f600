"""The ``docevals`` evaluator of ``mlflow.models.evaluate``, on temporary SQLite stores."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import mlflow
import pandas as pd
import pytest
import yaml
from mlflow.tracking import MlflowClient

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.tracking.plugin import (
    MODEL_TYPE,
    DocEvalsEvaluator,
    parse_cell,
    resolve_schema,
)

pytestmark = [
    # MLflow warns about its own `Any` type hints (mlflow.types.responses) the first time
    # mlflow.pyfunc is imported, which mlflow.models.evaluate does; nothing we pass.
    pytest.mark.filterwarnings(
        r"ignore:.*Any type hint is inferred as AnyType:UserWarning:mlflow\..*"
    ),
]

SCHEMA: dict[str, Any] = {
    "schema_id": "receipts",
    "version": "2",
    "classes": [
        {
            "name": "Receipt",
            "fields": {
                "number": {"method": "EXACT"},
                "total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                "vendor": {"method": "EXACT"},
            },
        }
    ],
}


def receipts() -> pd.DataFrame:
    """Three documents, cells as objects and as JSON text.

    r1: number TP, total TP ("10.00" vs 10), vendor FN (not predicted).
    r2: number FD ("2" vs "3"), total TP, vendor TP.
    r3: number TP, total TP, vendor FA (predicted where nothing was expected).
    """
    return pd.DataFrame(
        {
            "doc_id": ["r1", "r2", "r3"],
            "expected": [
                {"number": "1", "total": "10.00", "vendor": "ACME"},
                json.dumps({"number": "2", "total": "5.00", "vendor": "Bolt"}),
                {"number": "3", "total": "7.50", "vendor": None},
            ],
            "predicted": [
                {"number": "1", "total": 10},
                '{"number": "3", "total": 5, "vendor": "Bolt"}',
                {"number": "3", "total": 7.5, "vendor": "Cog"},
            ],
        }
    )


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


def evaluate(data: pd.DataFrame, **config: Any) -> Any:
    return mlflow.models.evaluate(
        data=data,
        predictions="predicted",
        targets="expected",
        model_type=MODEL_TYPE,
        evaluators="docevals",
        evaluator_config=config,
    )


def test_entry_point_registers_the_evaluator():
    # Imported here, not at the top: importing the registry imports mlflow.pyfunc, whose
    # warning the module's filter can only catch inside a test.
    from mlflow.models.evaluation.evaluator_registry import _model_evaluation_registry

    assert "docevals" in mlflow.models.list_evaluators()
    assert isinstance(_model_evaluation_registry.get_evaluator("docevals"), DocEvalsEvaluator)


@pytest.mark.parametrize(
    "model_type", ["classifier", "regressor", "question-answering", "text", None, "Document-AI"]
)
def test_only_document_ai_is_evaluated(model_type):
    assert not DocEvalsEvaluator.can_evaluate(model_type=model_type, evaluator_config={})
    assert DocEvalsEvaluator.can_evaluate(model_type="document-ai", evaluator_config={})


def test_evaluate_logs_field_metrics_into_the_active_run(mlflow_store, tmp_path):
    with mlflow.start_run() as run:
        result = evaluate(receipts(), schema=SCHEMA, id_col="doc_id")
        # Still the caller's run, still open: the evaluator neither ends nor replaces it.
        assert mlflow.active_run().info.run_id == run.info.run_id
    client = MlflowClient(mlflow_store)
    logged = client.get_run(run.info.run_id)
    metrics = logged.data.metrics
    # TP 6, FA 1, FD 1, FN 1: precision 6/8, recall 6/7, F1 12/15.
    assert metrics["overall/tp"] == 6
    assert metrics["overall/fa"] == 1
    assert metrics["overall/fd"] == 1
    assert metrics["overall/fn"] == 1
    assert metrics["Summary/precision"] == 0.75
    assert metrics["Summary/recall"] == 6 / 7
    assert metrics["Summary/f1"] == 0.8
    assert metrics["Summary/documents"] == 3
    assert metrics["overall/macro_f1"] == pytest.approx(0.8)
    assert metrics["field/number/precision"] == 2 / 3
    assert metrics["field/number/recall"] == 1.0
    assert metrics["field/number/f1"] == 0.8
    assert metrics["field/total/f1"] == 1.0
    assert metrics["field/vendor/f1"] == 0.5
    assert metrics["class/Receipt/f1"] == 0.8
    # Cells and FAR/FDR per field: the figure table, as in docevals fields runs.
    assert "field/vendor/fa" not in metrics
    assert "field/total/far" not in metrics
    # What evaluate() returns is exactly what the run holds.
    assert result.metrics == metrics

    # Metrics and artifacts only: the run's params and description stay the caller's.
    assert logged.data.params == {}
    assert "mlflow.note.content" not in logged.data.tags
    assert len(client.search_runs([logged.info.experiment_id])) == 1

    results = {item.path for item in client.list_artifacts(run.info.run_id, "results")}
    assert results == {"results/documents.parquet", "results/fields.parquet"}
    report_files = {item.path for item in client.list_artifacts(run.info.run_id, "report")}
    assert {"report/report.json", "report/report.md"} <= report_files
    report = json.loads(
        Path(
            client.download_artifacts(run.info.run_id, "report/report.json", str(tmp_path))
        ).read_text(encoding="utf-8")
    )
    assert report["schema"]["id"] == "receipts"
    assert [document["id"] for document in report["documents"]] == ["r1", "r2", "r3"]

    assert set(result.artifacts) == {
        "docevals_report_json",
        "docevals_report_md",
        "docevals_documents",
        "docevals_fields",
    }
    rows = result.artifacts["docevals_fields"].content
    wrong = rows[~rows["matched"]]
    assert sorted(zip(wrong["document_id"], wrong["path"], wrong["outcome"], strict=True)) == [
        ("r1", "$.vendor", "FN"),
        ("r2", "$.number", "FD"),
        ("r3", "$.vendor", "FA"),
    ]
    assert result.artifacts["docevals_report_json"].content["overall"]["documents"] == 3
    assert result.artifacts["docevals_report_md"].uri.endswith("report/report.md")


def test_rows_are_numbered_without_an_id_column(mlflow_store):
    with mlflow.start_run():
        result = evaluate(receipts().drop(columns="doc_id"), schema=SCHEMA)
    documents = result.artifacts["docevals_documents"].content
    assert documents["document_id"].tolist() == ["1", "2", "3"]
    assert result.metrics["Summary/f1"] == 0.8


def test_class_column_picks_the_schema_class(mlflow_store):
    schema = {
        "classes": [
            {"name": "Receipt", "fields": {"total": {"method": "NUMERIC_EXACT"}}},
            {"name": "Letter", "fields": {"total": {"method": "EXACT"}}},
        ]
    }
    data = pd.DataFrame(
        {
            "kind": ["Receipt", "Letter"],
            "expected": [{"total": "5.00"}, {"total": "5.00"}],
            "predicted": [{"total": 5}, {"total": 5}],
        }
    )
    with mlflow.start_run():
        result = evaluate(data, schema=schema, class_col="kind")
    # The same value matches as a number and not as exact text.
    assert result.metrics["class/Receipt/accuracy"] == 1
    assert result.metrics["class/Letter/accuracy"] == 0


def test_a_model_supplies_the_predictions(mlflow_store):
    data = pd.DataFrame(
        {"text": ["number 1", "number 2"], "expected": [{"number": "1"}, {"number": "2"}]}
    )

    def model(frame: pd.DataFrame) -> list[Any]:
        # The first document right, as an object; the second wrong, as JSON text.
        first, _ = frame["text"]
        return [{"number": first.split()[-1]}, json.dumps({"number": "x"})]

    with mlflow.start_run():
        result = mlflow.models.evaluate(
            model,
            data=data,
            targets="expected",
            model_type=MODEL_TYPE,
            evaluators="docevals",
        )
    assert result.metrics["overall/tp"] == 1
    assert result.metrics["overall/fd"] == 1


def test_a_cell_that_is_not_json_names_its_row(mlflow_store):
    data = receipts()
    data.loc[1, "predicted"] = "{number: 3"
    with mlflow.start_run() as run, pytest.raises(InputError) as caught:
        evaluate(data, schema=SCHEMA, id_col="doc_id")
    message = str(caught.value)
    assert caught.value.record == "2"
    assert message.startswith("record 2: the 'predicted' cell of document 'r2' is not valid JSON")
    assert "'{number: 3'" in message
    # Nothing was half-logged: the cells are all read before anything is compared.
    assert MlflowClient(mlflow_store).get_run(run.info.run_id).data.metrics == {}


@pytest.mark.parametrize(
    ("cell", "problem"),
    [
        (None, "is empty"),
        (float("nan"), "is empty"),
        ("[1, 2]", r"is not an object \(it holds a list value\)"),
        (42, r"is not an object \(it holds a int value\)"),
        ("", "is not valid JSON"),
    ],
)
def test_cells_must_hold_objects(cell, problem):
    with pytest.raises(InputError, match=problem) as caught:
        parse_cell(cell, column="expected", position=4)
    assert caught.value.record == "5"


def test_cells_may_be_objects_or_json_text():
    assert parse_cell({"a": 1}, column="x", position=0) == {"a": 1}
    assert parse_cell('{"a": "0123"}', column="x", position=0) == {"a": "0123"}
    assert parse_cell(b'{"a": 1}', column="x", position=0) == {"a": 1}


def test_schema_forms_agree(tmp_path):
    native = DocumentSchema.model_validate(SCHEMA)
    json_file = tmp_path / "schema.json"
    json_file.write_text(json.dumps(SCHEMA), encoding="utf-8")
    yaml_file = tmp_path / "schema.yaml"
    yaml_file.write_text(yaml.safe_dump(SCHEMA), encoding="utf-8")
    for form in (native, SCHEMA, json_file, str(yaml_file)):
        resolved = resolve_schema(form)
        assert resolved is not None
        assert resolved.sha256 == native.sha256
    assert resolve_schema(None) is None
    with pytest.raises(InputError, match="cannot read a schema from a list"):
        resolve_schema([SCHEMA])


def test_unknown_config_keys_are_refused(mlflow_store):
    with (
        mlflow.start_run(),
        pytest.raises(InputError, match=r"unknown evaluator_config keys.*shema"),
    ):
        evaluate(receipts(), shema=SCHEMA)


def test_a_missing_id_column_lists_the_columns(mlflow_store):
    with mlflow.start_run(), pytest.raises(InputError, match=r"'id'.*'doc_id'"):
        evaluate(receipts(), schema=SCHEMA, id_col="id")


def test_extra_metrics_are_refused_not_ignored():
    with pytest.raises(InputError, match="extra_metrics"):
        DocEvalsEvaluator().evaluate(
            model_type=MODEL_TYPE,
            dataset=None,
            run_id="unused",
            evaluator_config={},
            extra_metrics=[object()],
        )
