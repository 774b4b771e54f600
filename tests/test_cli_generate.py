"""``docevals generate`` against the loopback fake provider: the files it writes chain
through ``review``, ``keygen``, ``approve`` and ``verify``; the run it logs; bad input
refused with one line before any provider is asked; keys kept out of every output."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

from docevals_mlflow.cli.generate_cases import cases_from_dir
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.approval import load_approved_ground_truth
from docevals_mlflow.groundtruth.models import GenerationReport
from docevals_mlflow.groundtruth.review import load_review
from tests.helpers import one_error_line, run, write_text
from tests.judges import conftest as judges_conftest
from tests.judges.provider_server import ProviderServer, status

# The judges' guards apply here too: loopback only, no real API keys.
_loopback_only = judges_conftest._loopback_only
_no_real_keys = judges_conftest._no_real_keys

OPENAI_KEY = "sk-test-PLANTED-openai-1111"
ANTHROPIC_KEY = "sk-ant-test-PLANTED-2222"
LOCAL_KEY = "local-PLANTED-secret-3333"
KEYS = (OPENAI_KEY, ANTHROPIC_KEY, LOCAL_KEY)
FIELDS = ["$.currency", "$.amount", "$.account_name"]
AGREED = {"$.currency": "EUR", "$.amount": 1234.5}


@pytest.fixture
def served() -> Iterator[ProviderServer]:
    with ProviderServer(latency=0.02) as server:
        yield server


@pytest.fixture(autouse=True)
def _keys(_no_real_keys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Planted after the guard removed any real ones.
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("LOCAL_KEY", LOCAL_KEY)


def config(tmp_path: Path, server: ProviderServer, extra: str = "") -> Path:
    """Three generators, three wire formats, all pointed at the loopback server."""
    return write_text(
        tmp_path / "gen.yaml",
        f"""\
        instruction: Extract the currency, the amount and the account holder's name.
        expected_fields: [$.currency, $.amount, $.account_name]
        generators:
          - {{name: gpt, provider: openai, model: gpt-test, base_url: "{server.base_url}"}}
          - {{name: claude, provider: anthropic, model: claude-test, base_url: "{server.base_url}"}}
          - name: local
            provider: openai-compatible
            model: local-vl
            base_url: "{server.base_url}"
            api_key_env: LOCAL_KEY
        """
        + textwrap.dedent(extra),
    )


def answers(server: ProviderServer, *, local_name: str | None = "A. Smith") -> None:
    """Currency and amount agreed in every spelling; the name disputed (or omitted)."""
    server.extraction({**AGREED, "$.account_name": "Ann Smith"}, model="gpt-test")
    server.extraction(
        {"$.currency": "eur", "$.amount": "1,234.50", "$.account_name": "ANN SMITH"},
        model="claude-test",
    )
    server.extraction({**AGREED, "$.account_name": local_name}, model="local-vl")


def make_page(path: Path, text: str, *, pdf: bool) -> Path:
    document = pymupdf.open()
    page = document.new_page(width=300, height=200)
    page.insert_text((40, 60), text)
    path.parent.mkdir(parents=True, exist_ok=True)
    if pdf:
        document.save(path)
    else:
        path.write_bytes(page.get_pixmap(dpi=20).tobytes("png"))
    document.close()
    return path


def sources_dir(tmp_path: Path) -> Path:
    """statement-001/ (a page image and its OCR text) and statement-002.pdf."""
    root = tmp_path / "sources"
    make_page(root / "statement-001" / "page-001.png", "Ann Smith 1,234.50 EUR", pdf=False)
    write_text(root / "statement-001" / "ocr.txt", "OCR: Account Ann Smith 1,234.50 EUR")
    make_page(root / "statement-002.pdf", "Ann Smith 1,234.50 EUR", pdf=True)
    return root


def no_key_in(*texts: str, folder: Path | None = None) -> None:
    for key in KEYS:
        for text in texts:
            assert key not in text
        if folder is not None:
            for path in folder.rglob("*"):
                if path.is_file():
                    assert key.encode() not in path.read_bytes(), path


def test_generate_review_approve_verify(served, tmp_path, capsys, mlflow_store):
    answers(served)
    gen = config(tmp_path, served, "document_mode: markdown\n")
    out = tmp_path / "out"
    code, stdout, stderr = run(
        capsys, "generate", "--config", gen, "--sources-dir", sources_dir(tmp_path),
        "--output-dir", out,
    )  # fmt: skip
    assert code == 0, stderr
    outputs = [stdout, stderr]

    # One summary per case, with its next step.
    assert "statement-001: 2 agreed, 1 disputed, 0 omitted by all (agreement 0.89; images" in stdout
    assert "statement-002: 2 agreed, 1 disputed, 0 omitted by all (agreement 0.89; documents" in (
        stdout
    )
    assert stdout.count("providers: claude ok, gpt ok, local ok") == 2
    assert f"next: docevals review {out / 'statement-001.review.json'}" in stdout
    assert "generated 2 case(s): 2 need review, 0 fully agreed; 6 request(s)" in stdout
    assert "MLflow run" in stdout

    # The files: the report, the review written from it, the Markdown copy of the PDF.
    for case in ("statement-001", "statement-002"):
        report = GenerationReport.model_validate_json(
            (out / f"{case}.generation.json").read_text(encoding="utf-8")
        )
        review = load_review(out / f"{case}.review.json")
        assert review.generation_sha256 == report.digest
        assert [row.path for row in report.consensus] == ["$.currency", "$.amount"]
        assert [item.path for item in review.pending()] == ["$.account_name"]
    assert (out / "statement-002.statement-002-markdown.md").read_text().startswith("## Page 1")
    assert not (out / "statement-001.generation.panel.json").exists()  # one stage only

    # What the providers saw: the PDF and the image as labelled attachments, never a path.
    seen = {request.endpoint for request in served.requests}
    assert seen == {"responses", "messages", "chat/completions"}
    texts = [request.text for request in served.requests]
    assert (
        sum("Reference statement-002 (evidence, pdf, statement-002.pdf)" in t for t in texts) == 3
    )
    assert sum("Reference page-001 (evidence, image, page-001.png)" in t for t in texts) == 3
    assert all(str(tmp_path) not in text for text in texts)
    # The Markdown copy is for people: generators read the document itself.
    assert not any("statement-002-markdown" in text for text in texts)

    # One generation run for the batch.
    from mlflow.tracking import MlflowClient

    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("docevals-ground-truth")
    (logged,) = client.search_runs([experiment.experiment_id])
    assert logged.data.tags["docevals.kind"] == "generation"
    assert logged.data.tags["docevals.generation.requires_review"] == "true"
    params = logged.data.params
    assert params["generation.cases"] == "2"
    assert params["generation.stage"] == "panel"
    assert params["generation.adjudicate"] == "false"
    assert params["generation.document_mode"] == "markdown"
    assert "claude=claude-test" in params["generation.providers"]
    assert logged.data.metrics["usage/requests"] == 6
    assert logged.data.metrics["generation/fields_disputed"] == 2
    artifacts = {a.path for a in client.list_artifacts(logged.info.run_id, "review")}
    assert artifacts == {"review/statement-001.review.json", "review/statement-002.review.json"}

    # The review file chains into review → keygen → approve → verify.
    review_file = out / "statement-001.review.json"
    code, stdout, stderr = run(capsys, "review", review_file)
    assert code == 0
    assert "$.account_name  (conflict)" in stdout
    outputs += [stdout, stderr]
    code, stdout, stderr = run(
        capsys, "review", review_file, "--set", "account_name=Ann Smith", "--notes", "page 1"
    )
    assert code == 0, stderr
    assert "no item pending" in stdout
    code, stdout, stderr = run(capsys, "keygen", "--out", tmp_path / "keys" / "alice")
    assert code == 0, stderr
    approved_file = tmp_path / "approved" / "statement-001.json"
    code, stdout, stderr = run(
        capsys, "approve", review_file, "--approved-by", "alice@example.com",
        "--signing-key", tmp_path / "keys" / "alice", "--output", approved_file,
    )  # fmt: skip
    assert code == 0, stderr
    outputs += [stdout, stderr]
    code, stdout, stderr = run(
        capsys, "verify", approved_file, "--public-key", tmp_path / "keys" / "alice.pub"
    )
    assert code == 0, stderr
    assert "signed by the trusted key" in stdout

    approved = load_approved_ground_truth(approved_file, tmp_path / "keys" / "alice.pub")
    report = GenerationReport.model_validate_json(
        (out / "statement-001.generation.json").read_text(encoding="utf-8")
    )
    assert approved.record.generation_sha256 == report.digest
    # Agreed values keep the first proposer's spelling, in label order (claude first).
    assert approved.rows == [
        {"path": "$.account_name", "expected": "Ann Smith"},
        {"path": "$.amount", "expected": "1,234.50"},
        {"path": "$.currency", "expected": "eur"},
    ]
    no_key_in(*outputs, folder=tmp_path)


def test_adjudication_and_union_write_every_stage(served, tmp_path, capsys):
    answers(served, local_name=None)  # local omits the name: one-sided
    gen = config(tmp_path, served, "union: true\n")
    source = write_text(tmp_path / "notes.txt", "Account Ann Smith, 1,234.50 EUR")
    out = tmp_path / "out"
    code, stdout, stderr = run(
        capsys, "generate", "--config", gen, "--source", source, "--output-dir", out,
        "--adjudicate",
    )  # fmt: skip
    assert code == 0, stderr
    assert "notes: 2 agreed, 1 disputed" not in stdout  # the union settled it
    assert "notes: 3 agreed, 0 disputed, 0 omitted by all" in stdout
    assert "(agreement " in stdout
    assert "; text, 1 source(s))" in stdout
    assert "  adjudication: 0 of 1 settled" in stdout
    assert "  union: 1 of 1 settled" in stdout
    # The panel and the adjudication both asked three models.
    assert "usage: 6 request(s)" in stdout
    assert "next: nothing disputed; docevals approve" in stdout

    panel = GenerationReport.model_validate_json((out / "notes.generation.panel.json").read_text())
    second = GenerationReport.model_validate_json(
        (out / "notes.generation.adjudication.json").read_text()
    )
    final = GenerationReport.model_validate_json((out / "notes.generation.json").read_text())
    assert (panel.stage, second.stage, final.stage) == ("panel", "adjudication", "union")
    assert second.parent_sha256 == panel.digest
    assert final.parent_sha256 == second.digest
    assert [(row.path, row.resolved_by) for row in final.consensus][-1] == (
        "$.account_name",
        "union",
    )
    review = load_review(out / "notes.review.json")
    assert review.generation_sha256 == final.digest
    assert review.generation_stage == "union"
    assert review.pending() == []

    # --no-union overrides the file: the adjudication is the last stage.
    code, stdout, stderr = run(
        capsys, "generate", "--config", gen, "--source", source, "--output-dir", out,
        "--no-union",
    )  # fmt: skip
    assert code == 0, stderr
    assert "notes: 2 agreed, 1 disputed" in stdout
    final = GenerationReport.model_validate_json((out / "notes.generation.json").read_text())
    assert final.stage == "panel"
    # The earlier run's stage files would pass for this run's: they are gone.
    assert sorted(path.name for path in out.iterdir()) == [
        "notes.generation.json",
        "notes.review.json",
    ]


def test_a_failing_provider_is_reported_and_its_echoed_key_kept_out(served, tmp_path, capsys):
    answers(served)
    served.script("messages", status(401, message="invalid x-api-key {key}"))
    gen = config(tmp_path, served)
    source = write_text(tmp_path / "inv-7.txt", "Account Ann Smith, 1,234.50 EUR")
    out = tmp_path / "out"
    code, stdout, stderr = run(
        capsys, "generate", "--config", gen, "--source", source, "--output-dir", out
    )
    assert code == 0, stderr
    assert "providers: claude error, gpt ok, local ok" in stdout
    assert "    claude: " in stdout
    assert "docevals: warning: generator 'claude' gave no usable answer in any case (error" in (
        stderr
    )
    # The server echoed the key it was sent; the report must not.
    report = GenerationReport.model_validate_json((out / "inv-7.generation.json").read_text())
    claude = next(p for p in report.providers if p.provider == "claude")
    assert claude.status == "error"
    assert "401" in (claude.error or "")
    assert [row.path for row in report.consensus] == ["$.currency", "$.amount"]
    no_key_in(stdout, stderr, folder=tmp_path)


def test_a_reviewers_work_stops_the_batch_before_anything_is_asked(served, tmp_path, capsys):
    answers(served)
    gen = config(tmp_path, served)
    source = write_text(tmp_path / "inv-7.txt", "Account Ann Smith, 1,234.50 EUR")
    out = tmp_path / "out"
    argv = ("generate", "--config", gen, "--source", source, "--output-dir", out)
    assert run(capsys, *argv)[0] == 0
    review_file = out / "inv-7.review.json"
    assert run(capsys, "review", review_file, "--omit", "$.account_name")[0] == 0
    decided = review_file.read_bytes()
    asked = len(served.requests)

    code, stdout, stderr = run(capsys, *argv)
    assert code == 2
    assert stdout == ""
    line = one_error_line(stderr)
    assert f"{review_file} (1 decided item(s))" in line
    assert "nothing was generated" in line
    assert "--force" in line
    assert len(served.requests) == asked
    assert review_file.read_bytes() == decided

    code, _, stderr = run(capsys, *argv, "--force")
    assert code == 0, stderr
    assert load_review(review_file).pending()[0].path == "$.account_name"


def test_a_missing_key_is_refused_before_any_request(served, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("LOCAL_KEY")
    gen = config(tmp_path, served)
    source = write_text(tmp_path / "inv-7.txt", "text")
    code, _, stderr = run(
        capsys, "generate", "--config", gen, "--source", source, "--output-dir", tmp_path / "o"
    )
    assert code == 2
    line = one_error_line(stderr)
    assert str(gen) in line
    assert "generator 'local' (openai-compatible) needs an API key: set LOCAL_KEY" in line
    assert served.requests == []
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "colour: blue\n",
            "gen.yaml, at colour: invalid GenerationConfig: colour: Extra inputs are not permitted",
        ),
        ("minimum_agreement: 2\n", "at minimum_agreement"),
        ("document_mode: ocr\n", "at document_mode"),
    ],
)
def test_bad_configuration_exits_2_naming_file_and_field(served, tmp_path, capsys, text, expected):
    gen = config(tmp_path, served, text)
    source = write_text(tmp_path / "inv-7.txt", "text")
    code, _, stderr = run(
        capsys, "generate", "--config", gen, "--source", source, "--output-dir", tmp_path / "o"
    )
    assert code == 2
    assert expected in one_error_line(stderr)
    assert served.requests == []


def test_a_key_in_the_configuration_is_refused_unechoed(tmp_path, capsys):
    gen = write_text(
        tmp_path / "gen.yaml",
        f"""\
        instruction: Extract.
        expected_fields: [total]
        generators:
          - {{name: gpt, provider: openai, model: m}}
          - {{name: claude, provider: anthropic, model: c, api_key: {ANTHROPIC_KEY}}}
        """,
    )
    source = write_text(tmp_path / "inv-7.txt", "text")
    code, stdout, stderr = run(
        capsys, "generate", "--config", gen, "--source", source, "--output-dir", tmp_path / "o"
    )
    assert code == 2
    line = one_error_line(stderr)
    assert f"{gen}, at generators[1].api_key: generator 'claude': an API key is written" in line
    no_key_in(stdout, stderr)


def test_one_generator_is_refused(tmp_path, capsys):
    gen = write_text(
        tmp_path / "gen.json",
        json.dumps(
            {
                "instruction": "Extract.",
                "expected_fields": ["total"],
                "generators": [{"provider": "openai", "model": "m"}],
            }
        ),
    )
    source = write_text(tmp_path / "inv-7.txt", "text")
    code, _, stderr = run(
        capsys, "generate", "--config", gen, "--source", source, "--output-dir", tmp_path / "o"
    )
    assert code == 2
    line = one_error_line(stderr)
    assert f"{gen}, at generators: 1 generator(s) given" in line


def test_bad_sources_exit_2_with_one_line(served, tmp_path, capsys):
    gen = config(tmp_path, served)
    image = make_page(tmp_path / "inv-7.png", "x", pdf=False)
    pdf = make_page(tmp_path / "inv-7.pdf", "x", pdf=True)
    other = write_text(tmp_path / "other.txt", "x")
    out = tmp_path / "o"

    def refused(*options: str | Path) -> str:
        code, _, stderr = run(capsys, "generate", "--config", gen, "--output-dir", out, *options)
        assert code == 2
        return one_error_line(stderr)

    assert "images (inv-7.png) mixed with documents (inv-7.pdf)" in refused(
        "--source", image, "--source", pdf
    )
    assert "different stems (inv-7, other): name the case with --case-id" in refused(
        "--source", image, "--source", other
    )
    assert "cannot name output files" in refused("--source", other, "--case-id", "../up")
    assert "--case-id names the case of --source files" in refused(
        "--sources-dir", tmp_path, "--case-id", "x"
    )
    assert "missing.pdf" in refused("--source", tmp_path / "missing.pdf")
    folder = tmp_path / "cases"
    write_text(folder / "inv-1" / "letter.docx", "x")
    assert "unsupported sources: letter (file" in refused("--sources-dir", folder)
    assert "output folder is inside --sources-dir" in refused(
        "--sources-dir", folder, "--output-dir", folder / "out"
    )
    assert served.requests == []
    assert not out.exists()


def test_cases_from_a_folder(tmp_path):
    root = tmp_path / "sources"
    make_page(root / "inv-1" / "page-1.png", "x", pdf=False)
    make_page(root / "inv-1" / "page-2.png", "x", pdf=False)
    write_text(root / "inv-1" / ".DS_Store", "x")
    write_text(root / "inv-1" / "nested" / "ignored.txt", "x")
    make_page(root / "inv-2.pdf", "x", pdf=True)
    write_text(root / "inv-2.txt", "x")
    write_text(root / "inv-3.txt", "x")
    write_text(root / ".hidden.txt", "x")
    cases = cases_from_dir(root, tmp_path / "out")
    assert [(c.case_id, [r.id for r in c.references]) for c in cases] == [
        ("inv-1", ["page-1", "page-2"]),
        ("inv-2", ["inv-2.pdf", "inv-2.txt"]),  # stems repeat: ids are file names
        ("inv-3", ["inv-3"]),
    ]
    assert all(r.authority == "evidence" for c in cases for r in c.references)

    write_text(root / "inv-1.txt", "x")
    with pytest.raises(InputError, match=re.escape("case 'inv-1' is both a folder and a file")):
        cases_from_dir(root, tmp_path / "out")
    with pytest.raises(InputError, match="no cases found"):
        cases_from_dir(write_text(tmp_path / "empty" / ".keep", "").parent, tmp_path / "out")


def test_a_pdf_that_cannot_be_converted_stops_the_batch_first(served, tmp_path, capsys):
    gen = config(tmp_path, served, "document_mode: markdown\n")
    folder = tmp_path / "cases"
    write_text(folder / "inv-1.txt", "Total 12.50 EUR")
    (folder / "inv-2.pdf").write_bytes(b"%PDF-1.4\nnot really a PDF\n")
    code, _, stderr = run(
        capsys, "generate", "--config", gen, "--sources-dir", folder, "--output-dir",
        tmp_path / "o",
    )  # fmt: skip
    assert code == 2
    assert "document 'inv-2' (inv-2.pdf) cannot be converted to Markdown" in one_error_line(stderr)
    assert served.requests == []


def test_a_rerun_with_the_generation_cache_asks_nobody(served, tmp_path, capsys):
    answers(served)
    gen = config(tmp_path, served)
    source = write_text(tmp_path / "inv-7.txt", "Account Ann Smith, 1,234.50 EUR")
    argv = (
        "generate", "--config", gen, "--source", source, "--output-dir", tmp_path / "out",
        "--generation-cache", tmp_path / "cache", "--concurrency", "2",
    )  # fmt: skip
    assert run(capsys, *argv)[0] == 0
    first = (tmp_path / "out" / "inv-7.review.json").read_bytes()
    asked = len(served.requests)
    assert asked == 3

    code, stdout, stderr = run(capsys, *argv)
    assert code == 0, stderr
    assert len(served.requests) == asked
    assert "providers: claude ok (cached), gpt ok (cached), local ok (cached)" in stdout
    assert "usage: 0 request(s)" in stdout
    # Same answers, same agreed claims.
    assert (
        json.loads(first)["claims"]
        == json.loads((tmp_path / "out" / "inv-7.review.json").read_bytes())["claims"]
    )
