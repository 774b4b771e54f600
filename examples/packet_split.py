"""How well were document packets split into documents and classified?

Loan applications arrive as one PDF: a cover letter, then invoices and bank
statements in any order. The example binds such packets (rendered with pymupdf),
writes their true page ranges (``expected/<packet>.json``, sections) and what a
simulated splitter-classifier returned (``predicted/<packet>.json``, one class and
section per page, as a page classifier reports them). Its mistakes cycle through
the packets:

* none;
* the cover letter taken for the first page of the next document (a missed boundary);
* the second page of a bank statement cut off and called an invoice (a spurious
  boundary and a wrong class);
* the pages of a bank statement in the wrong order.

``docevals split`` scores them: the page-level accuracy and the split accuracies
with and without page order (the IDP accelerator's and Stickler's metrics), the
per-class precision and recall with a confusion matrix, boundary F1, a strict
one-to-one section score and graded scores; it writes JSON, Markdown and an offline
heatmap, and logs one MLflow run.

Run: ``python examples/packet_split.py [--documents 8] [--output-dir DIR]
[--tracking-uri URI]``. Offline; a few seconds.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from example_documents import Packet, generate_packets, render_png
from example_support import Workspace, heading, parse_arguments, read_json, write_json

from docevals_mlflow import SplitReport

SEED = 7
EXPERIMENT = "packet-split"
MISTAKES = (
    "none",
    "cover letter merged into the next document",
    "statement page 2 cut off as an invoice",
    "statement pages out of order",
)


@dataclass
class Section:
    """A section as the splitter reports it."""

    document_class: str
    section_id: str
    pages: list[int]


def predicted_pages(packet: Packet, position: int) -> dict[str, Any]:
    """The splitter-classifier's answer: a class and a section per page, listed in
    the order the section's pages were put together."""
    sections = [
        Section(document.document_class, document.document_id, list(document.page_indices))
        for document in packet.documents
    ]
    mistake = MISTAKES[position % len(MISTAKES)]
    statement = next(
        s for s in sections if s.document_class == "Bank Statement" and len(s.pages) > 1
    )
    if mistake == MISTAKES[1]:
        cover = sections.pop(0)
        sections[0].pages[:0] = cover.pages
    elif mistake == MISTAKES[2]:
        cut = statement.pages.pop()
        sections.insert(sections.index(statement) + 1, Section("Invoice", "cut-off", [cut]))
    elif mistake == MISTAKES[3]:
        statement.pages.reverse()
    pages = [
        {
            "page_index": page,
            "document_class": section.document_class,
            "section_id": section.section_id,
        }
        for section in sections
        for page in section.pages
    ]
    return {"pages": pages}


def main(argv: Sequence[str] | None = None) -> int:
    """Bind the packets, write truth and predictions, score the split."""
    args = parse_arguments(__doc__, documents=8, documents_help="packets", argv=argv)
    workspace = Workspace("packet-split", args)

    heading("1. Packets: cover letter, invoices and bank statements bound into one PDF")
    packets = generate_packets(args.documents, SEED)
    Path("packets").mkdir(exist_ok=True)
    for position, packet in enumerate(packets):
        Path(f"packets/{packet.id}.pdf").write_bytes(packet.pdf)
        write_json(f"expected/{packet.id}.json", packet.expected_sections())
        write_json(f"predicted/{packet.id}.json", predicted_pages(packet, position))
        layout = " | ".join(
            f"{document.document_class} p{document.page_indices[0]}"
            + (f"-{document.page_indices[-1]}" if len(document.page_indices) > 1 else "")
            for document in packet.documents
        )
        print(f"{packet.id}: {packet.page_count} pages [{layout}]")
        print(f"  splitter's mistake: {MISTAKES[position % len(MISTAKES)]}")
    Path(f"packets/{packets[0].id}-page-1.png").write_bytes(render_png(packets[0].pdf, 0, dpi=60))
    print(f"\nfirst page as an image: packets/{packets[0].id}-page-1.png")
    print(f"expected/{packets[0].id}.json: {read_json(f'expected/{packets[0].id}.json')}")

    heading("2. Score the split")
    workspace.docevals(
        "split",
        "--expected",
        "expected",
        "--predicted",
        "predicted",
        "--output",
        "reports/split.json",
        "--markdown",
        "reports/split.md",
        "--heatmap",
        "reports/split.html",
        "--experiment",
        EXPERIMENT,
        "--run-name",
        "splitter-v1",
        "--fail-under",
        "page_accuracy=0.8",
    )

    heading("3. What went wrong, packet by packet")
    report = SplitReport.load("reports/split.json")
    for packet_report in report.packets:
        boundaries = packet_report.boundaries
        print(
            f"{packet_report.id}: pages {_shown(packet_report.page_level_accuracy.accuracy)}, "
            f"sections in order {_shown(packet_report.split_accuracy_with_order.accuracy)}; "
            f"boundaries missed {boundaries.missed}, spurious {boundaries.spurious}"
        )
    print("\nper class (pages):")
    for name, figures in sorted(report.classes.classes.items()):
        print(
            f"  {name:<15} precision {_shown(figures.precision)}  "
            f"recall {_shown(figures.recall)}  support {figures.support}"
        )

    heading("What this shows")
    print(
        "Page accuracy alone hides most of these mistakes: a merged cover letter costs one "
        "page, a\nreordered statement none. Split accuracy with page order, boundary F1 and "
        "the per-class\nfigures say which kind of mistake the splitter makes, and the "
        "--fail-under gate turns\nany of them into a CI check."
    )
    workspace.finish()
    return 0


def _shown(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    sys.exit(main())
