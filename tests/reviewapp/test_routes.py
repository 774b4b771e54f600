"""The app's pages and answers, over a generated review folder (Starlette's TestClient)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from docevals_mlflow.groundtruth.review_layers import layer_path, load_layers
from tests.reviewapp.conftest import answer


def entries(folder: Path, document: str, person: str) -> list[dict]:
    file = layer_path(folder / document, person)
    return json.loads(file.read_text(encoding="utf-8"))["entries"] if file.exists() else []


def test_the_queue_lists_every_document_worst_first_with_progress(client_for):
    client = client_for()
    page = client.get("/")
    assert page.status_code == 200
    text = page.text
    assert "0 of 3 documents finished" in text
    assert "0 of 9 fields answered by you" in text
    assert "after 5 finished documents" in text
    positions = [
        text.index(f'href="/doc/{name}"')
        for name in ("batch/doc-c.review.json", "doc-a.review.json", "doc-b.review.json")
    ]
    assert positions == sorted(positions)  # equal risk: by id


def test_the_document_page_shows_fields_votes_evidence_and_pages(client_for):
    page = client_for().get("/doc/doc-a.review.json")
    assert page.status_code == 200
    text = page.text
    for expected in (
        "$.currency",
        "$.amount",
        "$.account_name",
        "conflict",
        "omitted by claude",
        "12.50  (openai, 1)",
        "12.05  (claude, 1)",
        "“Currency: EUR”",
        'data-source="doc-a.pdf" data-pages="1"',
    ):
        assert expected in text, expected
    # A model's own evidence is quoted once, beside its reading, not again below it.
    assert text.count("“Currency: EUR”") == 1
    # Worst first: the conflict (lowest confidence) before the agreed claim.
    assert text.index('data-path="$.amount"') < text.index('data-path="$.currency"')
    assert 'data-path="$.amount" data-has-proposal="no"' in text


def test_accepting_and_editing_write_the_persons_layer(client_for, folder):
    client = client_for("ann")
    reply = answer(client, "doc-a.review.json", "$.currency", "accept")
    assert reply.status_code == 200, reply.text
    assert reply.json()["answered"] == 1
    assert "answered" in reply.json()["row_html"]
    # Typed text keeps the field's kind: "12.50" stays text, not the number 12.5.
    reply = answer(client, "doc-a.review.json", "$.amount", "set", text="12.50")
    assert reply.status_code == 200, reply.text
    answer(client, "doc-a.review.json", "$.amount", "set", text="12.55")
    written = entries(folder, "doc-a.review.json", "ann")
    assert [(e["path"], e["action"], e.get("value")) for e in written] == [
        ("$.currency", "accept", None),
        ("$.amount", "set", "12.50"),
        ("$.amount", "set", "12.55"),
    ]
    assert written[2]["previous"] == "12.50"  # the edit keeps what it replaced
    layers = load_layers(folder / "doc-a.review.json")
    assert layers.answers("$.amount")["ann"].value == "12.55"


def test_a_refused_answer_is_a_clear_message_and_writes_nothing(client_for, folder):
    client = client_for()
    reply = answer(client, "doc-a.review.json", "$.amount", "accept")
    assert reply.status_code == 422
    assert "majority" in reply.json()["error"]
    reply = answer(client, "doc-a.review.json", "$.nope", "absent")
    assert reply.status_code == 422
    assert "no field '$.nope'" in reply.json()["error"]
    reply = answer(client, "doc-a.review.json", "$.amount", "set", text="  ")
    assert reply.json()["error"].startswith("the typed value is blank")
    assert entries(folder, "doc-a.review.json", "ann") == []


def test_absent_and_unreadable_answers(client_for, folder):
    client = client_for()
    assert answer(client, "doc-b.review.json", "$.account_name", "absent").status_code == 200
    assert answer(client, "doc-b.review.json", "$.amount", "unreadable").status_code == 200
    actions = [e["action"] for e in entries(folder, "doc-b.review.json", "ann")]
    assert actions == ["absent", "unreadable"]


def test_the_adjudicator_sees_reviewers_values_and_must_give_a_reason(client_for, folder):
    for person, value in (("ann", "12.50"), ("bob", "12.05")):
        assert (
            answer(
                client_for(person), "doc-a.review.json", "$.amount", "set", value=value
            ).status_code
            == 200
        )
    judge = client_for("cy", role="adjudicator")
    page = judge.get("/doc/doc-a.review.json").text
    assert "reviewers differ" in page
    assert "12.50  (ann)" in page
    assert "12.05  (bob)" in page
    reply = answer(judge, "doc-a.review.json", "$.amount", "set", value="12.50")
    assert reply.status_code == 422
    assert "needs a reason" in reply.json()["error"]
    reply = answer(
        judge, "doc-a.review.json", "$.amount", "set", value="12.50", reason="page 1 reads 12.50"
    )
    assert reply.status_code == 200, reply.text
    final = load_layers(folder / "doc-a.review.json").final_values()["$.amount"]
    assert (final.status, final.value, final.reason) == (
        "adjudicated",
        "12.50",
        "page 1 reads 12.50",
    )


def test_pages_render_once_then_come_from_the_cache(client_for, folder):
    client = client_for()
    url = "/page/doc-a.review.json?source=doc-a.pdf&page=1&zoom=1.5"
    first = client.get(url)
    assert first.status_code == 200
    assert first.headers["content-type"] == "image/png"
    assert first.content.startswith(b"\x89PNG")
    assert list((folder / ".docevals-cache" / "pages").glob("*-p0-z150.png"))
    start = time.perf_counter()
    again = client.get(url)
    assert again.content == first.content
    assert time.perf_counter() - start < 0.3
    # A new server (another process) reads the disk cache.
    assert client_for().get(url).content == first.content
    assert client.get(url.replace("page=1", "page=2")).status_code == 422
    assert client.get(url.replace("zoom=1.5", "zoom=9")).status_code == 422


def test_highlights_are_found_on_the_page(client_for):
    reply = client_for().get("/boxes/doc-a.review.json?source=doc-a.pdf")
    boxes = reply.json()["boxes"]
    page, x0, y0, x1, y1, kind = boxes["$.currency"][0]
    assert (page, kind) == (0, "value")
    assert 72 <= x0 < x1
    assert 60 < y0 < y1 < 130
    assert boxes["$.amount"][0][5] == "value"  # a candidate's value, found on the page


def test_static_files_are_served_and_nothing_else(client_for):
    client = client_for()
    assert "keydown" in client.get("/static/review.js").text
    assert client.get("/static/review.css").status_code == 200
    assert client.get("/static/app.py").status_code == 404


def test_answers_by_people_outside_the_policy_are_flagged(client_for):
    assert answer(client_for("mallory"), "doc-a.review.json", "$.currency", "accept").is_success
    page = client_for("ann", known_people=frozenset({"ann", "bob"})).get("/doc/doc-a.review.json")
    assert "answers by mallory, who is not in the policy" in page.text
    assert "who is not in the policy" not in client_for("ann").get("/doc/doc-a.review.json").text
