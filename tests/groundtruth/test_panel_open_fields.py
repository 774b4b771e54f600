"""A panel without ``expected_fields`` (the seed library's optional argument), the
seed's ``build_request`` and ``load_ground_truth_review``, and an adjudicator's own
``extraction_instruction``."""

from __future__ import annotations

from typing import Any

import pytest

from docevals_mlflow import artifact_from_value
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.groundtruth.adjudicator import GroundTruthAdjudicator
from docevals_mlflow.groundtruth.panel import OPEN_FIELDS_NOTE, GroundTruthPanel
from docevals_mlflow.groundtruth.review import (
    load_ground_truth_review,
    load_review,
    write_ground_truth_review,
)


def _source() -> Any:
    return artifact_from_value("Total 12.50 EUR", authority="evidence", artifact_id="page")


def _reads(*claims: tuple[str, Any]) -> Any:
    def read(request: Any) -> dict[str, Any]:
        return {"claims": [{"path": path, "expected_value": value} for path, value in claims]}

    return read


def test_without_expected_fields_every_claimed_path_is_voted() -> None:
    panel = GroundTruthPanel(
        {
            "a": _reads(("total", 12.5), ("$.currency", "EUR")),
            "b": _reads(("$.total", "12.50"), ("$.note", "x"), ("not a [path", 1)),
        },
        "Extract the total and currency.",
    )
    request = panel.build_request(case_id="c", references=[_source()])
    assert request.task["expected_fields"] == []
    assert OPEN_FIELDS_NOTE in request.instructions
    claim_schema = request.output_schema["properties"]["claims"]["items"]["properties"]
    assert claim_schema["path"] == {"type": "string"}

    report = panel.generate("c", [_source()])
    assert report.expected_fields == ["$.currency", "$.note", "$.total"]
    assert [row.path for row in report.consensus] == ["$.total"]
    assert {item.path: item.reason for item in report.disagreements} == {
        "$.currency": "omitted_by_some",
        "$.note": "omitted_by_some",
    }
    assert report.providers[1].invalid_paths == ["not a [path"]


def test_an_open_panel_where_nobody_reads_anything_needs_review() -> None:
    report = GroundTruthPanel({"a": _reads(), "b": _reads()}, "Extract.").generate("c", [_source()])
    assert report.consensus == []
    assert [(item.path, item.reason) for item in report.disagreements] == [("$", "omitted_by_all")]
    assert report.requires_human_review


def test_build_request_with_fields_is_what_generators_receive() -> None:
    seen: list[Any] = []

    def read(request: Any) -> dict[str, Any]:
        seen.append(request)
        return {"claims": [{"path": "$.total", "expected_value": 1}]}

    panel = GroundTruthPanel({"a": read, "b": read}, "Extract.", ["$.total"])
    request = panel.build_request(case_id="c", references=[_source()])
    panel.generate("c", [_source()])
    assert seen[0] == request
    assert request.output_schema["properties"]["claims"]["items"]["properties"]["path"]["enum"] == [
        "$.total"
    ]


def test_the_adjudicator_adds_its_own_instruction(tmp_path: Any) -> None:
    first = GroundTruthPanel(
        {"a": _reads(("$.total", 1)), "b": _reads(("$.total", 2))}, "Extract the total.", ["total"]
    ).generate("c", [_source()])
    seen: list[Any] = []

    def reread(request: Any) -> dict[str, Any]:
        seen.append(request)
        return {"claims": [{"path": "$.total", "expected_value": 1}]}

    report = GroundTruthAdjudicator(
        {"a": reread, "b": reread}, extraction_instruction="Only $.total is allowed."
    ).adjudicate(first, [_source()])
    assert [row.path for row in report.consensus] == ["$.total"]
    assert "Extract the total." in seen[0].instructions
    assert "For this re-read:\nOnly $.total is allowed." in seen[0].instructions
    with pytest.raises(ConfigurationError, match="extraction_instruction"):
        GroundTruthAdjudicator({"a": reread, "b": reread}, extraction_instruction=3)  # type: ignore[arg-type]

    path = write_ground_truth_review(first, tmp_path / "review.json")
    assert load_ground_truth_review(path) == load_review(path)
