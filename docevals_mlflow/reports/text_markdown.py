"""The Markdown report of ``docevals text``: batch figures, the worst pages, and every
document's figures."""

from __future__ import annotations

from docevals_mlflow.core.formatting import count_text, metric_text
from docevals_mlflow.docmetrics.report import TablePage, TextMetricsReport, TextPage
from docevals_mlflow.reports.markdown import inline_code, table

DOCUMENT_ROWS = 500
"""Documents listed per kind; a larger batch's full list is in the JSON report."""


def worst_text_rows(pages: list[TextPage]) -> list[list[str]]:
    """Rows of the worst text pages: name, CER, WER, NED, token F1, characters."""
    return [
        [
            page.name + (" (no prediction)" if page.missing_prediction else ""),
            metric_text(page.cer),
            metric_text(page.wer),
            metric_text(page.ned),
            metric_text(page.token_f1),
            count_text(page.expected_chars),
        ]
        for page in pages
    ]


WORST_TEXT_HEADERS = ["page", "CER", "WER", "NED", "token F1", "characters"]
WORST_TABLE_HEADERS = ["table", "TEDS", "TEDS-S", "nodes (expected)", "nodes (predicted)"]


def worst_table_rows(pages: list[TablePage]) -> list[list[str]]:
    """Rows of the worst tables: name, TEDS, TEDS-S and the tree sizes."""
    return [
        [
            page.name + (" (no prediction)" if page.missing_prediction else ""),
            metric_text(page.teds),
            metric_text(page.teds_s),
            count_text(page.expected_nodes),
            count_text(page.predicted_nodes),
        ]
        for page in pages
    ]


def counted(count: int, word: str) -> str:
    """``1 page``, ``2 pages``: a count and its noun."""
    return f"{count_text(count)} {word}{'' if count == 1 else 's'}"


def _text_section(report: TextMetricsReport, worst: int) -> list[str]:
    figures = report.text
    if figures is None:
        return []
    lines = [
        "## Text",
        "",
        f"{counted(figures.documents, 'document')}, {counted(figures.pages, 'page')} "
        f"({count_text(figures.missing_predictions)} without a prediction, scored as empty).",
        "",
        *table(
            ["metric", "micro (over pages)", "macro (over documents)"],
            [
                ["CER", metric_text(figures.cer), metric_text(figures.macro_cer)],
                ["WER", metric_text(figures.wer), metric_text(figures.macro_wer)],
                ["NED", metric_text(figures.ned), metric_text(figures.macro_ned)],
                ["token F1", metric_text(figures.token_f1), metric_text(figures.macro_token_f1)],
            ],
        ),
        "",
    ]
    if worst:
        lines += [
            f"### Worst pages by CER (up to {count_text(worst)})",
            "",
            *table(WORST_TEXT_HEADERS, worst_text_rows(report.worst_text(worst))),
            "",
        ]
    lines += ["### Documents", ""]
    lines += table(
        ["document", "pages", "CER", "WER", "NED", "token F1"],
        [
            [
                inline_code(doc.document),
                count_text(doc.pages),
                metric_text(doc.cer),
                metric_text(doc.wer),
                metric_text(doc.ned),
                metric_text(doc.token_f1),
            ]
            for doc in report.text_documents[:DOCUMENT_ROWS]
        ],
    )
    return [*lines, *_more(len(report.text_documents))]


def _table_section(report: TextMetricsReport, worst: int) -> list[str]:
    figures = report.table
    if figures is None:
        return []
    lines = [
        "## Tables",
        "",
        f"{counted(figures.documents, 'document')}, {counted(figures.tables, 'table')} "
        f"({count_text(figures.missing_predictions)} without a prediction, scored 0).",
        "",
        *table(
            ["metric", "mean over tables", "mean over documents"],
            [
                ["TEDS", metric_text(figures.teds), metric_text(figures.macro_teds)],
                ["TEDS-S", metric_text(figures.teds_s), metric_text(figures.macro_teds_s)],
            ],
        ),
        "",
    ]
    if worst:
        lines += [
            f"### Worst tables by TEDS (up to {count_text(worst)})",
            "",
            *table(WORST_TABLE_HEADERS, worst_table_rows(report.worst_tables(worst))),
            "",
        ]
    lines += ["### Documents", ""]
    lines += table(
        ["document", "tables", "TEDS", "TEDS-S"],
        [
            [
                inline_code(doc.document),
                count_text(doc.pages),
                metric_text(doc.teds),
                metric_text(doc.teds_s),
            ]
            for doc in report.table_documents[:DOCUMENT_ROWS]
        ],
    )
    return [*lines, *_more(len(report.table_documents))]


def _more(count: int) -> list[str]:
    if count <= DOCUMENT_ROWS:
        return [""]
    return ["", f"… and {count_text(count - DOCUMENT_ROWS)} more in the JSON report.", ""]


def render_text_markdown(report: TextMetricsReport, *, worst: int = 10) -> str:
    """The Markdown report; ``worst`` pages (and tables) are listed worst first."""
    settings = report.normalization
    lines = [
        "# Text and table metrics",
        "",
        f"Normalization: Unicode {settings.unicode_form}, white space "
        f"{'collapsed' if settings.collapse_whitespace else 'kept'}, case "
        f"{'folded' if settings.casefold else 'kept'}, punctuation "
        f"{'removed' if settings.remove_punctuation else 'kept'}.",
        "",
    ]
    if report.missing_predictions:
        lines += [
            f"**Expected pages without a prediction: "
            f"{count_text(len(report.missing_predictions))}**; they are scored as empty "
            "predictions.",
            "",
        ]
    if report.extra_predictions:
        lines += [
            f"**Predictions without an expected page: "
            f"{count_text(len(report.extra_predictions))}**; they are not scored.",
            "",
        ]
    lines += _text_section(report, worst) + _table_section(report, worst)
    return "\n".join(lines).rstrip("\n") + "\n"


__all__ = [
    "WORST_TABLE_HEADERS",
    "WORST_TEXT_HEADERS",
    "counted",
    "render_text_markdown",
    "worst_table_rows",
    "worst_text_rows",
]
