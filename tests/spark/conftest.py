"""One local Spark session (``local[2]``) for every Spark test: starting one costs
seconds, so the Spark tests share it; it stops when they are done, so the JVM does
not compete with the rest of the suite for the CPUs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="package")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark", reason="needs the spark extra")
    from docevals_mlflow.spark.session import spark_session

    session = spark_session("local[2]", app_name="docevals-tests")
    # Small data: two shuffle partitions instead of 200 keep every job short.
    session.conf.set("spark.sql.shuffle.partitions", "2")
    # Timestamps are written in the session's zone: the same text on any machine.
    session.conf.set("spark.sql.session.timeZone", "UTC")
    yield session
    session.stop()
