"""The whole review in headless chromium: two reviewers at once, adjudication, signing,
approval in the page, then ``verify --policy`` and ``register-dataset``.

Three documents are generated through the package's own path (``GroundTruthPanel``
with scripted readers, ``write_ground_truth_review``) beside PDFs made with pymupdf.
Two reviewers, each in their own browser context and against their own server, answer
the same three documents with the keyboard only, interleaved; they disagree on one
field. The adjudicator settles it with a reason, everyone signs their layer with the
key the policy names, and the approver approves each document in the page. The
approved files must then verify against the policy offline, register into a temporary
SQLite store, and load back with the adjudicated and agreed values.

Keystrokes are counted per field decision (typed characters of an edited value
excluded); the issue's target is at most two on average.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf
import pytest

if not os.environ.get("CI"):  # in CI the dev extra is installed: missing is a failure
    pytest.importorskip("playwright", reason="Playwright for Python (the dev extra)")
from playwright.sync_api import expect

from docevals_mlflow import GroundTruthPanel, write_ground_truth_review
from docevals_mlflow.cli import main
from docevals_mlflow.core.artifacts import artifact_from_path
from docevals_mlflow.groundtruth.chain_policy import load_policy
from docevals_mlflow.groundtruth.key_files import generate_keypair
from docevals_mlflow.groundtruth.review_layers import layer_path, read_layer
from docevals_mlflow.groundtruth.signing import load_signing_key
from docevals_mlflow.reviewapp import create_app
from docevals_mlflow.reviewapp.server import free_port
from tests.browser.conftest import TIMEOUT_MS, screenshot_path
from tests.groundtruth.generation_fakes import reader

pytestmark = pytest.mark.browser

FIELDS = ["$.invoice_number", "$.currency", "$.total"]
PRINTED = {
    "inv-1": {"$.invoice_number": "INV-1", "$.currency": "EUR", "$.total": "12.50"},
    "inv-2": {"$.invoice_number": "INV-2", "$.currency": "EUR", "$.total": "7.00"},
    "inv-3": {"$.invoice_number": "INV-3", "$.currency": "USD", "$.total": "30.00"},
}
"""What each PDF says: the truth the reviewers (mostly) see."""
READ = {
    "openai": {"inv-2": {"$.total": "7.00"}, "inv-3": {"$.currency": "EUR"}},
    "claude": {"inv-2": {"$.total": "7.01"}, "inv-3": {"$.currency": "EUR"}},
}
"""Where the models misread: a tie on inv-2's total, both wrong on inv-3's currency."""
BELIEFS = {"ann": {("inv-3", "$.currency"): "EUR"}, "ben": {}}
"""ann misses the wrong currency on inv-3 (accepts EUR); ben corrects it: the one
field the reviewers disagree on."""
ADJUDICATION_REASON = "the page prints Currency: USD"
PEOPLE = {
    "pat": "preparer",
    "ann": "reviewer",
    "ben": "reviewer",
    "judy": "adjudicator",
    "carol": "approver",
}


@dataclass
class Flow:
    """The served documents, the people's keys and servers, and what was counted."""

    folder: Path
    policy: Path
    keys: dict[str, Path]
    urls: dict[str, str] = field(default_factory=dict)
    keystrokes: dict[str, list[int]] = field(default_factory=dict)
    """Keys pressed per field decision, per reviewer."""
    navigation: dict[str, int] = field(default_factory=dict)
    page_times: list[float] = field(default_factory=list)


def _pdf(path: Path, values: dict[str, str]) -> Path:
    document = pymupdf.open()
    page = document.new_page()
    lines = [
        f"Invoice {values['$.invoice_number']}",
        f"Currency: {values['$.currency']}",
        f"Total: {values['$.total']}",
    ]
    for row, text in enumerate(lines):
        page.insert_text((72, 90 + 24 * row), text, fontsize=12)
    document.save(path)
    document.close()
    return path


def _generate(folder: Path) -> None:
    for case, printed in PRINTED.items():
        pdf = _pdf(folder / f"{case}.pdf", printed)
        readers = {
            name: reader({**printed, **misread.get(case, {})}, model=name)
            for name, misread in READ.items()
        }
        panel = GroundTruthPanel(
            readers, extraction_instruction="Extract the invoice.", expected_fields=FIELDS
        )
        report = panel.generate(case, [artifact_from_path(pdf, authority="evidence")])
        write_ground_truth_review(report, folder / f"{case}.review.json")


def _policy(root: Path) -> tuple[Path, dict[str, Path]]:
    keys = {person: generate_keypair(root / "keys" / person)[0] for person in PEOPLE}
    people = {
        person: {"roles": [role], "public_key": f"keys/{person}.pub"}
        for person, role in PEOPLE.items()
    }
    policy = root / "policy.json"
    policy.write_text(
        json.dumps({"reviewers": 2, "adjudication": "on_disagreement", "people": people}),
        encoding="utf-8",
    )
    return policy, keys


@pytest.fixture(scope="module")
def flow(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flow]:
    """Generated reviews signed by the preparer, and one server per person."""
    import uvicorn

    root = tmp_path_factory.mktemp("review-flow")
    folder = root / "reviews"
    folder.mkdir()
    _generate(folder)
    policy_path, keys = _policy(root)
    for case in PRINTED:
        argv = ["review", "sign", str(folder / f"{case}.review.json"), "--person", "pat"]
        assert main([*argv, "--role", "preparer", "--signing-key", str(keys["pat"])]) == 0
    policy = load_policy(policy_path)
    state = Flow(folder, policy_path, keys)
    servers = []
    for person in ("ann", "ben", "judy", "carol"):
        app = create_app(
            folder,
            person=person,
            role=PEOPLE[person],
            policy=policy,
            signing_key=load_signing_key(keys[person]),
            approved_dir=root / "approved",
        )
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        servers.append((server, thread))
        state.urls[person] = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while not all(server.started for server, _ in servers):
        assert time.monotonic() < deadline, "the review apps did not start"
        time.sleep(0.05)
    try:
        yield state
    finally:
        for server, _ in servers:
            server.should_exit = True
        for _, thread in servers:
            thread.join(timeout=20)


@pytest.fixture(scope="module")
def people_pages(browser: Any, flow: Flow) -> Iterator[dict[str, Any]]:
    """One browser context per person, all open at once (separate cookies, storage)."""
    contexts, pages = [], {}
    for person in ("ann", "ben", "judy", "carol"):
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        page.page_errors = []
        page.on("pageerror", lambda error, page=page: page.page_errors.append(str(error)))
        contexts.append(context)
        pages[person] = page
    try:
        yield pages
    finally:
        for context in contexts:
            context.close()


def _shot(page: Any, name: str) -> Path:
    path = screenshot_path(name)
    page.screenshot(path=str(path), full_page=True)
    return path


def _keys_for(row: Any, case: str, person: str) -> tuple[list[str], str | None]:
    """The keys a reviewer presses on the current row, and the text typed (if any)."""
    path = row.get_attribute("data-path")
    wanted = BELIEFS[person].get((case, path), PRINTED[case][path])
    if row.get_attribute("data-has-proposal") == "yes" and row.get_attribute("data-edit") == wanted:
        return ["Enter"], None
    choices = json.loads(row.get_attribute("data-choices"))
    for number, choice in enumerate(choices, start=1):
        if choice["action"] == "set" and choice["value"] == wanted:
            return [str(number)], None
    return ["e", "Enter"], wanted


def _press(page: Any, keys: list[str], typed: str | None) -> None:
    page.keyboard.press(keys[0])
    if typed is not None:
        page.wait_for_selector("#editor-value:focus")
        page.keyboard.type(typed)  # the editor opens with the value selected: typing replaces it
    for key in keys[1:]:
        page.keyboard.press(key)


def _case(page: Any) -> str:
    return page.url.rsplit("/", 1)[1].removesuffix(".review.json")


def _open(page: Any, url: str, flow: Flow) -> None:
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("tr.field.current")
    expect(page.locator("img.page")).to_have_js_property("complete", True)
    flow.page_times.append(time.perf_counter() - started)


def test_two_reviewers_review_the_same_documents_at_once_with_the_keyboard(flow, people_pages):
    _an_early_approval_is_refused_with_the_reasons_shown(flow, people_pages["carol"])
    reviewers = {person: people_pages[person] for person in ("ann", "ben")}
    for person, page in reviewers.items():
        flow.keystrokes[person] = []
        flow.navigation[person] = 0
        _open(page, f"{flow.urls[person]}/doc/inv-1.review.json", flow)
    seen: dict[str, list[str]] = {person: [] for person in reviewers}
    for number in range(1, len(PRINTED) + 1):
        # Each follows their own queue ("n": the next unfinished document, worst first).
        cases = {person: _case(page) for person, page in reviewers.items()}
        for answered in range(1, len(FIELDS) + 1):
            pressed = {}
            for person, page in reviewers.items():  # both press before either is awaited
                keys, typed = _keys_for(page.locator("tr.field.current"), cases[person], person)
                _press(page, keys, typed)
                pressed[person] = len(keys)
            for person, page in reviewers.items():
                expect(page.locator("tr.field.answered")).to_have_count(answered)
                flow.keystrokes[person].append(pressed[person])
        for person, page in reviewers.items():
            seen[person].append(cases[person])
            if cases[person] == "inv-1":
                expect(page.locator(".marks .mark").first).to_be_visible()
                _shot(page, f"review-flow-{person}-document")
            page.keyboard.press("S")  # sign the layer: a chain act, not a field decision
            expect(page.locator("#status")).to_contain_text(f"signed {person}'s reviewer layer")
            if number < len(PRINTED):
                before = page.url
                page.keyboard.press("n")
                flow.navigation[person] += 1
                page.wait_for_url(lambda url, before=before: url != before)
                page.wait_for_selector("tr.field.current")
    assert all(sorted(cases) == sorted(PRINTED) for cases in seen.values())
    decisions = [count for counts in flow.keystrokes.values() for count in counts]
    average = sum(decisions) / len(decisions)
    print(f"keystrokes per field decision: {average:.2f} over {len(decisions)} decisions")
    assert len(decisions) == 18
    assert average <= 2.0
    moves = sum(flow.navigation.values())
    assert (sum(decisions) + moves) / len(decisions) <= 2.0  # also with moving on counted
    for page in reviewers.values():
        assert page.page_errors == []
    for person in reviewers:  # one entry per field: no key was taken twice
        for case in PRINTED:
            written = read_layer(layer_path(flow.folder / f"{case}.review.json", person))
            assert sorted(entry.path for entry in written.entries) == sorted(FIELDS)
            assert written.signature is not None


def _an_early_approval_is_refused_with_the_reasons_shown(flow: Flow, page: Any) -> None:
    page.goto(flow.urls["carol"] + "/")
    row = page.locator('tr.chain-row[data-document="inv-1.review.json"]')
    shown = row.locator("td.problems li").all_inner_texts()
    assert any("fewer" in text or "reviewer" in text for text in shown), shown
    page.keyboard.press("A")  # the first document is selected
    expect(row.locator(".outcome")).to_contain_text("cannot approve under the policy: ")
    refusal = row.locator(".outcome").inner_text()
    assert all(text in refusal for text in shown)
    assert not (flow.folder.parent / "approved").exists()


def test_the_adjudicator_settles_the_disagreement_with_a_reason(flow, people_pages):
    page = people_pages["judy"]
    _open(page, f"{flow.urls['judy']}/doc/inv-3.review.json", flow)
    current = page.locator("tr.field.current")
    assert current.get_attribute("data-path") == "$.currency"
    assert "reviewers differ" in current.inner_text()
    choices = json.loads(current.get_attribute("data-choices"))
    pick = next(n for n, c in enumerate(choices, 1) if c["value"] == "USD" and "ben" in c["label"])
    page.keyboard.press(str(pick))
    page.wait_for_selector("#editor-reason:focus")
    page.keyboard.type(ADJUDICATION_REASON)
    page.keyboard.press("Enter")
    expect(page.locator("tr.field.answered")).to_have_count(1)
    expect(page.locator('tr.field[data-path="$.currency"] td.final')).to_contain_text(
        "adjudicated: USD"
    )
    page.keyboard.press("S")
    expect(page.locator("#status")).to_contain_text("signed judy's adjudicator layer")
    assert _shot(page, "review-flow-adjudication").stat().st_size > 10_000
    assert page.page_errors == []


def test_the_approver_sees_the_chain_and_approves_in_the_page(flow, people_pages):
    page = people_pages["carol"]
    page.goto(flow.urls["carol"] + "/")
    rows = page.locator("tr.chain-row")
    expect(rows).to_have_count(3)
    for case in PRINTED:
        row = page.locator(f'tr.chain-row[data-document="{case}.review.json"]')
        expect(row.locator("td.problems")).to_have_text("nothing")
        assert "preparer pat" in row.inner_text()
    _shot(page, "review-flow-approval")
    for case in PRINTED:
        row = page.locator(f'tr.chain-row[data-document="{case}.review.json"]')
        row.locator("button.approve").click()
        expect(row.locator(".outcome")).to_contain_text(f"approved case {case}")
        page.wait_for_load_state("load")
    page.reload()
    expect(page.locator("code.approved-file")).to_have_count(3)
    _shot(page, "review-flow-approved")
    assert page.page_errors == []


def test_the_approved_files_verify_register_and_load_the_decided_values(flow, mlflow_store, capsys):
    from docevals_mlflow import load_ground_truth

    approved = flow.folder.parent / "approved"
    files = sorted(str(path) for path in approved.glob("*.json"))
    assert len(files) == 3
    assert main(["verify", *files, "--policy", str(flow.policy)]) == 0
    verified = capsys.readouterr().out
    assert verified.count("adjudicator judy") == 1  # only inv-3 needed adjudication
    assert main(["register-dataset", "invoices", "--from", str(approved)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "invoices@1"
    dataset = load_ground_truth("invoices", tracking_uri=mlflow_store)
    for case, printed in PRINTED.items():
        expected = {path.removeprefix("$."): value for path, value in printed.items()}
        assert dataset.document(case) == expected
    print(
        "page open (document, rendered page shown): "
        + ", ".join(f"{seconds * 1000:.0f} ms" for seconds in flow.page_times)
    )
