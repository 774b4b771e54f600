"""The fast paths of loading reviews and their layers give exactly what the slow ones
gave: the same objects, digests and categories, and the same one-line errors."""

from __future__ import annotations

import json
import math
from decimal import Decimal

import pytest

from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.layer_agreement import _classified
from docevals_mlflow.groundtruth.layer_view import rating_category
from docevals_mlflow.groundtruth.records import ReviewClaim, ReviewFile
from docevals_mlflow.groundtruth.review import _locate, load_review, write_ground_truth_review
from docevals_mlflow.groundtruth.review_layers import (
    _layer_files,
    _same,
    check_entries,
    current_digest,
    load_layers,
    record_answer,
)
from docevals_mlflow.groundtruth.review_rows import review_digest
from docevals_mlflow.groundtruth.votes import number_key
from tests.groundtruth.approval_fakes import generation_report


@pytest.fixture
def review_path(tmp_path):
    return write_ground_truth_review(generation_report(), tmp_path / "doc.review.json")


def _slow_error(raw: dict, source: str) -> str:
    """The error the review file gave before the lean validator (model_validate)."""
    try:
        ReviewFile.model_validate(raw)
    except InputError as exc:
        return str(_locate(exc, source, raw))
    raise AssertionError("model_validate accepted it")


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["claims"][1].update(agreement="x"),
        lambda d: d["claims"][0].pop("path"),
        lambda d: d["review_items"][1].update(decision="maybe"),
        lambda d: d["review_items"][0]["provider_candidates"][0].update(votes="many"),
        lambda d: d["providers"][1].update(bogus=1),
        lambda d: d["review_items"][2].update(decision="set"),
        lambda d: d.update(case_id=""),
    ],
)
def test_nested_errors_are_the_ones_model_validate_gives(review_path, edit):
    raw = json.loads(review_path.read_text())
    edit(raw)
    review_path.write_text(json.dumps(raw, indent=2))
    with pytest.raises(InputError) as caught:
        load_review(review_path)
    message = str(caught.value)
    assert message == _slow_error(raw, str(review_path))
    assert message.startswith(str(review_path))
    assert "\n" not in message


def test_a_loaded_review_equals_model_validate(review_path):
    raw = json.loads(review_path.read_text())
    loaded = load_review(review_path)
    assert loaded == ReviewFile.model_validate(raw)
    assert loaded.model_dump_json(indent=2) + "\n" == review_path.read_text()
    assert current_digest(loaded) == review_digest(loaded)


def test_expected_values_that_are_not_json_are_still_refused():
    for bad in (float("nan"), float("inf"), {1: "x"}, object()):
        with pytest.raises(InputError, match=r"claims\[1\]\.expected"):
            ReviewFile(
                case_id="c",
                generation_sha256="0" * 64,
                claims=[ReviewClaim(path="$.a", expected=1), ReviewClaim(path="$.b", expected=bad)],
            )
    nested = {"b": [1.5, None, True], "a": "é"}
    ok = ReviewFile(
        case_id="c", generation_sha256="0" * 64, claims=[{"path": "$.a", "expected": nested}]
    )
    assert current_digest(ok) == review_digest(ok)


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("a", "a", True),
        (None, None, True),
        (1, 1, True),
        (1, 1.0, False),
        (1, True, False),
        (True, True, True),
        (0.0, -0.0, False),
        (0.1 + 0.2, 0.30000000000000004, True),
        (1e-05, 1e-05, True),
        ([1, {"b": 2, "a": 1}], [1, {"a": 1, "b": 2}], True),
        ("1", 1, False),
    ],
)
def test_same_compares_as_canonical_json(first, second, same):
    assert _same(first, second) is same


def test_same_refuses_what_has_no_json_form():
    with pytest.raises(InputError):
        _same(float("nan"), float("nan"))


def test_layer_files_are_the_visible_json_entries_sorted(tmp_path):
    folder = tmp_path / "x.review.layers"
    assert _layer_files(folder) == []
    folder.mkdir()
    for name in ("bob.json", ".hidden.json", "alice.json", "notes.txt", "bob.json.lock"):
        (folder / name).write_text("{}")
    (folder / "dir.json").mkdir()
    assert [p.name for p in _layer_files(folder)] == ["alice.json", "bob.json", "dir.json"]
    assert _layer_files(tmp_path / "plain") == []


def test_a_folder_named_like_a_layer_is_refused_as_before(review_path):
    (review_path.with_name("doc.review.layers") / "zed.json").mkdir(parents=True)
    with pytest.raises(InputError, match=r"zed\.json: this is a folder"):
        load_layers(review_path)


def test_repeated_answers_count_their_edits(review_path):
    record_answer(review_path, "ann", "$.currency", "accept")
    record_answer(review_path, "ann", "$.currency", "set", "USD")
    record_answer(review_path, "ann", "$.amount", "absent")
    layers = load_layers(review_path)
    answers = layers.answers("$.currency")
    assert (answers["ann"].edits, answers["ann"].value) == (2, "USD")
    assert layers.answers("$.amount")["ann"].edits == 1
    check_entries(layers.layers["ann"], layers.targets, "ann.json")


@pytest.mark.parametrize(
    "value",
    [
        *(1, 1.5, -0.0, 10**30, "12.50", " 42 ", "1,500.00", "1,500", "007", "1e3"),
        *(Decimal("2.50"), True, False, "TRUE", None, "", " ", [], {}, [1, "2"], {"a": 1}),
        *("x", math.nan, math.inf),
    ],
)
def test_categories_and_numbers_are_vote_keys(value):
    category, number = _classified(value, {})
    assert category == rating_category("set", value)
    key = number_key(value)
    assert number == (float(key[1]) if key is not None else None)


def test_the_digest_of_a_review_without_layers_is_worked_out_when_asked(review_path):
    layers = load_layers(review_path)
    assert layers._review_sha256 is None  # nothing to check against: not computed
    assert layers.review_sha256 == review_digest(load_review(review_path))
    record_answer(review_path, "ann", "$.currency", "accept")
    answered = load_layers(review_path)
    assert answered._review_sha256 == answered.review_sha256 == layers.review_sha256
