"""Repeat runs: the same inputs evaluated several times, and how far the outcomes agree.

Given the snapshots of R runs over the same cases (or documents), each unit (a case
stage, or a document of a field run) has R outcomes. Per unit and overall:

* **flip**: the outcomes are not all the same (a case verdict that is ``pass`` in one
  run and ``fail`` or ``uncertain`` in another; a document fully correct in one run
  and not in another);
* **pass^k**: the chance that k repeats drawn without replacement from the R are all
  correct, ``C(c, k) / C(R, k)`` with c correct of R (Yao et al., τ-bench), averaged
  over the units; ``pass^R`` is the share of units correct in every repeat, and
  ``pass^1`` the mean pass rate.

For case runs with judge votes, each judge (panel member) gets its own flip rate, so a
flaky judge shows up beside a nondeterministic extractor. Units missing from some runs
are counted and left out. Pure computation on :class:`RunSnapshot` tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Literal

from pydantic import Field

from docevals_mlflow.compare.snapshot import RunSnapshot
from docevals_mlflow.core.formatting import percent_text
from docevals_mlflow.core.model import DocEvalsModel
from docevals_mlflow.errors import InputError

UnitKind = Literal["case", "document"]


class RepeatUnit(DocEvalsModel):
    """One case stage or document across the repeats."""

    unit: str
    """``case_id`` (with ``/stage_id`` unless the stage is ``output``) or a document id."""
    outcomes: list[str]
    """One outcome per run, in run order (a verdict, or ``correct``/``wrong``)."""
    correct: int
    flipped: bool


class JudgeRepeats(DocEvalsModel):
    """One judge's (or panel member's) verdicts across the repeats."""

    metric: str
    member: str
    units: int
    flip_rate: float | None


class RepeatReport(DocEvalsModel):
    """Flip rate and pass^k over repeat runs (see the module docstring)."""

    kind: Literal["repeats"] = "repeats"
    unit_kind: UnitKind
    runs: list[str]
    run_ids: list[str]
    units: int
    """Units present in every run (the figures are about these)."""
    partial_units: int = 0
    """Units missing from some runs, left out."""
    flip_rate: float | None
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    """``pass^k`` for k = 1..R (``pass_at_k[R]``: correct in every repeat)."""
    per_unit: list[RepeatUnit] = Field(default_factory=list)
    judges: list[JudgeRepeats] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def repeats(self) -> int:
        """How many runs were compared."""
        return len(self.runs)

    def summary_line(self) -> str:
        """``12 cases over 3 repeats: 16.7% flip, pass^3 66.7%, pass^1 80.0%``."""
        if not self.units:
            return f"no {self.unit_kind} is present in all {self.repeats} runs"
        r = self.repeats
        flips = self.flip_rate or 0.0
        return (
            f"{self.units} {self.unit_kind}{'s' if self.units != 1 else ''} over {r} repeats: "
            f"{percent_text(flips)} flip, "
            f"pass^{r} {percent_text(self.pass_at_k[r])}, pass^1 {percent_text(self.pass_at_k[1])}"
        )


def _unit_name(case_id: str, stage_id: str) -> str:
    return case_id if stage_id == "output" else f"{case_id}/{stage_id}"


def _case_outcomes(snapshot: RunSnapshot) -> dict[str, str]:
    table = snapshot.cases
    if table is None:
        return {}
    return {
        _unit_name(case, stage): verdict
        for case, stage, verdict in zip(table.case_id, table.stage_id, table.verdict, strict=True)
    }


def _document_outcomes(snapshot: RunSnapshot) -> dict[str, str]:
    table = snapshot.documents
    if table is None:
        return {}
    wrong = (fa + fd + fn for fa, fd, fn in zip(table.fa, table.fd, table.fn, strict=True))
    return {
        document: "wrong" if errors else "correct"
        for document, errors in zip(table.document_id, wrong, strict=True)
    }


def _kind(snapshots: Sequence[RunSnapshot]) -> UnitKind:
    if all(snapshot.cases is not None for snapshot in snapshots):
        return "case"
    if all(snapshot.documents is not None for snapshot in snapshots):
        return "document"
    shown = ", ".join(
        f"{snapshot.label} ({snapshot.report_kind or 'unknown kind'})" for snapshot in snapshots
    )
    raise InputError(
        f"the runs are not all case or all field runs: {shown}",
        expected="repeats of one evaluation: every run with per-case verdicts, or every run "
        "with per-document results",
    )


def pass_hat_k(correct: int, repeats: int, k: int) -> float:
    """``C(correct, k) / C(repeats, k)``: the chance k of the repeats, drawn without
    replacement, are all correct."""
    return comb(correct, k) / comb(repeats, k)


def _judge_repeats(snapshots: Sequence[RunSnapshot]) -> list[JudgeRepeats]:
    votes: dict[tuple[str, str], dict[str, list[str | None]]] = {}
    for index, snapshot in enumerate(snapshots):
        table = snapshot.votes
        if table is None:
            return []
        rows = zip(
            table.case_id, table.stage_id, table.metric, table.member, table.verdict, strict=True
        )
        for case, stage, metric, member, verdict in rows:
            seen = votes.setdefault((metric, member), {}).setdefault(
                _unit_name(case, stage), [None] * len(snapshots)
            )
            seen[index] = verdict if verdict is not None else "no answer"
    judges = []
    for (metric, member), units in sorted(votes.items()):
        complete = [outcomes for outcomes in units.values() if None not in outcomes]
        flipped = sum(len(set(outcomes)) > 1 for outcomes in complete)
        judges.append(
            JudgeRepeats(
                metric=metric,
                member=member,
                units=len(complete),
                flip_rate=flipped / len(complete) if complete else None,
            )
        )
    return judges


_IDENTITY_PARAMS = ("case.id", "pipeline.id", "suite.id", "schema.id", "schema.version")


def _input_params(snapshot: RunSnapshot) -> dict[str, str]:
    """The params that say what a run evaluated: its case, pipeline, suite or schema,
    and every fingerprint (``schema.sha256``, ``op.<operation>.eval_spec_sha256``...)."""
    return {
        key: value
        for key, value in snapshot.params.items()
        if key in _IDENTITY_PARAMS or key.endswith("sha256")
    }


def input_differences(snapshots: Sequence[RunSnapshot]) -> list[str]:
    """How the inputs of ``snapshots`` differ from the first's: each spec fingerprint or
    identity param that differs, then ground truth whose content digests differ, one
    line each naming the runs (empty: the same)."""
    first = snapshots[0]
    base_params = _input_params(first)
    lines = []
    for other in snapshots[1:]:
        pair = f"{first.label} and {other.label}"
        params = _input_params(other)
        for key in sorted(set(base_params) | set(params)):
            a, b = base_params.get(key), params.get(key)
            if a != b:
                lines.append(f"{key} differs between {pair} ({a or 'absent'} vs {b or 'absent'})")
        # Datasets are named after the case; their content digests say what was compared.
        ours, theirs = set(first.datasets.values()), set(other.datasets.values())
        if ours != theirs:
            lines.append(
                f"the ground-truth digest differs between {pair} "
                f"({_digests(ours)} vs {_digests(theirs)})"
            )
    return lines


def _digests(digests: set[str]) -> str:
    return ", ".join(sorted(digest[:12] for digest in digests)) or "none"


def check_same_inputs(snapshots: Sequence[RunSnapshot]) -> None:
    """Refuse runs that were not given the same inputs (see :func:`input_differences`).

    Raises:
        InputError: naming the first difference (and how many more there are).
    """
    lines = input_differences(snapshots)
    if lines:
        more = f" (and {len(lines) - 1} more difference(s))" if len(lines) > 1 else ""
        raise InputError(
            f"the runs are not repeats of the same inputs: {lines[0]}{more}",
            expected="runs of the same case, pipeline or schema against the same ground truth",
        )


def repeat_stability(snapshots: Sequence[RunSnapshot]) -> RepeatReport:
    """Flip rate and pass^k of ``snapshots``, runs repeated on the same inputs.

    Raises:
        InputError: fewer than two runs, one run given twice, or runs of different
            kinds (case and field runs mixed).
    """
    if len(snapshots) < 2:
        raise InputError(f"{len(snapshots)} run(s): repeats need at least 2")
    ids = [snapshot.run_id for snapshot in snapshots]
    twice = sorted({run_id for run_id in ids if ids.count(run_id) > 1})
    if twice:
        raise InputError(f"run {twice[0]} is given more than once", expected="distinct runs")
    kind = _kind(snapshots)
    read = _case_outcomes if kind == "case" else _document_outcomes
    outcomes = [read(snapshot) for snapshot in snapshots]
    every = set.intersection(*(set(one) for one in outcomes))
    anywhere = set.union(*(set(one) for one in outcomes))
    good = "pass" if kind == "case" else "correct"
    units = []
    for name in sorted(every):
        row = [one[name] for one in outcomes]
        units.append(
            RepeatUnit(
                unit=name,
                outcomes=row,
                correct=sum(outcome == good for outcome in row),
                flipped=len(set(row)) > 1,
            )
        )
    r = len(snapshots)
    notes = []
    if len(anywhere) > len(every):
        notes.append(
            f"{len(anywhere) - len(every)} {kind}(s) are missing from some runs and left out"
        )
    return RepeatReport(
        unit_kind=kind,
        runs=[snapshot.label for snapshot in snapshots],
        run_ids=ids,
        units=len(units),
        partial_units=len(anywhere) - len(every),
        flip_rate=sum(unit.flipped for unit in units) / len(units) if units else None,
        pass_at_k=(
            {
                k: sum(pass_hat_k(u.correct, r, k) for u in units) / len(units)
                for k in range(1, r + 1)
            }
            if units
            else {}
        ),
        per_unit=units,
        judges=_judge_repeats(snapshots) if kind == "case" else [],
        notes=notes,
    )


def repeats_markdown(report: RepeatReport, *, max_rows: int = 50) -> str:
    """The report as Markdown: the summary, pass^k, flaky judges, the flipping units."""
    lines = ["# Repeat runs", "", report.summary_line(), ""]
    lines += ["Runs: " + ", ".join(f"`{name}`" for name in report.runs), ""]
    if report.pass_at_k:
        lines += ["| k | pass^k |", "|---|---|"]
        lines += [
            f"| {k} | {percent_text(value)} |" for k, value in sorted(report.pass_at_k.items())
        ]
        lines.append("")
    if report.judges:
        lines += ["## Judges", "", "| metric | member | units | flip rate |", "|---|---|---|---|"]
        lines += [
            f"| {judge.metric} | {judge.member} | {judge.units} | {percent_text(judge.flip_rate)} |"
            for judge in report.judges
        ]
        lines.append("")
    flipped = [unit for unit in report.per_unit if unit.flipped]
    if flipped:
        lines += [f"## Flipping {report.unit_kind}s", "", "| unit | outcomes |", "|---|---|"]
        lines += [f"| {unit.unit} | {', '.join(unit.outcomes)} |" for unit in flipped[:max_rows]]
        if len(flipped) > max_rows:
            lines.append(f"\n{len(flipped) - max_rows} more in the JSON report.")
        lines.append("")
    lines += [f"- {note}" for note in report.notes]
    return "\n".join(lines).rstrip("\n") + "\n"
