"""``--dashboard FILE`` on every command that makes a dashboard: an output that is an
input (the same file, a symlink, a hard link), another output, or a folder exits 2
before any work, naming both paths."""

from __future__ import annotations

from tests.bad_inputs.case import Corpus, folder, hard_link, symlink
from tests.bad_inputs.evaluation import (
    case_report,
    evaluate_case,
    evaluate_pipeline,
    suite_argv,
    write_pipeline,
)
from tests.bad_inputs.fields import documents, fields
from tests.bad_inputs.packets import split_argv
from tests.bad_inputs.runs import compare_argv, fields_report

fields_corpus = Corpus("fields")
case_corpus = Corpus("evaluate-case")
pipeline_corpus = Corpus("evaluate-pipeline")
suite_corpus = Corpus("suite")
split_corpus = Corpus("split")
compare_corpus = Corpus("compare")


@fields_corpus.case(
    "dashboard-is-predicted",
    "output-clash",
    "--dashboard pred.jsonl is the same file as --predicted pred.jsonl",
)
def _() -> list[str]:
    documents()
    return fields("--dashboard", "pred.jsonl")


@fields_corpus.case(
    "dashboard-equals-output", "output-clash", "--output r.json and --dashboard r.json"
)
def _() -> list[str]:
    return fields("--dashboard", "r.json")


@case_corpus.case(
    "dashboard-links-to-prediction",
    "output-clash",
    "--dashboard d.html",
    "is the same file as --prediction p.json",
)
def _() -> list[str]:
    argv = evaluate_case("--dashboard", "d.html")
    symlink("d.html", "p.json")
    return argv


@pipeline_corpus.case(
    "dashboard-hard-link-to-config",
    "output-clash",
    "--dashboard copy.html is the same file as the configuration pipeline.yaml",
)
def _() -> list[str]:
    write_pipeline()
    hard_link("copy.html", "pipeline.yaml")
    return evaluate_pipeline("pipeline.yaml", "--dashboard", "copy.html")


@suite_corpus.case(
    "dashboard-is-a-report",
    "output-clash",
    "--dashboard case.json is the same file as report case.json",
)
def _() -> list[str]:
    report = case_report()
    return suite_argv(report, extra=("--dashboard", report))


@split_corpus.case("dashboard-is-a-folder", "output-clash", "--dashboard d.html is a folder")
def _() -> list[str]:
    folder("d.html")
    return split_argv("--dashboard", "d.html")


@compare_corpus.case(
    "dashboard-is-a-run", "output-clash", "--dashboard v1.json is the same file as run v1.json"
)
def _() -> list[str]:
    return compare_argv(
        fields_report("v1"), fields_report("v2", 3), extra=("--dashboard", "v1.json")
    )


CASES = [
    *fields_corpus.cases,
    *case_corpus.cases,
    *pipeline_corpus.cases,
    *suite_corpus.cases,
    *split_corpus.cases,
    *compare_corpus.cases,
]
