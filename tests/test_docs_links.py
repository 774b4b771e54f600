"""The documentation holds together: every page is in the index, and every relative
link (file and ``#anchor``) in docs/ and the README points at something that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]
_FENCE = re.compile(r"```.*?```", flags=re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE):
        anchor = _anchor(heading)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def test_every_doc_is_listed_in_the_index():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    unlisted = sorted(
        page.name
        for page in DOCS.glob("*.md")
        if page.name != "README.md" and f"({page.name})" not in index
    )
    assert not unlisted, f"docs/README.md does not list {unlisted}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in _LINK.findall(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        linked = (page.parent / file) if file else page
        if not linked.exists():
            broken.append(target)
            continue
        if anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to missing targets: {broken}"
