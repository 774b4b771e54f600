"""Review files: written from a generation, validated on every way in, never clobbered."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docevals_mlflow.errors import InputError, InputFileNotFoundError, OutputError
from docevals_mlflow.groundtruth.records import ReviewClaim, ReviewFile, ReviewItem
from docevals_mlflow.groundtruth.review import (
    apply_decisions,
    human_work,
    load_review,
    review_content,
    review_digest,
    review_from_generation,
    write_ground_truth_review,
)
from tests.groundtruth.approval_fakes import (
    APPROVED_ROWS,
    DECISIONS,
    generation_report,
    read_json,
    write_json,
)


@pytest.fixture
def review_path(tmp_path):
    return write_ground_truth_review(generation_report(), tmp_path / "review.json")


def decided(review: ReviewFile) -> ReviewFile:
    return apply_decisions(review, set=DECISIONS, omit=["$.iban"])


# --- from a generation --------------------------------------------------------------


def test_claims_are_the_consensus_and_items_the_disagreements():
    report = generation_report()
    review = review_from_generation(report)
    assert review.case_id == "statement-001"
    assert review.status == "needs_review"
    assert review.approved_by is None
    assert review.generation_sha256 == report.digest
    assert [(c.path, c.expected, c.providers) for c in review.claims] == [
        ("$.currency", "EUR", ["claude", "openai"]),
        ("$.items[0].sku", "A-1", ["claude", "openai"]),
    ]
    assert review.claims[0].evidence == ["top right: EUR"]
    assert review.claims[0].resolved_by == "panel"
    assert [(i.path, i.reason, i.decision) for i in review.review_items] == [
        ("$.amount", "conflict", "unresolved"),
        ("$.account_name", "omitted_by_some", "unresolved"),
        ("$.iban", "omitted_by_all", "unresolved"),
    ]
    amount = review.review_items[0]
    assert [(c.value, c.providers) for c in amount.provider_candidates] == [
        ("12.50", ["openai"]),
        ("12.05", ["claude"]),
    ]
    assert review.review_items[1].omitted_by == ["claude"]
    assert [s.name for s in review.source_references] == ["page-001.png"]
    assert [p.provider for p in review.providers] == ["openai", "claude"]
    assert review.claims_edited is False
    assert human_work(review) == []


# --- writing and loading ------------------------------------------------------------


def test_write_then_load_round_trips_as_indented_json(review_path, tmp_path):
    text = review_path.read_text(encoding="utf-8")
    assert text.startswith('{\n  "schema_version": 1,\n  "case_id": "statement-001",')
    assert text.endswith("}\n")
    assert load_review(review_path) == review_from_generation(generation_report())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["review.json"]  # no temp left


def test_rewriting_a_file_without_human_work_is_allowed(review_path):
    other = generation_report("statement-002")
    write_ground_truth_review(other, review_path)
    assert load_review(review_path).case_id == "statement-002"


def test_a_reviewers_decisions_are_never_overwritten_silently(review_path):
    review = decided(load_review(review_path))
    write_ground_truth_review(review, review_path)  # derived from the file: allowed
    before = review_path.read_bytes()
    with pytest.raises(OutputError) as caught:
        write_ground_truth_review(generation_report(), review_path)
    message = str(caught.value)
    assert message.startswith(f"{review_path}: holds a reviewer's work (3 decided item(s))")
    assert "overwrite=True" in message
    assert review_path.read_bytes() == before
    write_ground_truth_review(generation_report(), review_path, overwrite=True)
    assert load_review(review_path).pending()


def test_edit_write_edit_write_keeps_working_and_notices_concurrent_edits(review_path):
    review = load_review(review_path)
    first = apply_decisions(review, set={"$.amount": "12.50"})
    write_ground_truth_review(first, review_path)
    second = apply_decisions(first, omit=["$.iban"])
    write_ground_truth_review(second, review_path)
    assert [i.decision for i in load_review(review_path).review_items] == [
        "set",
        "unresolved",
        "omit",
    ]
    # Someone edits the file by hand meanwhile: our stale copy must not win.
    data = read_json(review_path)
    data["review_items"][1]["notes"] = "asked the customer"
    write_json(review_path, data)
    third = apply_decisions(second, set={"$.account_name": "ACME Ltd"})
    with pytest.raises(OutputError, match=r"holds a reviewer's work \(2 decided item\(s\); notes"):
        write_ground_truth_review(third, review_path)
    assert read_json(review_path)["review_items"][1]["notes"] == "asked the customer"


def test_hand_edited_claims_count_as_human_work(review_path):
    data = read_json(review_path)
    data["claims"][0]["expected"] = "USD"
    write_json(review_path, data)
    assert load_review(review_path).claims_edited is True
    with pytest.raises(OutputError, match="edited claims"):
        write_ground_truth_review(generation_report(), review_path)


def test_an_unreadable_existing_file_is_left_alone(tmp_path):
    path = tmp_path / "review.json"
    path.write_text('{"case_id": "half-typed', encoding="utf-8")
    with pytest.raises(OutputError, match="not a review file this version can read"):
        write_ground_truth_review(generation_report(), path)
    assert path.read_text(encoding="utf-8") == '{"case_id": "half-typed'


def test_missing_review_file():
    with pytest.raises(InputFileNotFoundError, match=r"^nowhere\.json: review file not found$"):
        load_review("nowhere.json")


def _broken(review_path, change):
    data = read_json(review_path)
    change(data)
    write_json(review_path, data)
    with pytest.raises(InputError) as caught:
        load_review(review_path)
    message = str(caught.value)
    assert message.startswith(str(review_path)), message
    return message


def test_unknown_decision_names_file_item_and_choices(review_path):
    message = _broken(review_path, lambda d: d["review_items"][1].update(decision="maybe"))
    assert "review_items[1] ($.account_name)" in message
    assert "decision: Input should be 'unresolved', 'set' or 'omit' (got 'maybe')" in message


def test_unknown_key_is_refused(review_path):
    message = _broken(review_path, lambda d: d["review_items"][0].update(decison="set"))
    assert "review_items[0] ($.amount)" in message
    assert "decison: Extra inputs are not permitted" in message


def test_wrong_type_is_refused(review_path):
    message = _broken(review_path, lambda d: d.update(overall_agreement="high"))
    assert "overall_agreement" in message
    assert "(got 'high')" in message


def test_set_without_a_value_is_refused(review_path):
    message = _broken(review_path, lambda d: d["review_items"][0].update(decision="set"))
    assert "review_items[0].expected" in message
    assert "$.amount: decision 'set' needs a value" in message
    assert "use decision 'omit'" in message


def test_omit_with_a_value_is_refused(review_path):
    message = _broken(
        review_path, lambda d: d["review_items"][2].update(decision="omit", expected="DE89")
    )
    assert "$.iban: decision 'omit' but 'expected' holds a value" in message


def test_approved_status_needs_an_approver(review_path):
    message = _broken(review_path, lambda d: d.update(status="approved", approved_by="  "))
    assert "approved_by" in message
    assert "status is 'approved' but no approver is named" in message


def test_a_field_in_claims_and_items_is_refused(review_path):
    message = _broken(review_path, lambda d: d["review_items"][0].update(path="currency"))
    assert "field 'currency' also appears at claims[0]" in message


def test_invalid_field_path_is_refused(review_path):
    message = _broken(review_path, lambda d: d["claims"][1].update(path="$.items[x]"))
    assert "claims[1].path" in message
    assert "list index must be a non-negative integer" in message


def test_bad_digest_is_refused(review_path):
    message = _broken(review_path, lambda d: d.update(generation_sha256="abc"))
    assert "generation_sha256: expected a SHA-256 digest" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "malformed JSON at line 1, column 2"),
        ("[]", "a review file holds a JSON object, not list"),
        ('{"x": NaN}', "NaN is not valid JSON"),
        ('{"rows": [], "record": {}}', "this is an approved ground-truth file"),
        ('{"schema_version": 9}', "schema_version 9 was written by a newer docevals-mlflow"),
    ],
)
def test_files_that_are_not_review_files(tmp_path, text, expected):
    path = tmp_path / "review.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(expected)):
        load_review(path)


# --- decisions ----------------------------------------------------------------------


def test_apply_decisions_returns_a_new_validated_review(review_path):
    review = load_review(review_path)
    edited = apply_decisions(
        review,
        set={"amount": "12.50", "$['account_name']": "ACME Ltd"},
        omit=["$.iban"],
        notes="read page 1",
    )
    assert [i.decision for i in review.review_items] == ["unresolved"] * 3  # untouched
    assert [(i.decision, i.expected, i.notes) for i in edited.review_items] == [
        ("set", "12.50", "read page 1"),
        ("set", "ACME Ltd", "read page 1"),
        ("omit", None, "read page 1"),
    ]
    assert edited.pending() == []
    reopened = apply_decisions(edited, reopen=["$.amount"])
    assert [i.path for i in reopened.pending()] == ["$.amount"]
    assert reopened.review_items[0].expected is None
    assert reopened.review_items[0].notes == "read page 1"  # notes=None keeps them


def test_unknown_path_names_it_and_lists_the_pending_ones(review_path):
    review = apply_decisions(load_review(review_path), omit=["$.iban"])
    with pytest.raises(InputError) as caught:
        apply_decisions(review, set={"$.amont": 1})
    assert str(caught.value) == (
        "--set $.amont: no review item has this path "
        "(expected a pending item: $.amount, $.account_name (1 decided))"
    )


def test_an_agreed_claim_is_not_a_review_item(review_path):
    with pytest.raises(InputError, match=r"--omit \$\.currency: this field is an agreed claim"):
        apply_decisions(load_review(review_path), omit=["$.currency"])


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        (
            {"set": {"$.amount": 1}, "omit": ["amount"]},
            "one field given twice: --set $.amount and --omit amount",
        ),
        ({"set": {"$.amount": "  "}}, "--set $.amount: the value is empty; to leave"),
        ({"set": {"$.amount": None}}, "--set $.amount: the value is empty"),
        ({"set": {"$.amount": float("nan")}}, "--set $.amount: nan has no JSON representation"),
        ({"set": {"$.amount": object()}}, "--set $.amount: a value of type object cannot"),
        ({"omit": "$.iban"}, "omit takes a list of field paths, not one string"),
        ({"omit": ["$.items["]}, "--omit $.items[: invalid field path"),
    ],
)
def test_bad_decisions_are_refused_and_nothing_is_applied(review_path, kwargs, expected):
    review = load_review(review_path)
    with pytest.raises(InputError, match=re.escape(expected)):
        apply_decisions(review, **kwargs)
    assert review.pending() == review.review_items


def test_changing_an_approved_file_puts_it_back_to_needs_review(review_path):
    review = decided(load_review(review_path))
    approved = ReviewFile.model_validate(
        {**review.model_dump(), "status": "approved", "approved_by": "alice"}
    )
    changed = apply_decisions(approved, reopen=["$.iban"])
    assert changed.status == "needs_review"


def test_in_memory_edits_do_not_bypass_validation(review_path, tmp_path):
    review = load_review(review_path)
    review.review_items[0].decision = "bogus"  # type: ignore[assignment]
    with pytest.raises(InputError, match=r"review_items\[0\]: invalid ReviewItem: decision"):
        write_ground_truth_review(review, tmp_path / "other.json")
    with pytest.raises(InputError, match=r"review_items\[0\]: invalid ReviewItem: decision"):
        review_content(review)
    review.review_items[0].decision = "set"
    with pytest.raises(InputError, match=r"\$\.amount: decision 'set' needs a value"):
        apply_decisions(review, omit=["$.iban"])
    assert not (tmp_path / "other.json").exists()


# --- content ------------------------------------------------------------------------


def test_content_is_claims_plus_set_items_without_omits(review_path):
    review = decided(load_review(review_path))
    assert review_content(review) == APPROVED_ROWS


def test_content_is_refused_while_items_are_unresolved(review_path):
    review = apply_decisions(load_review(review_path), set={"$.amount": "12.50"})
    data = review.model_dump()
    data["review_items"][2]["expected"] = "DE89"  # typed, but decision left unresolved
    review = ReviewFile.model_validate(data)
    with pytest.raises(InputError) as caught:
        review_content(review, source="review.json")
    assert str(caught.value) == (
        "review.json: 2 review item(s) unresolved: review_items[1] $.account_name "
        "(omitted_by_some), review_items[2] $.iban (omitted_by_all, has a value but "
        "decision is still 'unresolved') (expected decision 'set' (with a value) or 'omit' "
        "on every item, e.g. docevals review FILE --set PATH=VALUE --omit PATH)"
    )


def test_content_rows_use_canonical_paths_with_numeric_index_order():
    review = ReviewFile(
        case_id="c",
        generation_sha256="0" * 64,
        claims=[
            ReviewClaim(path="items[10].sku", expected="K"),
            ReviewClaim(path="$['items'][2].sku", expected="C"),
            ReviewClaim(path="$['a.b']", expected=1),
        ],
        review_items=[ReviewItem(path="total", reason="tie", decision="set", expected=3)],
    )
    assert review_content(review) == [
        {"path": "$['a.b']", "expected": 1},
        {"path": "$.items[2].sku", "expected": "C"},
        {"path": "$.items[10].sku", "expected": "K"},
        {"path": "$.total", "expected": 3},
    ]


@settings(max_examples=40, deadline=None)
@given(st.permutations(range(4)), st.permutations(range(3)))
def test_content_and_its_digest_do_not_depend_on_file_order(claim_order, item_order):
    base = decided(review_from_generation(generation_report()))
    claims = [ReviewClaim(path=f"$.c{i}", expected=i) for i in range(4)]
    shuffled = ReviewFile.model_validate(
        {
            **base.model_dump(),
            "claims": [claims[i].model_dump() for i in claim_order],
            "review_items": [base.review_items[i].model_dump() for i in item_order],
        }
    )
    ordered = ReviewFile.model_validate(
        {**base.model_dump(), "claims": [c.model_dump() for c in claims]}
    )
    assert review_content(shuffled) == review_content(ordered)


def test_review_digest_ignores_formatting(review_path):
    review = load_review(review_path)
    compact = review_path.with_name("compact.json")
    compact.write_text(json.dumps(read_json(review_path)), encoding="utf-8")
    assert review_digest(load_review(compact)) == review_digest(review)
