"""The field engine against Stickler 1.0 over many document shapes, on identical inputs.

``fields_vs_stickler.py`` measures one shape (bank statements of 10 transactions).
Real document sets are not one shape: receipts are small and flat, invoices carry
0-50 line items, contracts nest groups. This benchmark generates statements whose
shape varies along three axes and prints, per shape, both engines' documents/s and
the ratio, then the range of ratios:

* flat: 4, 6 or 10 scalar fields, no list (receipts, forms);
* list length: 0, 5, 20 or 50 transactions;
* nesting: a group inside the items (each transaction's counterparty) and a nested
  group at the top;
* width: 30 scalar fields beside 10 transactions.

Both engines compare the same documents under the same rules (EXACT, FUZZY,
NUMERIC_EXACT, dates as FUZZY text, Stickler 1.0 list pairing with match threshold
0.5), with every row kept on our side. Needs the ``bench`` extra.

    python benchmarks/fields_shapes.py [--documents 400] [--repeat 3] [--only NAME]
"""

from __future__ import annotations

import argparse
import gc
import random
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.schema import DocumentSchema

MERCHANTS = [
    "Kedai Runcit Ah Seng",
    "Tesco Express",
    "Café de Flore",
    "Müller GmbH",
    "7-Eleven #2231",
    "O'Brien & Sons",
    "Starbucks Coffee",
    "Shell Station 44",
    "Apotheke am Markt",
    "Marché U",
]
CITIES = ["Kuala Lumpur", "Singapore", "Berlin", "Paris", "Austin", "São Paulo"]
CURRENCIES = ["RM{:.2f}", "S${:.2f}", "€{:.2f}", "{:.2f} EUR", "${:,.2f}", "R$ {:.2f}"]


def _amount(rng: random.Random) -> str:
    return rng.choice(CURRENCIES).format(rng.uniform(0.5, 5000))


def _typo(rng: random.Random, text: str) -> str:
    if len(text) < 3:
        return text + "x"
    at = rng.randrange(len(text))
    return text[:at] + rng.choice("abcdefghijklmnopqrstuvwxyz") + text[at + 1 :]


# ------------------------------------------------------------------------ one shape


@dataclass(frozen=True)
class Shape:
    """How a generated statement looks."""

    name: str
    scalars: int
    """Top-level scalar fields (cycling through text, amount, code and date)."""
    items: int | None
    """Transactions per statement; ``None``: no list at all."""
    nested: bool = False
    """A group inside each transaction, and a nested group at the top."""

    # The rule of scalar field k, in our form and Stickler's.
    def rule(self, k: int) -> tuple[dict[str, Any], dict[str, Any]]:
        kind = k % 4
        if kind == 0:
            return (
                {"method": "FUZZY", "threshold": 0.8},
                _stickler("FuzzyComparator", threshold=0.8),
            )
        if kind == 1:
            return (
                {"method": "NUMERIC_EXACT", "threshold": 0.01},
                _stickler("NumericComparator", config={"absolute_tolerance": 0.01}),
            )
        if kind == 2:
            return {"method": "EXACT"}, _stickler("ExactComparator")
        return (
            {"method": "FUZZY", "threshold": 0.9},
            _stickler("FuzzyComparator", threshold=0.9),
        )

    def value(self, k: int, rng: random.Random) -> str:
        kind = k % 4
        if kind == 0:
            return rng.choice(MERCHANTS)
        if kind == 1:
            return _amount(rng)
        if kind == 2:
            return f"INV-{rng.randrange(10**6):06d}"
        return f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2024"

    def schemas(self) -> tuple[DocumentSchema, dict[str, Any]]:
        ours: dict[str, Any] = {}
        theirs: dict[str, Any] = {}
        for k in range(self.scalars):
            ours[f"f{k}"], theirs[f"f{k}"] = self.rule(k)
        if self.nested:
            ours["address"] = {
                "fields": {
                    "city": {"method": "FUZZY", "threshold": 0.9},
                    "geo": {"fields": {"zip": {"method": "EXACT"}}},
                }
            }
            theirs["address"] = _object(
                {
                    "city": _stickler("FuzzyComparator", threshold=0.9),
                    "geo": _object({"zip": _stickler("ExactComparator")}),
                }
            )
        if self.items is not None:
            item: dict[str, Any] = {
                "date": {"method": "FUZZY", "threshold": 0.9},
                "description": {"method": "FUZZY", "threshold": 0.7},
                "amount": {"method": "NUMERIC_EXACT", "threshold": 0.01},
            }
            their_item: dict[str, Any] = {
                "date": _stickler("FuzzyComparator", threshold=0.9),
                "description": _stickler("FuzzyComparator", threshold=0.7),
                "amount": _stickler("NumericComparator", config={"absolute_tolerance": 0.01}),
            }
            if self.nested:
                item["counterparty"] = {"fields": {"name": {"method": "FUZZY", "threshold": 0.8}}}
                their_item["counterparty"] = _object(
                    {"name": _stickler("FuzzyComparator", threshold=0.8)}
                )
            ours["transactions"] = {"match_threshold": 0.5, "items": {"fields": item}}
            their_list_item = _object(their_item)
            their_list_item["x-aws-stickler-match-threshold"] = 0.5
            theirs["transactions"] = {"type": "array", "items": their_list_item}
        schema = DocumentSchema.model_validate(
            {"schema_id": self.name, "classes": [{"name": "Statement", "fields": ours}]}
        )
        return schema, _object(theirs)

    def document(self, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
        truth: dict[str, Any] = {f"f{k}": self.value(k, rng) for k in range(self.scalars)}
        if self.nested:
            truth["address"] = {
                "city": rng.choice(CITIES),
                "geo": {"zip": f"{rng.randrange(10**5):05d}"},
            }
        if self.items is not None:
            truth["transactions"] = [self._transaction(rng) for _ in range(self.items)]
        return truth, self._predict(rng, truth)

    def _transaction(self, rng: random.Random) -> dict[str, Any]:
        item: dict[str, Any] = {
            "date": f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2024",
            "description": rng.choice(MERCHANTS),
            "amount": _amount(rng),
        }
        if self.nested:
            item["counterparty"] = {"name": rng.choice(MERCHANTS)}
        return item

    def _predict(self, rng: random.Random, truth: dict[str, Any]) -> dict[str, Any]:
        predicted: dict[str, Any] = {}
        for key, value in truth.items():
            if isinstance(value, str):
                roll = rng.random()
                if roll < 0.08:
                    value = _typo(rng, value)
                elif roll < 0.12:
                    continue  # missed
            predicted[key] = value
        if "address" in truth:
            predicted["address"] = {
                "city": _typo(rng, truth["address"]["city"])
                if rng.random() < 0.1
                else truth["address"]["city"],
                "geo": dict(truth["address"]["geo"]),
            }
        if "transactions" in truth:
            items = []
            for item in truth["transactions"]:
                copy = dict(item)
                if rng.random() < 0.1:
                    copy["amount"] = _amount(rng)
                if rng.random() < 0.05:
                    copy["description"] = _typo(rng, copy["description"])
                items.append(copy)
            rng.shuffle(items)
            roll = rng.random()
            if roll < 0.3 and items:
                items.pop(rng.randrange(len(items)))
            elif roll < 0.6:
                items.append(self._transaction(rng))
            predicted["transactions"] = items
        return predicted


def _stickler(
    comparator: str, *, threshold: float | None = None, config: dict[str, Any] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "string", "x-aws-stickler-comparator": comparator}
    if threshold is not None:
        spec["x-aws-stickler-threshold"] = threshold
    if config is not None:
        spec["x-aws-stickler-comparator-config"] = config
    return spec


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


SHAPES = [
    Shape("flat-4", scalars=4, items=None),
    Shape("flat-6", scalars=6, items=None),
    Shape("flat-10", scalars=10, items=None),
    Shape("list-0", scalars=6, items=0),
    Shape("list-5", scalars=6, items=5),
    Shape("list-20", scalars=6, items=20),
    Shape("list-50", scalars=6, items=50),
    Shape("nested-10", scalars=6, items=10, nested=True),
    Shape("wide-30", scalars=30, items=10),
]


# ------------------------------------------------------------------------ timing


def _best(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def measure(shape: Shape, documents: int, repeat: int) -> tuple[float, float]:
    """Documents/s of both engines on the same ``documents`` statements."""
    from stickler.structured_object_evaluator.models.structured_model import StructuredModel

    rng = random.Random(11)
    pairs = [shape.document(rng) for _ in range(documents)]
    schema, stickler_schema = shape.schemas()
    compare_documents(pairs[:20], schema)  # warm imports and caches, as Stickler's model is
    ours = _best(lambda: compare_documents(pairs, schema), repeat)

    model = StructuredModel.from_json_schema(stickler_schema)
    # Stickler is much slower: as many documents as fit in about two seconds (at
    # least 20), the same rate per document.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = 0
        start = time.perf_counter()
        while done < 20 or (time.perf_counter() - start < 2.0 and done < documents):
            expected, predicted = pairs[done % documents]
            model(**expected).compare_with(model(**predicted), include_confusion_matrix=True)
            done += 1
        theirs = time.perf_counter() - start
    return documents / ours, done / theirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="one shape by name")
    args = parser.parse_args()
    shapes = [shape for shape in SHAPES if args.only in (None, shape.name)]
    print(f"{'shape':<11} {'docevals docs/s':>16} {'stickler docs/s':>16} {'ratio':>7}")
    ratios: dict[str, float] = {}
    for shape in shapes:
        ours, theirs = measure(shape, args.documents, args.repeat)
        ratios[shape.name] = ours / theirs
        print(f"{shape.name:<11} {ours:16,.0f} {theirs:16,.1f} {ours / theirs:6.1f}x")
    flat = [ratio for name, ratio in ratios.items() if name.startswith("flat")]
    lists = [ratio for name, ratio in ratios.items() if not name.startswith("flat")]
    if flat:
        print(f"flat documents (4-10 scalar fields): {min(flat):.1f}x to {max(flat):.1f}x")
    if lists:
        print(f"documents with lists: {min(lists):.1f}x to {max(lists):.1f}x")


if __name__ == "__main__":
    main()
