"""The package's own field methods, one :class:`FieldMethod` record each."""

from __future__ import annotations

from typing import TYPE_CHECKING

from docevals_mlflow.fields.method_records import FieldMethod, MethodOption

if TYPE_CHECKING:
    from docevals_mlflow.fields.methods import Comparator
    from docevals_mlflow.fields.schema import FieldSpec

# ---------------------------------------------------------------------------- built-ins
# The factories import the comparators when first called: the comparators' module
# imports the schema, which imports this module.


def _exact(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import ExactComparator

    return ExactComparator(
        case_sensitive=spec.case_sensitive is not False, threshold=spec.effective_threshold
    )


def _normalized(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import NormalizedComparator

    return NormalizedComparator(
        case_sensitive=bool(spec.case_sensitive), threshold=spec.effective_threshold
    )


def _numeric(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.numeric_method import NumericComparator

    return NumericComparator(
        tolerance=spec.effective_threshold, relative_tolerance=spec.relative_tolerance
    )


def _fuzzy(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.text_methods import FuzzyComparator

    return FuzzyComparator(threshold=spec.effective_threshold, scorer=spec.fuzzy_scorer)


def _levenshtein(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.text_methods import LevenshteinComparator

    return LevenshteinComparator(threshold=spec.effective_threshold)


def _anls_star(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.anls_method import AnlsStarComparator

    return AnlsStarComparator(threshold=spec.effective_threshold)


def _date(spec: FieldSpec) -> Comparator:
    from docevals_mlflow.fields.methods import DateComparator

    return DateComparator(order=spec.date_order, threshold=spec.effective_threshold)


# Every built-in method: identical text is never a mismatch ("RM7.42" is "RM7.42"
# whatever a parser makes of it), so they all take the fast path.
BUILTIN_METHODS: tuple[FieldMethod, ...] = (
    FieldMethod(
        name="EXACT",
        default_threshold=1.0,
        factory=_exact,
        options=(MethodOption("case_sensitive"),),
        identical_text_matches=True,
        threshold_in_list_label=False,
        idp_list_comparator="EXACT",
        stickler_names=("ExactComparator", "exact"),
        explanation="the values are identical as text (case-sensitive unless the label says "
        "otherwise); score 1 or 0.",
    ),
    FieldMethod(
        name="NORMALIZED",
        default_threshold=1.0,
        factory=_normalized,
        options=(MethodOption("case_sensitive"),),
        identical_text_matches=True,
        threshold_in_list_label=False,
        stickler_names=("NormalizedComparator", "normalized"),
        explanation="equal after Unicode normalisation, case folding and removing "
        "punctuation and extra whitespace; score 1 or 0.",
    ),
    FieldMethod(
        name="NUMERIC_EXACT",
        default_threshold=0.0,  # an absolute tolerance, as in the IDP format
        threshold_kind="tolerance",
        factory=_numeric,
        options=(MethodOption("relative_tolerance"),),
        identical_text_matches=True,
        list_label="NUMERIC",
        threshold_in_list_label=False,
        idp_list_comparator="NUMERIC",
        stickler_names=("NumericComparator", "numeric"),
        explanation="both values read as numbers (currency and unit markers and "
        "thousands separators removed) and equal within the tolerance shown; text that is "
        "not a number matches only identical text.",
    ),
    FieldMethod(
        name="FUZZY",
        default_threshold=0.7,
        factory=_fuzzy,
        options=(MethodOption("fuzzy_scorer"),),
        identical_text_matches=True,
        threshold_in_list_label=True,
        idp_list_comparator="FUZZY",
        stickler_names=("FuzzyComparator", "fuzzy"),
        explanation="similarity from 0 to 1 of the trimmed, lower-cased texts (rapidfuzz); a "
        "match when the score reaches the threshold shown (inclusive).",
    ),
    FieldMethod(
        name="LEVENSHTEIN",
        default_threshold=0.7,
        factory=_levenshtein,
        identical_text_matches=True,
        threshold_in_list_label=True,
        stickler_names=("LevenshteinComparator", "levenshtein"),
        explanation="1 − edit distance / length of the longer lower-cased text; a match "
        "when the score reaches the threshold.",
    ),
    FieldMethod(
        name="DATE",
        default_threshold=1.0,
        factory=_date,
        options=(MethodOption("date_order"),),
        identical_text_matches=True,
        threshold_in_list_label=False,
        stickler_names=("DateComparator", "date"),
        explanation="both values read as calendar dates (in any format) and the same day.",
    ),
    FieldMethod(
        name="ANLS_STAR",
        default_threshold=0.5,
        factory=_anls_star,
        identical_text_matches=True,
        threshold_in_list_label=True,
        stickler_names=("AnlsStarComparator", "anls_star", "ANLSStarComparator"),
        structured_values=True,
        explanation="ANLS* (the DocVQA similarity, extended to lists, dicts and None): "
        "1 - edit distance / longer length of trimmed, lower-cased text, 0 below 0.5; lists "
        "matched item to item, dicts key by key; a match when the score reaches the threshold.",
    ),
    FieldMethod(
        name="SEMANTIC",
        default_threshold=0.7,
        provider=True,
        identical_text_matches=True,
        threshold_in_list_label=False,
        stickler_names=("SemanticComparator", "semantic"),
        explanation="cosine similarity of text embeddings; a match when it reaches the threshold.",
    ),
    FieldMethod(
        name="LLM",
        default_threshold=0.5,
        provider=True,
        identical_text_matches=True,
        threshold_in_list_label=False,
        stickler_names=("LLMComparator", "llm"),
        explanation="an LLM judges whether the values mean the same; its reason is shown.",
    ),
)
"""The package's own methods, in the order schemas, messages and reports list them."""

BUILTINS: dict[str, FieldMethod] = {method.name: method for method in BUILTIN_METHODS}
BUILTIN_NAMES: frozenset[str] = frozenset(BUILTINS)
