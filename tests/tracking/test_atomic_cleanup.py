"""Temporary files of an atomic write killed midway are cleaned by the next write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from docevals_mlflow.core.atomic import (
    STALE_AFTER_SECONDS,
    atomic_write_text,
    remove_stale_temporaries,
)

ROOT = Path(__file__).resolve().parents[2]
OLD = time.time() - STALE_AFTER_SECONDS - 60


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.endswith(".tmp"))


@pytest.mark.skipif(sys.platform == "win32", reason="kill -9")
def test_a_write_killed_midway_is_cleaned_by_the_next_write(tmp_path):
    # The finding: `kill -9` mid-write left hidden .tmp files, even after a rerun.
    folder = tmp_path / "reports"
    script = textwrap.dedent(
        """
        import os, sys, time
        from docevals_mlflow.core import atomic

        def stuck(source, target):
            print("written", flush=True)
            time.sleep(600)

        # Stop between writing the temporary file and renaming it: where a kill
        # leaves one behind.
        os.replace = stuck
        atomic.atomic_write_text(sys.argv[1], "x" * 100_000)
        """
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-c", script, str(folder / "report.json")],
        stdout=subprocess.PIPE,
        text=True,
        env=environment,
    ) as process:
        try:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "written"
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
    (left,) = leftovers(folder)
    assert left.startswith(".report.json.")
    # Minutes later, the rerun writes into the same folder.
    os.utime(folder / left, (OLD, OLD))
    atomic_write_text(folder / "report.json", "{}")
    assert leftovers(folder) == []
    assert (folder / "report.json").read_text(encoding="utf-8") == "{}"


def test_only_old_temporaries_of_atomic_writes_are_removed(tmp_path):
    def temporary(name: str) -> Path:
        fd, path = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=tmp_path)
        os.close(fd)
        return Path(path)

    old = temporary("a.json")
    young = temporary("b.json")
    mine = tmp_path / "notes.tmp"
    mine.write_text("keep", encoding="utf-8")
    lookalike_folder = tmp_path / ".c.json.abcdefgh.tmp"
    lookalike_folder.mkdir()
    for path in (old, mine, lookalike_folder):
        os.utime(path, (OLD, OLD))
    removed = remove_stale_temporaries(tmp_path)
    assert removed == [old]
    assert young.exists()
    assert mine.exists()
    assert lookalike_folder.is_dir()


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_a_link_named_like_a_temporary_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere" / "keep.txt"
    target.parent.mkdir()
    target.write_text("keep", encoding="utf-8")
    link = tmp_path / ".x.json.abcdefgh.tmp"
    link.symlink_to(target)
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    assert remove_stale_temporaries(tmp_path) == []
    assert target.read_text(encoding="utf-8") == "keep"


def test_a_missing_folder_is_not_an_error(tmp_path):
    assert remove_stale_temporaries(tmp_path / "missing") == []
