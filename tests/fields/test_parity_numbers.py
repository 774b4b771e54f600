"""NUMERIC_EXACT against Stickler's NumericComparator on generated amounts.

Pairs of realistic amounts (the same amount written two ways in one locale and
currency style, or two different amounts in one style) are decided by both. Our
decision must be the true one; wherever Stickler decides otherwise, the pair must
belong to one of the difference classes that docs/field-methods.md documents, so an
undocumented disagreement fails here. Stickler deletes every character but digits,
``.`` and ``-`` and reads the rest as a ``Decimal``; each class below is a way that
deletion changes the amount or leaves no number.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.fields.methods import NumericComparator
from tests.fields.test_numbers import AmountStyle, amount_styles, amounts_in

pytest.importorskip("stickler")

from stickler.comparators.numeric import NumericComparator as SticklerNumeric

TOLERANCES = (0.0, 0.01)

# The classes of docs/field-methods.md ("Intentional differences from Stickler's
# NumericComparator"), each with a pair on which the two still decide differently.
DIFFERENCE_CLASSES: dict[str, tuple[Any, Any]] = {
    "decimal comma": ("12,75", 12.75),
    "thousands dots": ("1.234.567", 1234567),
    "no-decimals dash": ("kr 100,-", 100),
    "trailing minus": ("123-", -123),
    "Unicode minus": ("\u221212", -12),
    "exponent": ("1e3", 1000),
    "dot in a marker": ("Rs. 1,234", 1234),
    "parentheses inside a marker": ("RM(7.42)", -7.42),
    # 0.1 + 0.2 is 0.30000000000000004 in binary floating point: Stickler's Decimal
    # reading of its text is not 0.3, ours allows a few units in the last place.
    "float rounding": (0.1 + 0.2, 0.3),
    "identical text": ("N/A", "n/a"),
    "words and labels": ("Total: 12", 12),
    "malformed": ("12 34", 1234),
}


def _ours(a: Any, b: Any, tolerance: float) -> bool:
    comparator = NumericComparator(tolerance=tolerance)
    return comparator.score(comparator.prepare(a), comparator.prepare(b)) >= 1.0


def _theirs(a: Any, b: Any, tolerance: float) -> bool:
    return SticklerNumeric(tolerance=tolerance).compare(a, b) >= 1.0


@pytest.mark.parametrize("name", list(DIFFERENCE_CLASSES))
def test_every_documented_class_still_differs(name: str) -> None:
    a, b = DIFFERENCE_CLASSES[name]
    assert _ours(a, b, 0.0) != _theirs(a, b, 0.0), "no longer a difference: update the docs"


def _classes(style: AmountStyle, amount: Decimal | None) -> set[str]:
    """The difference classes the text of ``amount`` in ``style`` belongs to."""
    if amount is None:  # written as a JSON number
        return set()
    classes = set()
    negative = amount < 0
    if style.decimal == "," and (style.decimals or style.dash):
        classes.add("decimal comma")
    if style.group == "." and abs(amount) >= 1000:
        classes.add("thousands dots")
    if style.dash:
        classes.add("no-decimals dash")
    if negative and style.sign == "trailing":
        classes.add("trailing minus")
    if negative and style.sign == "\u2212":
        classes.add("Unicode minus")
    if "." in style.marker:
        classes.add("dot in a marker")
    if negative and style.sign == "()" and style.marker and not style.sign_outside:
        classes.add("parentheses inside a marker")
    return classes


def _variants(style: AmountStyle) -> list[AmountStyle]:
    """Other ways the same document could write an amount in ``style``."""
    fields = style.__dict__
    return [
        style,
        AmountStyle(**{**fields, "group": "", "indian": False}),
        AmountStyle(**{**fields, "space": "" if style.space else " "}),
        AmountStyle(**{**fields, "before": not style.before}),
    ]


@settings(max_examples=600, deadline=None)
@given(st.data())
def test_numeric_exact_differs_from_stickler_only_as_documented(data: st.DataObject) -> None:
    style = data.draw(amount_styles())
    amount = data.draw(amounts_in(style))
    same_amount = data.draw(st.booleans())
    if same_amount:
        other_amount = amount
        left_style, right_style = data.draw(
            st.lists(st.sampled_from(_variants(style)), min_size=2, max_size=2)
        )
    else:
        step = Decimal(1) if style.decimals == 0 else Decimal("0.01")
        delta = data.draw(st.sampled_from([1, 2, 10, 100, 10_000, 10**6, 10**8])) * step
        other_amount = amount + delta * data.draw(st.sampled_from([1, -1]))
        left_style = right_style = style
    left: Any = left_style.format(amount)
    right: Any = right_style.format(other_amount)
    left_amount: Decimal | None = amount
    right_amount: Decimal | None = other_amount
    # Ground truth often holds the bare JSON number.
    if data.draw(st.integers(0, 3)) == 0:
        right, right_amount = float(other_amount), None

    difference = abs(amount - other_amount)
    classes = _classes(left_style, left_amount) | _classes(right_style, right_amount)
    for tolerance in TOLERANCES:
        ours = _ours(left, right, tolerance)
        # NUMERIC_EXACT's documented slack: 4 machine epsilons of the magnitudes.
        slack = Decimal(4 * sys.float_info.epsilon) * (abs(amount) + abs(other_amount))
        assert ours == (difference <= Decimal(str(tolerance)) + slack), (left, right, tolerance)
        if difference > Decimal(str(tolerance)) and ours:
            classes.add("float rounding")
        if ours != _theirs(left, right, tolerance):
            assert classes & DIFFERENCE_CLASSES.keys(), (
                f"undocumented difference from Stickler: {left!r} vs {right!r} "
                f"at tolerance {tolerance}"
            )
