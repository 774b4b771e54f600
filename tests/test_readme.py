"""The README's Python examples run as written, the first one pasted into an empty
folder."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    blocks = python_blocks()
    assert blocks, "the README has a Python example"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for number, block in enumerate(blocks):
        # Compiled from a file of its own: inspect.getsource (a FunctionMetric's
        # fingerprint reads its function's source) then finds the lines it ran.
        source = tmp_path / f"readme_block_{number}.py"
        source.write_text(block, encoding="utf-8")
        exec(compile(block, str(source), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.splitlines() == [
        "extract pass none",
        "calculate-total pass none",
        "Counts(tp=3, fa=0, fd=0, fn=0, tn=1) 1.0",
    ]
    assert (work / "eval_runs" / "document-001" / "01-extract.json").exists()


def test_the_first_example_runs_pasted_into_an_empty_folder(tmp_path):
    # A new process in an empty folder, as a user pasting it into `python` would run
    # it: nothing this test suite set up (files, imports, working directory) helps.
    folder = tmp_path / "empty"
    folder.mkdir()
    script = tmp_path / "example.py"
    script.write_text(python_blocks()[0], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["extract pass none", "calculate-total pass none"]
    assert done.stderr == ""
    # What it wrote: its own stand-in evidence and the checkpoints it was asked for.
    assert (folder / "invoice.txt").is_file()
    assert (folder / "eval_runs" / "document-001" / "01-extract.json").is_file()
