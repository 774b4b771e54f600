"""``docevals --help`` stays quick: building the parser loads no MLflow, pandas or plotly.

Each check runs in a new interpreter, since this test process has long imported them.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("mlflow", "pandas", "plotly")


def _loaded_after(code: str) -> list[str]:
    probe = (
        f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_building_the_parser_imports_no_heavy_library() -> None:
    code = "from docevals_mlflow.cli import build_parser\nbuild_parser()"
    assert _loaded_after(code) == []


def test_help_imports_no_heavy_library() -> None:
    # The whole `docevals --help` path: parsing prints the help and exits.
    code = (
        "import contextlib, io\n"
        "from docevals_mlflow.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])"
    )
    assert _loaded_after(code) == []


def test_building_the_parser_imports_no_pydantic_numpy_or_heavy_docevals_module() -> None:
    # Only argparse-level modules: the handlers import their models when they run.
    code = (
        "import json, sys\n"
        "from docevals_mlflow.cli import build_parser\n"
        "build_parser()\n"
        "print(json.dumps([m for m in ('pydantic', 'numpy', 'scipy', 'httpx', 'cryptography',"
        " 'docevals_mlflow.core.reports', 'docevals_mlflow.fields.schema',"
        " 'docevals_mlflow.judges.config', 'docevals_mlflow.cli.judging') if m in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_the_parser_constants_equal_their_sources() -> None:
    # cli/light_constants.py copies what the help and choices show, so the parser need not
    # import the (pydantic, NumPy) modules defining them; a changed source shows here.
    import importlib

    from docevals_mlflow.cli import light_constants

    assert light_constants.SOURCES
    for name, module in light_constants.SOURCES.items():
        source = getattr(importlib.import_module(module), name)
        assert getattr(light_constants, name) == source, name


def test_the_calibrate_re_exports_still_resolve() -> None:
    from docevals_mlflow.cli import calibrate
    from docevals_mlflow.tracking import calibration_runs

    assert calibrate.layout_calibration is calibration_runs.layout_calibration
    assert calibrate.LEVELS == calibration_runs.LEVELS
