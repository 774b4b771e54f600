"""``--traces`` on the commands that log case and pipeline traces: a value that is not
``all``, ``errors``, ``none`` or a whole number is a usage error naming it."""

from __future__ import annotations

from tests.bad_inputs.case import Corpus
from tests.bad_inputs.evaluation import (
    case_report,
    evaluate_case,
    evaluate_pipeline,
    suite_argv,
    write_pipeline,
)

case_corpus = Corpus("evaluate-case")
pipeline_corpus = Corpus("evaluate-pipeline")
suite_corpus = Corpus("suite")


@case_corpus.case(
    "traces-word", "bad-option", "argument --traces: invalid value 'every'", usage=True
)
def _() -> list[str]:
    return evaluate_case("--traces", "every")


@pipeline_corpus.case(
    "traces-fraction", "bad-number", "argument --traces: invalid value '2.5'", usage=True
)
def _() -> list[str]:
    write_pipeline()
    return evaluate_pipeline("pipeline.yaml", "--traces", "2.5")


@suite_corpus.case(
    "traces-negative", "bad-number", "argument --traces: invalid value '-1'", usage=True
)
def _() -> list[str]:
    return suite_argv(case_report(), extra=("--traces=-1",))


CASES = [*case_corpus.cases, *pipeline_corpus.cases, *suite_corpus.cases]
