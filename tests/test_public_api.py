import docevals_mlflow as d


def test_all_is_sorted_and_complete():
    public = {
        name
        for name in dir(d)
        if not name.startswith("_") and not isinstance(getattr(d, name), type(d))
    }
    assert d.__all__ == sorted(d.__all__)
    assert public <= set(d.__all__)
    assert all(hasattr(d, name) for name in d.__all__)


def test_seed_names_are_exported():
    seed_names = {
        "EvaluationCase",
        "PipelineCase",
        "ReferenceArtifact",
        "artifact_from_path",
        "artifact_from_value",
        "EvaluationSpec",
        "OperationSpec",
        "OperationRegistry",
        "Evaluator",
        "PipelineEvaluator",
        "ExactStructuredMetric",
        "FunctionMetric",
        "MetricResult",
        "EvaluationReport",
        "PipelineEvaluationReport",
        "build_suite_report",
    }
    assert seed_names <= set(d.__all__)


def test_core_does_not_import_mlflow_or_httpx():
    import subprocess
    import sys

    code = (
        "import sys, docevals_mlflow.core.reports, docevals_mlflow.evaluation.pipeline,"
        " docevals_mlflow.evaluation.suite, docevals_mlflow.reports.files;"
        "bad = [m for m in ('mlflow', 'httpx') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_importing_the_package_stays_light():
    # The heavy libraries load when a feature needs them, not on `import docevals_mlflow`
    # (a CLI call such as `docevals verify` should not pay for SciPy's optimiser).
    import subprocess
    import sys

    heavy = ("mlflow", "httpx", "pandas", "pymupdf", "scipy.optimize", "scipy.sparse")
    code = f"import sys, docevals_mlflow;print(','.join(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
