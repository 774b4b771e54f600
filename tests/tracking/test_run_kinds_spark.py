"""``SparkFieldComparison.log`` holds the run ``docevals fields`` logs for the same
documents, with ``docevals.engine=spark`` (see ``test_run_kinds_agree.py`` for the
other entry points)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import RunPrompt
from tests.tracking.test_run_kinds_agree import (
    ANNOTATIONS,
    FieldInputs,
    Held,
    assert_same_run,
    cli_run,
)

pytestmark = pytest.mark.spark


def test_spark_log_holds_the_cli_run(
    spark: Any, mlflow_store: str, tmp_path: Path, capsys: Any
) -> None:
    from docevals_mlflow.spark.inputs import compare_files_spark

    inputs = FieldInputs(tmp_path / "inputs")
    client = MlflowClient(mlflow_store)
    cli = cli_run(
        capsys, "fields", "--schema", inputs.schema_file,
        "--expected", inputs.expected, "--predicted", inputs.predicted,
        "--output", tmp_path / "report.json",
        "--prompt", inputs.prompt, "--param", "model=local-7b", "--tag", "team=billing",
        # Spark keeps no per-document cells per field: its runs have no intervals.
        "--no-intervals",
    )  # fmt: skip
    comparison = compare_files_spark(spark, inputs.expected, inputs.predicted, inputs.schema)
    try:
        # The schema is the comparison's own: not given again.
        logged = comparison.log(
            ground_truth=inputs.expected,
            prompt=RunPrompt("Extract the receipt.\n", file="extract.txt"),
            **ANNOTATIONS,
        )
    finally:
        comparison.unpersist()
    on_spark = Held(client, logged.run_id)
    assert_same_run(Held(client, cli), on_spark, absent=["docevals.engine"])
    assert on_spark.params["docevals.engine"] == "spark"
    assert "specs/schema.json" in on_spark.artifacts
