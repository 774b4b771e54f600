import asyncio
import json

import pymupdf
import pytest

from docevals_mlflow import artifact_from_path, artifact_from_value
from docevals_mlflow.errors import ConfigurationError, InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.cache import GenerationCache
from docevals_mlflow.groundtruth.models import ConsensusRow, GenerationReport
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from docevals_mlflow.groundtruth.request import build_generation_request
from docevals_mlflow.judges.cache import JudgeCache
from docevals_mlflow.judges.judge import AdapterReply
from docevals_mlflow.judges.testing import ScriptedAdapter
from tests.groundtruth.generation_fakes import OMIT, RecordingReader, claims_answer, reader

FIELDS = ["$.currency", "$.amount", "$.account_name"]
INSTRUCTION = "Extract currency, amount, and account name."


@pytest.fixture
def sources(tmp_path):
    image = tmp_path / "page-001.png"
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 4, 4), False)
    image.write_bytes(pixmap.tobytes("png"))
    notes = tmp_path / "notes.txt"
    notes.write_text("Account: Ann Smith. Amount 1,234.50 EUR", encoding="utf-8")
    return [
        artifact_from_path(image, authority="evidence", metadata={"page": 1}),
        artifact_from_path(notes, authority="evidence"),
    ]


AGREED = {"$.currency": "EUR", "$.amount": 1234.5, "$.account_name": "Ann Smith"}


def test_two_agreeing_readers_make_a_provisional_reference(sources):
    panel = GroundTruthPanel(
        {
            "openai": reader(AGREED, model="gpt", cite="page-001"),
            "claude": reader(
                {"$.currency": "eur", "$.amount": "1,234.50", "$.account_name": "ANN  SMITH"},
                model="claude",
            ),
        },
        extraction_instruction=INSTRUCTION,
        expected_fields=["currency", "$.amount", "$['account_name']"],
    )
    report = panel.generate("statement-001", sources)
    assert report.stage == "panel"
    assert report.expected_fields == FIELDS
    assert [row.path for row in report.consensus] == FIELDS
    # "claude" sorts before "openai": its spelling is kept.
    assert [row.expected_value for row in report.consensus] == ["eur", "1,234.50", "ANN  SMITH"]
    assert all(row.agreement == 1.0 for row in report.consensus)
    assert report.disagreements == []
    assert not report.requires_human_review
    assert report.overall_agreement == 1.0
    assert [p.provider for p in report.providers] == ["claude", "openai"]
    assert report.usage.requests == 2
    assert report.usage.input_tokens == 200
    expected_request = build_generation_request(
        extraction_instruction=INSTRUCTION, expected_fields=FIELDS, references=sources
    )
    assert report.instructions_sha256 == expected_request.instructions_sha256
    assert [source.name for source in report.sources] == ["page-001.png", "notes.txt"]
    reference = report.provisional_reference
    assert reference.authority == "generated"
    assert reference.content == [
        {"path": "$.currency", "expected": "eur"},
        {"path": "$.amount", "expected": "1,234.50"},
        {"path": "$.account_name", "expected": "ANN  SMITH"},
    ]
    assert reference.metadata["generation_sha256"] == report.digest
    assert GenerationReport.model_validate_json(report.model_dump_json()) == report


def test_every_reader_gets_the_same_blind_request(sources):
    first = RecordingReader({"$.currency": "XAU-first"}, model="m1")
    second = RecordingReader({"$.currency": "XAG-second"}, model="m2")
    panel = GroundTruthPanel({"a": first, "b": second}, INSTRUCTION, FIELDS)
    report = panel.generate("case-c1", sources)
    (seen_by_a,) = first.requests
    (seen_by_b,) = second.requests
    assert seen_by_a.fingerprint == seen_by_b.fingerprint
    sent = json.dumps({"instructions": seen_by_a.instructions, "task": seen_by_a.task})
    assert "-first" not in sent  # no reader's answer reaches another
    assert "-second" not in sent
    assert "case-c1" not in sent  # nor the case id
    currency = next(item for item in report.disagreements if item.path == "$.currency")
    assert currency.reason == "tie"


def test_readers_are_asked_at_the_same_time(sources):
    barrier = asyncio.Barrier(3)

    def waiting(values, model):
        async def respond(request):
            # Each reader waits for the other two: asked one after another, the first
            # would wait for ever (here: until the timeout turns it into an error).
            await asyncio.wait_for(barrier.wait(), timeout=10)
            return claims_answer(values)

        respond.__name__ = model
        return respond

    panel = GroundTruthPanel(
        {name: waiting(AGREED, name) for name in ("a", "b", "c")}, INSTRUCTION, FIELDS
    )
    report = panel.generate("c1", sources)
    assert [p.status for p in report.providers] == ["ok", "ok", "ok"]
    assert len(report.consensus) == 3


def test_a_failing_reader_never_aborts_the_generation(sources, tmp_path):
    image_path = tmp_path / "page-001.png"

    def broken(request):
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{image_path}'")

    refusing = ScriptedAdapter(
        lambda request, repair: AdapterReply(status="refused", refusal="no"), model="r"
    )
    panel = GroundTruthPanel(
        {
            "a": reader(AGREED, model="m1"),
            "b": reader(AGREED, model="m2"),
            "broken": broken,
            "refusing": refusing,
        },
        INSTRUCTION,
        FIELDS,
    )
    report = panel.generate("c1", sources)
    statuses = {p.provider: p.status for p in report.providers}
    assert statuses == {"a": "ok", "b": "ok", "broken": "error", "refusing": "refused"}
    assert len(report.consensus) == 3  # failed readers do not vote
    failed = next(p for p in report.providers if p.provider == "broken")
    assert "page-001.png" in (failed.error or "")
    assert str(tmp_path) not in report.model_dump_json()


def test_only_one_usable_reader_settles_nothing(sources):
    panel = GroundTruthPanel(
        {"a": reader(AGREED, model="m1"), "b": lambda request: "not json at all"},
        INSTRUCTION,
        FIELDS,
    )
    report = panel.generate("c1", sources)
    failed = next(p for p in report.providers if p.provider == "b")
    assert failed.status == "malformed"
    assert failed.raw_text == "not json at all"
    assert report.consensus == []
    assert {item.reason for item in report.disagreements} == {"too_few_voters"}
    assert report.requires_human_review


def test_a_malformed_answer_is_repaired_once(sources):
    def respond(request, repair):
        if repair is None:
            return '{"claims": [{"path": "$.currency", '
        assert "keeping the values you read" in repair.message()
        return claims_answer(AGREED)

    panel = GroundTruthPanel(
        {"a": reader(AGREED, model="m1"), "b": ScriptedAdapter(respond, model="m2")},
        INSTRUCTION,
        FIELDS,
    )
    report = panel.generate("c1", sources)
    repaired = next(p for p in report.providers if p.provider == "b")
    assert repaired.status == "repaired"
    assert repaired.usage.requests == 2
    assert len(report.consensus) == 3


def test_no_absolute_path_in_the_report(sources, tmp_path):
    def echo_paths(request):
        # A careless custom generator that puts its arguments into its error.
        raise RuntimeError(f"cannot open {[reference.path for reference in request.references]}")

    panel = GroundTruthPanel(
        {"a": reader(AGREED, model="m1", cite="page-001"), "b": echo_paths}, INSTRUCTION, FIELDS
    )
    dumped = panel.generate("c1", sources).model_dump_json()
    assert str(tmp_path) not in dumped
    assert str(tmp_path.resolve()) not in dumped
    assert "page-001.png" in dumped


def test_groups_merge_samples_of_one_model(sources):
    panel = GroundTruthPanel(
        {
            "gpt-a": reader({"$.currency": "EUR"}, model="gpt"),
            "gpt-b": reader({"$.currency": "EUR"}, model="gpt"),
            "claude": reader({"$.currency": "USD"}, model="claude"),
        },
        INSTRUCTION,
        ["$.currency"],
        minimum_agreement=0.5,
        groups={"gpt-a": "openai", "gpt-b": "openai"},
    )
    report = panel.generate("c1", sources)
    (item,) = report.disagreements
    assert item.reason == "tie"
    assert {p.provider: p.group for p in report.providers} == {
        "claude": "fake:claude",
        "gpt-a": "openai",
        "gpt-b": "openai",
    }


def test_adapters_of_one_model_form_one_group_by_default():
    same = [reader(AGREED, model="gpt", provider="openai") for _ in range(2)]
    with pytest.raises(ConfigurationError, match="one provider/model group"):
        GroundTruthPanel(same, INSTRUCTION, FIELDS)
    panel = GroundTruthPanel(
        [*same, reader(AGREED, model="claude", provider="anthropic")], INSTRUCTION, FIELDS
    )
    assert panel.labels == ["anthropic:claude", "openai:gpt", "openai:gpt#2"]
    assert [g.group for g in panel.generators] == ["anthropic:claude", "openai:gpt", "openai:gpt"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"generators": {"only": lambda request: {}}}, "at least 2"),
        ({"generators": {"a": lambda r: {}, "b": 42}}, "generator 'b' is a int"),
        ({"generators": "openai"}, "mapping"),
        ({"groups": {"nobody": "g"}}, "unknown generators"),
        ({"expected_fields": "$.total"}, "not one string"),
        ({"expected_fields": []}, "at least one expected field"),
        ({"minimum_agreement": 0}, "minimum_agreement"),
        ({"extraction_instruction": None}, "extraction_instruction"),
    ],
)
def test_configuration_errors_are_clear(arguments, message):
    options = {
        "generators": {"a": lambda request: {}, "b": lambda request: {}},
        "extraction_instruction": INSTRUCTION,
        "expected_fields": FIELDS,
        **arguments,
    }
    with pytest.raises(ConfigurationError, match=message):
        GroundTruthPanel(**options)


def test_bad_sources_are_refused_before_any_reader_is_asked(sources, tmp_path):
    first, second = reader(AGREED, model="m1"), reader(AGREED, model="m2")
    panel = GroundTruthPanel({"a": first, "b": second}, INSTRUCTION, FIELDS)
    prediction = artifact_from_value(AGREED, authority="generated", artifact_id="prediction")
    with pytest.raises(InputError, match="evidence"):
        panel.generate("c1", [*sources, prediction])
    (tmp_path / "page-001.png").unlink()
    with pytest.raises(InputFileNotFoundError, match=r"'page-001\.png' not found"):
        panel.generate("c1", sources)
    assert first.calls == second.calls == 0


def test_cached_answers_are_reused_and_failures_are_not(sources, tmp_path):
    calls = {"b": 0}

    def flaky(request):
        calls["b"] += 1
        if calls["b"] == 1:
            raise RuntimeError("overloaded")
        return claims_answer(AGREED)

    first = reader(AGREED, model="m1")
    panel = GroundTruthPanel(
        {"a": first, "b": flaky}, INSTRUCTION, FIELDS, cache=JudgeCache(tmp_path / "cache")
    )
    assert isinstance(panel.cache, GenerationCache)
    one = panel.generate("c1", sources)
    two = panel.generate("c1", sources)
    three = panel.generate("c1", sources)
    assert [p.status for p in one.providers] == ["ok", "error"]
    assert [p.cached for p in two.providers] == [True, False]
    assert [p.cached for p in three.providers] == [True, True]
    assert first.calls == 1
    assert calls["b"] == 2
    assert three.usage.requests == 0
    assert three.consensus == two.consensus


def test_sync_generate_works_inside_a_running_event_loop(sources):
    panel = GroundTruthPanel(
        {"a": reader(AGREED, model="m1"), "b": reader(AGREED, model="m2")}, INSTRUCTION, FIELDS
    )

    async def notebook_cell() -> GenerationReport:
        return panel.generate("c1", sources)

    assert len(asyncio.run(notebook_cell()).consensus) == 3


def test_many_cases_keep_their_order_and_are_checked_first(sources):
    first = reader(AGREED, model="m1", delay=0.01)
    second = reader({**AGREED, "$.amount": OMIT}, model="m2")
    panel = GroundTruthPanel({"a": first, "b": second}, INSTRUCTION, FIELDS)
    reports = panel.generate_many(
        [(f"case-{n}", sources) for n in range(5)], max_concurrent_cases=2
    )
    assert [report.case_id for report in reports] == [f"case-{n}" for n in range(5)]
    assert all(
        isinstance(row, ConsensusRow) and row.path != "$.amount"
        for report in reports
        for row in report.consensus
    )
    calls = first.calls
    with pytest.raises(InputError, match="repeated"):
        panel.generate_many([("x", sources), ("x", sources)])
    with pytest.raises(InputError, match="record bad"):
        panel.generate_many({"good": sources, "bad": []})
    assert first.calls == calls
