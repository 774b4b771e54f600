"""The ``docevals`` evaluator for ``mlflow.models.evaluate`` (model type ``document-ai``).

Registered through the ``mlflow.model_evaluator`` entry point group, so once the
package is installed::

    with mlflow.start_run():
        result = mlflow.models.evaluate(
            data=frame,                     # one row per document
            predictions="predicted",        # JSON object (or JSON text) per cell
            targets="expected",
            model_type="document-ai",
            evaluators="docevals",
            evaluator_config={"schema": "schema.yaml", "id_col": "id"},
        )

The comparison is :func:`~docevals_mlflow.fields.batch.compare_documents`; the run is
assembled by :func:`~docevals_mlflow.tracking.assembly.assemble_fields`, as ``docevals
fields`` and ``log_field_comparison`` assemble theirs (the schema included, as
``specs/schema.json``), so runs made either way read the same.

Only metrics, artifacts and the documents' traces (one per document, linked to the
run, as ``docevals fields`` logs them) go into the run. Params and tags are left alone: the run
belongs to the caller, who may evaluate several times in it (params are immutable in
MLflow) and owns its description (``mlflow.note.content``). The ground truth is the
evaluation dataset, which ``mlflow.models.evaluate`` logs as the run's input itself.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
import time
from collections.abc import Mapping
from typing import Any

from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.batch import DocumentPair, compare_documents
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.tracking.assembly import assemble_fields
from docevals_mlflow.tracking.bundle import ARTIFACTS, BundleWriter
from docevals_mlflow.tracking.options import RunOptions
from docevals_mlflow.tracking.run_contents import BATCH_METRICS, chunks
from docevals_mlflow.tracking.runs import TrackingError

MODEL_TYPE = "document-ai"
"""The ``model_type`` this evaluator answers to (and the only one)."""

CONFIG_KEYS: tuple[str, ...] = ("schema", "id_col", "class_col", "traces")
"""The ``evaluator_config`` keys the evaluator reads; any other key is an error."""

RESULT_ARTIFACTS: dict[str, str] = {
    "docevals_report_json": "report/report.json",
    "docevals_report_md": "report/report.md",
    "docevals_documents": "results/documents.parquet",
    "docevals_fields": "results/fields.parquet",
}
"""Name in ``EvaluationResult.artifacts`` → artifact path in the run.

MLflow merges the artifacts of every evaluator of one ``evaluate`` call into one dict,
so the names carry a ``docevals_`` prefix to stay clear of other evaluators'."""

_SCHEMA_SOURCE = "evaluator_config['schema']"


def resolve_schema(value: Any) -> DocumentSchema | None:
    """The schema given as ``evaluator_config["schema"]``.

    Accepts a :class:`DocumentSchema`, a dict in any form
    :meth:`DocumentSchema.from_dict` reads (native, IDP configuration, JSON Schema), a
    path to a schema file, or ``None`` (every field compared by inferred rules).
    """
    if value is None or isinstance(value, DocumentSchema):
        return value
    if isinstance(value, Mapping):
        return DocumentSchema.from_dict(value, source=_SCHEMA_SOURCE)
    if isinstance(value, str | os.PathLike):
        return DocumentSchema.load(value)
    raise InputError(
        f"cannot read a schema from a {type(value).__name__}",
        source=_SCHEMA_SOURCE,
        expected="a DocumentSchema, a dict, or the path of a .json/.yaml schema file",
    )


def _is_missing(value: Any) -> bool:
    # pandas turns absent cells into None or NaN depending on the column's dtype.
    return value is None or (isinstance(value, float) and math.isnan(value))


def _cell_name(column: str, document_id: str | None) -> str:
    """How an error names a cell; the row itself is the error's ``record`` (1-based)."""
    cell = f"the {column!r} cell"
    return cell if document_id is None else f"{cell} of document {document_id!r}"


def parse_cell(value: Any, *, column: str, position: int, document_id: str | None = None) -> Any:
    """One predictions/targets cell as a document object.

    A cell holds the document itself (a mapping) or its JSON text. Anything else is
    an :class:`InputError` whose ``record`` is the 1-based row and whose message names
    the column (and the document id, when the dataset has an id column). A document
    with nothing extracted is ``{}``, not an empty cell, so a missing value is never
    guessed at.
    """
    cell = _cell_name(column, document_id)
    if isinstance(value, bytes | bytearray):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{cell} is not valid JSON ({exc.msg} at character {exc.pos}): {value[:60]!r}",
                record=position + 1,
                expected="a JSON object, or its text",
            ) from None
    if _is_missing(value):
        raise InputError(
            f"{cell} is empty",
            record=position + 1,
            expected="a JSON object ({} for a document with nothing extracted)",
        )
    if not isinstance(value, Mapping):
        raise InputError(
            f"{cell} is not an object (it holds a {type(value).__name__} value)",
            record=position + 1,
            expected="a JSON object, or its text",
        )
    return value


def _column(features: Any, name: str, key: str) -> list[Any]:
    columns = list(getattr(features, "columns", ()))
    if name not in columns:
        shown = ", ".join(repr(str(column)) for column in columns) or "none"
        raise InputError(
            f"evaluator_config[{key!r}] names column {name!r}, which the dataset does not have "
            f"(its columns: {shown})",
            expected="the name of a column of the evaluation DataFrame",
        )
    return list(features[name])


def _predictions(dataset: Any, model: Any, output_column: str | None) -> list[Any]:
    """The prediction cells: the dataset's predictions column, else the model's output."""
    if dataset.predictions_data is not None:
        return list(dataset.predictions_data)
    if model is None:
        raise InputError(
            "the dataset has no predictions and no model was given",
            expected="mlflow.models.evaluate(..., predictions='<column>') or a model",
        )
    output = model.predict(dataset.features_data)
    columns = list(getattr(output, "columns", ()))
    if columns:
        # A model that returns a DataFrame names its output column with `predictions=`;
        # a one-column output needs no name.
        if output_column is None and len(columns) == 1:
            output_column = columns[0]
        if output_column not in columns:
            raise InputError(
                f"the model returned columns {columns}; pass predictions='<column>' to say "
                "which one holds the documents"
            )
        return list(output[output_column])
    return list(output)


def _document_id(ids: list[Any], position: int, id_col: Any) -> str:
    if _is_missing(ids[position]):
        raise InputError(
            f"the {id_col!r} cell is empty",
            record=position + 1,
            expected="an id for every document",
        )
    return str(ids[position])


def document_pairs(
    dataset: Any,
    evaluator_config: Mapping[str, Any],
    *,
    model: Any = None,
    predictions: str | None = None,
) -> list[DocumentPair]:
    """The documents of an MLflow evaluation dataset, one per row, parsed and validated.

    ``id_col`` and ``class_col`` (from ``evaluator_config``) name feature columns
    holding each document's id and class; without ``id_col`` documents are numbered
    from 1 in row order.
    """
    if dataset.labels_data is None:
        raise InputError(
            "the dataset has no targets (expected documents)",
            expected="mlflow.models.evaluate(..., targets='<column>')",
        )
    expected = list(dataset.labels_data)
    predicted = _predictions(dataset, model, predictions)
    if len(predicted) != len(expected):
        raise InputError(
            f"{len(predicted)} predictions for {len(expected)} targets",
            expected="one prediction per dataset row",
        )
    features = dataset.features_data
    id_col = evaluator_config.get("id_col")
    class_col = evaluator_config.get("class_col")
    ids = _column(features, id_col, "id_col") if id_col is not None else None
    classes = _column(features, class_col, "class_col") if class_col is not None else None
    pairs = []
    for position, (target, prediction) in enumerate(zip(expected, predicted, strict=True)):
        document_id = None if ids is None else _document_id(ids, position, id_col)
        document_class = None if classes is None else classes[position]
        pairs.append(
            DocumentPair(
                id=document_id if document_id is not None else str(position + 1),
                expected=parse_cell(
                    target,
                    column=dataset.targets_name or "targets",
                    position=position,
                    document_id=document_id,
                ),
                predicted=parse_cell(
                    prediction,
                    column=dataset.predictions_name or "predictions",
                    position=position,
                    document_id=document_id,
                ),
                document_class=None if _is_missing(document_class) else str(document_class),
            )
        )
    return pairs


def log_bundle_into_run(client: Any, run_id: str, writer: BundleWriter) -> None:
    """Log a bundle's metrics and artifacts into an existing, open run.

    Unlike :func:`~docevals_mlflow.tracking.runs.log_bundle` this leaves the run's
    params, tags, dataset inputs and status alone: the run is the caller's, and
    ``mlflow.models.evaluate`` ends it (or not) itself.
    """
    from mlflow.entities import Metric
    from mlflow.exceptions import MlflowException

    now = int(time.time() * 1000)
    metrics = [Metric(key, value, now, 0) for key, value in sorted(writer.bundle.metrics.items())]
    try:
        # One call per store batch, never one per metric (thousands of fields are normal).
        for part in chunks(metrics, BATCH_METRICS):
            client.log_batch(run_id, metrics=part)
        with tempfile.TemporaryDirectory(prefix="docevals-evaluate-") as temporary:
            root = writer.write(temporary)
            if (root / ARTIFACTS).is_dir():
                client.log_artifacts(run_id, str(root / ARTIFACTS))
    except MlflowException as exc:
        raise TrackingError(f"MLflow refused the evaluation results: {exc.message}") from None


def log_traces_into_run(client: Any, run_id: str, traces: list[Any]) -> None:
    """Log the documents' traces linked to the caller's run. Traces are a view of the
    run: if they cannot be written, a warning says why and the evaluation stands."""
    if not traces:
        return
    import warnings

    from docevals_mlflow.tracking.trace_store import log_traces

    try:
        log_traces(client, run_id, client.get_run(run_id).info.experiment_id, traces)
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        warnings.warn(
            f"docevals: the documents' traces were not logged ({type(exc).__name__}: {reason})",
            RuntimeWarning,
            stacklevel=2,
        )


def _result_artifacts(run_id: str, writer: BundleWriter) -> dict[str, Any]:
    import pandas as pd
    from mlflow.models.evaluation.artifacts import (
        JsonEvaluationArtifact,
        ParquetEvaluationArtifact,
        TextEvaluationArtifact,
    )
    from mlflow.tracking.artifact_utils import get_artifact_uri

    # MLflow leaves these constructors unannotated; strict mypy needs the ignores below.
    artifacts: dict[str, Any] = {}
    for name, path in RESULT_ARTIFACTS.items():
        data = writer.files.get(path)
        if data is None:
            # results/fields.parquet is absent when no document had a single field.
            continue
        uri = get_artifact_uri(run_id=run_id, artifact_path=path)  # type: ignore[no-untyped-call]
        # Content is attached so that reading it does not download what was just uploaded.
        if path.endswith(".json"):
            artifacts[name] = JsonEvaluationArtifact(  # type: ignore[no-untyped-call]
                uri=uri, content=json.loads(data)
            )
        elif path.endswith(".parquet"):
            artifacts[name] = ParquetEvaluationArtifact(  # type: ignore[no-untyped-call]
                uri=uri, content=pd.read_parquet(io.BytesIO(data))
            )
        else:
            artifacts[name] = TextEvaluationArtifact(  # type: ignore[no-untyped-call]
                uri=uri, content=data.decode("utf-8")
            )
    return artifacts


def evaluate_documents(
    dataset: Any,
    run_id: str,
    evaluator_config: Mapping[str, Any] | None,
    *,
    model: Any = None,
    predictions: str | None = None,
) -> EvaluationResult:
    """Compare the dataset's documents and log the figures into ``run_id``.

    The work behind :meth:`DocEvalsEvaluator.evaluate`, callable without the
    evaluator registry. Returns MLflow's ``EvaluationResult`` with every logged metric
    and the report and result tables as artifacts.
    """
    from mlflow.tracking import MlflowClient

    config = dict(evaluator_config or {})
    unknown = sorted(str(key) for key in config if key not in CONFIG_KEYS)
    if unknown:
        raise InputError(
            f"unknown evaluator_config keys for the docevals evaluator: {', '.join(unknown)}",
            expected=", ".join(CONFIG_KEYS),
        )
    # The schema first: a broken schema should fail before any document is read.
    schema = resolve_schema(config.get("schema"))
    client = MlflowClient()
    # The caller's store and experiment: where the traces' baseline run is looked for.
    experiment = client.get_experiment(client.get_run(run_id).info.experiment_id)
    options = RunOptions(
        schema=schema,
        traces=config.get("traces"),
        tracking_uri=client.tracking_uri,
        experiment=experiment.name,
    )
    pairs = document_pairs(dataset, config, model=model, predictions=predictions)
    report = compare_documents(pairs, schema).to_report()
    # The run every other entry point assembles for a field comparison; only its
    # metrics, artifacts and traces are logged (see the module docstring).
    assembled = assemble_fields(report, options)
    writer = assembled.writer
    log_bundle_into_run(client, run_id, writer)
    log_traces_into_run(client, run_id, assembled.traces)
    return EvaluationResult(  # type: ignore[no-untyped-call]  # unannotated in MLflow
        metrics=dict(writer.bundle.metrics),
        artifacts=_result_artifacts(run_id, writer),
        run_id=run_id,
    )


class DocEvalsEvaluator(ModelEvaluator):
    """Field-level evaluation of document extraction for ``mlflow.models.evaluate``.

    ``evaluator_config``:

    * ``schema``: a :class:`DocumentSchema`, a schema dict (native, IDP or JSON Schema
      form) or the path of a schema file; without one every field is compared by
      inferred rules.
    * ``id_col``: a column of document ids (default: rows numbered from 1).
    * ``class_col``: a column of document classes (default: the schema's default class).
    * ``traces``: which documents get an MLflow trace linked to the run (``all``,
      ``errors``, a whole number, ``none``; default: every document up to 1,000,
      then the wrong ones first).

    Each predictions/targets cell is a JSON object or its text. Metrics are logged
    with the keys of ``docevals fields`` runs: ``Summary/f1``, ``field/<field>/f1``,
    ``class/<class>/recall``, ``list/<list>/far`` ...
    """

    @classmethod
    def can_evaluate(cls, *, model_type: Any, evaluator_config: Any, **kwargs: Any) -> bool:
        """True only for ``model_type="document-ai"``.

        MLflow asks every registered evaluator when ``evaluators`` is not given; this
        one must never volunteer for classifiers, regressors or other plugins' types.
        """
        return bool(model_type == MODEL_TYPE)

    def evaluate(
        self,
        *,
        model_type: Any,
        dataset: Any,
        run_id: str,
        evaluator_config: Any,
        model: Any = None,
        extra_metrics: Any = None,
        custom_artifacts: Any = None,
        predictions: str | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        """Compare predicted with expected documents and log the results into ``run_id``.

        ``extra_metrics`` and ``custom_artifacts`` are MLflow's hooks for the built-in
        evaluators' metric tables; they do not apply to document comparisons and are
        rejected rather than silently ignored.
        """
        if extra_metrics or custom_artifacts:
            raise InputError(
                "the docevals evaluator does not take extra_metrics or custom_artifacts",
                expected="field rules in evaluator_config['schema']",
            )
        return evaluate_documents(
            dataset, run_id, evaluator_config, model=model, predictions=predictions
        )


__all__ = [
    "CONFIG_KEYS",
    "MODEL_TYPE",
    "RESULT_ARTIFACTS",
    "DocEvalsEvaluator",
    "document_pairs",
    "evaluate_documents",
    "log_bundle_into_run",
    "log_traces_into_run",
    "parse_cell",
    "resolve_schema",
]
