"""Text metrics of a reading stage (OCR, a parser): character and word error rate,
normalized edit distance and token F1, per text pair and over a batch.

Definitions (after :class:`~docevals_mlflow.docmetrics.normalize.TextNormalization`):

- **CER** = character edits (Levenshtein: insertions, deletions, substitutions of
  code points) / characters of the expected text; as ``jiwer.cer``.
- **WER** = the same over words (white-space separated); as ``jiwer.wer``.
- **Normalized edit distance** = edits / the longer length, 0 when both are empty;
  as OmniDocBench (characters) and docling-eval (tokens) define it.
- **Token F1** = harmonic mean of token precision and recall, over token sets (as
  docling-eval's ``f1_score``) or, with ``bag=True``, over token counts (as SQuAD).

An empty expected text scores CER/WER 0 against an empty prediction and 1 against any
other; an empty prediction of a non-empty text scores 1 (every character deleted).
Batch figures come two ways: **micro** (sum of edits / sum of expected lengths, what
``jiwer`` computes for lists) and **macro** (the mean of the per-text figures).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from docevals_mlflow.docmetrics.normalize import DEFAULT, TextNormalization, check_text
from docevals_mlflow.errors import InputError

Unit = Literal["char", "word"]


def _rate(edits: int, reference_length: int) -> float:
    if reference_length == 0:
        return 0.0 if edits == 0 else 1.0
    return edits / reference_length


def _ratio(edits: int, longer: int) -> float:
    return edits / longer if longer else 0.0


@dataclass(frozen=True)
class TextPairScore:
    """The edit counts of one expected/predicted text pair and the figures from them."""

    name: str
    char_edits: int
    expected_chars: int
    predicted_chars: int
    word_edits: int
    expected_words: int
    predicted_words: int
    token_f1: float

    @property
    def cer(self) -> float:
        """Character error rate."""
        return _rate(self.char_edits, self.expected_chars)

    @property
    def wer(self) -> float:
        """Word error rate."""
        return _rate(self.word_edits, self.expected_words)

    @property
    def edit_distance(self) -> float:
        """Normalized character edit distance (OmniDocBench), in [0, 1]."""
        return _ratio(self.char_edits, max(self.expected_chars, self.predicted_chars))

    @property
    def word_edit_distance(self) -> float:
        """Normalized word edit distance (docling-eval's, on white-space tokens)."""
        return _ratio(self.word_edits, max(self.expected_words, self.predicted_words))


@dataclass(frozen=True)
class TextBatchScore:
    """Per-text scores and the batch figures over them."""

    items: tuple[TextPairScore, ...]

    def _sum(self, attribute: str) -> int:
        return sum(getattr(item, attribute) for item in self.items)

    def _mean(self, attribute: str) -> float:
        if not self.items:
            return 0.0
        return float(np.mean([getattr(item, attribute) for item in self.items]))

    @property
    def micro_cer(self) -> float:
        """Sum of character edits / sum of expected characters."""
        return _rate(self._sum("char_edits"), self._sum("expected_chars"))

    @property
    def micro_wer(self) -> float:
        """Sum of word edits / sum of expected words."""
        return _rate(self._sum("word_edits"), self._sum("expected_words"))

    @property
    def micro_edit_distance(self) -> float:
        """Sum of character edits / sum of the longer lengths."""
        longer = sum(max(i.expected_chars, i.predicted_chars) for i in self.items)
        return _ratio(self._sum("char_edits"), longer)

    @property
    def macro_cer(self) -> float:
        """Mean of the per-text CERs."""
        return self._mean("cer")

    @property
    def macro_wer(self) -> float:
        """Mean of the per-text WERs."""
        return self._mean("wer")

    @property
    def macro_edit_distance(self) -> float:
        """Mean of the per-text normalized edit distances."""
        return self._mean("edit_distance")

    @property
    def macro_token_f1(self) -> float:
        """Mean of the per-text token F1 scores."""
        return self._mean("token_f1")

    def worst(self, count: int = 10) -> list[TextPairScore]:
        """The ``count`` texts with the highest CER, worst first (ties by name)."""
        return sorted(self.items, key=lambda item: (-item.cer, item.name))[:count]


def token_f1_of(expected: Sequence[str], predicted: Sequence[str], *, bag: bool = False) -> float:
    """F1 of two token sequences: over distinct tokens, or over counts with ``bag``.

    Both empty score 1; one empty scores 0.
    """
    if not expected and not predicted:
        return 1.0
    if bag:
        common = sum((Counter(expected) & Counter(predicted)).values())
        predicted_total, expected_total = len(predicted), len(expected)
    else:
        expected_set, predicted_set = set(expected), set(predicted)
        common = len(expected_set & predicted_set)
        predicted_total, expected_total = len(predicted_set), len(expected_set)
    if common == 0:
        return 0.0
    precision, recall = common / predicted_total, common / expected_total
    return 2 * precision * recall / (precision + recall)


def _checked(texts: Sequence[object], names: Sequence[str], side: str) -> list[str]:
    return [check_text(text, f"{name} ({side})") for text, name in zip(texts, names, strict=True)]


def _normalized(
    texts: list[str], normalization: TextNormalization
) -> tuple[list[str], list[list[str]]]:
    pairs = [normalization.apply_with_words(text) for text in texts]
    return [text for text, _ in pairs], [words for _, words in pairs]


def score_texts(
    expected: Sequence[str],
    predicted: Sequence[str],
    *,
    names: Sequence[str] | None = None,
    normalization: TextNormalization = DEFAULT,
    bag: bool = False,
) -> TextBatchScore:
    """Score text pairs (pages, regions or documents) in one vectorised pass.

    ``names`` label the pairs in errors and reports (default ``text 0``, ``text 1``…).
    """
    if len(expected) != len(predicted):
        raise InputError(
            f"expected {len(expected)} expected texts and as many predictions, "
            f"got {len(predicted)} predictions"
        )
    labels = list(names) if names is not None else [f"text {i}" for i in range(len(expected))]
    if len(labels) != len(expected):
        raise InputError(f"got {len(labels)} names for {len(expected)} text pairs")
    left, left_words = _normalized(_checked(expected, labels, "expected"), normalization)
    right, right_words = _normalized(_checked(predicted, labels, "predicted"), normalization)
    char_edits = _distances(left, right)
    word_edits = _distances(left_words, right_words)
    items = tuple(
        TextPairScore(
            name=labels[i],
            char_edits=int(char_edits[i]),
            expected_chars=len(left[i]),
            predicted_chars=len(right[i]),
            word_edits=int(word_edits[i]),
            expected_words=len(left_words[i]),
            predicted_words=len(right_words[i]),
            token_f1=token_f1_of(left_words[i], right_words[i], bag=bag),
        )
        for i in range(len(left))
    )
    return TextBatchScore(items)


def _distances(left: Sequence[Sequence[str]], right: Sequence[Sequence[str]]) -> list[int]:
    if not left:
        return []
    # One C call for all pairs, on one core. The hint (an expected distance, grown
    # when too small, so results stay exact) lets rapidfuzz compute a band around the
    # diagonal: OCR output is close to its text, which makes pages about 4x faster. It
    # is taken from a sample, since a hint far too small costs more than none.
    step = max(1, len(left) // 16)
    sample = [Levenshtein.distance(a, b) for a, b in zip(left[::step], right[::step], strict=True)]
    if step == 1:
        return sample  # a small batch: the sample is every pair
    hint = max(32, int(1.5 * sorted(sample)[(3 * len(sample)) // 4]))
    # The sampled pairs are known: only the others go to rapidfuzz.
    rest = [index for index in range(len(left)) if index % step]
    edits = process.cpdist(
        [left[index] for index in rest],
        [right[index] for index in rest],
        scorer=Levenshtein.distance,
        dtype=np.int64,
        workers=1,
        score_hint=hint,
    ).tolist()
    distances = [0] * len(left)
    distances[::step] = sample
    for index, edit in zip(rest, edits, strict=True):
        distances[index] = edit
    return distances


def score_documents(
    expected: Mapping[str, Sequence[str]],
    predicted: Mapping[str, Sequence[str]],
    *,
    normalization: TextNormalization = DEFAULT,
    bag: bool = False,
) -> dict[str, TextBatchScore]:
    """Per document (name → its pages or regions, in order), the scores of its pages.

    A document's own figures are its batch's micro figures; the macro figures over
    documents are the mean of those. A document missing from ``predicted`` scores as
    empty pages; a page missing at the end of a prediction scores as an empty page.
    """
    unknown = sorted(set(predicted) - set(expected))
    if unknown:
        raise InputError(f"predicted documents with no expected text: {', '.join(unknown)}")
    scores = {}
    for name, pages in expected.items():
        guessed = list(predicted.get(name, ()))
        if len(guessed) > len(pages):
            raise InputError(
                f"{name}: {len(guessed)} predicted pages for {len(pages)} expected pages"
            )
        guessed += [""] * (len(pages) - len(guessed))
        labels = [f"{name} page {number}" for number in range(1, len(pages) + 1)]
        scores[name] = score_texts(
            pages, guessed, names=labels, normalization=normalization, bag=bag
        )
    return scores


def _one(expected: str, predicted: str, normalization: TextNormalization) -> TextPairScore:
    return score_texts([expected], [predicted], normalization=normalization).items[0]


def character_error_rate(
    expected: str, predicted: str, *, normalization: TextNormalization = DEFAULT
) -> float:
    """CER of one pair: character edits / expected characters."""
    return _one(expected, predicted, normalization).cer


def word_error_rate(
    expected: str, predicted: str, *, normalization: TextNormalization = DEFAULT
) -> float:
    """WER of one pair: word edits / expected words."""
    return _one(expected, predicted, normalization).wer


def normalized_edit_distance(
    expected: str,
    predicted: str,
    *,
    unit: Unit = "char",
    normalization: TextNormalization = DEFAULT,
) -> float:
    """Edits / the longer length (0 when both are empty), over characters or words."""
    score = _one(expected, predicted, normalization)
    return score.edit_distance if unit == "char" else score.word_edit_distance


def token_f1(
    expected: str,
    predicted: str,
    *,
    bag: bool = False,
    normalization: TextNormalization = DEFAULT,
) -> float:
    """Token F1 of one pair, on white-space tokens of the normalized texts."""
    left, right = (
        normalization.apply(check_text(expected, "expected")),
        normalization.apply(check_text(predicted, "predicted")),
    )
    return token_f1_of(left.split(), right.split(), bag=bag)


def document_figures(documents: Mapping[str, TextBatchScore]) -> dict[str, float]:
    """Batch figures over documents: micro over every page, macro over documents (the
    mean of each document's micro figure)."""
    pages = TextBatchScore(tuple(item for score in documents.values() for item in score.items))
    per_document = list(documents.values())

    def mean(values: list[float]) -> float:
        return float(np.mean(values)) if values else 0.0

    return {
        "micro_cer": pages.micro_cer,
        "micro_wer": pages.micro_wer,
        "micro_edit_distance": pages.micro_edit_distance,
        "macro_cer": mean([score.micro_cer for score in per_document]),
        "macro_wer": mean([score.micro_wer for score in per_document]),
        "macro_edit_distance": mean([score.micro_edit_distance for score in per_document]),
        "macro_token_f1": mean([score.macro_token_f1 for score in per_document]),
    }
