"""A packet of pages split into sections: what the split metrics compare.

A *packet* is one file (a PDF, say) holding several documents. Each side, expected
and predicted, splits its pages into *sections*: a section has an id, a document
class and the 0-based indices of its pages in reading order (the order matters for
``split_accuracy_with_order``).

:func:`~docevals_mlflow.split.packet_forms.packet_from_data` accepts, on either side:

* ``{"sections": [...]}`` or a bare list of sections, each
  ``{"section_id"?, "document_class", "page_indices"}`` (the seed's format). The
  IDP accelerator's nested form, ``"document_class": {"type": "W2"}`` and
  ``"split_document": {"page_indices": [...]}``, is read too. A missing
  ``section_id`` becomes ``gt_<n>`` (expected) or ``pred_<n>`` (predicted), as in
  the seed; integer ids become strings.
* ``{"pages": [...]}`` or a bare list with one entry per page: either a class name
  per page (page ``i`` is entry ``i``), or ``{"page_index"?, "document_class",
  "section_id"?}`` objects. Pages with the same ``section_id`` form a section, in
  list order; without section ids, each run of consecutive pages with the same class
  is one section.

A ``document_class`` of ``null`` or ``""`` means *unclassified* and becomes
``"Unknown"``, as in the seed; the key itself is required, so that a misspelt key is
an error instead of a packet of "Unknown" pages. Other keys (an accelerator's
``attributes``, ``confidence``...) are ignored.

Invalid packets raise :class:`~docevals_mlflow.errors.InputError` naming the section
and the place (``sections[2].page_indices[1]``): a page index that is not an
integer or is negative, a page listed twice in a section, a page in two sections, a
section id used twice. A section without pages is accepted (the seed accepts it)
and reported in :meth:`SplitPacket.warnings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Literal, Self

from pydantic import StrictInt, StrictStr, model_validator

from docevals_mlflow.core.model import FrozenModel
from docevals_mlflow.errors import InputError

UNKNOWN_CLASS = "Unknown"
"""The class of a section whose ``document_class`` is ``null`` or empty (as the seed)."""

Side = Literal["expected", "predicted"]
DEFAULT_ID_PREFIX: dict[str, str] = {"expected": "gt_", "predicted": "pred_"}
"""Prefix of generated section ids, ``gt_0``, ``pred_3`` (the seed's defaults)."""

MAX_PAGE_INDEX = 2**31 - 1
"""The largest page index accepted (keeps (packet, page) keys inside int64)."""
PAGE_EXPECTED = f"0-based page indices (integers from 0 to {MAX_PAGE_INDEX})"
"""What a page index must be (for error messages)."""


class SplitSection(FrozenModel):
    """One document of a packet: its id, class and pages in reading order."""

    section_id: StrictStr
    document_class: StrictStr
    page_indices: tuple[StrictInt, ...]

    @model_validator(mode="after")
    def _pages_are_valid(self) -> Self:
        check_section_pages(self.page_indices, self.section_id, "page_indices")
        return self


class SplitPacket(FrozenModel):
    """One side (expected or predicted) of a packet: its id and sections.

    Sections have unique ids and no page is in two sections.
    """

    id: StrictStr = "packet"
    sections: tuple[SplitSection, ...] = ()

    @model_validator(mode="after")
    def _sections_are_disjoint(self) -> Self:
        check_disjoint(self.sections)
        return self

    @property
    def page_count(self) -> int:
        """How many pages the sections hold."""
        return sum(len(section.page_indices) for section in self.sections)

    def warnings(self) -> list[str]:
        """Things that are legal but probably wrong (sections without pages)."""
        return [
            f"section {section.section_id!r} has no pages"
            for section in self.sections
            if not section.page_indices
        ]


# --------------------------------------------------------------------------- checks


def check_section_pages(pages: Sequence[int], section_id: str, path: str) -> None:
    """Reject negative and repeated page indices; ``path`` names the list."""
    if not pages or (
        min(pages) >= 0 and max(pages) <= MAX_PAGE_INDEX and len(set(pages)) == len(pages)
    ):
        return
    seen: dict[int, int] = {}
    for position, page in enumerate(pages):
        if page < 0:
            raise InputError(
                f"negative page index {page} in section {section_id!r}",
                path=f"{path}[{position}]",
                expected=PAGE_EXPECTED,
            )
        if page > MAX_PAGE_INDEX:
            raise InputError(
                f"page index {page} in section {section_id!r} is too large",
                path=f"{path}[{position}]",
                expected=PAGE_EXPECTED,
            )
        if page in seen:
            raise InputError(
                f"page {page} appears twice in section {section_id!r} "
                f"(positions {seen[page]} and {position})",
                path=f"{path}[{position}]",
                expected="each page once per section",
            )
        seen[page] = position


def check_disjoint(sections: Sequence[SplitSection], base: str = "sections") -> None:
    """Reject repeated section ids and pages that belong to two sections."""
    ids: dict[str, int] = {}
    for index, section in enumerate(sections):
        first = ids.setdefault(section.section_id, index)
        if first != index:
            raise InputError(
                f"section id {section.section_id!r} is used twice "
                f"({base}[{first}] and {base}[{index}])",
                path=f"{base}[{index}].section_id",
                expected="a unique section_id per section",
            )
    total = sum(len(section.page_indices) for section in sections)
    if len(set(chain.from_iterable(section.page_indices for section in sections))) == total:
        return
    owner: dict[int, str] = {}
    for index, section in enumerate(sections):
        for position, page in enumerate(section.page_indices):
            other = owner.setdefault(page, section.section_id)
            if other != section.section_id:
                raise InputError(
                    f"page {page} is in sections {other!r} and {section.section_id!r}",
                    path=f"{base}[{index}].page_indices[{position}]",
                    expected="each page in one section only",
                )


__all__ = [
    "DEFAULT_ID_PREFIX",
    "MAX_PAGE_INDEX",
    "UNKNOWN_CLASS",
    "Side",
    "SplitPacket",
    "SplitSection",
    "check_disjoint",
    "check_section_pages",
]
