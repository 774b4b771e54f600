"""Many documents: the batched (vectorised) path agrees with one-by-one comparison,
and the batch's inputs, aggregates and report."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings

from docevals_mlflow.errors import InputError
from docevals_mlflow.fields.batch import (
    BatchComparison,
    DocumentPair,
    DocumentSummary,
    compare_documents,
)
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer
from docevals_mlflow.fields.counts import Counts
from docevals_mlflow.fields.report import UNCLASSIFIED, FieldsReport
from docevals_mlflow.fields.schema import DocumentSchema
from tests.fields.test_properties import SCHEMA, compare_record, document_batch


def row_multiset(document: DocumentComparison) -> Counter[str]:
    return Counter(json.dumps(row, sort_keys=True, default=repr) for row in document.row_dicts())


def assert_same(left: DocumentComparison, right: DocumentComparison) -> None:
    assert (left.id, left.document_class, left.configured) == (
        right.id,
        right.document_class,
        right.configured,
    )
    assert left.cells == right.cells
    assert left.items == right.items
    assert row_multiset(left) == row_multiset(right)
    assert {
        t: (i.method, i.label, i.threshold, i.discovered, i.kind) for t, i in left.fields.items()
    } == {
        t: (i.method, i.label, i.threshold, i.discovered, i.kind) for t, i in right.fields.items()
    }


# --- the batched path gives the same results as comparing each document alone ------


@settings(max_examples=60, deadline=None)
@given(records=document_batch(invalid=True))
def test_batched_comparison_equals_one_by_one(records: list[dict[str, Any]]) -> None:
    # Some generated ground truth has the wrong shape: such documents are counted
    # apart, alike on every path.
    counting = {"shape_mismatch": "count"}
    alone = [compare_record(FieldComparer(SCHEMA, **counting), record) for record in records]

    many = FieldComparer(SCHEMA, **counting).compare_many(
        [
            (
                record["expected"],
                record["predicted"],
                {
                    "document_id": record["id"],
                    "document_class": record["class"],
                    "confidence": record.get("confidence"),
                },
            )
            for record in records
        ]
    )
    batch = compare_documents(records, SCHEMA, chunk_size=3, shape_mismatch="count")
    assert len(many) == len(records)
    for single, together in zip(alone, many, strict=True):
        assert_same(single, together)
        assert single.invalid == together.invalid
    valid = [document for document in alone if not document.invalid]
    assert batch.invalid_documents == len(alone) - len(valid)
    assert len(batch.documents) == len(valid)
    for single, chunked in zip(valid, batch.documents, strict=True):
        assert isinstance(chunked, DocumentComparison)
        assert_same(single, chunked)

    expected_total = Counts()
    for document in alone:
        expected_total.add(document.counts)
    assert batch.counts == expected_total


# --- documents must not affect each other ----------------------------------------

LIST_SCHEMA = DocumentSchema.model_validate(
    {
        "classes": [
            {
                "name": "S",
                "fields": {"Items": {"items": {"fields": {"code": {"method": "EXACT"}}}}},
            }
        ]
    }
)


def test_discovered_item_attribute_null_in_one_document_only() -> None:
    """A discovered list-item attribute that is null in document A but has values in
    document B gets TN rows in A when both are compared together, and none when A is
    compared alone."""
    a = ({"Items": [{"code": "X", "k": None}]}, {"Items": [{"code": "X", "k": None}]}, {})
    b = ({"Items": [{"code": "Y", "k": "v"}]}, {"Items": [{"code": "Y", "k": "v"}]}, {})
    alone = FieldComparer(LIST_SCHEMA).compare(a[0], a[1])
    together = FieldComparer(LIST_SCHEMA).compare_many([a, b])[0]
    assert together.cells == alone.cells
    assert row_multiset(together) == row_multiset(alone)


def test_batch_figures_of_a_document_do_not_depend_on_other_documents() -> None:
    """Inferred structure is cached from the first document that shows a key: a later
    document then gets TN rows for attributes it never had."""
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "S", "fields": {"Name": {"method": "EXACT"}}}]}
    )
    first = {"addr": {"city": "Oslo", "zip": "0150"}}
    second = {"addr": {"city": "Bergen"}}
    for document_class in ("S", "Unconfigured"):
        records = [
            {"id": "1", "class": document_class, "expected": first, "predicted": first},
            {"id": "2", "class": document_class, "expected": second, "predicted": second},
        ]
        together = compare_documents(records, schema).documents[1]
        alone = compare_documents(records[1:], schema).documents[0]
        assert together.counts == alone.counts, document_class


def test_inferred_method_does_not_depend_on_other_documents() -> None:
    """A discovered key's method is inferred from the first value the comparer ever
    saw: after a document with a number there, text is compared as numbers."""
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "S", "fields": {"Name": {"method": "EXACT"}}}]}
    )
    records = [
        {"id": "1", "expected": {"ref": 5}, "predicted": {"ref": 5}},
        {"id": "2", "expected": {"ref": "abcdefgh"}, "predicted": {"ref": "abcdefgi"}},
    ]
    alone = compare_documents(records[1:], schema).documents[0]
    assert isinstance(alone, DocumentComparison)
    assert alone.discovered_counts == Counts(tp=1)  # FUZZY 0.85: ratio 0.875
    together = compare_documents(records, schema).documents[1]
    assert isinstance(together, DocumentComparison)
    assert together.discovered_counts == alone.discovered_counts


def test_compare_many_equals_compare_on_the_same_comparer() -> None:
    """``compare_many`` promises the results of calling ``compare`` on each document;
    walking documents interleaved changes which value seeds an inferred rule."""
    with_list = (
        {"Items": [{"code": "X"}], "ref": "abcdefgh"},
        {"Items": [{"code": "X"}], "ref": "abcdefgi"},
        {},
    )
    number = ({"ref": 5}, {"ref": 5}, {})
    comparer = FieldComparer(LIST_SCHEMA)
    sequential = [comparer.compare(e, p, **k) for e, p, k in (with_list, number)]
    together = FieldComparer(LIST_SCHEMA).compare_many([with_list, number])
    for left, right in zip(sequential, together, strict=True):
        assert left.cells == right.cells


# --- inputs ---------------------------------------------------------------------

SMALL = DocumentSchema.model_validate(
    {
        "schema_id": "small",
        "version": "3",
        "classes": [
            {
                "name": "Invoice",
                "fields": {
                    "Number": {"method": "EXACT"},
                    "Total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                    "Lines": {"items": {"fields": {"sku": {"method": "EXACT"}}}},
                },
            },
            {"name": "Receipt", "fields": {"Number": {"method": "FUZZY", "threshold": 0.9}}},
        ],
    }
)

RECORDS: list[dict[str, Any]] = [
    {
        "id": "inv-1",
        "class": "Invoice",
        "expected": {"Number": "N1", "Total": 10, "Lines": [{"sku": "a"}, {"sku": "b"}]},
        "predicted": {"Number": "N1", "Total": "10.00", "Lines": [{"sku": "b"}]},
    },
    {
        "id": "inv-2",
        "class": "Invoice",
        "expected": {"Number": "N2", "Total": 5},
        "predicted": {"Number": "n2", "Total": 5, "Lines": [{"sku": "z"}]},
    },
    {
        "id": "rec-1",
        "class": "Receipt",
        "expected": {"Number": "R-100"},
        "predicted": {"Number": "R-100"},
    },
    {"id": "empty", "class": "Receipt", "expected": {}, "predicted": {}},
    {"id": "memo", "class": "Memo", "expected": {"x": "a"}, "predicted": {"x": "b"}},
]


def test_records_are_accepted() -> None:
    batch = compare_documents(RECORDS, SMALL)
    assert [d.id for d in batch.documents] == ["inv-1", "inv-2", "rec-1", "empty", "memo"]
    assert [d.document_class for d in batch.documents] == [
        "Invoice",
        "Invoice",
        "Receipt",
        "Receipt",
        "Memo",
    ]
    counts = [d.counts for d in batch.documents]
    # inv-1: Number TP, Total TP, Lines: b paired (TP), a missed (FN)
    # inv-2: Number FD, Total TP, Lines: z extra (FA)
    assert counts == [
        Counts(tp=3, fn=1),
        Counts(tp=1, fd=1, fa=1),
        Counts(tp=1),
        Counts(tn=1),
        Counts(fd=1),
    ]
    assert batch.counts == Counts(tp=5, fa=1, fd=2, fn=1, tn=1)
    assert batch.lists["$.Lines"].as_dict() == {
        "matched": 1,
        "weak": 0,
        "missed": 1,
        "extra": 1,
        "empty": 0,
        "invented": 1,
    }
    assert batch.classes["Memo"].configured is False
    assert batch.classes["Invoice"].documents == 2
    assert batch.classes["Invoice"].counts == Counts(tp=4, fa=1, fd=1, fn=1)
    assert batch.document_count == 5


def test_other_input_forms() -> None:
    pair = DocumentPair(id="p", expected={"Number": "1"}, predicted={"Number": "1"})
    batch = compare_documents(
        [({"Number": "1"}, {"Number": "2"}), pair, {"expected": {}, "predicted": {}}], SMALL
    )
    assert [d.id for d in batch.documents] == ["0", "p", "2"]
    assert [d.counts for d in batch.documents] == [Counts(fd=1), Counts(tp=1), Counts()]
    # Unclassified documents with two configured classes and no default: inferred.
    assert batch.classes[None].configured is False


def test_record_confidence_and_explainability() -> None:
    batch = compare_documents(
        [
            {
                "id": "a",
                "class": "Invoice",
                "expected": {"Number": "N1", "Lines": [{"sku": "a"}, {"sku": "b"}]},
                "predicted": {"Number": "N1", "Lines": [{"sku": "b"}, {"sku": "a"}]},
                "confidence": {"$.Number": 0.4},
                "explainability_info": [{"Lines": [{"sku": {"confidence": 0.7}}]}],
            }
        ],
        SMALL,
    )
    document = batch.documents[0]
    assert isinstance(document, DocumentComparison)
    rows = {row["path"]: row for row in document.row_dicts()}
    assert rows["$.Number"]["confidence"] == 0.4
    assert rows["$.Lines[1].sku"]["confidence"] == 0.7  # predicted item 0 is "b"
    assert rows["$.Lines[0].sku"]["confidence"] is None


@pytest.mark.parametrize(
    "item",
    [5, "text", None, ({"a": 1},), ({"a": 1}, {"a": 1}, {"a": 1}), {"expected": {}}, [{}, {}]],
)
def test_a_non_pair_item_is_an_input_error(item: Any) -> None:
    with pytest.raises(InputError) as caught:
        compare_documents([({}, {}), item], SMALL)
    assert caught.value.record == "1"


def test_duplicate_ids_raise_naming_the_id() -> None:
    records = [
        {"id": "a", "expected": {}, "predicted": {}},
        {"id": "dup-7", "expected": {}, "predicted": {}},
        {"id": "dup-7", "expected": {}, "predicted": {}},
    ]
    with pytest.raises(InputError, match="dup-7") as caught:
        compare_documents(records, SMALL)
    assert caught.value.record == "dup-7"
    # A tuple's id is its position, so it can collide with a record id.
    with pytest.raises(InputError, match="'1'"):
        compare_documents([{"id": "1", "expected": {}, "predicted": {}}, ({}, {})], SMALL)


def test_duplicate_ids_across_chunks() -> None:
    records = [{"id": str(i % 4), "expected": {}, "predicted": {}} for i in range(6)]
    with pytest.raises(InputError, match="'0'"):
        compare_documents(records, SMALL, chunk_size=2)


def test_generator_input_is_streamed() -> None:
    seen: list[int] = []

    def records() -> Any:
        for index, record in enumerate(RECORDS):
            seen.append(index)
            yield record

    batch = compare_documents(records(), SMALL, chunk_size=2)
    assert seen == list(range(len(RECORDS)))
    assert batch.document_count == len(RECORDS)


# --- keep_rows, rows_sink ---------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [1, 2, 256])
def test_keep_rows_false_keeps_summaries_with_the_same_figures(chunk_size: int) -> None:
    full = compare_documents(RECORDS, SMALL, chunk_size=chunk_size)
    lean = compare_documents(RECORDS, SMALL, keep_rows=False, chunk_size=chunk_size)
    assert all(isinstance(d, DocumentSummary) for d in lean.documents)
    assert [(d.id, d.document_class, d.counts) for d in lean.documents] == [
        (d.id, d.document_class, d.counts) for d in full.documents
    ]
    assert lean.counts == full.counts
    assert lean.macro_f1 == full.macro_f1
    assert {t: a.counts for t, a in lean.fields.items()} == {
        t: a.counts for t, a in full.fields.items()
    }
    assert lean.lists == full.lists
    lean_report = lean.to_report()
    assert all("rows" not in entry for entry in lean_report["documents"])
    FieldsReport.model_validate(lean_report)
    full_report = full.to_report()
    for key in ("overall", "classes", "fields", "lists"):
        assert lean_report[key] == full_report[key]


@pytest.mark.parametrize("keep_rows", [True, False])
def test_rows_sink_receives_every_document_with_rows(keep_rows: bool) -> None:
    received: list[DocumentComparison] = []
    batch = compare_documents(
        RECORDS, SMALL, keep_rows=keep_rows, rows_sink=received.append, chunk_size=2
    )
    assert [d.id for d in received] == [r["id"] for r in RECORDS]
    reference = compare_documents(RECORDS, SMALL)
    for document, expected in zip(received, reference.documents, strict=True):
        assert document.rows is not None
        assert isinstance(expected, DocumentComparison)
        assert row_multiset(document) == row_multiset(expected)
        assert len(document.row_dicts()) == document.counts.total
    assert batch.counts == reference.counts


# --- aggregates -------------------------------------------------------------------


def test_macro_f1_is_the_mean_of_defined_document_f1() -> None:
    batch = compare_documents(RECORDS, SMALL)
    # inv-1: 2*3/(6+0+1) = 6/7; inv-2: 2/(2+2) = 1/2; rec-1: 1; empty: undefined; memo: 0
    assert batch.documents[3].counts.metrics()["f1"] is None
    assert batch.macro_f1 == pytest.approx((6 / 7 + 1 / 2 + 1 + 0) / 4)
    assert batch.metrics["f1"] == pytest.approx(10 / (10 + 3 + 1))
    assert batch.metrics["precision"] == pytest.approx(5 / 8)
    assert batch.metrics["recall"] == pytest.approx(5 / 6)
    assert batch.metrics["accuracy"] == pytest.approx(6 / 10)
    assert batch.metrics["far"] == pytest.approx(1 / 2)
    assert batch.metrics["fdr"] == pytest.approx(2 / 7)
    report = batch.to_report()
    assert report["classes"]["Invoice"]["macro_f1"] == pytest.approx((6 / 7 + 1 / 2) / 2)
    assert report["classes"]["Receipt"]["macro_f1"] == 1.0


def test_macro_f1_undefined_without_defined_documents() -> None:
    batch = compare_documents([({}, {})], SMALL)
    assert batch.macro_f1 is None
    empty = compare_documents([], SMALL)
    assert empty.macro_f1 is None
    assert empty.counts == Counts()
    assert empty.document_count == 0
    FieldsReport.model_validate(empty.to_report())


def test_batch_field_entries_do_not_mix_methods() -> None:
    """Invoice and Receipt both have ``$.Number``, with EXACT and FUZZY: the batch-wide
    entry for the template must not name one method while summing cells the other
    decided."""
    batch = compare_documents(RECORDS, SMALL)
    for (template, _label), aggregate in batch.fields.items():
        decided_by = {
            name: class_aggregate.fields[template].info.label
            for name, class_aggregate in batch.classes.items()
            if template in class_aggregate.fields
        }
        same_method = Counts()
        for name, label in decided_by.items():
            if label == aggregate.info.label:
                same_method.add(batch.classes[name].fields[template].counts)
        assert aggregate.counts == same_method, (template, aggregate.info.label, decided_by)


# --- the report ---------------------------------------------------------------------


def test_report_has_the_stable_keys_and_validates() -> None:
    batch = compare_documents(
        RECORDS, SMALL, expected_only=["lost-1"], predicted_only=["stray-1", "stray-2"]
    )
    report = batch.to_report()
    assert isinstance(batch, BatchComparison)
    assert list(report) == [
        "kind",
        "package_version",
        "schema",
        "settings",
        "overall",
        "classes",
        "fields",
        "lists",
        "documents",
        "unpaired",
    ]
    assert report["kind"] == "fields"
    assert report["schema"] == {"id": "small", "version": "3", "sha256": SMALL.sha256}
    assert set(report["overall"]) == {
        "documents",
        "counts",
        "metrics",
        "macro_f1",
        "undecided",
        "undecided_reasons",
        "unparsed",
        "ci",
    }
    assert report["settings"] == {
        "list_pairing": "schema",
        "discovered": "exclude",
        "shape_mismatch": "error",
    }
    assert (report["overall"]["undecided"], report["overall"]["undecided_reasons"]) == (0, [])
    assert report["overall"]["documents"] == 5
    assert set(report["overall"]["counts"]) == {"tp", "fa", "fd", "fn", "tn"}
    assert set(report["overall"]["metrics"]) == {
        "precision",
        "recall",
        "f1",
        "accuracy",
        "far",
        "fdr",
    }
    assert set(report["classes"]) == {"Invoice", "Receipt", "Memo"}
    for entry in report["classes"].values():
        assert set(entry) == {
            "configured",
            "documents",
            "counts",
            "metrics",
            "macro_f1",
            "undecided",
            "unparsed",
            "fields",
            "ci",
        }
    for entry in report["fields"]:
        assert set(entry) == {
            "template",
            "method",
            "method_name",
            "threshold",
            "discovered",
            "counts",
            "metrics",
            "undecided",
            "unparsed",
            "ci",
        }
    assert report["lists"] == [
        {
            "template": "$.Lines",
            "method": "HUNGARIAN (match threshold: 0.5)",
            "pairing": "stickler",
            "discovered": False,
            "matched": 1,
            "weak": 0,
            "missed": 1,
            "extra": 1,
            "empty": 0,
            "invented": 1,
            "counts": {"tp": 1, "fa": 1, "fd": 0, "fn": 1, "tn": 0},
            "metrics": {
                "precision": 0.5,
                "recall": 0.5,
                "f1": 0.5,
                "accuracy": 1 / 3,
                "far": 1.0,
                "fdr": 0.0,
            },
        }
    ]
    for entry in report["documents"]:
        assert set(entry) == {"id", "class", "counts", "metrics", "undecided", "rows"}
        for row in entry["rows"]:
            assert set(row) == {
                "path",
                "template",
                "method",
                "threshold",
                "expected",
                "actual",
                "score",
                "outcome",
                "confidence",
                "discovered",
                "reason",
                "matched",
            }
    assert report["unpaired"] == {
        "expected_only": ["lost-1"],
        "predicted_only": ["stray-1", "stray-2"],
    }
    model = FieldsReport.model_validate(report)
    assert model.overall.counts.tp == batch.counts.tp
    # The report survives JSON and validates again.
    FieldsReport.model_validate(json.loads(json.dumps(report)))
    without_rows = batch.to_report(include_rows=False)
    assert all("rows" not in entry for entry in without_rows["documents"])
    FieldsReport.model_validate(without_rows)


def test_report_names_unclassified_documents() -> None:
    two = DocumentSchema.model_validate(
        {"classes": [{"name": "A", "fields": {}}, {"name": "B", "fields": {}}]}
    )
    report = compare_documents([({"x": "1"}, {"x": "1"})], two).to_report()
    assert list(report["classes"]) == [UNCLASSIFIED]
    assert report["documents"][0]["class"] is None
    FieldsReport.model_validate(report)


def test_report_rejects_unknown_keys() -> None:
    report = compare_documents(RECORDS, SMALL).to_report()
    report["extra"] = 1
    with pytest.raises(ValueError, match="extra"):
        FieldsReport.model_validate(report)


# --- intervals from resampling documents ---------------------------------------------


def _many_documents(count: int) -> list[DocumentPair]:
    """``count`` invoices; every third gets the total wrong, every fifth misses the number."""
    return [
        DocumentPair(
            f"d{i}",
            {"Number": f"N{i}", "Total": 10 + i},
            {"Number": None if i % 5 == 0 else f"N{i}", "Total": 0 if i % 3 == 0 else 10 + i},
            "Invoice",
        )
        for i in range(count)
    ]


def test_report_intervals_come_from_the_documents_cells() -> None:
    from docevals_mlflow.core.statistics.cluster_intervals import IntervalSettings, cell_intervals

    batch = compare_documents(_many_documents(60), SMALL)
    report = batch.to_report(intervals=IntervalSettings(seed=4))
    overall = report["overall"]
    f1 = overall["ci"]["f1"]
    assert f1["low"] <= overall["metrics"]["f1"] <= f1["high"]
    assert (f1["documents"], f1["seed"], f1["confidence"]) == (60, 4, 0.95)
    assert f1["observations"] == sum(overall["counts"].values())
    # The overall interval is the one of the per-document totals, recomputed by hand.
    totals = [list(document.counts.as_dict().values()) for document in batch.documents]
    fields = len(batch.cell_fields)
    expected = cell_intervals(totals, settings=IntervalSettings(seed=4), stream=fields)
    assert f1 == expected["f1"].as_dict()
    for entry in report["fields"]:
        assert entry["ci"]["f1"]["documents"] == 60
    # One class: its figures are the batch's, and so are its intervals.
    assert report["classes"]["Invoice"]["ci"] == overall["ci"]
    FieldsReport.model_validate(json.loads(json.dumps(report)))
    assert batch.to_report(intervals=IntervalSettings(seed=4)) == report


def test_intervals_can_be_left_out_and_old_reports_still_load() -> None:
    batch = compare_documents(_many_documents(10), SMALL)
    report = batch.to_report(intervals=False)
    assert "ci" not in report["overall"]
    assert all("ci" not in entry for entry in report["fields"])
    FieldsReport.model_validate(json.loads(json.dumps(report)))


def test_intervals_survive_merging_batches_kept_without_rows() -> None:
    pairs = _many_documents(40)
    whole = compare_documents(pairs, SMALL, keep_rows=False)
    first = compare_documents(pairs[:17], SMALL, keep_rows=False)
    first.merge(compare_documents(pairs[17:], SMALL, keep_rows=False))
    assert bytes(first.document_cells) == bytes(whole.document_cells)
    assert first.to_report()["overall"]["ci"] == whole.to_report()["overall"]["ci"]


def test_a_field_seen_in_one_document_has_no_interval_and_says_why() -> None:
    report = compare_documents(RECORDS, SMALL).to_report()
    memo = report["classes"]["Memo"]
    assert memo["ci"]["f1"]["low"] is None
    assert memo["ci"]["f1"]["reason"] == "fewer than 2 documents (1)"
