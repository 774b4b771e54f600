"""What moved between two runs: logged metric deltas, judge members' pass rates and
votes, and the cases or documents whose verdict flipped (with the votes that changed).

Tables are pandas DataFrames, built once at the end of each function (pandas is
imported lazily so that ``import docevals_mlflow`` stays light).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from docevals_mlflow.compare.align import AlignedCases, AlignedDocuments
from docevals_mlflow.compare.snapshot import RunSnapshot, VoteTable
from docevals_mlflow.core.statistics import cohen_kappa

if TYPE_CHECKING:
    import pandas as pd

SCOPES = (
    "Summary",
    "overall",
    "field",
    "class",
    "list",
    "stage",
    "cascade",
    "metric",
    "judge",
    "panel",
    "calibration",
    "review_budget",
    "review_threshold",
    "disagreement_budget",
    "disagreement_threshold",
    "usage",
)
"""Metric key prefixes in display order; other prefixes follow, alphabetically."""
METRIC_COLUMNS = ["key", "scope", "subject", "statistic", "baseline", "candidate", "delta"]
FLIP_COLUMNS = ["unit", "id", "stage", "group", "baseline", "candidate", "change", "why"]
"""``group`` is the operation of a case, the class of a document."""
JUDGE_COLUMNS = [
    "metric",
    "member",
    "baseline_model",
    "candidate_model",
    "baseline_pass_rate",
    "candidate_pass_rate",
    "delta",
    "votes_matched",
    "votes_changed",
    "kappa",
]
ARROW = "→"
COUNT_STATISTICS = frozenset(
    {
        "tp",
        "fa",
        "fd",
        "fn",
        "tn",
        "documents",
        "matched",
        "missed",
        "extra",
        "expected_only",
        "predicted_only",
        "cases",
        "stages",
        "errors",
        "requests",
        "input_tokens",
        "output_tokens",
        "fields",
        "reviewed",
        "co_failures",
        "upstream_failures",
    }
)
"""Statistics that are counts, not rates (shown after the rates, as whole numbers)."""


def _split_key(key: str, snapshots: Sequence[RunSnapshot]) -> tuple[str, str, str]:
    """``field/Transactions.Amount/f1`` → ``("field", "$.Transactions[].Amount", "f1")``."""
    parts = key.split("/")
    scope = parts[0]
    if len(parts) < 3:
        return scope, "", "/".join(parts[1:])
    segment = parts[1]
    subject = segment
    for snapshot in snapshots:
        found = snapshot.source_of(scope, segment)
        if found != segment:
            subject = found
            break
    return scope, subject, "/".join(parts[2:])


def _scope_rank(scope: str) -> tuple[int, str]:
    return (SCOPES.index(scope), "") if scope in SCOPES else (len(SCOPES), scope)


def metric_deltas(baseline: RunSnapshot, candidate: RunSnapshot) -> pd.DataFrame:
    """Every metric either run logged: both values and ``candidate - baseline``.

    ``subject`` is the field template, class, stage or judge a key segment stands for
    (from ``metrics_index.json``). A metric one run did not log (undefined there) has
    NaN for that run and for the delta.
    """
    import pandas as pd

    keys = sorted(
        set(baseline.metrics) | set(candidate.metrics),
        key=lambda key: (_scope_rank(key.split("/")[0]), key),
    )
    rows = []
    for key in keys:
        scope, subject, statistic = _split_key(key, (baseline, candidate))
        first = baseline.metrics.get(key, np.nan)
        second = candidate.metrics.get(key, np.nan)
        rows.append((key, scope, subject, statistic, first, second, second - first))
    return pd.DataFrame.from_records(rows, columns=METRIC_COLUMNS)


# --------------------------------------------------------------------------- judges


def _votes_by_case(
    votes: VoteTable | None,
) -> dict[tuple[str, str], dict[tuple[str, str], str | None]]:
    out: dict[tuple[str, str], dict[tuple[str, str], str | None]] = {}
    if votes is None:
        return out
    for case, stage, metric, member, verdict in zip(
        votes.case_id, votes.stage_id, votes.metric, votes.member, votes.verdict, strict=True
    ):
        out.setdefault((case, stage), {})[metric, member] = verdict
    return out


def _member_models(votes: VoteTable | None) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    if votes is None:
        return out
    for metric, member, provider, model in zip(
        votes.metric, votes.member, votes.provider, votes.model, strict=True
    ):
        if provider or model:
            out.setdefault((metric, member), f"{provider or '?'}:{model or '?'}")
    return out


def _pass_rate(verdicts: Sequence[str | None]) -> float:
    decided = [verdict for verdict in verdicts if verdict is not None]
    return sum(verdict == "pass" for verdict in decided) / len(decided) if decided else np.nan


def judge_deltas(baseline: RunSnapshot, candidate: RunSnapshot) -> pd.DataFrame:
    """Per judge (panel member or single judge): pass rates in both runs and, where
    both runs kept the votes, how many votes on the same stages changed and Cohen's
    kappa between the member's votes in the two runs.

    Without votes the pass rates come from the runs' ``judge/<member>/pass_rate``
    metrics and the vote columns are empty.
    """
    import pandas as pd

    if baseline.votes is not None or candidate.votes is not None:
        rows = _vote_rows(baseline.votes, candidate.votes)
    else:
        rows = _pass_rate_rows(baseline, candidate)
    return pd.DataFrame.from_records(rows, columns=JUDGE_COLUMNS)


def _vote_rows(first: VoteTable | None, second: VoteTable | None) -> list[tuple[Any, ...]]:
    """One row per member from the votes both runs kept."""
    first_cases, second_cases = _votes_by_case(first), _votes_by_case(second)
    first_models, second_models = _member_models(first), _member_models(second)
    members: dict[tuple[str, str], None] = {}
    for table in (first, second):
        if table is not None:
            members.update(dict.fromkeys(zip(table.metric, table.member, strict=True)))
    rows = []
    for member in members:
        first_all = [votes[member] for votes in first_cases.values() if member in votes]
        second_all = [votes[member] for votes in second_cases.values() if member in votes]
        paired = [
            (votes[member], second_cases[case][member])
            for case, votes in first_cases.items()
            if member in votes and member in second_cases.get(case, {})
        ]
        kappa = (
            cohen_kappa([str(before) for before, _ in paired], [str(after) for _, after in paired])
            if paired
            else None
        )
        rate_a, rate_b = _pass_rate(first_all), _pass_rate(second_all)
        rows.append(
            (
                member[0],
                member[1],
                first_models.get(member),
                second_models.get(member),
                rate_a,
                rate_b,
                rate_b - rate_a,
                len(paired),
                sum(before != after for before, after in paired),
                np.nan if kappa is None else kappa,
            )
        )
    return rows


def _pass_rate_rows(baseline: RunSnapshot, candidate: RunSnapshot) -> list[tuple[Any, ...]]:
    """One row per judge from the logged ``judge/<member>/pass_rate`` metrics."""
    rows: list[tuple[Any, ...]] = []
    segments = dict.fromkeys(
        key.split("/")[1]
        for snapshot in (baseline, candidate)
        for key in snapshot.metrics
        if key.startswith("judge/") and key.endswith("/pass_rate")
    )
    for segment in segments:
        key = f"judge/{segment}/pass_rate"
        rate_a = baseline.metrics.get(key, np.nan)
        rate_b = candidate.metrics.get(key, np.nan)
        name = baseline.source_of("judge", segment)
        rows.append((None, name, None, None, rate_a, rate_b, rate_b - rate_a, 0, 0, np.nan))
    return rows


# ---------------------------------------------------------------------------- flips


def passed(verdict: str) -> bool:
    """Pass/fail for McNemar: ``pass`` passes; ``fail`` and ``uncertain`` do not."""
    return verdict == "pass"


def _change(first: str, second: str) -> str:
    if passed(first) == passed(second):
        return "changed"
    return "fixed" if passed(second) else "broken"


def _changed_votes(
    first: dict[tuple[str, str], str | None], second: dict[tuple[str, str], str | None]
) -> str:
    parts = []
    for key in dict.fromkeys([*first, *second]):
        a, b = first.get(key, "absent"), second.get(key, "absent")
        if a == b:
            continue
        metric, member = key
        who = metric if member == metric else f"{metric}/{member}"
        parts.append(f"{who}: {a or 'no answer'}{ARROW}{b or 'no answer'}")
    return "; ".join(parts)


def case_flips(
    aligned: AlignedCases, baseline: RunSnapshot, candidate: RunSnapshot
) -> pd.DataFrame:
    """Stages whose verdict differs between the runs, with the judge votes that changed.

    ``change`` is ``fixed`` (now passes), ``broken`` (passed before) or ``changed``
    (say ``fail`` → ``uncertain``, which McNemar does not count).
    """
    import pandas as pd

    first_votes, second_votes = _votes_by_case(baseline.votes), _votes_by_case(candidate.votes)
    rows = []
    for key, operation, first, second in zip(
        aligned.keys, aligned.operations, aligned.baseline, aligned.candidate, strict=True
    ):
        if first == second:
            continue
        why = _changed_votes(first_votes.get(key, {}), second_votes.get(key, {}))
        rows.append(("case", key[0], key[1], operation, first, second, _change(first, second), why))
    return pd.DataFrame.from_records(rows, columns=FLIP_COLUMNS)


def _errors(cells: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    # FA + FD + FN: everything that is not a match or a correct empty.
    return np.asarray(cells[..., 1] + cells[..., 2] + cells[..., 3])


def _error_text(count: int) -> str:
    return f"{count} error" + ("" if count == 1 else "s")


def document_flips(aligned: AlignedDocuments) -> pd.DataFrame:
    """Documents that became fully correct (``fixed``: no FA, FD or FN left) or stopped
    being so (``broken``), with the fields whose error counts changed."""
    import pandas as pd

    first, second = _errors(aligned.baseline) == 0, _errors(aligned.candidate) == 0
    flipped = np.flatnonzero(first != second)
    first_fields, second_fields = (
        _errors(aligned.baseline_fields),
        _errors(aligned.candidate_fields),
    )
    rows = []
    for index in flipped:
        moved = np.flatnonzero(first_fields[index] != second_fields[index])
        why = "; ".join(
            f"{aligned.fields[column]} errors {first_fields[index, column]}{ARROW}"
            f"{second_fields[index, column]}"
            for column in moved
        )
        before = "correct" if first[index] else _error_text(int(_errors(aligned.baseline[index])))
        after = "correct" if second[index] else _error_text(int(_errors(aligned.candidate[index])))
        rows.append(
            (
                "document",
                aligned.ids[index],
                None,
                aligned.classes[index],
                before,
                after,
                "fixed" if second[index] else "broken",
                why,
            )
        )
    return pd.DataFrame.from_records(rows, columns=FLIP_COLUMNS)


def verdict_kappa(first: Sequence[str], second: Sequence[str]) -> float:
    """Cohen's kappa between two runs' verdicts on the same items (NaN: undefined)."""
    value = cohen_kappa(list(first), list(second)) if first else None
    return np.nan if value is None else value
