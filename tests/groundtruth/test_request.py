import json

import pymupdf
import pytest

from docevals_mlflow import ReferenceArtifact, artifact_from_path, artifact_from_value
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.request import (
    ADJUDICATION_NOTE,
    GENERATION_INSTRUCTIONS,
    build_generation_request,
    generation_output_schema,
    parse_generation_output,
)
from docevals_mlflow.groundtruth.sources import PathScrubber, check_sources
from docevals_mlflow.judges.adapters.anthropic import anthropic_input_schema
from docevals_mlflow.judges.output import OutputParseError

FIELDS = ["$.total", "$.currency"]


def png(path):
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 4, 4), False)
    path.write_bytes(pixmap.tobytes("png"))
    return path


@pytest.fixture
def sources(tmp_path):
    notes = tmp_path / "ocr-notes.txt"
    notes.write_text("Total due: 12.50 EUR", encoding="utf-8")
    return [
        artifact_from_path(
            png(tmp_path / "page-001.png"), authority="evidence", metadata={"page": 1}
        ),
        artifact_from_path(notes, authority="evidence"),
        artifact_from_value({"lines": ["12.50"]}, authority="evidence", artifact_id="ocr"),
    ]


def test_the_task_lists_every_source_by_name_with_text_content(sources, tmp_path):
    request = build_generation_request(
        extraction_instruction="Read the total and its currency.",
        expected_fields=FIELDS,
        references=sources,
    )
    task = request.task
    assert set(task) == {
        "purpose",
        "extraction_instruction",
        "expected_fields",
        "authority_note",
        "sources",
    }
    assert task["purpose"] == "ground_truth_generation"
    assert task["expected_fields"] == FIELDS
    assert task["sources"] == [
        {
            "id": "page-001",
            "kind": "image",
            "authority": "evidence",
            "name": "page-001.png",
            "media_type": "image/png",
            "attached": True,
            "metadata": {"page": 1},
        },
        {
            "id": "ocr-notes",
            "kind": "text",
            "authority": "evidence",
            "name": "ocr-notes.txt",
            "media_type": "text/plain",
            "attached": False,
            "content": "Total due: 12.50 EUR",
        },
        {
            "id": "ocr",
            "kind": "structured",
            "authority": "evidence",
            "name": "ocr",
            "media_type": "application/json",
            "attached": False,
            "content": {"lines": ["12.50"]},
        },
    ]
    assert [reference.id for reference in request.attachments] == ["page-001"]
    sent = json.dumps({"instructions": request.instructions, "task": task})
    assert str(tmp_path) not in sent


def test_text_sources_without_content_are_read_from_their_file(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("Currency: EUR", encoding="utf-8")
    bare = ReferenceArtifact(id="notes", path=str(notes), kind="text", authority="evidence")
    request = build_generation_request(
        extraction_instruction="", expected_fields=FIELDS, references=[bare]
    )
    assert request.task["sources"][0]["content"] == "Currency: EUR"


def test_instructions_carry_the_extraction_instruction_and_the_purpose(sources):
    first = build_generation_request(
        extraction_instruction="Amounts in euros.", expected_fields=FIELDS, references=sources
    )
    assert first.instructions.startswith(GENERATION_INSTRUCTIONS)
    assert first.instructions.endswith("Extraction instruction:\nAmounts in euros.")
    assert ADJUDICATION_NOTE not in first.instructions
    second = build_generation_request(
        extraction_instruction="Amounts in euros.",
        expected_fields=["$.total"],
        references=sources,
        purpose="adjudication",
    )
    assert ADJUDICATION_NOTE in second.instructions
    assert second.task["purpose"] == "ground_truth_adjudication"
    assert second.instructions_sha256 != first.instructions_sha256
    assert second.fingerprint != first.fingerprint


def _objects(schema):
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            yield schema
        for value in schema.values():
            yield from _objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _objects(value)


def test_the_output_schema_is_strict_and_limits_paths_to_the_expected_fields():
    schema = generation_output_schema(FIELDS)
    for node in _objects(schema):
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    claim = schema["properties"]["claims"]["items"]
    assert claim["properties"]["path"]["enum"] == FIELDS
    assert {branch["type"] for branch in claim["properties"]["expected_value"]["anyOf"]} == {
        "string",
        "number",
        "boolean",
        "null",
    }
    # Anthropic's conversion keeps what matters.
    converted = anthropic_input_schema(schema)
    assert converted["properties"]["claims"]["items"]["properties"]["path"]["enum"] == FIELDS


@pytest.mark.parametrize(
    "answer",
    [
        {"claims": [{"path": "$.total", "expected_value": 12.5, "extra": "ignored"}]},
        '```json\n{"claims": [{"path": "$.total", "expected_value": 12.5}]}\n```',
        'Here you go: {"claims": [{"path": "$.total", "expected_value": 12.5}]} Done.',
        [{"path": "$.total", "expected_value": 12.5, "evidence": None}],
    ],
)
def test_answers_are_read_leniently(answer):
    (claim,) = parse_generation_output(answer)
    assert claim.path == "$.total"
    assert claim.expected_value == 12.5
    assert claim.evidence == ""


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ('{"claims": [', "not valid JSON"),
        ('"just text"', "expected a JSON object"),
        ({"items": []}, "claims"),
        ({"claims": [{"expected_value": 1}]}, "path"),
        ({"claims": [{"path": "$.total", "confidence": 2}]}, "confidence"),
    ],
)
def test_unusable_answers_raise_with_the_problem_and_the_text(answer, problem):
    with pytest.raises(OutputParseError, match=problem) as caught:
        parse_generation_output(answer)
    assert caught.value.text


def test_sources_are_checked_before_anything_is_sent(tmp_path, sources):
    with pytest.raises(InputError, match="at least one source"):
        check_sources([], case_id="c1")
    with pytest.raises(InputError, match=r"repeated: \['ocr'\]"):
        check_sources([sources[2], sources[2]], case_id="c1")
    generated = artifact_from_value({"total": 1}, authority="generated", artifact_id="model-out")
    with pytest.raises(InputError, match=r"model-out \(generated\)"):
        check_sources([*sources, generated], case_id="c1")
    missing = sources[0].model_copy(update={"path": str(tmp_path / "gone.png")})
    with pytest.raises(InputFileNotFoundError, match=r"'gone\.png' not found") as caught:
        check_sources([missing], case_id="c1")
    assert str(tmp_path) not in str(caught.value)


def test_local_paths_are_scrubbed_from_free_text(tmp_path, sources):
    scrub = PathScrubber(sources)
    image = tmp_path / "page-001.png"
    text = f"[Errno 2] No such file: '{image}' (in {tmp_path})"
    cleaned = scrub(text)
    assert str(tmp_path) not in cleaned
    assert "'page-001.png'" in cleaned
    assert scrub(None) is None
