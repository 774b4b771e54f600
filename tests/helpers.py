"""Helpers many tests share: running ``docevals`` in-process, checking its one-line
errors, and writing input files."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """``docevals ARGV...``: the exit code, stdout and stderr."""
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    """The single ``docevals: error: ...`` line of ``err`` (and no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("docevals: error: ")
    return lines[0]


def assert_one_line_error(err: str, *fragments: str) -> None:
    """``err`` is one ``docevals: error: ...`` line holding every fragment."""
    assert err.startswith("docevals: error: "), err
    assert err.endswith("\n"), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, err


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` (dedented, so tests can indent YAML), creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def write_json(path: Path, data: Any) -> Path:
    """Write ``data`` as JSON, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[Any]) -> Path:
    """Write one JSON record per line, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
"""For tests that make a named pipe."""
