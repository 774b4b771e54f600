"""Function metrics of the pipeline example, named in its configuration files as
``pipeline_checks:total_is_recomputed`` and ``pipeline_checks:routed_by_rule``.

A function metric judges a stage on what the stage *received*: the calculation is
right if it adds up the line items it was given, the routing is right if it applies
the rule to the total it was given. That is what lets failure attribution tell a
stage that erred from a stage that was fed a wrong input.
"""

from __future__ import annotations

from docevals_mlflow import EvaluationCase

APPROVAL_LIMIT = 2000.0
"""Invoices above this total go to the 'approval' queue, the rest to 'auto-pay'."""


def total_is_recomputed(stage: EvaluationCase) -> bool:
    """The total equals the sum of quantity times unit price over the input items."""
    items = stage.input_data["line_items"]
    expected = sum(item["quantity"] * item["unit_price"] for item in items)
    return bool(abs(stage.prediction["total"] - expected) < 0.005)


def routed_by_rule(stage: EvaluationCase) -> bool:
    """The queue is the one the approval rule gives for the input total."""
    queue = "approval" if stage.input_data["total"] > APPROVAL_LIMIT else "auto-pay"
    return bool(stage.prediction["queue"] == queue)
