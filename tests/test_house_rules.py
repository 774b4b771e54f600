"""The house stays in order: no module much over 400 lines, and no function over 60
lines unless the first line of its body says why (``# Why long: …``).

A long function is sometimes right (a hot loop kept in one frame because calls cost
measurable time, a table of declarations); the comment makes that a decision someone
wrote down rather than an accident nobody noticed.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "docevals_mlflow"
MODULE_LINES = 450
FUNCTION_LINES = 60
REASON = "# Why long:"


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _body_start(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The line of the first statement after the docstring (1-based)."""
    body = node.body
    if (
        len(body) > 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[1].lineno
    return body[0].lineno


def _reasoned(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a ``# Why long:`` comment stands between the signature (or docstring)
    and the first statement of the body."""
    first = node.body[0]
    after_docstring = (
        first.end_lineno
        if isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        else node.lineno
    )
    assert after_docstring is not None
    window = lines[after_docstring : _body_start(node) - 1]
    return any(
        line.strip().startswith(REASON) and len(line.strip()) > len(REASON) + 10 for line in window
    )


def test_no_module_is_oversized() -> None:
    oversized = []
    for path in _modules():
        count = path.read_text(encoding="utf-8").count("\n")
        if count > MODULE_LINES:
            oversized.append(f"{path.relative_to(PACKAGE.parent)}: {count} lines")
    assert not oversized, f"modules over {MODULE_LINES} lines (split them along a seam):\n" + (
        "\n".join(oversized)
    )


def test_long_functions_say_why() -> None:
    unexplained = []
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            assert node.end_lineno is not None
            length = node.end_lineno - node.lineno + 1
            if length > FUNCTION_LINES and not _reasoned(lines, node):
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                unexplained.append(f"{where} {node.name}: {length} lines")
    assert not unexplained, (
        f"functions over {FUNCTION_LINES} lines without a '{REASON} …' comment at the top "
        "of the body (split them, or write the reason):\n" + "\n".join(unexplained)
    )
