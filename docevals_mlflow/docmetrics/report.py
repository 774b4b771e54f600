"""The report of ``docevals text``: per-page, per-document and batch figures of paired
texts and tables (:mod:`~docevals_mlflow.docmetrics.inputs`), as one pydantic model.

Figures come from :func:`~docevals_mlflow.docmetrics.text.score_texts` and
:func:`~docevals_mlflow.docmetrics.tables.score_table`:

* **text**: each page's CER, WER, normalized edit distance (NED) and token F1. A
  document's figures are micro over its pages (token F1: the mean of its pages). Batch
  figures are **micro** over every page (sum of edits ÷ sum of expected lengths; token F1
  from the summed counts of matching, predicted and expected distinct tokens of each
  page) and **macro** over documents (the mean of the documents' figures, as
  :func:`~docevals_mlflow.docmetrics.text.document_figures` gives them);
* **tables**: each table's TEDS and TEDS-S; a document's are the means of its tables;
  the batch figures are the mean over tables (as
  :func:`~docevals_mlflow.docmetrics.tables.score_tables`) and, as macro, over documents.

Pure: no MLflow, no rendering (``reports.text_markdown`` renders the Markdown).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from docevals_mlflow._version import __version__
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.core.report_file import ReportFile
from docevals_mlflow.docmetrics.inputs import InputForm, Page, PairedInputs
from docevals_mlflow.docmetrics.normalize import DEFAULT, TextNormalization
from docevals_mlflow.docmetrics.tables import TableScore, score_table
from docevals_mlflow.docmetrics.text import (
    TextBatchScore,
    TextPairScore,
    document_figures,
    score_texts,
)


class TextPage(DocEvalsModel):
    """The text figures of one page (a file, or a record)."""

    name: str
    document: str
    page: int | None
    missing_prediction: bool
    cer: float
    wer: float
    ned: float
    word_ned: float
    token_f1: float
    char_edits: int
    expected_chars: int
    predicted_chars: int
    word_edits: int
    expected_words: int
    predicted_words: int


class TablePage(DocEvalsModel):
    """The TEDS and TEDS-S of one table (a file, or a record)."""

    name: str
    document: str
    page: int | None
    missing_prediction: bool
    teds: float
    teds_s: float
    expected_nodes: int
    predicted_nodes: int


class TextDocument(DocEvalsModel):
    """A document's text figures: micro over its pages (token F1: their mean)."""

    document: str
    pages: int
    missing_pages: int
    cer: float
    wer: float
    ned: float
    token_f1: float


class TableDocument(DocEvalsModel):
    """A document's table figures: the means over its tables."""

    document: str
    pages: int
    missing_pages: int
    teds: float
    teds_s: float


class TextFigures(DocEvalsModel):
    """Batch text figures: micro over pages, macro over documents."""

    documents: int
    pages: int
    missing_predictions: int
    cer: float
    wer: float
    ned: float
    token_f1: float
    macro_cer: float
    macro_wer: float
    macro_ned: float
    macro_token_f1: float


class TableFigures(DocEvalsModel):
    """Batch table figures: means over tables and, as macro, over documents."""

    documents: int
    tables: int
    missing_predictions: int
    teds: float
    teds_s: float
    macro_teds: float
    macro_teds_s: float


class Normalization(DocEvalsModel):
    """The text normalization the figures were computed with (see ``normalize``)."""

    unicode_form: Literal["NFC", "NFKC", "none"]
    collapse_whitespace: bool
    casefold: bool
    remove_punctuation: bool


class TextMetricsReport(ReportFile):
    """The report of ``docevals text``."""

    kind: Literal["text"] = "text"
    docevals_version: str = __version__
    input_form: InputForm
    normalization: Normalization
    text: TextFigures | None
    table: TableFigures | None
    text_documents: list[TextDocument]
    table_documents: list[TableDocument]
    text_pages: list[TextPage]
    table_pages: list[TablePage]
    missing_predictions: list[str]
    """Expected pages with no prediction, scored as empty predictions."""
    extra_predictions: list[str]
    """Predictions with no expected page, not scored."""

    @property
    def documents(self) -> int:
        """Documents scored (text and table)."""
        return len(
            {
                *(d.document for d in self.text_documents),
                *(d.document for d in self.table_documents),
            }
        )

    def worst_text(self, count: int = 10) -> list[TextPage]:
        """The ``count`` text pages of highest CER, worst first (ties by name)."""
        return sorted(self.text_pages, key=lambda page: (-page.cer, page.name))[:count]

    def worst_tables(self, count: int = 10) -> list[TablePage]:
        """The ``count`` tables of lowest TEDS, worst first (ties by name)."""
        return sorted(self.table_pages, key=lambda page: (page.teds, page.name))[:count]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _groups(pages: Sequence[Page]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for index, page in enumerate(pages):
        groups.setdefault(page.document, []).append(index)
    return groups


def _token_counts(
    expected: str, predicted: str, normalization: TextNormalization
) -> tuple[int, int, int]:
    """Matching, predicted and expected distinct tokens of a page (for micro token F1)."""
    left = set(normalization.apply(expected).split())
    right = set(normalization.apply(predicted).split())
    return len(left & right), len(right), len(left)


def _micro_f1(counts: Sequence[tuple[int, int, int]]) -> float:
    common = sum(count[0] for count in counts)
    predicted = sum(count[1] for count in counts)
    expected = sum(count[2] for count in counts)
    if predicted == 0 and expected == 0:
        return 1.0  # every page empty on both sides, as token F1 scores one such page
    if common == 0:
        return 0.0
    precision, recall = common / predicted, common / expected
    return 2 * precision * recall / (precision + recall)


def _text_page(page: Page, score: TextPairScore) -> TextPage:
    return TextPage(
        name=page.name,
        document=page.document,
        page=page.page,
        missing_prediction=page.predicted is None,
        cer=score.cer,
        wer=score.wer,
        ned=score.edit_distance,
        word_ned=score.word_edit_distance,
        token_f1=score.token_f1,
        **{field: getattr(score, field) for field in _COUNTS},
    )


_COUNTS = (
    "char_edits",
    "expected_chars",
    "predicted_chars",
    "word_edits",
    "expected_words",
    "predicted_words",
)


def _texts(
    pages: Sequence[Page], normalization: TextNormalization
) -> tuple[TextFigures | None, list[TextDocument], list[TextPage]]:
    if not pages:
        return None, [], []
    expected = [str(page.expected) for page in pages]
    predicted = [str(page.predicted or "") for page in pages]
    batch = score_texts(
        expected, predicted, names=[p.name for p in pages], normalization=normalization
    )
    groups = _groups(pages)
    by_document = {
        name: TextBatchScore(tuple(batch.items[i] for i in indexes))
        for name, indexes in groups.items()
    }
    figures = document_figures(by_document)
    counts = [_token_counts(e, p, normalization) for e, p in zip(expected, predicted, strict=True)]
    missing = sum(page.predicted is None for page in pages)
    documents = [
        TextDocument(
            document=name,
            pages=len(score.items),
            missing_pages=sum(pages[i].predicted is None for i in groups[name]),
            cer=score.micro_cer,
            wer=score.micro_wer,
            ned=score.micro_edit_distance,
            token_f1=score.macro_token_f1,
        )
        for name, score in by_document.items()
    ]
    totals = TextFigures(
        documents=len(by_document),
        pages=len(pages),
        missing_predictions=missing,
        cer=figures["micro_cer"],
        wer=figures["micro_wer"],
        ned=figures["micro_edit_distance"],
        token_f1=_micro_f1(counts),
        macro_cer=figures["macro_cer"],
        macro_wer=figures["macro_wer"],
        macro_ned=figures["macro_edit_distance"],
        macro_token_f1=figures["macro_token_f1"],
    )
    return totals, documents, [_text_page(p, s) for p, s in zip(pages, batch.items, strict=True)]


def _table_page(page: Page, score: TableScore) -> TablePage:
    return TablePage(
        name=page.name,
        document=page.document,
        page=page.page,
        missing_prediction=page.predicted is None,
        teds=score.teds,
        teds_s=score.teds_structure,
        expected_nodes=score.expected_nodes,
        predicted_nodes=score.predicted_nodes,
    )


def _tables(
    pages: Sequence[Page],
) -> tuple[TableFigures | None, list[TableDocument], list[TablePage]]:
    if not pages:
        return None, [], []
    rows = [
        _table_page(
            page, score_table(page.expected, page.predicted, source=page.name, format=page.format)
        )
        for page in pages
    ]
    documents = []
    for name, indexes in _groups(pages).items():
        mine = [rows[i] for i in indexes]
        documents.append(
            TableDocument(
                document=name,
                pages=len(mine),
                missing_pages=sum(row.missing_prediction for row in mine),
                teds=_mean([row.teds for row in mine]),
                teds_s=_mean([row.teds_s for row in mine]),
            )
        )
    totals = TableFigures(
        documents=len(documents),
        tables=len(rows),
        missing_predictions=sum(row.missing_prediction for row in rows),
        teds=_mean([row.teds for row in rows]),
        teds_s=_mean([row.teds_s for row in rows]),
        macro_teds=_mean([d.teds for d in documents]),
        macro_teds_s=_mean([d.teds_s for d in documents]),
    )
    return totals, documents, rows


def evaluate_text_inputs(
    inputs: PairedInputs, *, normalization: TextNormalization = DEFAULT
) -> TextMetricsReport:
    """Score paired pages (see the module docstring for the figures).

    Raises:
        InputError: a text with undecodable characters, or a malformed table (naming
            the page and the position).
    """
    text_figures, text_documents, text_pages = _texts(
        [page for page in inputs.pages if page.kind == "text"], normalization
    )
    table_figures, table_documents, table_pages = _tables(
        [page for page in inputs.pages if page.kind == "table"]
    )
    return TextMetricsReport(
        input_form=inputs.form,
        normalization=Normalization(**dataclasses.asdict(normalization)),
        text=text_figures,
        table=table_figures,
        text_documents=text_documents,
        table_documents=table_documents,
        text_pages=text_pages,
        table_pages=table_pages,
        missing_predictions=list(inputs.missing),
        extra_predictions=list(inputs.extra),
    )


__all__ = [
    "Normalization",
    "TableDocument",
    "TableFigures",
    "TablePage",
    "TextDocument",
    "TextFigures",
    "TextMetricsReport",
    "TextPage",
    "evaluate_text_inputs",
]
