"""The columnar tables of a run snapshot: read from records, checked on the way in."""

from __future__ import annotations

import pytest

from docevals_mlflow.compare.snapshot import CaseTable, DocumentTable, FieldTable, VoteTable
from docevals_mlflow.errors import InputError


def test_records_fill_every_column_with_defaults_for_what_is_missing():
    table = DocumentTable.from_records(
        [{"document_id": 7, "tp": 2}, {"document_id": "b", "document_class": "Invoice", "fn": 1}]
    )
    assert len(table) == 2
    assert table.document_id == ["7", "b"]  # ids are text
    assert table.document_class == [None, "Invoice"]
    assert (table.tp, table.fn, table.tn) == ([2, 0], [0, 1], [0, 0])
    votes = VoteTable.from_records(
        [{"case_id": "c", "stage_id": "s", "metric": "panel", "member": "gpt"}]
    )
    assert (votes.provider, votes.verdict) == ([None], [None])


def test_a_key_twice_is_refused_naming_it():
    with pytest.raises(InputError, match="document/field 'a/total' appears twice"):
        FieldTable.from_records([{"document_id": "a", "field": "total"}] * 2)
    with pytest.raises(InputError, match="case/stage 'c/s' appears twice"):
        CaseTable.from_records([{"case_id": "c", "stage_id": "s", "verdict": "pass"}] * 2)


def test_columns_of_different_lengths_are_refused():
    with pytest.raises(InputError, match=r"different lengths \(case_id=1, stage_id=0"):
        CaseTable(
            case_id=["c"], stage_id=[], operation=[None], verdict=["pass"], failure_context=[None]
        )
