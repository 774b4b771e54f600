"""Hypothesis strategies for packets: random splits, and predictions derived from the
ground truth by the mistakes splitters make (so that exact matches are common)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

CLASSES = ("Invoice", "W2", "Receipt")


def sections(
    groups: dict[int, list[int]], classes: dict[int, str], prefix: str
) -> list[dict[str, Any]]:
    return [
        {"section_id": f"{prefix}{key}", "document_class": classes[key], "page_indices": pages}
        for key, pages in groups.items()
    ]


@st.composite
def random_sections(
    draw: st.DrawFn, pages: list[int], prefix: str, allow_empty: bool = False
) -> list[dict[str, Any]]:
    """A random split of ``pages`` (in a random order) into sections."""
    order = draw(st.permutations(pages))
    count = draw(st.integers(1, max(1, len(order))))
    owners = draw(st.lists(st.integers(0, count - 1), min_size=len(order), max_size=len(order)))
    groups: dict[int, list[int]] = {}
    for page, owner in zip(order, owners, strict=True):
        groups.setdefault(owner, []).append(page)
    if allow_empty and draw(st.booleans()):
        groups[count] = []
    classes = {key: draw(st.sampled_from(CLASSES)) for key in groups}
    return sections(groups, classes, prefix)


@st.composite
def derived_sections(
    draw: st.DrawFn, truth: list[dict[str, Any]], extra: list[int]
) -> list[dict[str, Any]]:
    """The ground truth with a few splitter mistakes applied."""
    out = [dict(section, page_indices=list(section["page_indices"])) for section in truth]
    for _ in range(draw(st.integers(0, 3))):
        if not out:
            break
        index = draw(st.integers(0, len(out) - 1))
        section = out[index]
        action = draw(st.sampled_from(["class", "reverse", "split", "merge", "drop", "swap"]))
        pages = section["page_indices"]
        if action == "class":
            section["document_class"] = draw(st.sampled_from(CLASSES))
        elif action == "reverse":
            pages.reverse()
        elif action == "split" and len(pages) > 1:
            cut = draw(st.integers(1, len(pages) - 1))
            section["page_indices"] = pages[:cut]
            out.append(
                {
                    "section_id": f"{section['section_id']}x{len(out)}",
                    "document_class": section["document_class"],
                    "page_indices": pages[cut:],
                }
            )
        elif action == "merge" and len(out) > 1:
            other = out.pop((index + 1) % len(out))
            section = out[index if index < len(out) else index - 1]
            section["page_indices"] = section["page_indices"] + other["page_indices"]
        elif action == "drop" and pages:
            pages.pop(draw(st.integers(0, len(pages) - 1)))
        elif action == "swap" and len(pages) > 1:
            pages[0], pages[-1] = pages[-1], pages[0]
    if extra:
        out.append({"section_id": "extra", "document_class": "Receipt", "page_indices": extra})
    # Ids are renamed so that nothing depends on the two sides sharing ids.
    for number, section in enumerate(out):
        section["section_id"] = f"p{number}"
    order = draw(st.permutations(list(range(len(out)))))
    return [out[i] for i in order]


@st.composite
def packet_pairs(
    draw: st.DrawFn, max_pages: int = 24, allow_empty: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(expected sections, predicted sections)`` of one packet."""
    size = draw(st.integers(0, max_pages))
    pages = list(range(size))
    truth = draw(random_sections(pages, "g", allow_empty))
    if draw(st.booleans()):
        extra = list(range(size, size + draw(st.integers(0, 2))))
        return truth, draw(derived_sections(truth, extra))
    subset = draw(st.lists(st.sampled_from(pages), unique=True)) if pages else []
    return truth, draw(random_sections(sorted(subset), "p", allow_empty))
