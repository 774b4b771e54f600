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
