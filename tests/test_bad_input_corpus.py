"""Every command on a corpus of bad inputs (issue 16): each case exits 2 with one
``docevals: error:`` line naming the file, record or option at fault (or is a usage
error, or a documented warning), leaves its folder exactly as it was, logs no MLflow
run, and lets no planted API key out.

The cases are in ``tests/bad_inputs/``; each writes its inputs into an empty folder
that is the working directory while the command runs in-process, so a stray default
``mlflow.db`` or a temporary file left behind shows up too. Cases about file
permissions run without root's capabilities (through ``setpriv``) when the tests
run as root.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.cli import main
from tests.bad_inputs import CASES, BadInput
from tests.bad_inputs.case import KINDS, PLANTED, STORE
from tests.file_tree import snapshot
from tests.helpers import assert_one_line_error
from tests.judges import conftest as judges_conftest
from tests.test_secrets_everywhere import forms

# No request leaves the machine, even if a case were wrongly accepted.
_loopback_only = judges_conftest._loopback_only

SEARCHED = {form: secret for secret in PLANTED.values() for form in forms(secret)}
TIMEOUT = 20
"""Seconds a case may take before it counts as hanging (a named pipe being read)."""


def _setpriv() -> list[str] | None:
    """The prefix that runs a command as root without root's power to ignore file
    permissions (every capability dropped); ``[]`` when this is not root (file
    permissions hold already); ``None`` when root cannot drop them. Staying root
    keeps the interpreter and the installed package readable wherever they are
    (CI's virtualenv lives in a folder only its owner may enter)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--inh-caps=-all", "--bounding-set=-all"]


AS_USER = _setpriv() if hasattr(os, "geteuid") else None


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging when a read blocks."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the command did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_in_process(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    with deadline(TIMEOUT):
        try:
            code = main(argv)
        except SystemExit as exited:  # argparse usage errors
            code = exited.code if isinstance(exited.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def run_as_user(argv: list[str], folder: Path) -> tuple[int, str, str]:
    assert AS_USER is not None
    completed = subprocess.run(
        [*AS_USER, sys.executable, "-m", "docevals_mlflow", *argv],
        cwd=folder,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        check=False,
        timeout=120,
    )
    return completed.returncode, completed.stdout, completed.stderr


def runs_in(store: Path) -> int:
    with contextlib.closing(sqlite3.connect(store)) as connection:
        (count,) = connection.execute("SELECT COUNT(*) FROM runs").fetchone()
    return int(count)


def leaks(data: bytes) -> list[str]:
    text = data.decode("latin-1")
    return sorted({f"{secret!r} as {form!r}" for form, secret in SEARCHED.items() if form in text})


def check_stderr(case: BadInput, err: str) -> None:
    if case.usage:
        lines = err.strip().splitlines()
        assert "Traceback" not in err, err
        assert lines[0].startswith(f"usage: docevals {case.command} "), err
        assert lines[-1].startswith(f"docevals {case.command}: error: "), err
        for fragment in case.fragments:
            assert fragment in lines[-1], err
    elif case.warning:
        assert "Traceback" not in err, err
        warnings = [line for line in err.splitlines() if line.startswith("docevals: warning: ")]
        assert len(warnings) == 1, err
        for fragment in case.fragments:
            assert fragment in warnings[0], err
        assert "docevals: error:" not in err, err
    else:
        assert_one_line_error(err, *case.fragments)


@pytest.fixture
def case_folder(tmp_path: Path) -> Path:
    """An empty folder for one case."""
    return tmp_path / "case"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(
    case: BadInput,
    tmp_path: Path,
    case_folder: Path,
    mlflow_store: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if case.as_user and AS_USER is None:
        pytest.skip("root reads every file and setpriv is missing to drop that power")
    store = Path(mlflow_store.removeprefix("sqlite:///"))  # the case's own, outside its folder
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    # Logging is on unless the command is told not to: a default store would be
    # sqlite:///mlflow.db in the case folder, and show up in its snapshot.
    monkeypatch.delenv("DOCEVALS_NO_MLFLOW", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    case_folder.mkdir()
    monkeypatch.chdir(case_folder)

    built = list(case.build())
    capsys.readouterr()  # what building the inputs printed
    # Every command that can log is told not to, or where to (never a default store).
    assert case.store == (STORE in built), case.id
    assert {"--no-mlflow", "--tracking-uri"} & set(built) or case.command in NEVER_LOGS
    argv = [arg.replace(STORE, f"sqlite:///{store}") for arg in built]
    before = snapshot(case_folder)
    if case.as_user and AS_USER:
        code, out, err = run_as_user(argv, case_folder)
    else:
        code, out, err = run_in_process(capsys, argv)

    assert code == case.code, out + err
    check_stderr(case, err)
    after = snapshot(case_folder)
    written = {name for name in after if before.get(name) != after[name]}
    if case.warning:
        written.discard(".")  # the folder's mtime moves with the files it gained
    assert written == set(case.writes), written
    assert set(before) <= set(after)
    assert runs_in(store) == 0
    found = leaks((out + err).encode("utf-8", "surrogateescape"))
    for name, (kind, *_rest, content) in after.items():
        if kind == "file" and isinstance(content, bytes) and name not in case.secret_inputs:
            found += [f"{name}: {leak}" for leak in leaks(content)]
    assert found == []


NEVER_LOGS = {"review", "approve", "keygen", "verify", "plan"}
"""Commands without MLflow options."""


def test_the_corpus_covers_every_command_and_kind() -> None:
    from docevals_mlflow.cli import build_parser

    parser = build_parser()
    (commands,) = [action.choices for action in parser._actions if action.dest == "command"]
    per_command = Counter(case.command for case in CASES)
    per_kind = Counter(case.kind for case in CASES)
    assert set(per_command) == set(commands)
    assert set(per_kind) == set(KINDS)
    assert len(CASES) >= 150
    assert len({case.id for case in CASES}) == len(CASES)
