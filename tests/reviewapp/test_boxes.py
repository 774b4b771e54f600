"""Highlights from a boxes sidecar (``X.review.boxes.json``) before the text search."""

from __future__ import annotations

import json

DOC = "doc-a.review.json"


def _boxes(client):
    return client.get(f"/boxes/{DOC}", params={"source": "doc-a.pdf"})


def test_sidecar_boxes_win_over_the_text_search(client_for, folder):
    sidecar = folder / "doc-a.review.boxes.json"
    sidecar.write_text(
        json.dumps(
            {
                "amount": [{"page": 1, "x0": 10, "y0": 20, "x1": 110, "y1": 40}],
                "$.currency": [
                    {"page": 1, "x0": 1, "y0": 2, "x1": 3, "y1": 4, "source": "other.pdf"}
                ],
            }
        ),
        encoding="utf-8",
    )
    found = _boxes(client_for()).json()["boxes"]
    assert found["$.amount"] == [[0, 10.0, 20.0, 110.0, 40.0, "box"]]
    # The currency's box names another source: this page falls back to the search.
    assert found["$.currency"]
    assert all(box[5] != "box" for box in found["$.currency"])


def test_a_bad_sidecar_is_a_one_line_error_naming_file_and_field(client_for, folder):
    sidecar = folder / "doc-a.review.boxes.json"
    sidecar.write_text(
        json.dumps({"$.amount": [{"page": 0, "x0": 10, "y0": 20, "x1": 5, "y1": 40}]}),
        encoding="utf-8",
    )
    reply = _boxes(client_for())
    assert reply.status_code == 422
    error = reply.json()["error"]
    assert "doc-a.review.boxes.json" in error
    assert "$.amount" in error
    assert "box 0" in error
    assert "\n" not in error
    sidecar.write_text(json.dumps({"$.amount": "here"}), encoding="utf-8")
    assert "not a list of boxes" in _boxes(client_for()).json()["error"]
    sidecar.write_text("[1, 2]", encoding="utf-8")
    assert "not a JSON object" in _boxes(client_for()).json()["error"]


def test_without_a_sidecar_the_value_is_searched(client_for):
    found = _boxes(client_for()).json()["boxes"]
    assert any(box[5] == "value" for box in found["$.amount"])
