#!/usr/bin/env sh
# Runs the seed library's published test suite (visual_evals 0.1.0, fetched with pip)
# against docevals_mlflow.compat.visual_evals and prints "N passed, M failed", each
# failure mapped to its docs/differences.md row. Needs network access to the package
# index; pass --sdist-dir DIR (an unpacked sdist) to run offline.
set -eu
cd "$(dirname "$0")/.."
exec python benchmarks/visual_evals_suite.py "$@"
