import zipfile

import pymupdf
import pytest

from docevals_mlflow import artifact_from_path, artifact_from_value
from docevals_mlflow.core.fingerprints import sha256_file
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.groundtruth import markdown as markdown_module
from docevals_mlflow.groundtruth.panel import GroundTruthPanel
from docevals_mlflow.groundtruth.router import GroundTruthRouter, RoutedSources
from tests.groundtruth.generation_fakes import reader


def make_pdf(path, pages):
    document = pymupdf.open()
    for text in pages:
        document.new_page().insert_text((72, 72), text)
    document.save(path)
    document.close()
    return artifact_from_path(path, authority="evidence")


def make_png(path):
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 4, 4), False)
    path.write_bytes(pixmap.tobytes("png"))
    return artifact_from_path(path, authority="evidence")


def make_odt(path):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
    return artifact_from_path(path, authority="evidence")


@pytest.fixture
def statement(tmp_path):
    return make_pdf(tmp_path / "statement.pdf", ["Invoice total 12.50 EUR", "Paid by Ann Smith"])


def test_documents_are_preserved_by_default(statement):
    routed = GroundTruthRouter().prepare("c1", [statement])
    assert routed.route == "documents"
    assert routed.sources == [statement]
    assert routed.derivatives == []
    assert routed.image_report is None
    assert routed.references == [statement]


@pytest.mark.parametrize("layout", [True, False])
def test_markdown_mode_adds_a_generated_derivative_per_page(
    statement, tmp_path, monkeypatch, layout
):
    if not layout:
        monkeypatch.setattr(markdown_module, "_pymupdf4llm", lambda: None)
    elif markdown_module._pymupdf4llm() is None:
        pytest.skip("pymupdf4llm is not installed")
    notes = artifact_from_value("Scanned by the front desk.", authority="evidence", artifact_id="n")
    routed = GroundTruthRouter(document_mode="markdown").prepare("c1", [statement, notes])
    assert routed.sources == [statement, notes]  # the originals are kept
    (derivative,) = routed.derivatives
    assert derivative.id == "statement-markdown"
    assert derivative.authority == "generated"
    assert derivative.kind == "text"
    assert derivative.media_type == "text/markdown"
    assert derivative.is_inline
    text = derivative.content
    assert text.index("## Page 1") < text.index("12.50") < text.index("## Page 2")
    assert text.index("## Page 2") < text.index("Ann Smith")
    assert derivative.metadata == {
        "derived_from": "statement",
        "source_sha256": sha256_file(statement.path),
        "source_name": "statement.pdf",
        "converter": "pymupdf4llm" if layout else "pymupdf",
        "pages": 2,
    }
    assert str(tmp_path) not in derivative.model_dump_json()
    assert routed.references == [statement, notes, derivative]


def test_opendocument_files_need_a_converter_for_markdown(tmp_path):
    letter = make_odt(tmp_path / "letter.odt")
    assert GroundTruthRouter().prepare("c1", [letter]).route == "documents"
    with pytest.raises(InputError, match=r"letter .*document_converter"):
        GroundTruthRouter(document_mode="markdown").prepare("c1", [letter])
    seen = []

    def convert(reference):
        seen.append(reference.id)
        return "# Letter\n\nDear Ann"

    routed = GroundTruthRouter(convert, document_mode="markdown").prepare("c1", [letter])
    assert seen == ["letter"]
    (derivative,) = routed.derivatives
    assert derivative.content == "# Letter\n\nDear Ann"
    assert derivative.metadata["converter"] == "custom"
    assert derivative.metadata["source_sha256"] == sha256_file(letter.path)


def test_images_go_to_the_panel_with_their_text_evidence(tmp_path):
    page = make_png(tmp_path / "page-001.png")
    notes = artifact_from_value("Total 12.50", authority="evidence", artifact_id="notes")
    first, second = reader({"$.total": 12.5}, model="m1"), reader({"$.total": "12.50"}, model="m2")
    panel = GroundTruthPanel({"a": first, "b": second}, "Read the total.", ["$.total"])
    routed = GroundTruthRouter(image_panel=panel).prepare("statement-001", [page, notes])
    assert routed.route == "images"
    assert routed.sources == [page, notes]
    report = routed.image_report
    assert report is not None
    assert report.case_id == "statement-001"
    assert [source.id for source in report.sources] == ["page-001", "notes"]
    assert report.consensus[0].expected_value == 12.5
    assert RoutedSources.model_validate_json(routed.model_dump_json()) == routed
    without_panel = GroundTruthRouter().prepare("c1", [page])
    assert without_panel.route == "images"
    assert without_panel.image_report is None


def test_mixed_or_unsupported_sources_are_refused_by_id(tmp_path, statement):
    page = make_png(tmp_path / "page-001.png")
    router = GroundTruthRouter()
    with pytest.raises(InputError, match=r"images \(page-001\) mixed with documents \(statement\)"):
        router.prepare("c1", [page, statement])
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    bundle = artifact_from_path(archive, authority="evidence")
    with pytest.raises(InputError, match=r"unsupported sources: bundle \(file, application/zip\)"):
        router.prepare("c1", [statement, bundle])
    notes = artifact_from_value("text only", authority="evidence", artifact_id="notes")
    with pytest.raises(InputError, match=r"no image or document to route.*notes"):
        router.prepare("c1", [notes])
    truth = artifact_from_value({"total": 1}, authority="ground_truth", artifact_id="truth")
    with pytest.raises(InputError, match=r"truth \(ground_truth\)"):
        router.prepare("c1", [statement, truth])
    with pytest.raises(InputError, match="no sources"):
        router.prepare("c1", [])


def test_an_unreadable_pdf_is_named(tmp_path):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot really a pdf")
    reference = artifact_from_path(broken, authority="evidence")
    with pytest.raises(InputError, match=r"'broken'.*broken\.pdf.*Markdown") as caught:
        GroundTruthRouter(document_mode="markdown").prepare("c1", [reference])
    assert str(tmp_path) not in str(caught.value)


def test_router_configuration_is_checked():
    with pytest.raises(ConfigurationError, match="document_mode"):
        GroundTruthRouter(document_mode="pdf")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="only used with document_mode='markdown'"):
        GroundTruthRouter(lambda reference: "")
    with pytest.raises(ConfigurationError, match="image_panel"):
        GroundTruthRouter(image_panel=object())
