"""A corpus of bad inputs for every ``docevals`` command (issue 16).

Each module holds the cases of a few commands; ``tests/test_bad_input_corpus.py``
runs them all. A case writes its inputs into an empty folder, which is the working
directory while it runs, and returns the command line.
"""

from __future__ import annotations

from tests.bad_inputs import (
    dashboards,
    evaluation,
    fields,
    groundtruth,
    labels,
    packets,
    runs,
    statistics,
    text,
    traces,
)
from tests.bad_inputs.case import BadInput

CASES: list[BadInput] = [
    *evaluation.CASES,
    *fields.CASES,
    *packets.CASES,
    *labels.CASES,
    *groundtruth.CASES,
    *runs.CASES,
    *dashboards.CASES,
    *traces.CASES,
    *statistics.CASES,
    *text.CASES,
]

__all__ = ["CASES", "BadInput"]
