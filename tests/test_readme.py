"""The README's Python example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "the README has a Python example"
    monkeypatch.chdir(tmp_path)
    # The example cites a scanned invoice as evidence; any real PNG will do.
    (tmp_path / "invoice.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
    for block in blocks:
        exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.splitlines() == [
        "extract pass none",
        "calculate-total pass none",
        "Counts(tp=3, fa=0, fd=0, fn=0, tn=1) 1.0",
    ]
    assert (tmp_path / "eval_runs" / "document-001" / "01-extract.json").exists()
