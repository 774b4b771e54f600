"""The store schema the direct SQLite path writes (:mod:`~docevals_mlflow.tracking.direct_store`).

The rows it writes are those MLflow's ``SqlAlchemyStore`` writes at one Alembic
revision, checked by ``tests/tracking/test_direct_store.py`` against the installed
MLflow. A store at any other revision, or an MLflow whose head is another, is left
to MLflow: the direct path never guesses at a schema it was not checked against.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from docevals_mlflow.tracking.store_schema import scanned_revisions

VERIFIED_REVISION = "dc11669786a5"
"""The Alembic revision (MLflow 3.17's head) whose rows the direct path writes."""
VERIFIED_TABLES = frozenset(
    {
        "assessments",
        "budget_policies",
        "datasets",
        "endpoint_bindings",
        "endpoint_model_mappings",
        "endpoint_tags",
        "endpoints",
        "entity_associations",
        "evaluation_dataset_records",
        "evaluation_dataset_tags",
        "evaluation_datasets",
        "experiment_tags",
        "experiments",
        "guardrail_configs",
        "guardrails",
        "input_tags",
        "inputs",
        "issues",
        "job_locks",
        "jobs",
        "label_schemas",
        "latest_metrics",
        "logged_model_metrics",
        "logged_model_params",
        "logged_model_tags",
        "logged_models",
        "mcp_access_endpoints",
        "mcp_server_aliases",
        "mcp_server_tags",
        "mcp_server_version_tags",
        "mcp_server_versions",
        "mcp_servers",
        "metrics",
        "model_definitions",
        "model_version_tags",
        "model_versions",
        "online_scoring_configs",
        "params",
        "registered_model_aliases",
        "registered_model_tags",
        "registered_models",
        "review_queue_items",
        "review_queue_label_schemas",
        "review_queue_users",
        "review_queues",
        "runs",
        "scheduler_leases",
        "scorer_versions",
        "scorers",
        "secrets",
        "span_metrics",
        "spans",
        "sql_assessment_daily_rollups",
        "sql_span_cost_daily_rollups",
        "sql_trace_metric_daily_rollups",
        "sql_trace_rollup_rebuild_queue",
        "tags",
        "trace_info",
        "trace_metrics",
        "trace_request_metadata",
        "trace_tags",
        "webhook_events",
        "webhooks",
        "workspaces",
    }
)
"""The tables MLflow's models define at :data:`VERIFIED_REVISION` (the test checks them
against ``store_schema.expected_tables``, which imports MLflow's models)."""


def installed_head() -> str | None:
    """The head revision of the installed MLflow's migrations, read without importing
    mlflow (``None`` when they cannot be read)."""
    scanned = scanned_revisions()
    return scanned[0] if scanned else None


def direct_schema_ready(connection: sqlite3.Connection) -> bool:
    """Whether the store open on ``connection`` is at :data:`VERIFIED_REVISION`, which
    the installed MLflow also migrates to, with every table of it (so neither outdated,
    newer nor half-migrated)."""
    if installed_head() != VERIFIED_REVISION:
        return False
    try:
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if any(name.startswith("_alembic_tmp_") for name in tables):
            return False
        if "alembic_version" not in tables or not tables >= VERIFIED_TABLES:
            return False
        revisions = [
            row[0] for row in connection.execute("SELECT version_num FROM alembic_version")
        ]
    except sqlite3.DatabaseError:
        return False
    return revisions == [VERIFIED_REVISION]


def store_file_ready(path: Path) -> bool:
    """:func:`direct_schema_ready` for the file at ``path``, read-only."""
    if not path.is_file():
        return False
    try:
        with contextlib.closing(
            sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
        ) as connection:
            return direct_schema_ready(connection)
    except sqlite3.Error:
        return False


__all__ = [
    "VERIFIED_REVISION",
    "VERIFIED_TABLES",
    "direct_schema_ready",
    "installed_head",
    "store_file_ready",
]
