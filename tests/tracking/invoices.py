"""The invoice schema of the field-comparison run tests."""

from __future__ import annotations

from docevals_mlflow import DocumentSchema

SCHEMA = DocumentSchema.model_validate(
    {
        "schema_id": "invoices",
        "classes": [
            {
                "name": "Invoice",
                "fields": {
                    "number": {"method": "EXACT"},
                    "total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                    "lines": {"items": {"fields": {"sku": {"method": "EXACT"}}}},
                },
            }
        ],
    }
)
"""Number and SKUs exact, the total to a cent."""
