"""Scalar comparison methods: decisions at and around each threshold, provider
methods, and agreement of the single-pair and vectorised scoring paths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from docevals_mlflow.core.values import is_empty
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.compare import FieldComparer
from docevals_mlflow.fields.methods import make_comparator
from docevals_mlflow.fields.schema import DocumentSchema, FieldSpec


def decide(spec: FieldSpec, expected: Any, predicted: Any) -> bool:
    """The comparator's match decision for two present values."""
    comparator = make_comparator(spec)
    score = comparator.score(comparator.prepare(expected), comparator.prepare(predicted))
    return score >= comparator.threshold


def one_field_schema(spec: dict[str, Any]) -> DocumentSchema:
    return DocumentSchema.model_validate({"classes": [{"name": "Doc", "fields": {"F": spec}}]})


def engine_outcome(spec: dict[str, Any], expected: Any, predicted: Any) -> str:
    """The outcome the engine gives the single field ``F``."""
    comparison = FieldComparer(one_field_schema(spec)).compare({"F": expected}, {"F": predicted})
    rows = comparison.row_dicts()
    assert len(rows) == 1
    return rows[0]["outcome"]


def check(spec: dict[str, Any], expected: Any, predicted: Any, match: bool) -> None:
    """Both the comparator and the engine decide ``match``."""
    assert decide(FieldSpec.model_validate(spec), expected, predicted) is match
    assert engine_outcome(spec, expected, predicted) == ("TP" if match else "FD")


# --- EXACT ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "predicted", "match"),
    [
        ("Hello", "Hello", True),
        ("Hello", "hello", False),
        ("ID-123", "ID 123", False),
        ("Hello", "Hello ", False),
        ("12", 12, True),
        ("12", "12.0", False),
        (12.5, "12.5", True),
        (True, "True", True),
    ],
)
def test_exact_is_case_sensitive_text_equality(expected: Any, predicted: Any, match: bool) -> None:
    check({"method": "EXACT"}, expected, predicted, match)


@pytest.mark.parametrize(
    ("expected", "predicted", "match"),
    [
        ("Hello", "hello", True),
        ("STRASSE", "straße", True),
        ("Hello", "Hallo", False),
        ("ID-123", "id 123", False),
    ],
)
def test_exact_case_insensitive_option(expected: str, predicted: str, match: bool) -> None:
    check({"method": "EXACT", "case_sensitive": False}, expected, predicted, match)


def test_exact_labels() -> None:
    assert make_comparator(FieldSpec(method="EXACT")).label == "EXACT"
    assert (
        make_comparator(FieldSpec(method="EXACT", case_sensitive=False)).label
        == "EXACT (case-insensitive)"
    )


# --- NORMALIZED -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "predicted", "match"),
    [
        ("ACME Corp.", "acme corp", True),
        ("A-B_C", "a b  c", True),
        ("  New   York ", "new york", True),
        ("O'Brien", "obrien", False),  # the apostrophe becomes a space: "o brien"
        ("O'Brien", "O Brien", True),
        ("ACME", "ACNE", False),
        ("abc", "abcd", False),
        ("ｆｕｌｌ", "FULL", True),  # NFKC folds full-width letters
    ],
)
def test_normalized_ignores_case_spaces_and_punctuation(
    expected: str, predicted: str, match: bool
) -> None:
    check({"method": "NORMALIZED"}, expected, predicted, match)


def test_normalized_case_sensitive_option() -> None:
    check({"method": "NORMALIZED", "case_sensitive": True}, "ACME Corp.", "acme corp", False)
    check({"method": "NORMALIZED", "case_sensitive": True}, "ACME Corp.", "ACME-Corp", True)


# --- NUMERIC_EXACT --------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "predicted", "match"),
    [
        ("10.00", "10.01", True),  # exactly at the tolerance
        ("10.00", "10.02", False),
        (10.0, 10.01, True),
        (10.0, 10.02, False),
        ("10.00", "9.99", True),
        ("10.00", "9.98", False),
        (100, "100.005", True),
    ],
)
def test_numeric_tolerance_is_inclusive_absolute(
    expected: Any, predicted: Any, match: bool
) -> None:
    check({"method": "NUMERIC_EXACT", "threshold": 0.01}, expected, predicted, match)


@pytest.mark.parametrize(
    ("expected", "predicted", "match"),
    [
        ("$1,234.56", 1234.56, True),
        ("USD 1,234", "1234.00", True),
        ("(12.00)", -12, True),
        ("(12.00)", 12, False),
        ("12,50 €", 12.5, True),
        ("5%", 5, True),
        ("5%", 0.05, False),
        ("1,234,567", 1234567, True),
        (12, "12.0", True),
        (12, 12.001, False),
        ("abc", "abc", True),  # not numbers, but identical text always matches
        ("N/A", "n/a", True),
        ("abc", "abd", False),
        ("12 kg", 12, True),  # a unit is a marker like a currency
        ("12 dollars", 12, False),  # longer than four letters: a word, not a marker
        (True, 1, False),  # a boolean is not a number
    ],
)
def test_numeric_parses_numbers(expected: Any, predicted: Any, match: bool) -> None:
    check({"method": "NUMERIC_EXACT"}, expected, predicted, match)


def test_numeric_relative_tolerance() -> None:
    spec = {"method": "NUMERIC_EXACT", "relative_tolerance": 0.05}
    check(spec, 100, 105, True)  # 5 <= 0.05 * 105
    check(spec, 105, 100, True)
    check(spec, 100, 95.3, True)  # 4.7 <= 0.05 * 100
    check(spec, 100, 106, False)  # 6 > 0.05 * 106 = 5.3
    check(spec, 100, 94, False)
    assert make_comparator(FieldSpec.model_validate(spec)).label == (
        "NUMERIC_EXACT (relative tolerance: 0.05)"
    )


def test_numeric_reasons() -> None:
    comparator = make_comparator(FieldSpec(method="NUMERIC_EXACT", threshold=0.01))
    assert comparator.label == "NUMERIC_EXACT (tolerance: 0.01)"
    a, b, c = comparator.prepare("10"), comparator.prepare("10.01"), comparator.prepare("x")
    assert comparator.reason(a, a, 1.0) == "Exact numeric match"
    assert comparator.reason(a, b, 1.0) == "Numbers match within tolerance"
    assert comparator.reason(a, c, 0.0) == "The predicted value is not a number"
    assert comparator.reason(c, a, 0.0) == "The expected value is not a number"


@pytest.mark.parametrize(
    ("expected", "predicted", "shown"),
    [
        ("-20", "-200", "-20 vs -200"),
        ("123456.78", "123456.79", "123456.78 vs 123456.79"),  # :g showed 123457 twice
        ("1e-7", "2e-7", "1e-07 vs 2e-07"),
        ("RM7.42", "7.43", "7.42 vs 7.43"),
        ("12345678901", "12345678902", "12345678901 vs 12345678902"),
    ],
)
def test_differing_numbers_never_read_alike(expected: str, predicted: str, shown: str) -> None:
    comparator = make_comparator(FieldSpec(method="NUMERIC_EXACT"))
    reason = comparator.reason(comparator.prepare(expected), comparator.prepare(predicted), 0.0)
    assert reason == f"Numbers differ ({shown})"


# --- FUZZY ----------------------------------------------------------------------


def test_fuzzy_ratio_at_and_around_threshold() -> None:
    # 1 - indel distance / total length: "abcde" vs "abcdf" is 1 - 2/10.
    assert fuzz.ratio("abcde", "abcdf") == 80.0
    assert fuzz.ratio("abcdefghij", "abcdefghix") == 90.0
    assert fuzz.ratio("abcd", "abce") == 75.0
    spec = {"method": "FUZZY", "threshold": 0.8}
    check(spec, "abcde", "abcdf", True)  # exactly at the threshold
    check(spec, "abcdefghij", "abcdefghix", True)  # above
    check(spec, "abcd", "abce", False)  # below
    check(spec, "ABCDE", "  abcdf ", True)  # trimmed and lower-cased first


@pytest.mark.parametrize(
    ("expected", "predicted"),
    [("Jon Smith", "John Smith"), ("ACME Corporation", "Acme Corp"), ("kitten", "sitting")],
)
def test_fuzzy_ratio_threshold_boundary_is_inclusive(expected: str, predicted: str) -> None:
    score = fuzz.ratio(expected.lower(), predicted.lower()) / 100
    assert 0 < score < 1
    assert decide(FieldSpec(method="FUZZY", threshold=score), expected, predicted)
    assert decide(FieldSpec(method="FUZZY", threshold=score - 1e-9), expected, predicted)
    assert not decide(FieldSpec(method="FUZZY", threshold=score + 1e-9), expected, predicted)
    assert engine_outcome({"method": "FUZZY", "threshold": score}, expected, predicted) == "TP"
    assert (
        engine_outcome({"method": "FUZZY", "threshold": score + 1e-9}, expected, predicted) == "FD"
    )


def test_fuzzy_token_set_ratio() -> None:
    # One token set is contained in the other: token_set_ratio is 100, ratio is not.
    a, b = "ACME Corp", "corp acme inc"
    assert fuzz.token_set_ratio(a.lower(), b.lower()) == 100.0
    assert fuzz.ratio(a.lower(), b.lower()) < 70
    check({"method": "FUZZY", "threshold": 0.9, "fuzzy_scorer": "token_set_ratio"}, a, b, True)
    check({"method": "FUZZY", "threshold": 0.9}, a, b, False)
    # around the threshold
    c, d = "first street north", "north first road"
    score = fuzz.token_set_ratio(c, d) / 100
    assert 0 < score < 1
    spec = FieldSpec(method="FUZZY", threshold=score, fuzzy_scorer="token_set_ratio")
    assert decide(spec, c, d)
    above = FieldSpec(method="FUZZY", threshold=score + 1e-9, fuzzy_scorer="token_set_ratio")
    assert not decide(above, c, d)


def test_fuzzy_partial_ratio() -> None:
    a, b = "acme", "Acme Corporation Ltd"
    assert fuzz.partial_ratio(a, b.lower()) == 100.0
    check({"method": "FUZZY", "threshold": 0.95, "fuzzy_scorer": "partial_ratio"}, a, b, True)
    check({"method": "FUZZY", "threshold": 0.95}, a, b, False)
    c, d = "acme", "xacne corporation"
    score = fuzz.partial_ratio(c, d) / 100
    assert 0 < score < 1
    assert decide(FieldSpec(method="FUZZY", threshold=score, fuzzy_scorer="partial_ratio"), c, d)
    assert not decide(
        FieldSpec(method="FUZZY", threshold=score + 1e-9, fuzzy_scorer="partial_ratio"), c, d
    )


def test_fuzzy_reason_and_label() -> None:
    comparator = make_comparator(FieldSpec(method="FUZZY", threshold=0.8))
    assert comparator.label == "FUZZY (threshold: 0.8)"
    assert comparator.reason("a", "a", 1.0) == "Exact match"
    assert comparator.reason("a", "b", 0.85) == "Similarity 0.85 >= threshold 0.8"
    assert comparator.reason("a", "b", 0.5) == "Similarity 0.50 below threshold 0.8"
    token = make_comparator(FieldSpec(method="FUZZY", fuzzy_scorer="token_set_ratio"))
    assert token.label == "FUZZY (token_set_ratio, threshold: 0.7)"


# --- LEVENSHTEIN ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "predicted", "distance", "length"),
    [
        ("abcdefghij", "abcdefgxyz", 3, 10),
        ("abcdefghij", "abcdefwxyz", 4, 10),
        ("abcdefghij", "abcdefghiz", 1, 10),
        ("kitten", "sitting", 3, 7),
        ("Hello  World", "hello world", 0, 11),  # lower-cased, white space collapsed
        ("abc", "abcdef", 3, 6),
    ],
)
def test_levenshtein_score_is_one_minus_distance_over_length(
    expected: str, predicted: str, distance: int, length: int
) -> None:
    comparator = make_comparator(FieldSpec(method="LEVENSHTEIN"))
    left, right = comparator.prepare(expected), comparator.prepare(predicted)
    assert Levenshtein.distance(left, right) == distance
    assert comparator.score(left, right) == pytest.approx(1 - distance / length, abs=1e-12)


def test_levenshtein_at_and_around_threshold() -> None:
    spec = {"method": "LEVENSHTEIN", "threshold": 0.7}
    check(spec, "abcdefghij", "abcdefgxyz", True)  # 1 - 3/10, at the threshold
    check(spec, "abcdefghij", "abcdefghiz", True)  # 0.9
    check(spec, "abcdefghij", "abcdefwxyz", False)  # 0.6
    check({"method": "LEVENSHTEIN", "threshold": 4 / 7}, "kitten", "sitting", True)
    check({"method": "LEVENSHTEIN", "threshold": 4 / 7 + 1e-9}, "kitten", "sitting", False)
    check({"method": "LEVENSHTEIN"}, "ABCDEFGHIJ", "abcdefgxyz", True)  # default 0.7


# --- DATE -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("order", "expected", "predicted", "match"),
    [
        ("month_first", "01/02/2024", "2024-01-02", True),
        ("month_first", "01/02/2024", "2024-02-01", False),
        ("day_first", "01/02/2024", "2024-02-01", True),
        ("day_first", "01/02/2024", "2024-01-02", False),
        ("month_first", "Jan 15, 2024", "15/01/2024", True),  # 15 can only be the day
        ("day_first", "Jan 15, 2024", "01/15/2024", True),
        ("month_first", "2024-01-15T10:00:00Z", "20240115", True),
        ("month_first", "15 January 2024", "2024/01/15", True),
        ("month_first", "2024-01-15", "2024-01-16", False),
        ("month_first", "not a date", "Not  a DATE", True),  # text fallback
        ("month_first", "not a date", "2024-01-15", False),
    ],
)
def test_date_same_day_in_any_format(
    order: str, expected: str, predicted: str, match: bool
) -> None:
    check({"method": "DATE", "date_order": order}, expected, predicted, match)


def test_date_reasons() -> None:
    comparator = make_comparator(FieldSpec(method="DATE"))
    day = comparator.prepare("2024-01-15")
    text = comparator.prepare("soon")
    assert comparator.reason(day, day, 1.0) == "Same date"
    assert comparator.reason(day, comparator.prepare("2024-01-16"), 0.0) == "Different dates"
    assert comparator.reason(day, text, 0.0) == "The predicted value is not a date; texts differ"
    assert make_comparator(FieldSpec(method="DATE", date_order="day_first")).label == (
        "DATE (day first)"
    )


# --- threshold defaults and the reported threshold ------------------------------


def test_default_thresholds() -> None:
    assert FieldSpec(method="FUZZY").effective_threshold == 0.7
    assert FieldSpec(method="LEVENSHTEIN").effective_threshold == 0.7
    assert FieldSpec(method="NUMERIC_EXACT").effective_threshold == 0.0
    assert FieldSpec().effective_method == "EXACT"
    with pytest.raises(ValueError, match="must be in"):
        FieldSpec(method="FUZZY", threshold=1.5)


def test_reported_threshold_decides_exact_rows() -> None:
    """A row's outcome follows its own reported threshold (DESIGN §3: TP iff score >=
    threshold). EXACT accepts a threshold, reports it on every row, but decides with
    a fixed 1.0: with threshold 0 a row reads "score 0.0, threshold 0.0, FD"."""
    comparison = FieldComparer(one_field_schema({"method": "EXACT", "threshold": 0.0})).compare(
        {"F": "abc"}, {"F": "xyz"}
    )
    (row,) = comparison.row_dicts()
    assert row["threshold"] == 0.0
    assert row["score"] == 0.0
    assert (row["outcome"] == "TP") is (row["score"] >= row["threshold"])


# --- SEMANTIC / LLM need a provider ---------------------------------------------


def _provider_fields(shape: str, method: str) -> dict[str, Any]:
    rule = {"method": method}
    return {
        "scalar": {"Summary": rule},
        "group": {"Addr": {"fields": {"Note": rule}}},
        "list of objects": {"Items": {"items": {"fields": {"desc": rule}}}},
        "list of scalars": {"Tags": {"items": rule}},
    }[shape]


@pytest.mark.parametrize("method", ["SEMANTIC", "LLM"])
@pytest.mark.parametrize(
    ("shape", "path"),
    [
        ("scalar", "$.Summary"),
        ("group", "$.Addr.Note"),
        ("list of objects", "$.Items[].desc"),
        ("list of scalars", "$.Tags[]"),
    ],
)
def test_provider_methods_without_provider_fail_when_built(
    method: str, shape: str, path: str
) -> None:
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "Doc", "fields": _provider_fields(shape, method)}]}
    )
    with pytest.raises(ConfigurationError) as caught:
        FieldComparer(schema)
    assert caught.value.path == path
    assert path in str(caught.value)
    assert method in str(caught.value)


def test_provider_error_comes_before_any_document_is_read() -> None:
    schema = one_field_schema({"method": "SEMANTIC"})

    def documents() -> Any:
        raise AssertionError("documents were read")
        yield  # pragma: no cover

    with pytest.raises(ConfigurationError, match=r"\$\.F"):
        compare_documents(documents(), schema)


class LengthComparator:
    """A stand-in provider: texts are similar when their lengths are."""

    method = "SEMANTIC"
    label = "SEMANTIC (length)"

    def __init__(self, spec: FieldSpec) -> None:
        self.threshold = spec.effective_threshold
        self.calls: list[str] = []

    def prepare(self, value: Any) -> Any:
        return len(str(value))

    def prepare_many(self, values: Sequence[Any]) -> tuple[list[bool], list[Any]]:
        self.calls.append("prepare_many")
        return [not is_empty(v) for v in values], [self.prepare(v) for v in values]

    def score(self, expected: Any, predicted: Any) -> float:
        self.calls.append("score")
        return 1.0 - abs(expected - predicted) / max(expected, predicted, 1)

    def matrix(self, expected: Sequence[Any], predicted: Sequence[Any]) -> Any:
        self.calls.append("matrix")
        return np.array([[self.score(a, b) for b in predicted] for a in expected], dtype=float)

    def pairwise(
        self, expected: Sequence[Any], predicted: Sequence[Any], left: Any, right: Any
    ) -> Any:
        self.calls.append("pairwise")
        return np.array(
            [self.score(expected[i], predicted[j]) for i, j in zip(left, right, strict=True)],
            dtype=float,
        )

    def reason(self, expected: Any, predicted: Any, score: float) -> str:
        return f"length similarity {score:.2f}"

    def config(self) -> dict[str, Any]:
        return {"method": self.method}


def test_custom_provider_factory_is_used() -> None:
    built: list[LengthComparator] = []
    specs: list[FieldSpec] = []

    def factory(spec: FieldSpec) -> LengthComparator:
        specs.append(spec)
        comparator = LengthComparator(spec)
        built.append(comparator)
        return comparator

    schema = DocumentSchema.model_validate(
        {
            "classes": [
                {
                    "name": "Doc",
                    "fields": {
                        "Summary": {"method": "SEMANTIC", "threshold": 0.8},
                        "Items": {
                            "items": {"fields": {"desc": {"method": "SEMANTIC", "threshold": 0.8}}}
                        },
                    },
                }
            ]
        }
    )
    comparer = FieldComparer(schema, providers={"SEMANTIC": factory})
    assert len(built) == 2
    assert [spec.threshold for spec in specs] == [0.8, 0.8]

    # 10 vs 8 characters: 1 - 2/10 = 0.8, at the threshold; 10 vs 7: 0.7, below.
    comparison = comparer.compare(
        {"Summary": "abcdefghij", "Items": [{"desc": "abcdefghij"}]},
        {"Summary": "zzzzzzzz", "Items": [{"desc": "zzzzzzz"}]},
    )
    rows = {row["path"]: row for row in comparison.row_dicts()}
    assert rows["$.Summary"]["outcome"] == "TP"
    assert rows["$.Summary"]["method"] == "SEMANTIC (length)"
    assert rows["$.Summary"]["reason"] == "length similarity 0.80"
    assert rows["$.Summary"]["score"] == pytest.approx(0.8)
    assert rows["$.Items[0].desc"]["outcome"] == "FD"
    assert rows["$.Items[0].desc"]["score"] == pytest.approx(0.7)
    assert "score" in built[0].calls
    assert "matrix" in built[1].calls

    # Several documents at once: the list's scores come from pairwise.
    documents = comparer.compare_many(
        [
            ({"Items": [{"desc": "abcd"}]}, {"Items": [{"desc": "wxyz"}]}, {}),
            ({"Items": [{"desc": "ab"}]}, {"Items": [{"desc": "abcdefgh"}]}, {}),
        ]
    )
    assert "pairwise" in built[1].calls
    # The second pair (2 vs 8 characters) is below the match threshold: a weak pair,
    # its description one FD.
    assert [d.cells["$.Items[].desc"] for d in documents] == [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0]]
    assert [d.items["$.Items"] for d in documents] == [[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0]]


def test_provider_for_llm_method() -> None:
    schema = one_field_schema({"method": "LLM"})

    class Always:
        method = "LLM"
        threshold = 0.5
        label = "LLM (judge)"

        def prepare(self, value: Any) -> Any:
            return value

        def score(self, expected: Any, predicted: Any) -> float:
            return 0.5

        def reason(self, expected: Any, predicted: Any, score: float) -> str:
            return "judge says yes"

    comparer = FieldComparer(schema, providers={"LLM": lambda spec: Always()})  # type: ignore[arg-type,return-value]
    (row,) = comparer.compare({"F": "a"}, {"F": "b"}).row_dicts()
    assert (row["outcome"], row["method"], row["reason"]) == ("TP", "LLM (judge)", "judge says yes")


# --- score, matrix and pairwise agree -------------------------------------------

COMPARATOR_SPECS = [
    FieldSpec(method="EXACT"),
    FieldSpec(method="EXACT", case_sensitive=False),
    FieldSpec(method="NORMALIZED"),
    FieldSpec(method="NORMALIZED", case_sensitive=True),
    FieldSpec(method="NUMERIC_EXACT"),
    FieldSpec(method="NUMERIC_EXACT", threshold=0.01),
    FieldSpec(method="NUMERIC_EXACT", threshold=0.5, relative_tolerance=0.1),
    FieldSpec(method="FUZZY", fuzzy_scorer="ratio"),
    FieldSpec(method="FUZZY", fuzzy_scorer="partial_ratio"),
    FieldSpec(method="FUZZY", fuzzy_scorer="token_sort_ratio"),
    FieldSpec(method="FUZZY", fuzzy_scorer="token_set_ratio"),
    FieldSpec(method="LEVENSHTEIN"),
    FieldSpec(method="DATE"),
    FieldSpec(method="DATE", date_order="day_first"),
]

short_text = st.text(alphabet="aAbB1 2.,-$%()/é", max_size=8)
numbers = st.one_of(
    st.integers(-1000, 1000),
    st.floats(-1000, 1000, allow_nan=False).map(lambda x: round(x, 2)),
)
number_text = numbers.map(str) | numbers.map(lambda x: f"${x:,.2f}")
date_text = st.dates().map(lambda d: d.strftime("%m/%d/%Y")) | st.dates().map(
    lambda d: d.isoformat()
)
scalar_values = st.one_of(short_text, numbers, number_text, date_text, st.booleans()).filter(
    lambda value: not is_empty(value)
)


@settings(max_examples=150, deadline=None)
@given(
    spec=st.sampled_from(COMPARATOR_SPECS),
    left=st.lists(scalar_values, min_size=1, max_size=4),
    right=st.lists(scalar_values, min_size=1, max_size=4),
)
def test_score_matrix_and_pairwise_agree(
    spec: FieldSpec, left: list[Any], right: list[Any]
) -> None:
    comparator = make_comparator(spec)
    left_keys = [comparator.prepare(value) for value in left]
    right_keys = [comparator.prepare(value) for value in right]
    matrix = comparator.matrix(left_keys, right_keys)
    assert matrix.shape == (len(left), len(right))
    rows, cols = np.meshgrid(np.arange(len(left)), np.arange(len(right)), indexing="ij")
    pairwise = comparator.pairwise(left_keys, right_keys, rows.ravel(), cols.ravel())
    for i, a in enumerate(left_keys):
        for j, b in enumerate(right_keys):
            score = comparator.score(a, b)
            assert 0.0 <= score <= 1.0
            assert score == matrix[i, j]
            assert score == pairwise[i * len(right) + j]
            single = comparator.matrix([a], [b])[0, 0]
            assert score == single


@settings(max_examples=100, deadline=None)
@given(
    spec=st.sampled_from(COMPARATOR_SPECS),
    values=st.lists(scalar_values | st.sampled_from([None, "", "  ", [], {}]), max_size=6),
    all_text=st.booleans(),
)
def test_prepare_many_matches_prepare(spec: FieldSpec, values: list[Any], all_text: bool) -> None:
    if all_text:
        values = [value if isinstance(value, str) else "" for value in values]
    comparator = make_comparator(spec)
    present, keys = comparator.prepare_many(values)
    assert present == [not is_empty(value) for value in values]
    for value, flag, key in zip(values, present, keys, strict=True):
        if flag:
            expected_key = comparator.prepare(value)
            assert key == expected_key or (key != key and expected_key != expected_key)  # NaN
