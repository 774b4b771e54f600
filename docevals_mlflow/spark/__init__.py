"""Field comparison on Apache Spark (the ``spark`` extra: ``pip install
'docevals-mlflow[spark]'``).

:func:`compare_documents_spark` compares the documents of a Spark DataFrame on the
executors and aggregates the figures with Spark; they equal the single-machine
figures exactly, and :meth:`SparkFieldComparison.log` logs them as one MLflow run
with the usual layout. pyspark is imported only when a function here runs, so
importing this package costs nothing without it.
"""

from __future__ import annotations

from docevals_mlflow.spark.compare import SparkFieldComparison, compare_documents_spark
from docevals_mlflow.spark.session import spark_session

__all__ = ["SparkFieldComparison", "compare_documents_spark", "spark_session"]
