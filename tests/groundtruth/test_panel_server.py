"""Ground-truth generation through the real provider adapters, against the loopback
fake provider: the wire formats, the labelled attachments, text sources in the task,
no local path on the wire, and every provider asked at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

from docevals_mlflow import artifact_from_path, artifact_from_value
from docevals_mlflow.groundtruth.adjudicator import GroundTruthAdjudicator
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from docevals_mlflow.groundtruth.request import generation_output_schema
from docevals_mlflow.groundtruth.router import GroundTruthRouter
from docevals_mlflow.groundtruth.union import resolve_ground_truth_union
from docevals_mlflow.judges.adapters import (
    AnthropicMessagesAdapter,
    OpenAICompatibleChatAdapter,
    OpenAIResponsesAdapter,
)
from docevals_mlflow.judges.settings import TransportSettings
from docevals_mlflow.judges.transport import RetryPolicy
from tests.judges import conftest as judges_conftest
from tests.judges.provider_server import ProviderServer, find_task, malformed, refusal, status

# The judges' guards apply here too: loopback only, no real API keys.
_loopback_only = judges_conftest._loopback_only
_no_real_keys = judges_conftest._no_real_keys

KEY = "sk-test-GROUNDTRUTH-42"
FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)
FIELDS = ["$.currency", "$.amount", "$.account_name"]


@pytest.fixture
def served() -> Iterator[ProviderServer]:
    """A started fake provider on 127.0.0.1 (100 ms latency); stopped afterwards."""
    with ProviderServer(latency=0.1) as server:
        yield server


@pytest.fixture
def sources(tmp_path: Path):
    document = pymupdf.open()
    page = document.new_page(width=300, height=200)
    page.insert_text((40, 60), "Account Ann Smith - 1,234.50 EUR")
    image = page.get_pixmap(dpi=20)
    (tmp_path / "page-001.png").write_bytes(image.tobytes("png"))
    document.close()
    (tmp_path / "ocr.txt").write_text("OCR: Account Ann Smith 1,234.50 EUR", encoding="utf-8")
    return [
        artifact_from_path(tmp_path / "page-001.png", authority="evidence", metadata={"page": 1}),
        artifact_from_path(tmp_path / "ocr.txt", authority="evidence"),
    ]


def adapters(server: ProviderServer):
    return {
        "openai": OpenAIResponsesAdapter(
            model="gpt-test",
            api_key=KEY,
            base_url=server.base_url,
            http=TransportSettings(retry_policy=FAST),
        ),
        "claude": AnthropicMessagesAdapter(
            model="claude-test",
            api_key=KEY,
            base_url=server.base_url,
            http=TransportSettings(retry_policy=FAST),
        ),
        "local": OpenAICompatibleChatAdapter(
            model="local-vl",
            api_key=KEY,
            base_url=server.base_url,
            http=TransportSettings(retry_policy=FAST),
        ),
    }


def test_a_panel_over_three_wire_formats(served, sources, tmp_path):
    served.extraction(
        {"$.currency": "EUR", "$.amount": 1234.5, "$.account_name": "Ann Smith"},
        model="gpt-test",
    )
    served.extraction(
        {"$.currency": "eur", "$.amount": "1,234.50", "$.account_name": "ANN SMITH"},
        model="claude-test",
    )
    served.extraction(
        {"$.currency": "EUR", "$.amount": 1234.5, "$.account_name": "A. Smith"},
        model="local-vl",
    )
    panel = GroundTruthPanel(adapters(served), "Extract currency, amount and account name.", FIELDS)
    report = panel.generate("statement-001", sources)

    assert [p.status for p in report.providers] == ["ok", "ok", "ok"]
    assert [p.group for p in report.providers] == [
        "anthropic:claude-test",
        "openai-compatible:local-vl",
        "openai:gpt-test",
    ]
    assert [(row.path, row.expected_value) for row in report.consensus] == [
        ("$.currency", "eur"),
        ("$.amount", "1,234.50"),
    ]
    (name,) = report.disagreements
    assert name.reason == "conflict"
    assert {c.value: c.providers for c in name.candidates} == {
        "ANN SMITH": ["claude", "openai"],
        "A. Smith": ["local"],
    }
    assert report.usage.requests == 3
    assert report.usage.input_tokens > 0
    assert report.consensus[0].reference_ids == ["page-001"]

    # All three were asked at once (each answer takes 100 ms on the server).
    assert served.max_in_flight == 3
    assert {r.endpoint for r in served.requests} == {
        "responses",
        "messages",
        "chat/completions",
    }
    for received in served.requests:
        text = received.text
        assert "Reference page-001 (evidence, image, page-001.png)" in text
        assert "OCR: Account Ann Smith 1,234.50 EUR" in text  # text sources are sent
        task = find_task(received.body)
        assert task is not None
        assert task["expected_fields"] == FIELDS
        assert str(tmp_path) not in text
        assert "/tmp" not in text
        assert "prediction" not in received.body.get("instructions", "")
        if received.endpoint == "responses":
            assert received.body["text"]["format"]["schema"] == generation_output_schema(FIELDS)
            assert received.body["text"]["format"]["strict"] is True
        elif received.endpoint == "messages":
            (tool,) = received.body["tools"]
            assert "claims" in tool["input_schema"]["properties"]
    assert str(tmp_path) not in report.model_dump_json()
    assert KEY not in report.model_dump_json()

    # Union and adjudication work on the same report.
    union = resolve_ground_truth_union(report)
    assert [row.path for row in union.consensus] == ["$.currency", "$.amount"]
    served.reset()
    served.extraction({"$.account_name": "Ann Smith"})
    adjudicated = GroundTruthAdjudicator(adapters(served)).adjudicate(report, sources)
    assert [(row.path, row.resolved_by) for row in adjudicated.consensus] == [
        ("$.currency", "panel"),
        ("$.amount", "panel"),
        ("$.account_name", "adjudication"),
    ]
    assert not adjudicated.requires_human_review
    for received in served.requests:
        task = find_task(received.body)
        assert task is not None
        assert task["expected_fields"] == ["$.account_name"]
        assert "A. Smith" not in received.text  # first-reading values are never sent


def test_provider_failures_are_recorded_not_raised(served, sources):
    served.extraction({"$.currency": "EUR", "$.amount": 1, "$.account_name": "Ann"})
    served.script("responses", status(400, message="bad key {key}"))
    served.script("messages", refusal())
    served.script("chat/completions", malformed("{"), malformed("still not json"))
    panel = GroundTruthPanel(adapters(served), "Extract.", FIELDS)
    report = panel.generate("c1", sources)
    statuses = {p.provider: p.status for p in report.providers}
    assert statuses == {"claude": "refused", "local": "malformed", "openai": "error"}
    assert {item.reason for item in report.disagreements} == {"too_few_voters"}
    dumped = report.model_dump_json()
    assert KEY not in dumped  # the echoed key is redacted from the error
    local = next(p for p in report.providers if p.provider == "local")
    assert local.raw_text == "still not json"
    assert local.usage.requests == 2


def test_the_router_sends_images_to_a_served_panel(served, sources):
    served.extraction({"$.currency": "EUR"})
    two = dict(list(adapters(served).items())[:2])
    panel = GroundTruthPanel(two, "Extract.", ["$.currency"])
    notes = artifact_from_value("Currency: EUR", authority="evidence", artifact_id="notes")
    routed = GroundTruthRouter(image_panel=panel).prepare("c1", [sources[0], notes])
    assert routed.image_report is not None
    assert routed.image_report.consensus[0].expected_value == "EUR"
    assert all("Currency: EUR" in received.text for received in served.requests)
