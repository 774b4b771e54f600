"""Our text metrics against the reference code: ``jiwer`` (CER, WER, per pair and over a
corpus), ``docling-metrics-text`` (normalized edit distance, its C++ implementation)
and NLTK's ``f_measure`` (docling-eval's token F1), on seeded generated texts.

The references run on our normalized texts, so that their own transforms (jiwer's
space collapse and strip) are the identity and the figures compare definitions, not
preprocessing (docs/differences.md lists where preprocessing differs).
"""

from __future__ import annotations

import importlib
import warnings

import pytest

from docevals_mlflow.docmetrics.normalize import DEFAULT, TextNormalization
from docevals_mlflow.docmetrics.text import score_texts, token_f1_of
from tests.docmetrics.texts import pairs

jiwer = pytest.importorskip("jiwer", reason="jiwer (the bench extra) is not installed")

PAIRS = pairs(seed=22, count=400)
NORMALIZATIONS = (DEFAULT, TextNormalization(unicode_form="NFKC", casefold=True))


@pytest.fixture(scope="module")
def docling_text():
    """docling-metrics-text's C++ text manager (its package import pulls in `evaluate`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module("docling_metrics_text.docling_metrics_text")
    except ImportError as error:
        pytest.skip(f"docling-metrics-text (the bench extra) is not importable: {error}")
    return module.docling_metrics_text_cpp.TextManager()


@pytest.mark.parametrize("normalization", NORMALIZATIONS, ids=("default", "nfkc-casefold"))
def test_cer_and_wer_per_pair_equal_jiwer(normalization: TextNormalization) -> None:
    scores = score_texts([e for e, _ in PAIRS], [p for _, p in PAIRS], normalization=normalization)
    checked = 0
    for (expected, predicted), score in zip(PAIRS, scores.items, strict=True):
        left, right = normalization.apply(expected), normalization.apply(predicted)
        if left:  # jiwer scores an empty reference as the count of insertions
            assert score.cer == pytest.approx(jiwer.cer(left, right), abs=1e-9)
            assert score.wer == pytest.approx(jiwer.wer(left, right), abs=1e-9)
            checked += 1
    assert checked > 390


def test_corpus_cer_and_wer_equal_jiwer_on_lists() -> None:
    scores = score_texts([e for e, _ in PAIRS], [p for _, p in PAIRS])
    left = [DEFAULT.apply(e) for e, _ in PAIRS]
    right = [DEFAULT.apply(p) for _, p in PAIRS]
    assert scores.micro_cer == pytest.approx(jiwer.cer(left, right), abs=1e-9)
    assert scores.micro_wer == pytest.approx(jiwer.wer(left, right), abs=1e-9)


def test_edit_distance_equals_docling_metrics_text(docling_text) -> None:
    scores = score_texts([e for e, _ in PAIRS], [p for _, p in PAIRS])
    for (expected, predicted), score in zip(PAIRS, scores.items, strict=True):
        left, right = DEFAULT.apply(expected), DEFAULT.apply(predicted)
        words = docling_text.edit_distance(left.split(), right.split())
        assert score.word_edit_distance == pytest.approx(words, abs=1e-9)
        if len(left) <= 300 and len(right) <= 300:  # the C++ code is quadratic in memory
            chars = docling_text.edit_distance(list(left), list(right))
            assert score.edit_distance == pytest.approx(chars, abs=1e-9)


def test_token_f1_equals_nltk_f_measure_on_token_sets() -> None:
    metrics = pytest.importorskip("nltk.metrics", reason="nltk (via the bench extra) is missing")
    for expected, predicted in PAIRS:
        left, right = DEFAULT.apply(expected).split(), DEFAULT.apply(predicted).split()
        if left and right:  # NLTK answers None for an empty side (docling-eval: -1)
            reference = metrics.f_measure(set(left), set(right))
            assert token_f1_of(left, right) == pytest.approx(reference, abs=1e-9)


def test_fixtures_from_the_references_documentation() -> None:
    # jiwer's README example and OmniDocBench's definition on a worked pair.
    assert jiwer.wer("hello world", "hello duck") == 0.5
    scores = score_texts(["hello world", "kitten"], ["hello duck", "sitting"])
    assert scores.items[0].wer == 0.5
    assert scores.items[1].cer == pytest.approx(3 / 6)
    assert scores.items[1].edit_distance == pytest.approx(3 / 7)
    assert scores.micro_cer == pytest.approx(
        jiwer.cer(["hello world", "kitten"], ["hello duck", "sitting"])
    )
