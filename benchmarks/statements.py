"""Synthetic bank statements for benchmarks: ground truth and a perturbed prediction.

Each statement has simple fields, a five-field address group and N transactions.
The prediction perturbs ~10% of values, shuffles the transactions, drops one
transaction in three documents out of ten and adds an invented one in another three.
Deterministic for a given seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from docevals_mlflow.fields.schema import DocumentSchema

DESCRIPTIONS = [
    "Coffee Shop",
    "ATM Withdrawal",
    "Salary ACME Corp",
    "Rent Payment",
    "Grocery Store",
    "Electricity Bill",
    "Online Transfer",
    "Restaurant",
    "Fuel Station",
    "Insurance Premium",
]
CITIES = ["Seattle", "Portland", "Denver", "Austin", "Boston", "Chicago"]

SCHEMA = DocumentSchema.model_validate(
    {
        "schema_id": "bank-statements",
        "classes": [
            {
                "name": "Bank Statement",
                "fields": {
                    "Account Number": {"method": "EXACT"},
                    "Statement Period": {"method": "FUZZY", "threshold": 0.8},
                    "Opening Balance": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                    "Account Holder Address": {
                        "fields": {
                            "Street Number": {"method": "FUZZY", "threshold": 0.9},
                            "Street Name": {"method": "FUZZY", "threshold": 0.8},
                            "City": {"method": "FUZZY", "threshold": 0.9},
                            "State": {"method": "EXACT"},
                            "ZIP Code": {"method": "EXACT"},
                        }
                    },
                    "Transactions": {
                        "match_threshold": 0.5,
                        "items": {
                            "fields": {
                                "Date": {"method": "FUZZY", "threshold": 0.9},
                                "Description": {"method": "FUZZY", "threshold": 0.7},
                                "Amount": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                            }
                        },
                    },
                },
            }
        ],
    }
)


def _statement(rng: random.Random, items: int) -> dict[str, Any]:
    return {
        "Account Number": f"{rng.randrange(10**9, 10**10)}",
        "Statement Period": rng.choice(["January 2024", "February 2024", "March 2024"]),
        "Opening Balance": f"{rng.uniform(0, 20000):.2f}",
        "Account Holder Address": {
            "Street Number": str(rng.randint(1, 9999)),
            "Street Name": rng.choice(["Main St", "Oak Avenue", "Pine Road", "Elm Street"]),
            "City": rng.choice(CITIES),
            "State": rng.choice(["WA", "OR", "CO", "TX", "MA", "IL"]),
            "ZIP Code": f"{rng.randint(10000, 99999)}",
        },
        "Transactions": [
            {
                "Date": f"{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}/2024",
                "Description": rng.choice(DESCRIPTIONS),
                "Amount": f"{rng.uniform(-2000, 2000):.2f}",
            }
            for _ in range(items)
        ],
    }


def _perturb_text(rng: random.Random, text: str) -> str:
    if len(text) < 2:
        return text + "x"
    position = rng.randrange(len(text))
    return text[:position] + rng.choice("abcdefghijklmnopqrstuvwxyz") + text[position + 1 :]


def _prediction(rng: random.Random, truth: dict[str, Any]) -> dict[str, Any]:
    predicted: dict[str, Any] = {
        key: value for key, value in truth.items() if key not in ("Transactions",)
    }
    predicted["Account Holder Address"] = dict(truth["Account Holder Address"])
    for key in ("Account Number", "Statement Period", "Opening Balance"):
        if rng.random() < 0.1:
            predicted[key] = _perturb_text(rng, str(predicted[key]))
    address = predicted["Account Holder Address"]
    for key in list(address):
        if rng.random() < 0.1:
            address[key] = _perturb_text(rng, str(address[key]))
    transactions = []
    for item in truth["Transactions"]:
        copy = dict(item)
        if rng.random() < 0.1:
            copy["Amount"] = f"{float(copy['Amount']) + rng.choice([-10, 1, 100]):.2f}"
        if rng.random() < 0.05:
            copy["Description"] = _perturb_text(rng, copy["Description"])
        transactions.append(copy)
    rng.shuffle(transactions)
    roll = rng.random()
    if roll < 0.3 and transactions:
        transactions.pop(rng.randrange(len(transactions)))
    elif roll < 0.6:
        transactions.append(_statement(rng, 1)["Transactions"][0])
    predicted["Transactions"] = transactions
    return predicted


def statements(
    count: int, items: int, *, seed: int = 7
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``count`` (ground truth, prediction) pairs with ``items`` transactions each."""
    rng = random.Random(seed)
    for _ in range(count):
        truth = _statement(rng, items)
        yield truth, _prediction(rng, truth)


def stickler_json_schema() -> dict[str, Any]:
    """The same comparison rules in Stickler's JSON-Schema form."""

    def text(comparator: str, threshold: float | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {"type": "string", "x-aws-stickler-comparator": comparator}
        if threshold is not None:
            spec["x-aws-stickler-threshold"] = threshold
        return spec

    numeric = {
        "type": "string",
        "x-aws-stickler-comparator": "NumericComparator",
        "x-aws-stickler-comparator-config": {"absolute_tolerance": 0.01},
    }
    return {
        "type": "object",
        "properties": {
            "Account Number": text("ExactComparator"),
            "Statement Period": text("FuzzyComparator", 0.8),
            "Opening Balance": numeric,
            "Account Holder Address": {
                "type": "object",
                "properties": {
                    "Street Number": text("FuzzyComparator", 0.9),
                    "Street Name": text("FuzzyComparator", 0.8),
                    "City": text("FuzzyComparator", 0.9),
                    "State": text("ExactComparator"),
                    "ZIP Code": text("ExactComparator"),
                },
            },
            "Transactions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "x-aws-stickler-match-threshold": 0.5,
                    "properties": {
                        "Date": text("FuzzyComparator", 0.9),
                        "Description": text("FuzzyComparator", 0.7),
                        "Amount": numeric,
                    },
                },
            },
        },
    }
