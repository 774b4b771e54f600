"""The package's layers, enforced: no module imports from a layer above its own, nor
from another subpackage of its own layer, and the heavy optional dependencies stay in
the one subpackage that owns them.

Every import counts: top-level, inside a function body, under ``TYPE_CHECKING``,
``import x`` and ``from x import y``, absolute and relative. A new subpackage or
top-level module must be placed in :data:`LAYERS` before anything can import it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "docevals_mlflow"
# Read from source, not imported: the checks need no import of the package (and stay fast).
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "_version"),
    ("core",),
    ("docmetrics",),
    ("fields", "split", "judges"),
    ("diagnostics",),
    ("evaluation", "groundtruth"),
    ("reports",),
    ("compare", "quickstart", "compat"),
    ("tracking",),
    ("spark", "reviewapp"),
    ("cli",),
    ("__init__", "__main__"),
)
"""Lowest first. A part may import from its own part and from any lower layer; parts
sharing a layer do not import each other. ``__init__`` is the top-level package."""

LAYER_OF = {part: index for index, layer in enumerate(LAYERS) for part in layer}

THIRD_PARTY_HOMES = {
    "mlflow": "tracking",
    "httpx": "judges",
    "pyspark": "spark",
    "starlette": "reviewapp",
    "uvicorn": "reviewapp",
    "jinja2": "reviewapp",
}
"""Top-level names of optional heavy dependencies → the only part that imports them."""


@dataclass(frozen=True)
class Import:
    """One imported module (fully qualified) and where it is imported."""

    module: str
    """The importing module, e.g. ``docevals_mlflow.fields.report``."""
    part: str
    """The importing module's part (subpackage or top-level module name)."""
    line: int
    target: str


def _module_name(path: Path) -> tuple[str, bool]:
    """The dotted name of a source file and whether it is a package ``__init__``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    is_package = parts[-1] == "__init__"
    names = parts[:-1] if is_package else parts
    return ".".join((PACKAGE, *names)), is_package


SOURCES = sorted(ROOT.rglob("*.py"))
MODULES = frozenset(_module_name(path)[0] for path in SOURCES)


def _part(dotted: str) -> str:
    """The layer table's name for a module: its subpackage or top-level module."""
    names = dotted.split(".")
    return names[1] if len(names) > 1 else "__init__"


def imports_of(
    source: str, module: str, is_package: bool, filename: str = "<source>"
) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every import in ``source``, anywhere in the tree.

    Relative imports are resolved against ``module``; ``from a import b`` names
    ``a.b`` when that is a module of this package, else ``a``.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                if not is_package:
                    anchor = anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                inside = candidate.split(".")[0] == PACKAGE
                found.append((node.lineno, candidate if inside and candidate in MODULES else base))
    return found


def _all_imports() -> list[Import]:
    collected = []
    for path in SOURCES:
        module, is_package = _module_name(path)
        part = _part(module) if module != PACKAGE else "__init__"
        if path.name == "__main__.py" and path.parent == ROOT:
            part = "__main__"
        source = path.read_text(encoding="utf-8")
        collected.extend(
            Import(module, part, line, target)
            for line, target in imports_of(source, module, is_package, str(path))
        )
    return collected


IMPORTS = _all_imports()


def layering_violations(imports: list[Import]) -> list[str]:
    """One message per import that goes up the layers or sideways within one."""
    messages = []
    for item in imports:
        if item.target.split(".")[0] != PACKAGE:
            continue
        target_part = _part(item.target)
        if target_part == item.part:
            continue
        own, other = LAYER_OF[item.part], LAYER_OF[target_part]
        if other < own:
            continue
        how = "a higher layer" if other > own else "another part of the same layer"
        messages.append(
            f"{item.module}:{item.line} imports {item.target} from {how}: "
            f"{item.part!r} is layer {own} {LAYERS[own]}, "
            f"{target_part!r} is layer {other} {LAYERS[other]}"
        )
    return messages


def third_party_violations(imports: list[Import]) -> list[str]:
    """One message per import of a heavy dependency outside the part that owns it."""
    messages = []
    for item in imports:
        home = THIRD_PARTY_HOMES.get(item.target.split(".")[0])
        if home is not None and item.part != home:
            messages.append(
                f"{item.module}:{item.line} imports {item.target}, "
                f"which only {PACKAGE}.{home} may import"
            )
    return messages


def test_no_import_goes_up_or_sideways():
    violations = layering_violations(IMPORTS)
    assert not violations, "imports against the layer order:\n" + "\n".join(violations)


def test_heavy_dependencies_stay_in_their_subpackage():
    violations = third_party_violations(IMPORTS)
    assert not violations, "\n".join(violations)


def test_the_layer_table_places_every_part_and_nothing_else():
    parts = {
        path.stem if path.is_file() else path.name
        for path in ROOT.iterdir()
        if (path.is_file() and path.suffix == ".py")
        or (path.is_dir() and (path / "__init__.py").is_file())
    }
    unplaced = sorted(parts - set(LAYER_OF))
    assert not unplaced, f"place these in LAYERS (tests/test_layering.py): {unplaced}"
    assert sorted(set(LAYER_OF) - parts) == [], "LAYERS names parts that do not exist"
    assert len(LAYER_OF) == sum(len(layer) for layer in LAYERS), "a part is in two layers"


def test_the_scan_sees_every_kind_of_import():
    # The checks are only as good as the scan: it must see imports everywhere.
    source = (
        "from typing import TYPE_CHECKING\n"
        "import mlflow.entities\n"
        "if TYPE_CHECKING:\n"
        "    from docevals_mlflow.reports.markdown import table\n"
        "def late():\n"
        "    from ..diagnostics import calibration\n"
        "    from . import leaves\n"
        "    import docevals_mlflow.judges as judges\n"
        "    from docevals_mlflow import errors, compare_documents\n"
    )
    found = imports_of(source, f"{PACKAGE}.fields.report", is_package=False)
    assert found == [
        (1, "typing"),
        (2, "mlflow.entities"),
        (4, f"{PACKAGE}.reports.markdown"),
        (6, f"{PACKAGE}.diagnostics"),
        (7, f"{PACKAGE}.fields.leaves"),
        (8, f"{PACKAGE}.judges"),
        (9, f"{PACKAGE}.errors"),
        (9, PACKAGE),
    ]
    imports = [Import(f"{PACKAGE}.fields.report", "fields", line, target) for line, target in found]
    layering = layering_violations(imports)
    assert [message.split(" imports ")[1].split(" from ")[0] for message in layering] == [
        f"{PACKAGE}.reports.markdown",
        f"{PACKAGE}.diagnostics",
        f"{PACKAGE}.judges",
        PACKAGE,
    ]
    assert "another part of the same layer" in layering[2]
    assert layering[0].startswith(f"{PACKAGE}.fields.report:4 imports")
    assert "'fields' is layer 3" in layering[0]
    assert "'reports' is layer 6" in layering[0]
    assert third_party_violations(imports) == [
        f"{PACKAGE}.fields.report:2 imports mlflow.entities, "
        f"which only {PACKAGE}.tracking may import"
    ]


@pytest.mark.parametrize(
    ("module", "is_package", "relative", "expected"),
    [
        (f"{PACKAGE}.core", True, "from .statistics import auroc", f"{PACKAGE}.core.statistics"),
        (f"{PACKAGE}.core.model", False, "from . import values", f"{PACKAGE}.core.values"),
        (
            f"{PACKAGE}.judges.calibration.report",
            False,
            "from ...errors import X",
            f"{PACKAGE}.errors",
        ),
    ],
)
def test_relative_imports_resolve(module, is_package, relative, expected):
    assert imports_of(relative, module, is_package) == [(1, expected)]
