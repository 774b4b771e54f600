"""MuPDF behind one process-wide lock: documents open under it, refusals release it."""

from __future__ import annotations

import pymupdf
import pytest

from docevals_mlflow.core.pdf import MUPDF_LOCK, open_pdf
from docevals_mlflow.groundtruth.markdown import pdf_to_markdown
from docevals_mlflow.judges.adapters.attachments import render_pdf


def pdf_bytes(text: str, **save: object) -> bytes:
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), text)
    data: bytes = document.tobytes(**save)
    document.close()
    return data


def test_the_lock_is_held_while_a_document_is_open():
    with open_pdf(pdf_bytes("Invoice 17")) as document:
        assert document.page_count == 1
        assert MUPDF_LOCK.locked()
    assert not MUPDF_LOCK.locked()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not a pdf", "not a readable PDF"),
        (
            pdf_bytes("secret", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw"),
            "the PDF is password-protected",
        ),
    ],
)
def test_unusable_pdfs_are_refused_and_the_lock_released(data, message):
    with pytest.raises(ValueError, match=message), open_pdf(data):
        pass
    assert not MUPDF_LOCK.locked()


def test_judges_and_ground_truth_read_pdfs_through_it():
    data = pdf_bytes("Invoice 17")
    assert render_pdf(data).total_pages == 1
    assert "Invoice 17" in pdf_to_markdown(data).text
    assert not MUPDF_LOCK.locked()
