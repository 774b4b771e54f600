import json
import re

import pytest
from pydantic import ValidationError

from docevals_mlflow.core.artifacts import (
    ReferenceArtifact,
    artifact_from_path,
    artifact_from_value,
)
from docevals_mlflow.errors import InputError, InputFileNotFoundError


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def _load(path, **kwargs):
    kwargs.setdefault("authority", "ground_truth")
    return artifact_from_path(path, **kwargs)


# --- JSON ---------------------------------------------------------------------------


def test_json_file_is_parsed_structured_and_exact_comparable(tmp_path):
    document = {"total": "12.50", "items": [{"code": "A"}], "note": None}
    path = _write(tmp_path / "invoice_01.json", json.dumps(document))
    ref = _load(path, metadata={"source": "manual"})
    assert ref.id == "invoice_01"
    assert ref.path == str(path)
    assert ref.kind == "structured"
    assert ref.authority == "ground_truth"
    assert ref.media_type == "application/json"
    assert ref.content == document
    assert ref.content_format == "json"
    assert ref.metadata == {"source": "manual"}
    assert ref.exact_comparable is True
    assert ref.is_inline is False


def test_artifact_id_can_be_overridden(tmp_path):
    path = _write(tmp_path / "invoice_01.json", "{}")
    assert _load(path, artifact_id="gt").id == "gt"


def test_json_with_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert _load(path).content == {"a": 1}


def test_json_in_semantic_mode_is_not_exact_comparable(tmp_path):
    path = _write(tmp_path / "a.json", '{"a": 1}')
    assert _load(path, comparison_mode="semantic").exact_comparable is False


def test_malformed_json_names_file_line_and_column(tmp_path):
    path = _write(tmp_path / "bad.json", '{\n  "a": 1,\n}')
    with pytest.raises(InputError, match=r"malformed JSON at line 3, column 1") as info:
        _load(path)
    assert info.value.source == str(path)
    assert str(info.value).startswith(f"{path}: ")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_json_literals_are_rejected(tmp_path, literal):
    path = _write(tmp_path / "nan.json", f'{{"a": {literal}}}')
    with pytest.raises(InputError, match=f"{literal} is not valid JSON") as info:
        _load(path)
    assert info.value.source == str(path)
    assert info.value.expected == "finite numbers"


def test_overflowing_json_number_is_rejected(tmp_path):
    # 1e999 parses to float('inf'), which has no canonical JSON form and cannot be
    # fingerprinted; it must be refused at load time like the NaN/Infinity literals.
    path = _write(tmp_path / "big.json", '{"a": 1e999}')
    with pytest.raises(InputError) as info:
        _load(path)
    assert info.value.source == str(path)


# --- CSV / TSV ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "path_column", "value_column"),
    [
        ("path,expected", "path", "expected"),
        ("field_path,expected_value", "field_path", "expected_value"),
        ("path,value", "path", "value"),
    ],
)
def test_csv_path_table(tmp_path, header, path_column, value_column):
    path = _write(tmp_path / "gt.csv", f"{header}\n$.a,1\n$.items[0].code,X Y\n")
    ref = _load(path)
    assert ref.kind == "structured"
    assert ref.media_type == "text/csv"
    assert ref.content_format == "path_table"
    assert ref.content == [
        {path_column: "$.a", value_column: "1"},
        {path_column: "$.items[0].code", value_column: "X Y"},
    ]
    assert ref.exact_comparable is True


def test_ordinary_csv_is_a_table_exact_comparable_only_in_exact_mode(tmp_path):
    path = _write(tmp_path / "lines.csv", "name,amount\nA,1\nB,2\n")
    auto = _load(path)
    assert auto.content_format == "table"
    assert auto.content == [{"name": "A", "amount": "1"}, {"name": "B", "amount": "2"}]
    assert auto.exact_comparable is False
    assert _load(path, comparison_mode="exact").exact_comparable is True
    assert _load(path, comparison_mode="semantic").exact_comparable is False


def test_path_table_in_semantic_mode_is_not_exact_comparable(tmp_path):
    path = _write(tmp_path / "gt.csv", "path,expected\n$.a,1\n")
    assert _load(path, comparison_mode="semantic").exact_comparable is False


def test_tsv_path_table(tmp_path):
    path = _write(tmp_path / "gt.tsv", "path\texpected\n$.a\tx, y\n")
    ref = _load(path)
    assert ref.media_type == "text/tab-separated-values"
    assert ref.content_format == "path_table"
    assert ref.content == [{"path": "$.a", "expected": "x, y"}]


def test_csv_with_bom_keeps_clean_column_names(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffpath,expected\n$.a,é\n".encode())
    ref = _load(path)
    assert ref.content == [{"path": "$.a", "expected": "é"}]
    assert ref.content_format == "path_table"


def test_csv_short_rows_are_padded_blank_rows_skipped_header_trimmed(tmp_path):
    path = _write(tmp_path / "t.csv", " a , b ,c\n1\n\n,,\n1,2,3\n")
    assert _load(path).content == [{"a": "1", "b": "", "c": ""}, {"a": "1", "b": "2", "c": "3"}]


def test_csv_quoted_multiline_cell(tmp_path):
    path = _write(tmp_path / "t.csv", 'path,expected\n$.a,"line1\nline2"\n')
    assert _load(path).content == [{"path": "$.a", "expected": "line1\nline2"}]


def test_csv_row_with_too_many_cells_names_the_line(tmp_path):
    path = _write(tmp_path / "t.csv", "path,expected\n$.a,1\n\n$.b,2,3\n")
    with pytest.raises(InputError, match="3 cells but the header has 2 columns") as info:
        _load(path)
    assert info.value.record == "line 4"
    assert info.value.source == str(path)
    assert str(info.value).startswith(f"{path}, record line 4: ")


def test_csv_duplicate_header(tmp_path):
    path = _write(tmp_path / "t.csv", "a,b,a\n1,2,3\n")
    with pytest.raises(InputError, match="duplicate column 'a' in header") as info:
        _load(path)
    assert info.value.record == "line 1"


def test_csv_empty_column_name(tmp_path):
    path = _write(tmp_path / "t.csv", "a,,c\n1,2,3\n")
    with pytest.raises(InputError, match="empty column name in header"):
        _load(path)


@pytest.mark.parametrize("text", ["", "\n", " , \n1,2\n"])
def test_csv_without_header_is_rejected(tmp_path, text):
    path = _write(tmp_path / "t.csv", text)
    with pytest.raises(InputError, match="empty table: a header row is required"):
        _load(path)


def test_csv_unterminated_quote_is_an_input_error(tmp_path):
    path = _write(tmp_path / "t.csv", 'path,expected\n$.a,"1\n')
    with pytest.raises(InputError, match="malformed table") as info:
        _load(path)
    assert info.value.source == str(path)


def test_csv_with_header_only_is_refused(tmp_path):
    # An expected table with no rows would compare nothing and pass.
    path = _write(tmp_path / "t.csv", "path,expected\n")
    with pytest.raises(InputError, match="the table has a header but no rows") as info:
        _load(path)
    assert info.value.source == str(path)


# --- text ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "media_type"),
    [("notes.txt", "text/plain"), ("notes.md", "text/markdown"), ("n.markdown", "text/markdown")],
)
def test_text_files(tmp_path, name, media_type):
    path = _write(tmp_path / name, "Total: 12.50\nVendor: ACME é\n")
    ref = _load(path, authority="evidence")
    assert ref.kind == "text"
    assert ref.media_type == media_type
    assert ref.content == "Total: 12.50\nVendor: ACME é\n"
    assert ref.content_format == "text"
    assert ref.exact_comparable is False


@pytest.mark.parametrize("name", ["bad.txt", "bad.json", "bad.csv"])
def test_invalid_utf8_is_an_input_error(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"abc\xff")
    with pytest.raises(InputError, match=re.escape("not valid UTF-8 text (byte 3")) as info:
        _load(path)
    assert info.value.source == str(path)


# --- images, PDF, other files -------------------------------------------------------

_PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
_JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
_WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 16


@pytest.mark.parametrize(
    ("name", "data", "media_type"),
    [
        ("scan.png", _PNG, "image/png"),
        ("SCAN.PNG", _PNG, "image/png"),
        ("scan.jpg", _JPEG, "image/jpeg"),
        ("scan.jpeg", _JPEG, "image/jpeg"),
        ("scan.gif", b"GIF89a" + b"\x00" * 16, "image/gif"),
        ("scan87.gif", b"GIF87a" + b"\x00" * 16, "image/gif"),
        ("scan.tif", b"II*\x00" + b"\x00" * 16, "image/tiff"),
        ("scan.tiff", b"MM\x00*" + b"\x00" * 16, "image/tiff"),
        ("scan.bmp", b"BM" + b"\x00" * 16, "image/bmp"),
        ("scan.webp", _WEBP, "image/webp"),
    ],
)
def test_images(tmp_path, name, data, media_type):
    path = tmp_path / name
    path.write_bytes(data)
    ref = _load(path, authority="evidence")
    assert ref.kind == "image"
    assert ref.media_type == media_type
    assert ref.content is None
    assert ref.content_format is None
    assert ref.exact_comparable is False
    assert ref.id == path.stem


@pytest.mark.parametrize(
    ("name", "data", "media_type"),
    [
        ("fake.png", b"not a png at all", "image/png"),
        ("fake.jpg", _PNG, "image/jpeg"),
        ("fake.webp", b"RIFF\x24\x00\x00\x00WAVEfmt ", "image/webp"),
        ("empty.gif", b"", "image/gif"),
    ],
)
def test_image_with_wrong_content_is_rejected(tmp_path, name, data, media_type):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(
        InputError, match=re.escape(f"does not match its extension (expected {media_type})")
    ) as info:
        _load(path)
    assert info.value.source == str(path)


def test_real_pdf(tmp_path):
    import pymupdf

    path = tmp_path / "invoice.pdf"
    doc = pymupdf.open()
    doc.new_page()
    doc.save(path)
    doc.close()
    ref = _load(path, authority="evidence")
    assert ref.kind == "pdf"
    assert ref.media_type == "application/pdf"
    assert ref.content is None
    assert ref.exact_comparable is False


def test_fake_pdf_is_rejected(tmp_path):
    path = tmp_path / "invoice.pdf"
    path.write_bytes(b"hello, I am not a PDF")
    with pytest.raises(InputError, match=re.escape("(expected application/pdf)")):
        _load(path)


def test_unknown_extension_is_a_plain_file(tmp_path):
    path = tmp_path / "blob.qqzzunknown"
    path.write_bytes(b"\x00\x01")
    ref = _load(path, authority="evidence")
    assert ref.kind == "file"
    assert ref.media_type == "application/octet-stream"
    assert ref.content is None
    assert ref.id == "blob"


def test_missing_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(InputFileNotFoundError, match="file not found") as info:
        _load(path)
    assert isinstance(info.value, FileNotFoundError)
    assert info.value.source == str(path)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(InputError, match="this is a folder, not a file") as info:
        _load(tmp_path)
    assert info.value.source == str(tmp_path)


# --- in-memory values ---------------------------------------------------------------


def test_text_value():
    ref = artifact_from_value("Total is 12.50", authority="evidence", artifact_id="note")
    assert ref.kind == "text"
    assert ref.content == "Total is 12.50"
    assert ref.content_format == "text"
    assert ref.media_type == "text/plain"
    assert ref.path == "inline://note"
    assert ref.is_inline is True
    assert ref.exact_comparable is False


def test_structured_value_is_json():
    ref = artifact_from_value(
        {"b": (1, 2), "a": None}, authority="ground_truth", artifact_id="gt", metadata={"k": 1}
    )
    assert ref.kind == "structured"
    assert ref.content == {"a": None, "b": [1, 2]}
    assert ref.content_format == "json"
    assert ref.media_type == "application/json"
    assert ref.path == "inline://gt"
    assert ref.metadata == {"k": 1}
    assert ref.exact_comparable is True


def test_rows_with_path_and_expected_are_a_path_table():
    rows = [{"path": "$.a", "expected": 1}, {"field_path": "$.b", "value": "x"}]
    ref = artifact_from_value(rows, authority="ground_truth", artifact_id="gt")
    assert ref.content_format == "path_table"
    assert ref.content == rows
    assert ref.exact_comparable is True


def test_rows_without_value_column_are_plain_json():
    rows = [{"path": "$.a", "expected": 1}, {"path": "$.b"}]
    ref = artifact_from_value(rows, authority="ground_truth", artifact_id="gt")
    assert ref.content_format == "json"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"a": float("nan")}, "has no JSON representation"),
        (float("inf"), "has no JSON representation"),
        ({1, object()}, "a value of type object cannot be fingerprinted"),
        ({1: "a"}, "mapping key 1 is a int"),
    ],
)
def test_non_json_values_are_rejected(value, message):
    with pytest.raises(InputError, match=message) as info:
        artifact_from_value(value, authority="evidence", artifact_id="bad")
    assert info.value.source == "inline://bad"
    assert str(info.value).startswith("inline://bad: ")


def test_reference_artifact_is_frozen():
    ref = artifact_from_value({"a": 1}, authority="evidence", artifact_id="r")
    with pytest.raises(ValidationError, match="frozen"):
        ref.id = "other"
    assert ref.id == "r"


def test_reference_artifact_validates_content():
    with pytest.raises(InputError, match="text content must be a string"):
        ReferenceArtifact(id="r", path="inline://r", kind="text", authority="evidence", content=1)
    with pytest.raises(InputError, match="structured reference without content"):
        ReferenceArtifact(id="r", path="inline://r", kind="structured", authority="evidence")
    with pytest.raises(InputError, match="a path table needs rows"):
        ReferenceArtifact(
            id="r",
            path="inline://r",
            kind="structured",
            authority="evidence",
            content=[{"a": 1}],
            content_format="path_table",
        )
