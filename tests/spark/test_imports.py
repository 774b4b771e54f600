"""The Spark support stays optional: nothing imports pyspark until it is used."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_packages_does_not_import_pyspark() -> None:
    code = (
        "import sys, docevals_mlflow, docevals_mlflow.cli.fields, docevals_mlflow.spark;"
        "print(','.join(m for m in ('pyspark', 'py4j', 'pyarrow') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_package_does_not_import_the_spark_support() -> None:
    code = "import sys, docevals_mlflow; print('docevals_mlflow.spark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
