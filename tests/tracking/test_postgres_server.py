"""Runs logged through a real ``mlflow server`` backed by PostgreSQL, read back over HTTP.

The SQLite tests cover the layout; these cover what only a server shows: the REST
round trip of every param, metric, tag, artifact and dataset input, proxied artifact
uploads, the security middleware, and PostgreSQL as the store. The field comparison
is also logged to a temporary SQLite store and the two runs must be identical.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import (
    EvaluationCase,
    ExactStructuredMetric,
    PipelineCase,
    PipelineEvaluator,
    artifact_from_value,
)
from docevals_mlflow.cli import main
from docevals_mlflow.reports.dashboard import render_evaluation_dashboard
from docevals_mlflow.reports.files import render_markdown
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.bundle_folders import read_bundle
from docevals_mlflow.tracking.layout import layout_evaluation
from docevals_mlflow.tracking.runs import log_bundle
from tests.tracking.servers import (
    ROLE,
    MlflowServer,
    Postgres,
    log_tails,
    mlflow_server,
    postgres_bin_dir,
    postgres_server,
)

pytestmark = pytest.mark.server

SCHEMA = {
    "schema_id": "Rechnungen (Müller)",
    "version": "3",
    "classes": [
        {
            "name": "Invoice",
            "fields": {
                "number": {"method": "EXACT"},
                "vendor": {"method": "FUZZY", "threshold": 0.8},
                "due date": {"method": "EXACT"},
                "total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                "lines": {
                    "items": {
                        "fields": {
                            "sku": {"method": "EXACT"},
                            "amount": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                        }
                    }
                },
            },
        }
    ],
}
# Four paired invoices with a correct one, a wrong number, a missing total, a line read
# as another (a weak pair); one prediction without ground truth (the unpaired metrics). The
# non-ASCII schema id and vendor must survive PostgreSQL (a param) and HTTP (artifacts).
EXPECTED = [
    {
        "id": "inv-1",
        "class": "Invoice",
        "data": {
            "number": "A-1",
            "vendor": "Müller GmbH",
            "due date": "2026-01-31",
            "total": "120.00",
            "lines": [{"sku": "X1", "amount": "100.00"}, {"sku": "X2", "amount": "20.00"}],
        },
    },
    {
        "id": "inv-2",
        "class": "Invoice",
        "data": {
            "number": "A-2",
            "vendor": "ACME Corp",
            "due date": "2026-02-28",
            "total": "15.50",
            "lines": [{"sku": "Y1", "amount": "15.50"}],
        },
    },
    {
        "id": "inv-3",
        "class": "Invoice",
        "data": {
            "number": "A-3",
            "vendor": "Globex",
            "due date": "2026-03-31",
            "total": "99.99",
            "lines": [{"sku": "Z1", "amount": "50.00"}, {"sku": "Z2", "amount": "49.99"}],
        },
    },
    {
        "id": "inv-4",
        "class": "Invoice",
        "data": {
            "number": "A-4",
            "vendor": "Initech",
            "due date": "2026-04-30",
            "total": "7.00",
            "lines": [],
        },
    },
]
PREDICTED = [
    {"id": "inv-1", "class": "Invoice", "data": EXPECTED[0]["data"]},
    {
        "id": "inv-2",
        "class": "Invoice",
        "data": {
            "number": "A-20",
            "vendor": "ACME Corp.",
            "due date": "2026-02-28",
            "lines": [{"sku": "Y1", "amount": 15.5}],
        },
    },
    {
        "id": "inv-3",
        "class": "Invoice",
        "data": {
            "number": "A-3",
            "vendor": "Globex",
            "due date": "2026-03-31",
            "total": 99.99,
            "lines": [{"sku": "Z2", "amount": "49.99"}, {"sku": "Q9", "amount": "1.00"}],
        },
    },
    {"id": "inv-4", "class": "Invoice", "data": EXPECTED[3]["data"]},
    {"id": "inv-9", "class": "Invoice", "data": {"number": "A-9"}},
]
EXPERIMENT = "server-parity"


@dataclass
class Servers:
    postgres: Postgres
    mlflow: MlflowServer

    @property
    def url(self) -> str:
        return self.mlflow.url


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """PostgreSQL and an MLflow server on it, shared by this module's tests (startup
    costs seconds; each test uses its own experiment)."""
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL server programs (initdb, pg_ctl, postgres, createdb) not found on "
            "PATH or in /usr/lib/postgresql/*/bin; install the 'postgresql' package"
        )
    # Binaries present but no driver is a broken dev setup, not a reason to skip.
    if importlib.util.find_spec("psycopg2") is None:
        pytest.fail("psycopg2 is not installed; MLflow needs it for PostgreSQL (dev extra)")
    with (
        postgres_server(bin_dir) as postgres,
        mlflow_server(postgres.url, tmp_path_factory.mktemp("mlflow-server")) as mlflow,
    ):
        yield Servers(postgres, mlflow)


@pytest.fixture
def server(servers: Servers, monkeypatch: pytest.MonkeyPatch) -> Iterator[Servers]:
    """The servers, with the environment a client needs to reach them."""
    monkeypatch.delenv("DOCEVALS_NO_MLFLOW", raising=False)
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    # A proxy set in the environment (common on CI) must not take loopback requests.
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, ",".join(filter(None, [os.environ.get(name), "127.0.0.1"])))
    yield servers
    # pytest shows a test's teardown output only when the test failed: then the
    # servers' side of the story sits next to the assertion.
    print(log_tails([*servers.postgres.logs, servers.mlflow.log]))


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records),
        encoding="utf-8",
    )
    return path


def run_id_from(output: str) -> str:
    match = re.search(r"MLflow run ([0-9a-f]{32})", output)
    assert match, output
    return match.group(1)


def comparable(metrics: dict[str, float]) -> dict[str, Any]:
    """Metrics with NaN made equal to itself, so that dicts compare."""
    return {key: "NaN" if math.isnan(value) else value for key, value in metrics.items()}


def artifact_sizes(client: MlflowClient, run_id: str, path: str | None = None) -> dict[str, int]:
    """Every artifact file of a run (walking folders) and its size."""
    sizes: dict[str, int] = {}
    for item in client.list_artifacts(run_id, path):
        if item.is_dir:
            sizes.update(artifact_sizes(client, run_id, item.path))
        else:
            sizes[item.path] = item.file_size
    return sizes


def artifact_digests(client: MlflowClient, run_id: str, destination: Path) -> dict[str, str]:
    """SHA-256 of every artifact file of a run, downloaded through the client."""
    destination.mkdir(parents=True)
    root = Path(client.download_artifacts(run_id, "", str(destination)))
    return {
        file.relative_to(root).as_posix(): hashlib.sha256(file.read_bytes()).hexdigest()
        for file in root.rglob("*")
        if file.is_file()
    }


def dataset_inputs(run: Any) -> list[dict[str, Any]]:
    """A run's dataset inputs as plain data (everything MLflow stores about them)."""
    return [
        {
            "name": entry.dataset.name,
            "digest": entry.dataset.digest,
            "source_type": entry.dataset.source_type,
            "source": entry.dataset.source,
            "schema": entry.dataset.schema,
            "profile": entry.dataset.profile,
            "tags": {tag.key: tag.value for tag in entry.tags},
        }
        for entry in run.inputs.dataset_inputs
    ]


def postgres_counts(postgres: Postgres, run_id: str) -> dict[str, int]:
    """Rows of a run in PostgreSQL itself: proof that the server stored it there."""
    import psycopg2

    connection = psycopg2.connect(
        host="127.0.0.1", port=postgres.port, user=ROLE, dbname=postgres.database
    )
    try:
        with connection.cursor() as cursor:
            counts = {}
            for table in ("params", "latest_metrics", "tags"):
                cursor.execute(f"SELECT count(*) FROM {table} WHERE run_uuid = %s", (run_id,))
                counts[table] = cursor.fetchone()[0]
            return counts
    finally:
        connection.close()


def test_fields_run_over_http_equals_the_sqlite_run(server, mlflow_store, tmp_path, capsys):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    schema = inputs / "schema.json"
    schema.write_text(json.dumps(SCHEMA, ensure_ascii=False), encoding="utf-8")
    expected = write_jsonl(inputs / "expected.jsonl", EXPECTED)
    predicted = write_jsonl(inputs / "predicted.jsonl", PREDICTED)

    def docevals_fields(tracking_uri: str, folder: Path) -> str:
        folder.mkdir()
        code = main(
            [
                "fields",
                *("--schema", str(schema), "--expected", str(expected)),
                *("--predicted", str(predicted), "--output", str(folder / "report.json")),
                *("--tracking-uri", tracking_uri, "--experiment", EXPERIMENT),
                *("--run-name", "invoices-v1", "--fail-under", "f1=0.5"),
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        # A failed upload would still exit 0 and keep the bundle: check it did not.
        assert "not logged to MLflow" not in err, err
        return run_id_from(out)

    remote_id = docevals_fields(server.url, tmp_path / "http")
    local_id = docevals_fields(mlflow_store, tmp_path / "sqlite")
    remote, local = MlflowClient(server.url), MlflowClient(mlflow_store)
    remote_run, local_run = remote.get_run(remote_id), local.get_run(local_id)

    assert remote_run.info.status == local_run.info.status == "FINISHED"
    assert remote_run.info.run_name == local_run.info.run_name == "invoices-v1"
    assert remote.get_experiment(remote_run.info.experiment_id).name == EXPERIMENT
    assert remote_run.data.params == local_run.data.params
    assert comparable(remote_run.data.metrics) == comparable(local_run.data.metrics)
    assert remote_run.data.tags == local_run.data.tags
    assert dataset_inputs(remote_run) == dataset_inputs(local_run)
    remote_sizes = artifact_sizes(remote, remote_id)
    assert remote_sizes == artifact_sizes(local, local_id)
    assert artifact_digests(remote, remote_id, tmp_path / "remote-artifacts") == (
        artifact_digests(local, local_id, tmp_path / "local-artifacts")
    )

    # Equal to SQLite is only worth something if both hold the evaluation at all.
    params, metrics, tags = remote_run.data.params, remote_run.data.metrics, remote_run.data.tags
    # Non-ASCII text came back intact from PostgreSQL.
    assert params["schema.id"] == "Rechnungen (Müller)"
    assert params["schema.version"] == "3"
    assert metrics["Summary/documents"] == 4
    assert metrics["unpaired/predicted_only"] == 1
    # Cells and list counts are in the run's figure tables, read back from the server.
    from docevals_mlflow import load_run_snapshot

    figures = load_run_snapshot(remote_id, tracking_uri=server.url).metrics
    assert figures["field/number/fd"] == 1
    assert figures["field/due date/tp"] == 4
    assert figures["field/lines.sku/tp"] == 4  # X1, X2, Y1, Z2
    # Z1 against the invented Q9: paired as Stickler 1.0 pairs min(m, n) items, weak.
    assert figures["list/lines/weak"] == 1
    assert (figures["list/lines/missed"], figures["list/lines/extra"]) == (0, 0)
    assert tags["docevals.report_kind"] == "fields"
    assert tags["docevals.verdict"] == "pass"
    assert {
        "metrics_index.json",
        "report/report.json",
        "report/report.md",
        "report/dashboard.html",
        "results/documents.parquet",
        "results/fields.parquet",
        "specs/schema.json",
        "inputs/ground_truth.parquet",
    } <= set(remote_sizes)
    (dataset,) = dataset_inputs(remote_run)
    assert dataset["name"] == "expected"
    assert dataset["tags"]["mlflow.data.context"] == "ground_truth"
    # One history entry per metric: the batches did not log anything twice.
    (point,) = remote.get_metric_history(remote_id, "Summary/f1")
    assert point.step == 0

    # The server stored the run in PostgreSQL and the artifacts in its destination.
    assert postgres_counts(server.postgres, remote_id) == {
        "params": len(params),
        "latest_metrics": len(metrics),
        "tags": len(tags),
    }
    stored = {
        path.relative_to(folder).as_posix()
        for folder in server.mlflow.artifacts.rglob(f"{remote_id}/artifacts")
        for path in folder.rglob("*")
        if path.is_file()
    }
    assert stored == set(remote_sizes)


def pipeline_report() -> Any:
    """Two stages, each with its own ground truth; the classification is wrong."""
    extract = EvaluationCase(
        case_id="statement-7",
        stage_id="extract",
        operation="extract",
        prediction={"iban": "DE02", "balance": 10.5},
        references=[
            artifact_from_value(
                {"iban": "DE02", "balance": 10.5}, authority="ground_truth", artifact_id="fields"
            )
        ],
    )
    classify = EvaluationCase(
        case_id="statement-7",
        stage_id="classify",
        operation="classify",
        input_data={"iban": "DE02"},
        prediction={"type": "invoice"},
        references=[
            artifact_from_value(
                {"type": "bank statement"}, authority="ground_truth", artifact_id="label"
            )
        ],
        depends_on=["extract"],
    )
    return PipelineEvaluator(
        operation_metrics={
            "extract": [ExactStructuredMetric()],
            "classify": [ExactStructuredMetric()],
        }
    ).evaluate(PipelineCase(pipeline_id="statement-7", stages=[extract, classify]))


def test_pipeline_run_over_http_keeps_its_ground_truth_dataset(server, tmp_path):
    report = pipeline_report()
    writer = BundleWriter(run_name="statement-7")
    # As `docevals evaluate-pipeline` builds its bundle.
    layout_evaluation(
        writer,
        report,
        markdown=render_markdown(report),
        dashboard=render_evaluation_dashboard(report),
    )
    folder = writer.write(tmp_path / "bundle")
    logged = log_bundle(folder, tracking_uri=server.url, experiment="server-pipeline")
    bundle, artifacts = read_bundle(folder)
    client = MlflowClient(server.url)
    run = client.get_run(logged.run_id)

    assert run.info.status == "FINISHED"
    assert run.info.run_name == "statement-7"
    assert run.data.params == bundle.params
    assert comparable(run.data.metrics) == comparable(bundle.metrics)
    # MLflow adds its own tags (the run name); every tag of the bundle must be there as is.
    assert {key: run.data.tags.get(key) for key in bundle.tags} == bundle.tags
    assert run.data.tags["docevals.verdict"] == "fail"
    assert artifact_sizes(client, logged.run_id) == {
        path.relative_to(artifacts).as_posix(): path.stat().st_size
        for path in artifacts.rglob("*")
        if path.is_file()
    }

    (dataset,) = dataset_inputs(run)
    (expected,) = bundle.inputs
    records = pd.read_parquet(artifacts / expected.records)
    assert dataset["name"] == expected.name == "statement-7-ground-truth"
    assert dataset["digest"] == expected.digest
    assert dataset["tags"]["mlflow.data.context"] == "ground_truth"
    assert json.loads(dataset["profile"]) == {"num_rows": len(records)} == {"num_rows": 2}
    # The dataset is searchable on the server, as the docs tell users to search it.
    found = client.search_runs(
        [logged.experiment_id],
        filter_string=f"datasets.name = '{expected.name}' AND datasets.context = 'ground_truth'",
    )
    assert [found_run.info.run_id for found_run in found] == [logged.run_id]
