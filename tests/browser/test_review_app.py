"""``docevals review serve`` in headless chromium: keyboard only, then the layer files.

The app runs in this process (uvicorn on a free loopback port, in a thread), over a
folder of two generated reviews beside PDFs made with pymupdf. A reviewer answers
every field of a document with the keyboard alone; an adjudicator settles a field
two reviewers answered differently. Screenshots go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

if not os.environ.get("CI"):  # in CI the dev extra is installed: missing is a failure
    pytest.importorskip("playwright", reason="Playwright for Python (the dev extra)")
from playwright.sync_api import expect

from docevals_mlflow.groundtruth.review_layers import layer_path, load_layers, record_answer
from docevals_mlflow.reviewapp import create_app
from docevals_mlflow.reviewapp.server import free_port
from tests.browser.conftest import screenshot_path
from tests.reviewapp.documents import make_review

pytestmark = pytest.mark.browser


@contextmanager
def serving(folder: Path, person: str, role: str = "reviewer") -> Iterator[str]:
    """The app for ``person`` on a free loopback port until the block ends."""
    import uvicorn

    port = free_port()
    app = create_app(folder, person=person, role=role)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the review app did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "reviews"
    make_review(root, "doc-a")
    make_review(root, "doc-b", amounts=("7.00", "7.01"))
    return root


def entries(folder: Path, document: str, person: str) -> list[dict[str, Any]]:
    file = layer_path(folder / document, person)
    return json.loads(file.read_text(encoding="utf-8"))["entries"]


def wait_saved(page: Any, count: int) -> None:
    # Locator waits, not wait_for_function: the app's CSP forbids evaluating strings.
    expect(page.locator("tr.field.answered")).to_have_count(count)


def test_a_reviewer_answers_a_document_with_the_keyboard_only(page, folder):
    with serving(folder, "ann") as url:
        page.goto(f"{url}/doc/doc-a.review.json")
        page.wait_for_selector("img.page")
        image = page.locator("img.page")
        expect(image).to_have_attribute("src", re.compile(r"page=1&zoom=1.5$"))
        page.wait_for_load_state("networkidle")
        assert image.evaluate("element => element.naturalWidth") > 500
        # Worst first: the conflicting amount, selected; its value is highlighted.
        assert page.locator("tr.field.current").get_attribute("data-path") == "$.amount"
        page.wait_for_selector(".marks .mark")
        page.screenshot(path=str(screenshot_path("review-app-document")), full_page=True)
        page.keyboard.press("1")  # pick the first candidate, 12.50: one key
        wait_saved(page, 1)
        assert page.locator("tr.field.current").get_attribute("data-path") == "$.account_name"
        page.keyboard.press("e")  # edit: e, type, Enter
        page.keyboard.press("Control+a")
        page.keyboard.type("ACME Limited")
        page.keyboard.press("Enter")
        wait_saved(page, 2)
        page.keyboard.press("Enter")  # accept the agreed currency: one key
        wait_saved(page, 3)
        assert page.locator("#doc-progress").inner_text() == "3 / 3 answered"
        page.screenshot(path=str(screenshot_path("review-app-answered")), full_page=True)
        page.keyboard.press("n")
        page.wait_for_url(f"{url}/doc/doc-b.review.json")
        assert page.page_errors == []
    written = entries(folder, "doc-a.review.json", "ann")
    assert [(e["path"], e["action"], e.get("value")) for e in written] == [
        ("$.amount", "set", "12.50"),
        ("$.account_name", "set", "ACME Limited"),
        ("$.currency", "accept", None),
    ]
    assert written[1].get("previous") is None  # no proposal before: the panel was split
    assert all(e["at"].endswith("Z") for e in written)


def test_an_adjudicator_settles_a_field_reviewers_disagree_on(page, folder):
    review = folder / "doc-a.review.json"
    record_answer(review, "ann", "$.amount", "set", "12.50")
    record_answer(review, "bob", "$.amount", "set", "12.05")
    with serving(folder, "cy", role="adjudicator") as url:
        page.goto(f"{url}/doc/doc-a.review.json")
        current = page.locator("tr.field.current")
        assert current.get_attribute("data-path") == "$.amount"
        assert "reviewers differ" in current.inner_text()
        page.keyboard.press("1")  # ann's value
        page.wait_for_selector("#editor-reason:focus")
        page.keyboard.type("the page reads 12.50")
        page.keyboard.press("Enter")
        wait_saved(page, 1)
        page.screenshot(path=str(screenshot_path("review-app-adjudicated")), full_page=True)
        assert page.page_errors == []
    final = load_layers(review).final_values()["$.amount"]
    assert (final.status, final.value, final.reason) == (
        "adjudicated",
        "12.50",
        "the page reads 12.50",
    )
