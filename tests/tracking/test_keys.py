from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from mlflow.utils.validation import _validate_metric_name

from docevals_mlflow.tracking.keys import MAX_KEY_LENGTH, KeyMap, legal_key, template_segment


def test_templates_become_readable_segments():
    assert template_segment("$.Transactions[].Amount") == "Transactions.Amount"
    assert template_segment("$.Account Holder Address.City") == "Account Holder Address.City"
    assert template_segment("$['a.b'].c") == "a.b.c"
    assert template_segment("$.items[3].code") == "items.3.code"
    assert template_segment("$") == "_"


def test_unicode_letters_are_kept():
    assert template_segment("$.fällig am") == "fällig am"
    _validate_metric_name(legal_key("field/fällig am/f1"))


def test_illegal_characters_and_slashes_are_replaced():
    assert legal_key("field/Total (EUR)/f1") == "field/Total _EUR_/f1"
    assert legal_key("class/A/B/f1") == "class/A/B/f1"
    assert legal_key("//a//b/") == "a/b"
    assert legal_key("a/../b") == "a/./b" or ".." not in legal_key("a/../b")


def test_long_keys_are_shortened_with_a_hash_not_truncated_silently():
    key = "field/" + "x" * 400 + "/f1"
    shortened = legal_key(key)
    assert len(shortened) <= MAX_KEY_LENGTH
    assert shortened != legal_key("field/" + "x" * 401 + "/f1")


def test_collisions_get_suffixes_and_are_indexed():
    keys = KeyMap()
    first = keys.field("$.a.b")
    second = keys.field("$['a.b']")
    assert (first, second) == ("a.b", "a.b_2")
    assert keys.field("$.a.b") == "a.b"
    assert keys.index() == {"field": {"a.b": "$.a.b", "a.b_2": "$['a.b']"}}


@given(st.text(min_size=1, max_size=300))
def test_every_key_is_accepted_by_mlflow(text):
    key = legal_key(f"field/{template_segment(text)}/f1")
    _validate_metric_name(key)
    assert len(key) <= MAX_KEY_LENGTH
