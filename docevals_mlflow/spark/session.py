"""A Spark session for ``docevals fields --spark`` and the tests."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

from docevals_mlflow.errors import ConfigurationError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"


@contextlib.contextmanager
def quiet_pandas_check() -> Iterator[None]:
    """Silence PySpark's warning that it does not fully support pandas 3.

    PySpark checks the pandas version whenever an Arrow-based function is set up,
    even ``mapInArrow``, which hands Arrow batches over and never uses pandas here.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        yield


def require_pyspark() -> None:
    """Fail with the install command when pyspark is missing.

    Raises:
        ConfigurationError: pyspark cannot be imported.
    """
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            "Spark support needs pyspark",
            expected="pip install 'docevals-mlflow[spark]' (and Java 17 or newer)",
        ) from None


def spark_session(master: str = DEFAULT_MASTER, *, app_name: str = "docevals") -> SparkSession:
    """The active Spark session, or a new one on ``master``.

    A local master (``local``, ``local[N]``, ``local[*]``) binds to 127.0.0.1, runs
    its Python workers with this interpreter, and keeps the console quiet; other
    masters keep the cluster's own settings (install docevals-mlflow on its
    executors).
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.showConsoleProgress", "false")
    )
    if master.startswith("local"):
        # Spark otherwise binds to the host's network address and, when it starts
        # Python workers, picks `python3` from PATH rather than this interpreter.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            builder.config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.ui.enabled", "false")
        )
    with quiet_pandas_check():
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


@contextlib.contextmanager
def session_scope(master: str = DEFAULT_MASTER) -> Iterator[SparkSession]:
    """The active Spark session, or a new one on ``master`` that is stopped on exit."""
    require_pyspark()
    from pyspark.sql import SparkSession

    owned = SparkSession.getActiveSession() is None
    session = spark_session(master)
    try:
        yield session
    finally:
        if owned:
            session.stop()
