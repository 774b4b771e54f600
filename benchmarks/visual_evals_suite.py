"""Run the seed library's own test suite against ``docevals_mlflow.compat.visual_evals``.

Downloads the sdist of ``ocr-extraction-understanding-eval==0.1.0`` (the seed
``visual_evals`` 0.1.0) from the package index into a temporary directory, rewrites
only its test file's ``visual_evals`` imports to the compat module, runs pytest on
it with the seed's own package kept off the path, and prints one line per test
(passed / failed with a one-line reason), then ``N passed, M failed``. A failure
that asserts a seed behaviour we changed on purpose names its row in
``docs/differences.md`` ("visual_evals compatibility").

Needs network access to the package index (so it is not part of the test suite);
``benchmarks/seed_compat.sh`` runs this script.

Run: ``python benchmarks/visual_evals_suite.py [--sdist-dir DIR]`` where ``DIR`` is an
already unpacked sdist, to run offline.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

DISTRIBUTION = "ocr-extraction-understanding-eval==0.1.0"
COMPAT = "docevals_mlflow.compat.visual_evals"
REPO_ROOT = Path(__file__).resolve().parents[1]

# Seed tests that assert a seed behaviour we fixed on purpose: test name -> the row
# of docs/differences.md ("visual_evals compatibility") that explains it.
DELIBERATE = {
    "test_openai_request_keeps_evidence_and_ground_truth_distinct": (
        "a `.jpg` whose bytes are not JPEG is refused (file signatures are checked)"
    ),
    "test_optional_producer_provenance_flags_self_judging_without_blocking_unknown": (
        "a judge that is the producing model always puts the result in the review queue"
    ),
    "test_ground_truth_adjudication_resolves_unanimous_set_and_omit": (
        "adjudication never agrees on absence: no `omit` outcome without a person"
    ),
}

# Guards the redirection: the test run must import the compat module, never the
# seed's own package from its src/ directory.
CONFTEST = f'''
import sys

import {COMPAT} as _compat


def pytest_sessionstart(session):
    assert "visual_evals" not in sys.modules, "the seed package was imported"
    assert _compat.__name__ == "{COMPAT}"


def pytest_sessionfinish(session, exitstatus):
    assert "visual_evals" not in sys.modules, "the seed package was imported"
    test_module = sys.modules["test_visual_evals"]
    assert test_module.EvaluationCase.__module__.startswith("docevals_mlflow."), (
        "the seed tests did not run against docevals_mlflow"
    )
'''


def download(target: Path) -> Path:
    """Fetch and unpack the seed sdist; return the unpacked project directory."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
            str(target),
            DISTRIBUTION,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    archive = next(target.glob("*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return next(path for path in target.iterdir() if path.is_dir())


def redirect(source: Path, work: Path) -> Path:
    """Copy the seed's test file with its ``visual_evals`` imports redirected."""
    text = source.read_text(encoding="utf-8")
    text, count = re.subn(r"\bfrom visual_evals(\.|\s)", rf"from {COMPAT}\1", text)
    if count == 0:
        raise SystemExit(f"{source}: no `from visual_evals` import to redirect")
    tests = work / "tests"
    tests.mkdir()
    (tests / "test_visual_evals.py").write_text(text, encoding="utf-8")
    (tests / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    return tests


def run(tests: Path, work: Path) -> list[tuple[str, str, str]]:
    """Run pytest (the seed's pyproject and src/ are not in ``work``); per-test outcomes."""
    junit = work / "junit.xml"
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--rootdir={work}",
            "-o",
            "pythonpath=",
            f"--junitxml={junit}",
            str(tests),
        ],
        cwd=work,
        # This checkout, installed or not; the seed's src/ is never on the path.
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        check=False,
        stdout=subprocess.DEVNULL,
    )
    # 0 and 1 are "all passed" and "some failed"; anything else means the run itself
    # (collection, or the guard that the compat module was the one imported) failed.
    if finished.returncode not in (0, 1):
        raise SystemExit(f"pytest exited with {finished.returncode}: the run itself failed")
    outcomes: list[tuple[str, str, str]] = []
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is None:
            outcomes.append((case.get("name", "?"), "passed", ""))
            continue
        message = (problem.get("message") or problem.text or "").strip()
        outcomes.append((case.get("name", "?"), "failed", message.splitlines()[0][:160]))
    return outcomes


def report(outcomes: list[tuple[str, str, str]]) -> int:
    """Print the per-test lines and the totals; the number of unexplained failures."""
    unexplained = 0
    for name, status, reason in outcomes:
        line = f"{status:6}  {name}"
        if status == "failed":
            row = DELIBERATE.get(name.split("[")[0])
            if row is None:
                unexplained += 1
            line += f"\n        {reason}\n        -> {row or 'NOT A DOCUMENTED DIFFERENCE'}"
        print(line)
    passed = sum(status == "passed" for _, status, _ in outcomes)
    print(f"{passed} passed, {len(outcomes) - passed} failed ({unexplained} unexplained)")
    return unexplained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist-dir", type=Path, help="an unpacked sdist (skips the download)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        project = args.sdist_dir or download(root / "download")
        work = root / "work"
        work.mkdir()
        tests = redirect(project / "tests" / "test_visual_evals.py", work)
        unexplained = report(run(tests, work))
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()
