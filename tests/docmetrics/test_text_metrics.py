"""Text metrics: definitions on worked examples, normalization, batches and documents,
and bad input."""

from __future__ import annotations

import pytest

from docevals_mlflow.docmetrics.normalize import DEFAULT, RAW, TextNormalization
from docevals_mlflow.docmetrics.text import (
    character_error_rate,
    document_figures,
    normalized_edit_distance,
    score_documents,
    score_texts,
    token_f1,
    word_error_rate,
)
from docevals_mlflow.errors import InputError


def test_worked_examples() -> None:
    assert character_error_rate("kitten", "sitting") == pytest.approx(3 / 6)
    assert normalized_edit_distance("kitten", "sitting") == pytest.approx(3 / 7)
    assert word_error_rate("the cat sat", "the cat sat down") == pytest.approx(1 / 3)
    assert normalized_edit_distance("the cat sat", "a cat sat", unit="word") == pytest.approx(1 / 3)
    assert token_f1("the cat sat", "cat sat on the mat") == pytest.approx(2 * 1 * 0.6 / 1.6)
    assert token_f1("a a b", "a b b", bag=True) == pytest.approx(2 / 3)
    assert token_f1("a a b", "a b b") == 1.0


def test_empty_texts_score_as_documented() -> None:
    assert character_error_rate("Straße", "") == 1.0
    assert word_error_rate("two words", "") == 1.0
    assert character_error_rate("", "") == 0.0
    assert character_error_rate("", "noise") == 1.0
    assert normalized_edit_distance("", "") == 0.0
    assert token_f1("", "") == 1.0
    assert token_f1("x", "") == 0.0


def test_normalization_steps() -> None:
    assert DEFAULT.apply("  cafe\u0301 \t\n au  lait ") == "café au lait"
    assert TextNormalization(unicode_form="NFKC").apply("ＡＢＣ ﬁ") == "ABC fi"
    assert TextNormalization(casefold=True).apply("STRASSE Straße") == "strasse strasse"
    no_punct = TextNormalization(remove_punctuation=True)
    assert no_punct.apply("Hello, world! «Bonjour» — 東京。") == "Hello world Bonjour 東京"
    assert RAW.apply(" a\u0301 ") == " a\u0301 "
    # A combining accent composed by NFC is one character, not two.
    assert character_error_rate("café", "cafe\u0301") == 0.0
    assert character_error_rate("café", "cafe\u0301", normalization=RAW) == pytest.approx(2 / 4)
    with pytest.raises(InputError, match="unicode_form 'NFD' is not one of"):
        TextNormalization(unicode_form="NFD")  # type: ignore[arg-type]


def test_micro_and_macro_batch_figures() -> None:
    scores = score_texts(["abcd", "ab"], ["abcx", "xx"], names=["p1", "p2"])
    assert [item.cer for item in scores.items] == [0.25, 1.0]
    assert scores.micro_cer == pytest.approx(3 / 6)
    assert scores.macro_cer == pytest.approx((0.25 + 1.0) / 2)
    assert [item.name for item in scores.worst(1)] == ["p2"]


def test_documents_of_pages() -> None:
    documents = score_documents(
        {"inv-1": ["abcd", "ef"], "inv-2": ["xyz"]}, {"inv-1": ["abcd"], "inv-2": ["xyq"]}
    )
    assert [item.name for item in documents["inv-1"].items] == ["inv-1 page 1", "inv-1 page 2"]
    assert documents["inv-1"].micro_cer == pytest.approx(2 / 6)  # the missing page is empty
    figures = document_figures(documents)
    assert figures["micro_cer"] == pytest.approx(3 / 9)
    assert figures["macro_cer"] == pytest.approx((2 / 6 + 1 / 3) / 2)
    with pytest.raises(InputError, match="predicted documents with no expected text: ghost"):
        score_documents({"a": ["x"]}, {"ghost": ["x"]})
    with pytest.raises(InputError, match="inv-1: 2 predicted pages for 1 expected pages"):
        score_documents({"inv-1": ["x"]}, {"inv-1": ["x", "y"]})


def test_bad_input_names_the_text_and_position() -> None:
    with pytest.raises(InputError, match=r"scan-7 \(predicted\): expected text \(str\), got bytes"):
        score_texts(["ok"], [b"ok"], names=["scan-7"])  # type: ignore[list-item]
    with pytest.raises(InputError, match=r"text 1 \(expected\): expected text \(str\), got int"):
        score_texts(["a", 5], ["a", "b"])  # type: ignore[list-item]
    broken = "abc" + b"\xe9t\xe9".decode("utf-8", errors="surrogateescape")
    with pytest.raises(InputError, match=r"p3 \(expected\): character 3 is an undecodable byte"):
        score_texts([broken], ["abc"], names=["p3"])
    with pytest.raises(InputError, match="got 1 predictions"):
        score_texts(["a", "b"], ["a"])
