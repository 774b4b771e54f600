"""Hypothesis properties of the engine: parents are sums of their leaves, the
assignment is optimal, item order does not matter, and a document matches itself.

The document strategies here are also used by ``test_batch.py``.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.compare import DocumentComparison, FieldComparer
from docevals_mlflow.fields.counts import OUTCOMES, Counts, ItemCounts
from docevals_mlflow.fields.pairing import assign
from docevals_mlflow.fields.report import FieldsReport
from docevals_mlflow.fields.schema import DocumentSchema

SCHEMA = DocumentSchema.model_validate(
    {
        "schema_id": "properties",
        "classes": [
            {
                "name": "Statement",
                "fields": {
                    "Account": {"method": "EXACT"},
                    "Total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                    "Holder": {
                        "fields": {
                            "Name": {"method": "FUZZY", "threshold": 0.8},
                            "City": {"method": "NORMALIZED"},
                        }
                    },
                    "Items": {
                        "items": {
                            "fields": {
                                "code": {"method": "EXACT"},
                                "amount": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                                "desc": {"method": "FUZZY", "threshold": 0.7},
                                "when": {"method": "DATE"},
                                "meta": {"fields": {"ref": {"method": "EXACT"}}},
                                "sub": {"items": {"method": "EXACT"}},
                            }
                        }
                    },
                    "Tags": {"items": {"method": "FUZZY", "threshold": 0.8}},
                },
            },
            {
                "name": "Receipt",
                "fields": {
                    "Store": {"method": "LEVENSHTEIN"},
                    "Lines": {
                        "match_threshold": 0.6,
                        "items": {
                            "fields": {
                                "sku": {"method": "EXACT"},
                                "qty": {"method": "NUMERIC_EXACT"},
                            }
                        },
                    },
                },
            },
        ],
        "default_class": "Statement",
    }
)

# --- value pools (small, so that values often agree) --------------------------------

CODES = ["A1", "A2", "B1", "b1", "C3"]
AMOUNTS: list[Any] = [10, 10.0, "10.00", 10.004, 20, "$20.00", "(5.00)", "1,234.50"]
DESCS = ["office chair", "Office Chair", "desk lamp", "desk lamb", "paper"]
DATES = ["2024-01-15", "01/15/2024", "Jan 15, 2024", "2024-02-01", "02/01/2024"]
NAMES = ["Ann Lee", "ann lee", "Anne Lee", "Bob Stone"]
CITIES = ["Oslo", "OSLO.", "Bergen", "New York", "new-york"]
TAGS = ["urgent", "Urgent", "paid", "piad", "late"]
EMPTY: list[Any] = [None, "", " "]
WRONG: list[Any] = [["x"], {"v": 1}, [{"a": "b"}]]
NOTES = ["note one", "note two", "Note One"]  # discovered text attribute
QTYS = [1, 2, 3.5]  # discovered numeric attribute
DISCOVERED = frozenset({"note", "qty"})
STATEMENT_POOLS: dict[str, list[Any]] = {
    "code": CODES,
    "amount": AMOUNTS,
    "desc": DESCS,
    "when": DATES,
    "note": NOTES,
    "meta": [{"ref": code} for code in CODES],
}
RECEIPT_POOLS: dict[str, list[Any]] = {"sku": ["S1", "S2", "S3"], "qty": [1, 2, "2", 3]}

MISSING = object()


def _scalar(pool: list[Any], *, wrong: bool = True, empty: bool = True) -> st.SearchStrategy[Any]:
    options = [st.sampled_from(pool)]
    if empty:
        options.append(st.sampled_from([*EMPTY, MISSING]))
    if wrong:
        options.append(st.sampled_from(WRONG))
    return st.one_of(options)


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not MISSING:
        target[key] = value


@st.composite
def statement_item(draw: st.DrawFn, *, wrong: bool = True) -> Any:
    if wrong and draw(st.integers(0, 14)) == 0:
        return draw(st.sampled_from(["junk", 5, None, {}, ["x"]]))
    item: dict[str, Any] = {}
    _put(item, "code", draw(_scalar(CODES, wrong=wrong)))
    _put(item, "amount", draw(_scalar(AMOUNTS + (["abc"] if wrong else []), wrong=wrong)))
    _put(item, "desc", draw(_scalar(DESCS, wrong=wrong)))
    _put(item, "when", draw(_scalar(DATES, wrong=wrong)))
    if draw(st.booleans()):
        ref = draw(st.sampled_from([*CODES, None]))
        meta: Any = {"ref": ref}
        if wrong and draw(st.integers(0, 5)) == 0:
            meta = "not an object"
        item["meta"] = meta
    if draw(st.booleans()):
        sub: Any = draw(st.lists(st.sampled_from(["x", "y", "z", ""]), max_size=3))
        if wrong and draw(st.integers(0, 5)) == 0:
            sub = "not a list"
        item["sub"] = sub
    # Discovered attributes: each keeps one type and is never null (see
    # test_batch.py for what happens otherwise).
    if draw(st.booleans()):
        item["note"] = draw(st.sampled_from(NOTES))
    if draw(st.integers(0, 3)) == 0:
        item["qty"] = draw(st.sampled_from(QTYS))
    return item


@st.composite
def mutate_item(
    draw: st.DrawFn, item: Any, pools: dict[str, list[Any]], *, wrong: bool = True
) -> Any:
    """Maybe change one attribute of an item: drop it, give it a wrong type (configured
    attributes only) or another value from its pool."""
    if not isinstance(item, dict) or draw(st.booleans()):
        return item
    changed = dict(item)
    key = draw(st.sampled_from(sorted(pools)))
    choice = draw(st.integers(0, 3))
    if choice == 0 and key not in DISCOVERED:
        changed.pop(key, None)
    elif choice == 1 and wrong and key not in DISCOVERED and key != "meta":
        changed[key] = draw(st.sampled_from(WRONG))
    else:
        changed[key] = draw(st.sampled_from(pools[key]))
    return changed


@st.composite
def predicted_list(
    draw: st.DrawFn,
    expected: list[Any],
    item: Any,
    pools: dict[str, list[Any]] | None = None,
    *,
    wrong: bool = True,
) -> Any:
    """Some expected items (maybe changed), some new ones, in any order."""
    kept = [value for value in expected if draw(st.integers(0, 4)) > 0]
    if pools is not None:
        kept = [draw(mutate_item(value, pools, wrong=wrong)) for value in kept]
    kept += draw(st.lists(item, max_size=2))
    return draw(st.permutations(kept)) if kept else kept


@st.composite
def statement_pair(draw: st.DrawFn, *, wrong: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    expected: dict[str, Any] = {}
    predicted: dict[str, Any] = {}
    _put(expected, "Account", draw(_scalar(CODES, wrong=False)))
    _put(predicted, "Account", draw(_scalar(CODES, wrong=wrong)))
    _put(expected, "Total", draw(_scalar(AMOUNTS, wrong=False)))
    _put(predicted, "Total", draw(_scalar(AMOUNTS, wrong=wrong)))
    for side in (expected, predicted):
        shape = draw(st.integers(0, 5))
        if shape == 0:
            continue
        if shape == 1:
            # A string where the group is due: a model error on the predicted side
            # only (in ground truth it is an input error, see document_record).
            wrong_holder = ["Ann Lee"] if wrong and side is predicted else []
            side["Holder"] = draw(st.sampled_from([None, {}, *wrong_holder]))
            continue
        holder: dict[str, Any] = {}
        _put(holder, "Name", draw(_scalar(NAMES, wrong=wrong and side is predicted)))
        _put(holder, "City", draw(_scalar(CITIES, wrong=False)))
        side["Holder"] = holder
    items = draw(st.lists(statement_item(wrong=False), max_size=5))
    if items or draw(st.booleans()):
        expected["Items"] = items
    shape = draw(st.integers(0, 9))
    if shape == 0:
        predicted["Items"] = draw(
            st.sampled_from([None, *(["a string", {"code": "A1"}] if wrong else [])])
        )
    elif shape > 1:
        predicted["Items"] = draw(
            predicted_list(items, statement_item(wrong=wrong), STATEMENT_POOLS, wrong=wrong)
        )
    tags = draw(st.lists(st.sampled_from([*TAGS, ""]), max_size=4))
    if tags:
        expected["Tags"] = tags
    if draw(st.booleans()):
        predicted["Tags"] = draw(predicted_list(tags, st.sampled_from(TAGS), wrong=wrong))
    # a discovered top-level attribute (always text or null)
    if draw(st.booleans()):
        expected["Memo"] = draw(st.sampled_from([*NOTES, None]))
    if draw(st.booleans()):
        predicted["Memo"] = draw(st.sampled_from([*NOTES, None]))
    return expected, predicted


@st.composite
def receipt_pair(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    line = st.fixed_dictionaries(
        {key: st.sampled_from(pool) for key, pool in RECEIPT_POOLS.items()}
    )
    lines = draw(st.lists(line, max_size=4))
    expected = {"Store": draw(st.sampled_from(["Corner Shop", "corner shop", "Big Mart"]))}
    expected["Lines"] = lines
    predicted = {
        "Store": draw(st.sampled_from(["Corner Shop", "Corner Shoppe", "Big Mart", ""])),
        "Lines": draw(predicted_list(lines, line, RECEIPT_POOLS, wrong=False)),
    }
    return expected, predicted


@st.composite
def memo_pair(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A document of a class the schema does not configure: flat, consistently typed."""
    sides = []
    for _ in range(2):
        side: dict[str, Any] = {}
        _put(side, "subject", draw(st.sampled_from([*NOTES, MISSING])))
        _put(side, "pages", draw(st.sampled_from([1, 2, 2.004, MISSING])))
        sides.append(side)
    return sides[0], sides[1]


WRONG_SHAPED_GROUND_TRUTH: list[dict[str, Any]] = [
    {"Account": ["A1"]},
    {"Holder": "Ann Lee"},
    {"Items": ["junk"]},
    {"Items": [{"code": "A1", "meta": "not an object"}]},
    {"Items": [{"code": {"v": 1}}]},
    {"Tags": "urgent"},
]
"""Ground truth that contradicts the schema: never scored, counted apart."""


@st.composite
def document_record(draw: st.DrawFn, index: int = 0, invalid: bool = False) -> dict[str, Any]:
    """A record for ``compare_documents``: id, class, both sides, maybe confidence;
    with ``invalid``, now and then ground truth of the wrong shape."""
    kind = draw(st.sampled_from(["Statement", None, "Receipt", "Memo"]))
    if invalid and kind in ("Statement", None) and draw(st.integers(0, 5)) == 0:
        expected = draw(st.sampled_from(WRONG_SHAPED_GROUND_TRUTH))
        predicted = draw(statement_pair())[1]
    elif kind in ("Statement", None):
        expected, predicted = draw(statement_pair())
    elif kind == "Receipt":
        expected, predicted = draw(receipt_pair())
    else:
        expected, predicted = draw(memo_pair())
    record: dict[str, Any] = {
        "id": f"doc-{index}",
        "class": kind,
        "expected": expected,
        "predicted": predicted,
    }
    if draw(st.booleans()):
        record["confidence"] = {
            path: draw(st.sampled_from([0.1, 0.5, 0.9]))
            for path in draw(
                st.lists(
                    st.sampled_from(
                        [
                            "$.Account",
                            "$.Items[0].amount",
                            "$.Items[1].code",
                            "$.Items[2].desc",
                            "$.Items[0].meta.ref",
                            "$.Items[1].note",
                            "$.Tags[0]",
                            "$.Tags[2]",
                            "$.Lines[1].qty",
                            "$.Holder.Name",
                        ]
                    ),
                    max_size=4,
                )
            )
        }
    return record


@st.composite
def document_batch(
    draw: st.DrawFn, max_size: int = 8, invalid: bool = False
) -> list[dict[str, Any]]:
    size = draw(st.integers(1, max_size))
    return [draw(document_record(index, invalid)) for index in range(size)]


def compare_record(comparer: FieldComparer, record: dict[str, Any]) -> DocumentComparison:
    return comparer.compare(
        record["expected"],
        record["predicted"],
        document_id=record["id"],
        document_class=record["class"],
        confidence=record.get("confidence"),
    )


# --- (a) every parent figure is the sum of its leaves --------------------------------


def _check_document_sums(document: DocumentComparison) -> None:
    total = Counts()
    headline = Counts()
    for template, cells in document.cells.items():
        assert len(cells) == 5
        assert all(cell >= 0 for cell in cells)
        total.add_list(cells)
        if document.include_discovered or not document.fields[template].discovered:
            headline.add_list(cells)
    # Discovered fields are outside the document's figures unless included.
    assert document.counts == headline
    headline.add(document.discovered_counts)
    assert headline == total
    rows = document.row_dicts()
    by_outcome = Counter(row["outcome"] for row in rows)
    assert [by_outcome[outcome] for outcome in OUTCOMES] == [
        total.tp,
        total.fa,
        total.fd,
        total.fn,
        total.tn,
    ]
    per_template: dict[str, list[int]] = {}
    for row in rows:
        cells = per_template.setdefault(row["template"], [0, 0, 0, 0, 0])
        cells[OUTCOMES.index(row["outcome"])] += 1
        assert row["matched"] is (row["outcome"] in ("TP", "TN"))
    assert per_template == {t: c for t, c in document.cells.items() if any(c)}
    assert set(document.fields) >= set(document.cells) | set(document.items)


@settings(max_examples=60, deadline=None)
@given(records=document_batch())
def test_parents_are_sums_of_leaves(records: list[dict[str, Any]]) -> None:
    batch = compare_documents(records, SCHEMA, chunk_size=3)
    documents = batch.documents
    assert len(documents) == len(records)
    document_total = Counts()
    for document in documents:
        assert isinstance(document, DocumentComparison)
        _check_document_sums(document)
        document_total.add(document.counts)
    assert batch.counts == document_total

    field_total = Counts()
    for aggregate in batch.fields.values():
        field_total.add(aggregate.counts)
    assert batch.counts == field_total

    class_total = Counts()
    for aggregate in batch.classes.values():
        class_total.add(aggregate.counts)
        class_fields = Counts()
        for entry in aggregate.fields.values():
            class_fields.add(entry.counts)
        assert aggregate.counts == class_fields
    assert batch.counts == class_total
    assert sum(a.documents for a in batch.classes.values()) == len(records)

    # Per template and method, the batch figure is the sum over classes and documents.
    for (template, label), aggregate in batch.fields.items():
        over_classes = Counts()
        for class_aggregate in batch.classes.values():
            entry = class_aggregate.fields.get(template)
            if entry is not None and entry.info.label == label:
                over_classes.add(entry.counts)
        over_documents = Counts()
        for document in documents:
            assert isinstance(document, DocumentComparison)
            if template in document.cells and document.fields[template].label == label:
                over_documents.add_list(document.cells[template])
        assert aggregate.counts == over_classes == over_documents

    # Item counts of lists add up the same way.
    for template, items in batch.lists.items():
        summed = ItemCounts()
        for document in documents:
            assert isinstance(document, DocumentComparison)
            if template in document.items:
                summed.add(ItemCounts(*document.items[template]))
        assert items == summed

    report = batch.to_report()
    FieldsReport.model_validate(report)
    assert report["overall"]["counts"] == batch.counts.as_dict()
    assert sum(entry["counts"]["tp"] for entry in report["fields"]) == batch.counts.tp
    assert sum(entry["counts"]["fn"] for entry in report["classes"].values()) == batch.counts.fn


# --- (b) the assignment is optimal ---------------------------------------------------


def _brute_force_best(similarity: np.ndarray) -> float:
    rows, cols = similarity.shape
    if rows > cols:
        similarity, rows, cols = similarity.T, cols, rows
    best = 0.0 if rows == 0 else -np.inf
    for chosen in itertools.permutations(range(cols), rows):
        best = max(best, float(sum(similarity[i, j] for i, j in enumerate(chosen))))
    return best


similarity_matrices = st.tuples(st.integers(0, 6), st.integers(0, 6)).flatmap(
    lambda shape: st.lists(
        st.one_of(
            st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
            st.floats(0, 1, allow_nan=False, allow_subnormal=False),
        ),
        min_size=shape[0] * shape[1],
        max_size=shape[0] * shape[1],
    ).map(lambda values: np.array(values, dtype=np.float64).reshape(shape))
)


@settings(max_examples=200, deadline=None)
@given(similarity=similarity_matrices, threshold=st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0]))
def test_assignment_is_optimal_then_thresholded(similarity: np.ndarray, threshold: float) -> None:
    rows, cols = linear_sum_assignment(similarity, maximize=True)
    chosen_total = float(similarity[rows, cols].sum())
    assert abs(chosen_total - _brute_force_best(similarity)) <= 1e-9

    # Nothing is dropped at threshold 0: _assign gives the optimal assignment itself.
    full, none_weak = assign(similarity, 0.0)
    assert len(full) == min(similarity.shape)
    assert none_weak == []
    assert abs(sum(similarity[i, j] for i, j in full) - chosen_total) <= 1e-9

    kept, dropped = assign(similarity, threshold)
    assert dropped == []
    assert len({i for i, _ in kept}) == len(kept) == len({j for _, j in kept})
    assert all(similarity[i, j] >= threshold for i, j in kept)
    # Exactly the pairs of the optimal assignment that meet the threshold.
    assert kept == [(i, j) for i, j in full if similarity[i, j] >= threshold]
    # Keeping weak pairs (Stickler 1.0): the whole assignment, split at the threshold.
    strong, weak = assign(similarity, threshold, keep_weak=True)
    assert strong == kept
    assert sorted([*strong, *((i, j) for i, j, _ in weak)]) == sorted(full)
    assert all(score == similarity[i, j] < threshold for i, j, score in weak)


# --- (c) item order does not matter --------------------------------------------------

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
ORDER_SCHEMA = DocumentSchema.model_validate(
    {
        "classes": [
            {
                "name": "Doc",
                "fields": {
                    "Items": {
                        "items": {
                            "fields": {
                                "code": {"method": "EXACT"},
                                "amount": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                                "desc": {"method": "FUZZY", "threshold": 0.8},
                                "sub": {"items": {"method": "EXACT"}},
                            }
                        }
                    },
                    "Tags": {"items": {"method": "EXACT"}},
                },
            }
        ]
    }
)


@st.composite
def distinct_lists(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """Items with distinct values per attribute, predicted as a mutated subset plus
    unrelated extras, so that the best pairing is unique."""
    count = draw(st.integers(0, 5))
    expected_items = [
        {"code": f"C{i}", "amount": 100 * (i + 1), "desc": WORDS[i], "sub": [f"s{i}"]}
        for i in range(count)
    ]
    predicted_items: list[Any] = []
    for item in expected_items:
        fate = draw(st.integers(0, 5))
        if fate == 0:
            continue  # missed
        changed = dict(item)
        if fate == 1:
            changed["amount"] = item["amount"] + 1
        elif fate == 2:
            changed["desc"] = item["desc"].upper() + "s"
        elif fate == 3:
            changed.pop("code")
        predicted_items.append(changed)
    for k in range(draw(st.integers(0, 2))):
        predicted_items.append({"code": f"Z{k}", "amount": 7 + k, "desc": f"zz{k}"})
    tags = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=5))
    predicted_tags = draw(st.lists(st.sampled_from(["a", "b", "c", "e"]), max_size=5))
    return (
        {"Items": expected_items, "Tags": tags},
        {"Items": predicted_items, "Tags": predicted_tags},
    )


@settings(max_examples=60, deadline=None)
@given(
    pair=distinct_lists(),
    data=st.data(),
)
def test_permuting_items_does_not_change_counts(
    pair: tuple[dict[str, Any], dict[str, Any]], data: st.DataObject
) -> None:
    expected, predicted = pair
    comparer = FieldComparer(ORDER_SCHEMA)
    base = comparer.compare(expected, predicted)
    shuffled_expected = {key: data.draw(st.permutations(value)) for key, value in expected.items()}
    shuffled_predicted = {
        key: data.draw(st.permutations(value)) for key, value in predicted.items()
    }
    for left, right in (
        (shuffled_expected, predicted),
        (expected, shuffled_predicted),
        (shuffled_expected, shuffled_predicted),
    ):
        other = comparer.compare(left, right)
        assert other.counts == base.counts
        assert other.cells == base.cells
        assert other.items == base.items


@settings(max_examples=60, deadline=None)
@given(pair=statement_pair(wrong=False), data=st.data())
def test_permuting_scalar_list_items_does_not_change_counts(
    pair: tuple[dict[str, Any], dict[str, Any]], data: st.DataObject
) -> None:
    """Lists of EXACT scalars: pairing is a maximum matching of equal values."""
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "D", "fields": {"Tags": {"items": {"method": "EXACT"}}}}]}
    )
    expected = {"Tags": pair[0].get("Tags", [])}
    predicted = {"Tags": pair[1].get("Tags", [])}
    base = FieldComparer(schema).compare(expected, predicted)
    other = FieldComparer(schema).compare(
        {"Tags": data.draw(st.permutations(expected["Tags"]))},
        {"Tags": data.draw(st.permutations(predicted["Tags"]))},
    )
    assert (other.counts, other.items) == (base.counts, base.items)


# --- (d) a document matches itself ---------------------------------------------------


@st.composite
def well_formed_document(draw: st.DrawFn) -> tuple[str | None, dict[str, Any]]:
    kind = draw(st.sampled_from(["Statement", "Receipt", "Memo"]))
    if kind == "Statement":
        return kind, draw(statement_pair(wrong=False))[0]
    if kind == "Receipt":
        return kind, draw(receipt_pair())[0]
    return kind, draw(memo_pair())[0]


@settings(max_examples=80, deadline=None)
@given(document=well_formed_document())
def test_document_compared_with_itself_has_no_errors(
    document: tuple[str | None, dict[str, Any]],
) -> None:
    kind, data = document
    comparison = FieldComparer(SCHEMA).compare(data, data, document_class=kind)
    counts = comparison.counts
    assert (counts.fa, counts.fd, counts.fn) == (0, 0, 0), [
        row for row in comparison.row_dicts() if row["outcome"] not in ("TP", "TN")
    ]
    for template, (_matched, weak, missed, extra, _empty, invented) in comparison.items.items():
        assert (weak, missed, extra, invented) == (0, 0, 0, 0), template
    if counts.tp:
        assert comparison.metrics["f1"] == 1.0
