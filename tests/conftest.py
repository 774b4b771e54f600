"""Fixtures shared across the test suite."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ModuleWriter = Callable[[Path, str], str]


@pytest.fixture
def isolated_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Function metrics are imported from the config folder, which the loader puts on
    # sys.path; keep that from leaking into other tests.
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.fixture
def checks_module(isolated_sys_path: None) -> Iterator[ModuleWriter]:
    """Write a uniquely named module into a folder; returns its module name.

    Unique names keep ``sys.modules`` from serving one test's module to another.
    """
    names: list[str] = []

    def write(folder: Path, source: str) -> str:
        name = f"checks_{uuid.uuid4().hex}"
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        names.append(name)
        return name

    yield write
    for name in names:
        sys.modules.pop(name, None)
