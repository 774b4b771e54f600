"""The seed's ground-truth API (``visual_evals.ground_truth``) through the compat
module: panel, adjudicator, union, router, document conversion, review and approval.

Written from the seed's documented API; generators are plain functions or the
adapters with fake senders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import docevals_mlflow.compat.visual_evals as visual_evals
from docevals_mlflow.errors import ConfigurationError, InputError

PNG = b"\x89PNG\r\n\x1a\n"


def _source(tmp_path: Path, name: str = "statement.png", **options: Any) -> Any:
    path = tmp_path / name
    path.write_bytes(PNG + name.encode())
    return visual_evals.artifact_from_path(path, authority="evidence", **options)


def _claim(path: str, value: Any, reference_id: str = "statement") -> dict[str, Any]:
    return {
        "path": path,
        "expected_value": value,
        "evidence": f"{path} label",
        "reference_id": reference_id,
        "confidence": 0.9,
    }


def _reader(*claims: dict[str, Any]) -> Any:
    def generate(request: Any) -> dict[str, Any]:
        assert "prediction" not in request.task
        return {"summary": "candidate", "claims": list(claims)}

    return generate


def _panel(amount_b: Any = 180, **options: Any) -> Any:
    return visual_evals.GroundTruthPanel(
        {
            "provider-a": _reader(_claim("$.currency", "USD"), _claim("$.amount", 100)),
            "provider-b": _reader(_claim("$.currency", "USD"), _claim("$.amount", amount_b)),
        },
        extraction_instruction="Extract currency and amount.",
        **options,
    )


def test_panel_builds_the_seed_request_and_report(tmp_path: Path) -> None:
    sources = [
        _source(tmp_path, "page-001.png", artifact_id="page-001", metadata={"page": 1}),
        _source(tmp_path, "page-002.png", artifact_id="page-002", metadata={"page": 2}),
    ]
    panel = visual_evals.GroundTruthPanel(
        {
            "provider-a": _reader(
                _claim("$.currency", "USD", "page-001"), _claim("$.amount", "100.00", "page-002")
            ),
            "provider-b": _reader(
                _claim("$.currency", "USD", "page-001"), _claim("$.amount", "180.00", "page-002")
            ),
        },
        extraction_instruction="Extract currency and amount.",
        expected_fields=["$.currency", "$.amount", "$.account_name"],
    )
    request = panel.build_request(case_id="statement", references=sources)
    assert isinstance(request, visual_evals.GroundTruthGenerationRequest)
    assert request.output_schema["title"] == "GeneratedGroundTruthOutput"
    payload = visual_evals.OpenAIResponsesAdapter(api_key="k").build_request(request)
    assert payload["text"]["format"]["schema"]["title"] == "GeneratedGroundTruthOutput"
    assert str(tmp_path) not in json.dumps(payload)

    generation = panel.generate(case_id="statement", references=sources)
    assert isinstance(generation, visual_evals.GroundTruthGenerationReport)
    assert generation.providers == ["provider-a", "provider-b"]
    assert generation.requires_human_review is True
    reference = generation.provisional_reference
    assert reference.authority == "generated"
    assert [row["path"] for row in reference.content] == ["$.currency"]
    by_path = {item["path"]: item for item in generation.disagreements}
    amount = by_path["$.amount"]
    assert amount["reference_context"]["page-002"]["metadata"] == {"page": 2}
    assert amount["provider_candidates"]["provider-a"]["status"] == "present"
    assert amount["disagreement_reason"] == "tie"  # one vote each: never settled
    missing = by_path["$.account_name"]["provider_candidates"]
    assert {entry["status"] for entry in missing.values()} == {"missing"}
    assert isinstance(generation.candidates["provider-a"], visual_evals.GeneratedGroundTruthOutput)
    assert str(tmp_path) not in generation.model_dump_json()
    markdown = visual_evals_markdown(generation)
    assert "Generated ground-truth consensus" in markdown
    assert "Human resolution queue" in markdown


def visual_evals_markdown(report: Any) -> str:
    # The seed renders through visual_evals.report.to_markdown.
    from docevals_mlflow.compat.visual_evals.report import to_markdown

    return to_markdown(report)


def test_panel_without_expected_fields_votes_on_every_claimed_path(tmp_path: Path) -> None:
    source = _source(tmp_path)
    generation = visual_evals.GroundTruthPanel(
        {
            "provider-a": _reader(_claim("$.amount", 100), _claim("$.name", "Example Ltd")),
            "provider-b": _reader(_claim("$.amount", 200)),
        },
        extraction_instruction="Extract name and amount.",
    ).generate(case_id="union-case", references=[source])

    assert generation.generation is not None
    assert generation.generation.expected_fields == ["$.amount", "$.name"]
    assert [item["path"] for item in generation.disagreements] == ["$.amount", "$.name"]

    union = visual_evals.resolve_ground_truth_union(generation)
    content = {row["path"]: row["expected"] for row in union.resolved_reference.content}
    assert content == {"$.name": "Example Ltd"}
    assert union.resolutions[0]["reason"] == "non_conflicting_provider_union"
    assert [item["path"] for item in union.unresolved] == ["$.amount"]
    assert union.requires_human_review is True
    assert union.resolved_reference.authority == "generated"
    assert (
        union.resolved_reference.metadata["resolution_policy"] == "non_conflicting_provider_union"
    )
    assert "Unresolved paths: `1`" in visual_evals_markdown(union)


def test_panel_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="at least 2"):
        visual_evals.GroundTruthPanel({"only": _reader()}, extraction_instruction="Extract.")
    with pytest.raises(ConfigurationError, match="extraction_instruction"):
        visual_evals.GroundTruthPanel({"a": _reader(), "b": _reader()}, extraction_instruction=" ")
    with pytest.raises(ConfigurationError, match="minimum_agreement"):
        _panel(minimum_agreement=0)
    empty = visual_evals.GroundTruthPanel(
        {"a": _reader(), "b": _reader()}, extraction_instruction="Extract."
    ).generate(case_id="nothing", references=[_source(tmp_path)])
    # Nobody read anything: the whole document needs a person.
    assert empty.requires_human_review is True
    assert empty.disagreements[0]["path"] == "$"


def test_adjudication_sets_agreed_rereads_and_never_agrees_on_absence(tmp_path: Path) -> None:
    source = _source(tmp_path)
    initial = visual_evals.GroundTruthPanel(
        {
            "provider-a": _reader(
                _claim("$.currency", "USD"), _claim("$.amount", 100), _claim("$.reference", "x")
            ),
            "provider-b": _reader(_claim("$.currency", "USD")),
        },
        extraction_instruction="Extract currency, amount and reference.",
        expected_fields=["$.currency", "$.amount", "$.reference"],
    ).generate(case_id="adjudication-case", references=[source])
    seen: list[Any] = []

    def reread(request: Any) -> dict[str, Any]:
        seen.append(request)
        return {"summary": "reread", "claims": [_claim("$.amount", 100)]}

    adjudicated = visual_evals.GroundTruthAdjudicator(
        {"provider-a": reread, "provider-b": reread},
        extraction_instruction="Allowed paths are $.currency, $.amount and $.reference.",
    ).adjudicate(initial, references=[source])

    assert isinstance(adjudicated, visual_evals.GroundTruthAdjudicationReport)
    assert [(r["path"], r["decision"]) for r in adjudicated.resolutions] == [("$.amount", "set")]
    assert adjudicated.resolutions[0]["minimum_agreement"] == 1.0
    resolved = {row["path"]: row["expected"] for row in adjudicated.resolved_reference.content}
    assert resolved == {"$.currency": "USD", "$.amount": 100}
    # Deliberate difference: the seed omitted $.reference when both re-reads left it
    # out; here absence is never agreed, so a person decides.
    assert [item["path"] for item in adjudicated.unresolved] == ["$.reference"]
    assert adjudicated.unresolved[0]["adjudication_reason"] == "adjudication_unresolved"
    assert adjudicated.requires_human_review is True
    assert "Allowed paths are" in seen[0].instructions
    assert "100" not in json.dumps(seen[0].task)  # blind: no first-reading value


def test_adjudication_majority_and_split_votes(tmp_path: Path) -> None:
    source = _source(tmp_path)
    initial = _panel().generate(case_id="vote", references=[source])

    def reader(amount: int) -> Any:
        return _reader(_claim("$.amount", amount))

    split = visual_evals.GroundTruthAdjudicator(
        {"provider-a": reader(100), "provider-b": reader(180)},
        extraction_instruction="Only $.amount.",
    ).adjudicate(initial, references=[source])
    assert split.resolutions == []
    assert split.unresolved[0]["path"] == "$.amount"

    majority = visual_evals.GroundTruthAdjudicator(
        {"provider-a": reader(100), "provider-b": reader(100), "provider-c": reader(180)},
        extraction_instruction="Only $.amount.",
        minimum_agreement=2 / 3,
    ).adjudicate(initial, references=[source])
    assert majority.requires_human_review is False
    assert majority.resolutions[0]["expected"] == 100
    assert majority.resolutions[0]["minimum_agreement"] == pytest.approx(2 / 3)

    with pytest.raises(ConfigurationError, match="extraction_instruction"):
        visual_evals.GroundTruthAdjudicator(
            {"a": reader(1), "b": reader(1)}, extraction_instruction=""
        )
    foreign = initial.model_copy(update={"generation": None})
    with pytest.raises(InputError, match="GroundTruthPanel"):
        visual_evals.resolve_ground_truth_union(foreign)


def test_review_file_round_trip_and_approval(tmp_path: Path) -> None:
    source = _source(tmp_path)
    generation = _panel().generate(case_id="review-case", references=[source])
    review_path = visual_evals.write_ground_truth_review(generation, tmp_path / "review.json")

    draft = visual_evals.load_ground_truth_review(review_path)
    assert isinstance(draft, visual_evals.GroundTruthReviewFile)
    assert draft == visual_evals.ground_truth_review_from_generation(generation)
    assert draft.status == "needs_review"
    assert isinstance(draft.review_items[0], visual_evals.GroundTruthReviewItem)
    assert draft.review_items[0].decision == "unresolved"
    with pytest.raises(ValueError, match="not approved"):
        visual_evals.approved_reference_from_review(draft)

    edited = json.loads(review_path.read_text(encoding="utf-8"))
    edited.update(status="approved", approved_by="human@example.com", approval_notes="Checked.")
    edited["review_items"][0].update(decision="set", expected="100.00")
    review_path.write_text(json.dumps(edited), encoding="utf-8")

    approved = visual_evals.approved_reference_from_review(review_path)
    assert approved.authority == "ground_truth"
    assert approved.metadata["human_approval"]["approved_by"] == "human@example.com"
    assert approved.metadata["requires_human_review"] is False
    in_memory = visual_evals.approved_reference_from_review(
        visual_evals.load_ground_truth_review(review_path)
    )
    assert in_memory.content == approved.content
    result = visual_evals.ExactStructuredMetric().evaluate(
        visual_evals.EvaluationCase(
            case_id="review-case",
            prediction={"currency": "USD", "amount": "100.00"},
            references=[source, approved],
        )
    )
    assert result.scores["field_accuracy"] == 1.0


def test_approving_a_generated_reference(tmp_path: Path) -> None:
    generation = _panel().generate(case_id="promote", references=[_source(tmp_path)])
    reference = generation.provisional_reference
    with pytest.raises(ValueError, match="unresolved disagreements"):
        visual_evals.approve_generated_reference(reference, approved_by="reviewer@example.com")
    with pytest.raises(ValueError, match="approver"):
        visual_evals.approve_generated_reference(reference, approved_by=" ", resolved_content=[])
    approved = visual_evals.approve_generated_reference(
        reference,
        approved_by="reviewer@example.com",
        notes="Read the page.",
        resolved_content=[
            {"path": "$.currency", "expected": "USD"},
            {"path": "$.amount", "expected": "100.00"},
        ],
    )
    assert approved.authority == "ground_truth"
    assert approved.metadata["requires_human_review"] is False
    assert approved.metadata["human_approval"] == {
        "approved_by": "reviewer@example.com",
        "notes": "Read the page.",
    }


def test_router_preserves_documents_converts_on_request_and_reads_images(tmp_path: Path) -> None:
    pdf_path = tmp_path / "statement.pdf"
    pdf_path.write_bytes(b"%PDF-1.4\n")
    pdf = visual_evals.artifact_from_path(pdf_path, authority="evidence")
    image = _source(tmp_path)
    requests: list[Any] = []

    def convert(request: Any) -> dict[str, Any]:
        requests.append(request)
        return {"summary": "converted", "markdown": "# Statement\n\nUSD 100", "confidence": 0.95}

    converter = visual_evals.DocumentMarkdownConverter(convert)
    panel = visual_evals.GroundTruthPanel(
        {"a": _reader(_claim("$.currency", "USD")), "b": _reader(_claim("$.currency", "USD"))},
        extraction_instruction="Extract the currency.",
        expected_fields=["$.currency"],
    )
    router = visual_evals.GroundTruthRouter(document_converter=converter, image_panel=panel)

    kept = router.prepare(case_id="pdf", references=[pdf])
    assert (kept.strategy, kept.source_references, kept.provisional_references) == (
        "source_preserved",
        [pdf],
        [],
    )
    markdown_router = visual_evals.GroundTruthRouter(
        document_converter=converter, document_mode="markdown"
    )
    derived = markdown_router.prepare(case_id="pdf-md", references=[pdf])
    assert derived.strategy == "optional_markdown_derivative"
    (markdown_reference,) = derived.provisional_references
    assert (markdown_reference.kind, markdown_reference.authority) == ("text", "generated")
    assert markdown_reference.media_type == "text/markdown"
    assert "# Statement" in markdown_reference.content
    assert derived.requires_human_review is False
    assert requests[0].output_schema["title"] == "MarkdownConversionOutput"
    assert str(tmp_path) not in json.dumps(requests[0].task)
    rendered = visual_evals_markdown(derived)
    assert "Strategy: `optional_markdown_derivative`" in rendered
    assert "Document-to-Markdown preparation" in rendered

    images = router.prepare(case_id="img", references=[image])
    assert images.strategy == "image_multi_model_consensus"
    assert images.requires_human_review is False
    assert images.provisional_references[0].authority == "generated"
    with pytest.raises(ValueError, match="mixed and unsupported"):
        router.prepare(case_id="mixed", references=[pdf, image])
    with pytest.raises(ConfigurationError, match="document_converter"):
        visual_evals.GroundTruthRouter(document_mode="markdown")
    with pytest.raises(ConfigurationError, match="image_panel"):
        visual_evals.GroundTruthRouter().prepare(case_id="img", references=[image])


def test_document_converter_flags_unsure_conversions_and_bad_answers(tmp_path: Path) -> None:
    pdf_path = tmp_path / "a.pdf"
    pdf_path.write_bytes(b"%PDF-1.4\n")
    pdf = visual_evals.artifact_from_path(pdf_path, authority="evidence")
    unsure = visual_evals.DocumentMarkdownConverter(
        lambda _r: json.dumps({"summary": "s", "markdown": "text", "confidence": 0.5}),
        conversion_instruction="Keep tables.",
    ).convert(case_id="c", references=[pdf])
    assert unsure.requires_human_review is True
    assert unsure.provisional_references[0].metadata["conversion_engine"] == "function"
    with pytest.raises(InputError, match="empty Markdown"):
        visual_evals.DocumentMarkdownConverter(
            lambda _r: {"summary": "s", "markdown": " ", "confidence": 1}
        ).convert(case_id="c", references=[pdf])
    with pytest.raises(InputError, match="conversion answer"):
        visual_evals.DocumentMarkdownConverter(lambda _r: {"markdown": "x"}).convert(
            case_id="c", references=[pdf]
        )
    with pytest.raises(ConfigurationError, match="review_below_confidence"):
        visual_evals.DocumentMarkdownConverter(lambda _r: {}, review_below_confidence=2)


def test_seed_adapters_generate_ground_truth_and_report_usage(tmp_path: Path) -> None:
    answer = json.dumps({"summary": "read", "claims": [_claim("$.currency", "USD")]})
    openai = visual_evals.OpenAIResponsesAdapter(
        api_key="k",
        model="gpt-test",
        sender=lambda _body: {
            "model": "gpt-test",
            "usage": {"input_tokens": 50, "output_tokens": 5},
            "output": [{"type": "message", "content": [{"type": "output_text", "text": answer}]}],
        },
    )
    claude = visual_evals.AnthropicMessagesAdapter(
        api_key="k",
        model="claude-test",
        sender=lambda _body: {
            "usage": {"input_tokens": 40, "output_tokens": 4},
            "content": [{"type": "text", "text": answer}],
            "stop_reason": "end_turn",
        },
    )
    generation = visual_evals.GroundTruthPanel(
        {"openai": openai, "anthropic": claude},
        extraction_instruction="Extract the currency.",
        expected_fields=["$.currency"],
    ).generate(case_id="adapters", references=[_source(tmp_path)])
    assert generation.requires_human_review is False
    assert {(u.provider, u.model, u.total_tokens) for u in generation.usage} == {
        ("openai", "gpt-test", 55),
        ("anthropic", "claude-test", 44),
    }
    assert openai.total_usage.total_tokens == 55
