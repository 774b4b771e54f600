"""Bad inputs of ``docevals plan`` and ``docevals repeats`` (issue 21)."""

from __future__ import annotations

from tests.bad_inputs.case import STORE, Corpus, put
from tests.bad_inputs.runs import fields_report

plan = Corpus("plan")
repeats = Corpus("repeats")
READ_FROM = ("--tracking-uri", STORE)
"""``repeats`` reads runs by name from a store: never the default one."""


@plan.case("report-malformed", "malformed", "bad.json: malformed JSON at line 1, column 20")
def _() -> list[str]:
    put("bad.json", '{"kind": "fields", ')
    return ["plan", "--report", "bad.json", "--half-width", "0.03"]


@plan.case("report-missing", "missing", "missing.json: report not found")
def _() -> list[str]:
    return ["plan", "--report", "missing.json", "--half-width", "0.03"]


@plan.case("report-empty", "empty", "empty.json: the file is empty")
def _() -> list[str]:
    put("empty.json", "")
    return ["plan", "--report", "empty.json", "--half-width", "0.03"]


@plan.case("half-width-out-of-range", "bad-number", "half-width 2 (expected a value between 0")
def _() -> list[str]:
    return ["plan", "--report", fields_report("v1"), "--half-width", "2"]


@plan.case("unknown-field", "dangling-reference", "v1.json: unknown field '$.nope'")
def _() -> list[str]:
    return ["plan", "--report", fields_report("v1"), "--half-width", "0.03", "--field", "$.nope"]


@repeats.case("one-run", "bad-option", "1 run given (expected at least 2 repeat runs)", store=True)
def _() -> list[str]:
    return ["repeats", fields_report("v1"), *READ_FROM]


@repeats.case(
    "flip-rate-out-of-range", "bad-number", "--max-flip-rate 2 (expected a share", store=True
)
def _() -> list[str]:
    report = fields_report("v1")
    return ["repeats", report, report, "--max-flip-rate", "2", *READ_FROM]


@repeats.case("run-report-empty", "empty", "empty.json: the file is empty", store=True)
def _() -> list[str]:
    put("empty.json", "")
    return ["repeats", fields_report("v1"), "empty.json", *READ_FROM]


@repeats.case(
    "output-is-an-input", "output-clash", "--output v1.json is the same file as run", store=True
)
def _() -> list[str]:
    report = fields_report("v1")
    return ["repeats", report, report, "--output", report, *READ_FROM]


CASES = [*plan.cases, *repeats.cases]
