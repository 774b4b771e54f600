import ast
import importlib
import inspect
import json
import subprocess
import sys

import pytest

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
    heavy = ("mlflow", "httpx", "pandas", "pymupdf", "scipy.optimize", "scipy.sparse")
    code = f"import sys, docevals_mlflow;print(','.join(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_every_public_name_resolves_to_its_module_object():
    exports = d._EXPORTS
    assert d.__all__ == sorted(exports)
    for name, module in exports.items():
        assert getattr(d, name) is getattr(importlib.import_module(module), name), name
    assert set(d.__all__) <= set(dir(d))


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        _ = d.NoSuchName
    assert not hasattr(d, "NoSuchName")


def test_type_checkers_see_exactly_the_lazy_exports():
    # The TYPE_CHECKING imports (what mypy and IDEs read) name the same objects, from the
    # same modules, as the _EXPORTS table the package resolves at run time.
    tree = ast.parse(inspect.getsource(d))
    block = next(node for node in tree.body if isinstance(node, ast.If))
    seen = {"__version__": "docevals_mlflow._version"}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom), ast.dump(node)
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name} needs `as {alias.name}` to re-export"
            seen[alias.name] = node.module
    assert seen == d._EXPORTS


def test_importing_the_package_loads_no_submodule():
    # `import docevals_mlflow` (and so `docevals --help`) loads only the version; every
    # public name loads on first use.
    code = (
        "import json, sys, docevals_mlflow\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith("
        "('docevals_mlflow.', 'mlflow', 'pandas', 'plotly', 'pydantic', 'numpy')))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == ["docevals_mlflow._version"]
