"""One number formatter: settings print as given, and renderers format no number inline."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from docevals_mlflow.core.formatting import level_text, money_text, setting_text

PACKAGE = Path(__file__).resolve().parents[2] / "docevals_mlflow"
RENDERERS = sorted(
    [*(PACKAGE / "reports").glob("*.py"), *(PACKAGE / "compare").glob("*.py")],
    key=str,
)
# Format specs that are not a figure's precision: bin edges that are tenths by
# construction, and compare's counts with thousands separators.
ALLOWED = {("reports/confidence_dashboard.py", "_bin_label"), ("compare/markdown.py", "_figure")}


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.95, "95%"), (0.975, "97.5%"), (0.1, "10%"), (0.07, "7%"), (0.025, "2.5%"), (None, "n/a")],
)
def test_levels_print_as_chosen(value: float | None, text: str) -> None:
    # A 97.5% interval is never called a 98% one.
    assert level_text(value) == text


@pytest.mark.parametrize(
    ("value", "text"), [(0.05, "0.05"), (0.85, "0.85"), (0.875, "0.875"), (3, "3"), (True, "n/a")]
)
def test_settings_print_as_chosen(value: float, text: str) -> None:
    assert setting_text(value) == text


def test_money_has_four_decimals() -> None:
    assert [money_text(v) for v in (0.01234, 2, None)] == ["0.0123", "2.0000", "n/a"]


def _inline_specs(path: Path) -> list[str]:
    """``function: spec`` of every f-string that formats a number with a precision."""
    found = []
    tree = ast.parse(path.read_text())
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
                spec = "".join(
                    str(part.value)
                    for part in ast.walk(node.format_spec)
                    if isinstance(part, ast.Constant)
                )
                if spec and spec[-1] in "%eEfFgG":
                    found.append(f"{function.name}: {spec}")
    return found


@pytest.mark.parametrize("path", RENDERERS, ids=lambda path: path.name)
def test_renderers_format_numbers_through_core_formatting(path: Path) -> None:
    where = str(path.relative_to(PACKAGE))
    specs = [spec for spec in _inline_specs(path) if (where, spec.split(":", 1)[0]) not in ALLOWED]
    assert specs == [], f"{where}: use docevals_mlflow.core.formatting, not {specs}"
