"""``report_json_text``: the same value as ``json.dumps``, one line per document."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from docevals_mlflow.core.jsontext import report_json_text

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=30,
)


@given(JSON)
def test_any_json_value_round_trips(value: Any) -> None:
    text = report_json_text(value)
    assert text.endswith("\n")
    assert json.loads(text) == value


def test_documents_one_per_line_and_outer_objects_opened() -> None:
    report = {
        "overall": {"counts": {"tp": 3, "fn": 1}, "f1": 0.857},
        "documents": [{"id": "a", "rows": [{"path": "$.x"}]}, {"id": "b", "rows": []}],
        "unpaired": [],
    }
    lines = report_json_text(report).splitlines()
    assert lines == [
        "{",
        ' "overall": {',
        '  "counts": {"tp": 3, "fn": 1},',
        '  "f1": 0.857',
        " },",
        ' "documents": [',
        '  {"id": "a", "rows": [{"path": "$.x"}]},',
        '  {"id": "b", "rows": []}',
        " ],",
        ' "unpaired": []',
        "}",
    ]


def test_text_is_kept_as_written() -> None:
    # ensure_ascii=False, as the reports always were; values that are not JSON
    # (a Decimal, a date) are written as text.
    from datetime import date
    from decimal import Decimal

    text = report_json_text(
        {"name": "Zoë €", "when": date(2026, 11, 30), "amount": Decimal("1.10")}
    )
    assert '"Zoë €"' in text
    assert json.loads(text) == {"name": "Zoë €", "when": "2026-11-30", "amount": "1.10"}
