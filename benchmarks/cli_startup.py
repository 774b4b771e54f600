"""How long ``docevals --help`` takes, and what it imports (issue 18's target: 0.3 s).

Each figure is the best wall time of ``--repeat`` new interpreters (best, not mean: a
busy machine only ever adds time):

* ``python -c pass``: the interpreter alone;
* ``import docevals_mlflow``: the package (public names load on first use);
* ``build_parser()``: the whole ``docevals`` parser, every subcommand;
* ``python -m docevals_mlflow --help``: what a user waits for.

Then the heavy libraries (MLflow, pandas, plotly, pydantic, numpy, SciPy) and the
number of ``docevals_mlflow`` modules that ``--help`` loads. Prints figures; asserts
nothing (tests/test_cli_imports.py checks what must not load).

    python benchmarks/cli_startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

HEAVY = ("mlflow", "pandas", "plotly", "pydantic", "numpy", "scipy")

CASES = (
    ("python -c pass", ["-c", "pass"]),
    ("import docevals_mlflow", ["-c", "import docevals_mlflow"]),
    (
        "build_parser()",
        ["-c", "from docevals_mlflow.cli import build_parser; build_parser()"],
    ),
    ("python -m docevals_mlflow --help", ["-m", "docevals_mlflow", "--help"]),
)

PROBE = (
    "import contextlib, io, json, sys\n"
    "from docevals_mlflow.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
    "    main(['--help'])\n"
    "heavy = [m for m in {heavy!r} if m in sys.modules]\n"
    "own = [m for m in sys.modules if m.startswith('docevals_mlflow')]\n"
    "print(json.dumps({{'heavy': heavy, 'own': len(own)}}))"
)


def best_seconds(arguments: list[str], repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``python <arguments>``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, *arguments], check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (default 5)")
    args = parser.parse_args()
    for label, arguments in CASES:
        print(f"{label:<36} {best_seconds(arguments, args.repeat):6.3f} s")
    probe = PROBE.format(heavy=HEAVY)
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    loaded = json.loads(out.strip().splitlines()[-1])
    print(f"heavy libraries loaded by --help: {', '.join(loaded['heavy']) or 'none'}")
    print(f"docevals_mlflow modules loaded by --help: {loaded['own']}")


if __name__ == "__main__":
    main()
