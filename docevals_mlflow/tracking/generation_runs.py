"""A ground-truth generation as an MLflow run (``docevals.kind=generation``).

One run holds one or more :class:`~docevals_mlflow.groundtruth.models.GenerationReport`
(one per case; a panel report and the adjudication that followed it may both be
there):

* params: ``generation.providers`` (``label=model`` list), ``generation.stage``,
  ``generation.minimum_agreement``, ``generation.instructions_sha256``,
  ``generation.expected_fields``, ``generation.cases``; a value that differs between
  reports reads ``mixed (N values)``;
* the headline: ``Summary/{cases,agreement,fields_agreed,fields_to_review,
  human_review_rate}`` (cases generated, mean agreement, fields the providers agreed
  on, fields disputed or omitted by all, share of reports needing human review);
* metrics: ``generation/overall_agreement`` (mean over reports),
  ``generation/fields_{expected,agreed,disputed,omitted_by_all}`` (sums),
  ``generation/human_review_rate``, ``provider/<label>/{usable_share,claims,
  duplicate_paths,input_tokens,output_tokens,cost_usd}`` and
  ``usage/{requests,input_tokens,output_tokens,total_tokens,cost_usd}``;
* artifacts: ``generation/reports.json``, ``results/generation.parquet`` (one row per
  report), ``references/generated/<case>.json`` (the provisional references, authority
  ``generated``; ``<case>.<stage>.json`` when a case has several reports) and
  ``review/<file>`` (the review files written from them).

A generation run (:func:`layout_generation_run`, which ``docevals generate`` and
:func:`log_generation` both go through) lays out each case's final report that way;
the stages before it (a panel that was adjudicated) go to
``generation/stages/<case>.<stage>.json`` and count in ``usage/...``, and the
settings of the generation, when known, become ``generation.adjudicate``,
``generation.union``, ``generation.document_mode`` and ``generation.config_sha256``.

Each case's final report also gets an MLflow trace, as the run's traces policy selects
(:mod:`~docevals_mlflow.tracking.generation_traces`), which ``docevals review log``
later adds the reviewers' answers to.

The layout does not import mlflow; :func:`log_generation` logs it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.formatting import score_text
from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.models import GenerationReport, ProviderGeneration
from docevals_mlflow.judges.usage import Usage, total_usage
from docevals_mlflow.reports.markdown import table
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.keys import KeyMap, legal_key
from docevals_mlflow.tracking.layout_shared import headline

if TYPE_CHECKING:
    from docevals_mlflow.tracking.options import RunOptions
    from docevals_mlflow.tracking.runs import LoggedRun

DEFAULT_GENERATION_EXPERIMENT = "docevals-ground-truth"
STAGE_ORDER = ("panel", "adjudication", "union")
"""The order a case's generation stages run in; the last one present is final."""
_NOTE_CASES = 50
HEADLINE_FIGURES = ("cases", "agreement", "fields_agreed", "fields_to_review", "human_review_rate")
"""A generation's headline, logged as ``Summary/<figure>``."""


def _one(values: Sequence[str]) -> str | None:
    distinct = sorted(set(values))
    if not distinct:
        return None
    return distinct[0] if len(distinct) == 1 else f"mixed ({len(distinct)} values)"


def _provider_label(provider: ProviderGeneration) -> str:
    text = f"{provider.provider}={provider.model or '?'}"
    return (
        f"{text} [{provider.group}]"
        if provider.group and provider.group != provider.model
        else text
    )


def _usage(report: GenerationReport) -> Usage:
    # Each stage records only the calls it made itself: a union makes none (its
    # providers are the panel's, already counted with the panel's report) and an
    # adjudication carries its second reading only. Summing the stages' own usage
    # therefore counts every call once, provided every stage's report is logged.
    if report.stage == "union":
        return Usage()
    if report.usage != Usage():
        return report.usage
    # A report built by hand may leave its total empty; its providers' usage is the
    # same account, call by call.
    total = Usage()
    for provider in report.providers:
        total = total + provider.usage
    return total


def _disputed(report: GenerationReport) -> int:
    return sum(1 for item in report.disagreements if item.reason != "omitted_by_all")


def layout_generation(
    writer: BundleWriter,
    reports: Sequence[GenerationReport],
    *,
    review_files: Iterable[str | os.PathLike[str]] = (),
) -> KeyMap:
    """Fill ``writer`` with the generation run layout (see the module docstring)."""
    if not reports:
        raise InputError("no generation reports to log", expected="at least one report")
    keys = KeyMap()
    _generation_params(writer, reports)
    _generation_metrics(writer, keys, reports)

    writer.tag("docevals.kind", "generation")
    writer.tag(
        "docevals.generation.requires_review",
        "true" if any(report.requires_human_review for report in reports) else "false",
    )
    writer.tag("mlflow.note.content", generation_summary(reports))
    writer.json("generation/reports.json", [report.model_dump(mode="json") for report in reports])
    _tables(writer, reports)
    _generated_references(writer, keys, reports)
    for file in review_files:
        path = Path(file)
        if not path.is_file():
            raise InputFileNotFoundError("review file not found", source=str(path))
        writer.files[f"review/{keys.named('review', path.name)}"] = path.read_bytes()
    writer.json("metrics_index.json", keys.index())
    return keys


def _generation_params(writer: BundleWriter, reports: Sequence[GenerationReport]) -> None:
    writer.param("docevals.version", __version__)
    writer.param("generation.cases", str(len({report.case_id for report in reports})))
    writer.param("generation.stage", _one([report.stage for report in reports]))
    writer.param(
        "generation.providers",
        _one([", ".join(sorted(_provider_label(p) for p in r.providers)) for r in reports]),
    )
    writer.param(
        "generation.minimum_agreement", _one([f"{r.minimum_agreement:g}" for r in reports])
    )
    writer.param(
        "generation.instructions_sha256",
        _one([r.instructions_sha256 for r in reports if r.instructions_sha256]),
    )
    writer.param("generation.expected_fields", _one([str(len(r.expected_fields)) for r in reports]))


def _generation_metrics(
    writer: BundleWriter, keys: KeyMap, reports: Sequence[GenerationReport]
) -> None:
    agreement = sum(report.overall_agreement for report in reports) / len(reports)
    agreed = sum(len(r.consensus) for r in reports)
    disputed = sum(_disputed(r) for r in reports)
    omitted = sum(len(r.omitted_by_all) for r in reports)
    review_rate = sum(report.requires_human_review for report in reports) / len(reports)
    figures = {
        "cases": len({report.case_id for report in reports}),
        "agreement": agreement,
        "fields_agreed": agreed,
        "fields_to_review": disputed + omitted,
        "human_review_rate": review_rate,
    }
    headline(writer, ((name, figures[name]) for name in HEADLINE_FIGURES))
    writer.metric("generation/overall_agreement", agreement)
    writer.metric("generation/fields_expected", sum(len(r.expected_fields) for r in reports))
    writer.metric("generation/fields_agreed", agreed)
    writer.metric("generation/fields_disputed", disputed)
    writer.metric("generation/fields_omitted_by_all", omitted)
    writer.metric("generation/human_review_rate", review_rate)
    _provider_metrics(writer, keys, reports)
    total = Usage()
    for report in reports:
        total = total + _usage(report)
    for name in ("requests", "input_tokens", "output_tokens", "total_tokens"):
        writer.metric(f"usage/{name}", getattr(total, name))
    writer.metric("usage/cost_usd", total.cost_usd)


def _generated_references(
    writer: BundleWriter, keys: KeyMap, reports: Sequence[GenerationReport]
) -> None:
    """Each report's provisional reference (the stage joins the name when a case has several)."""
    per_case: dict[str, int] = {}
    for report in reports:
        per_case[report.case_id] = per_case.get(report.case_id, 0) + 1
    for report in reports:
        shared = per_case[report.case_id] > 1
        segment = keys.named(
            "case", f"{report.case_id}.{report.stage}" if shared else report.case_id
        )
        writer.json(
            f"references/generated/{segment}.json",
            report.provisional_reference.model_dump(mode="json"),
        )


@dataclass(frozen=True)
class GenerationSettings:
    """How a generation was run, when the caller knows it (``docevals generate`` does,
    from its configuration and options): logged as ``generation.*`` params."""

    adjudicate: bool
    union: bool
    document_mode: str
    config_sha256: str | None = None
    """SHA-256 of the generation configuration file."""


def generation_cases(
    reports: Sequence[GenerationReport],
) -> dict[str, list[GenerationReport]]:
    """Every case's reports (cases in the order given), stages in the order they run
    (panel, adjudication, union): the last is the case's final report, the one its
    review file is written from.

    Raises:
        InputError: no reports, or one case's stage given twice.
    """
    if not reports:
        raise InputError("no generation reports to log", expected="at least one report")
    cases: dict[str, list[GenerationReport]] = {}
    for report in reports:
        stages = cases.setdefault(report.case_id, [])
        if any(stage.stage == report.stage for stage in stages):
            # Its calls would be counted twice, and one stage file would hide the other.
            raise InputError(
                f"two {report.stage} reports of case {report.case_id!r}",
                expected="each stage of a case once",
            )
        stages.append(report)
    for stages in cases.values():
        stages.sort(key=lambda stage: STAGE_ORDER.index(stage.stage))
    return cases


def layout_generation_run(
    writer: BundleWriter,
    reports: Sequence[GenerationReport],
    *,
    review_files: Iterable[str | os.PathLike[str]] = (),
    settings: GenerationSettings | None = None,
) -> KeyMap:
    """Fill ``writer`` with a generation run: every stage's report of every case.

    Each case's final report is laid out as :func:`layout_generation` does; the
    stages before it go to ``generation/stages/<case>.<stage>.json``. ``usage/...``
    counts every stage (each records only its own calls); ``settings`` become
    ``generation.*`` params.
    """
    cases = generation_cases(reports)
    finals = [stages[-1] for stages in cases.values()]
    keys = layout_generation(writer, finals, review_files=review_files)
    # The layout counted the final reports' usage; an adjudication's report holds only
    # its second reading, so the run's usage is summed over every stage instead (per
    # case first, which is the order `docevals generate` has always added them in).
    total = total_usage(total_usage(_usage(stage) for stage in stages) for stages in cases.values())
    for name in ("requests", "input_tokens", "output_tokens", "total_tokens"):
        writer.metric(f"usage/{name}", getattr(total, name))
    writer.metric("usage/cost_usd", total.cost_usd)
    if settings is not None:
        writer.param("generation.adjudicate", str(settings.adjudicate).lower())
        writer.param("generation.union", str(settings.union).lower())
        writer.param("generation.document_mode", settings.document_mode)
        writer.param("generation.config_sha256", settings.config_sha256)
    for case_id, stages in cases.items():
        for stage in stages[:-1]:
            writer.json(
                f"generation/stages/{case_id}.{stage.stage}.json", stage.model_dump(mode="json")
            )
    return keys


def default_run_name(reports: Sequence[GenerationReport]) -> str:
    """``generation <case>`` for one case, else ``generation``."""
    cases = list(dict.fromkeys(report.case_id for report in reports))
    return f"generation {cases[0]}" if len(cases) == 1 else "generation"


def _provider_metrics(
    writer: BundleWriter, keys: KeyMap, reports: Sequence[GenerationReport]
) -> None:
    seen: dict[str, list[ProviderGeneration]] = {}
    for report in reports:
        for provider in report.providers:
            seen.setdefault(provider.provider, []).append(provider)
    for label, answers in seen.items():
        segment = keys.named("provider", label)
        prefix = f"provider/{segment}"
        writer.metric(
            legal_key(f"{prefix}/usable_share"),
            sum(answer.usable for answer in answers) / len(answers),
        )
        writer.metric(legal_key(f"{prefix}/claims"), sum(len(a.claims) for a in answers))
        writer.metric(
            legal_key(f"{prefix}/duplicate_paths"), sum(len(a.duplicate_paths) for a in answers)
        )
        usage = Usage()
        for answer in answers:
            usage = usage + answer.usage
        writer.metric(legal_key(f"{prefix}/input_tokens"), usage.input_tokens)
        writer.metric(legal_key(f"{prefix}/output_tokens"), usage.output_tokens)
        writer.metric(legal_key(f"{prefix}/cost_usd"), usage.cost_usd)


def _tables(writer: BundleWriter, reports: Sequence[GenerationReport]) -> None:
    import pandas as pd

    rows = [
        {
            "case_id": report.case_id,
            "stage": report.stage,
            "overall_agreement": report.overall_agreement,
            "fields_expected": len(report.expected_fields),
            "fields_agreed": len(report.consensus),
            "fields_disputed": _disputed(report),
            "fields_omitted_by_all": len(report.omitted_by_all),
            "requires_human_review": report.requires_human_review,
            "usable_providers": sum(p.usable for p in report.providers),
            "providers": len(report.providers),
            "generation_sha256": report.digest,
        }
        for report in reports
    ]
    writer.parquet("results/generation.parquet", pd.DataFrame(rows))


def generation_summary(reports: Sequence[GenerationReport]) -> str:
    """The Markdown run description of a generation."""
    review = sum(report.requires_human_review for report in reports)
    mean = sum(report.overall_agreement for report in reports) / len(reports)
    lines = [
        f"**docevals ground-truth generation** (provisional: authority `generated`): "
        f"{len(reports):,} reports, mean agreement {score_text(mean)}, "
        f"{review:,} needing human review",
        "",
    ]
    lines += table(
        ["case", "stage", "agreement", "agreed", "disputed", "omitted by all", "review"],
        (
            (
                report.case_id,
                report.stage,
                score_text(report.overall_agreement),
                len(report.consensus),
                _disputed(report),
                len(report.omitted_by_all),
                "yes" if report.requires_human_review else "no",
            )
            for report in reports[:_NOTE_CASES]
        ),
    )
    if len(reports) > _NOTE_CASES:
        lines += ["", f"… and {len(reports) - _NOTE_CASES:,} more (see results/generation.parquet)"]
    return "\n".join(lines) + "\n"


def log_generation(
    report_or_reports: GenerationReport | Sequence[GenerationReport],
    *,
    review_files: Iterable[str | os.PathLike[str]] = (),
    tracking_uri: str | None = None,
    experiment: str | None = None,
    run_name: str | None = None,
    keep_bundle_at: str | os.PathLike[str] | None = None,
    settings: GenerationSettings | None = None,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
    options: RunOptions | None = None,
) -> LoggedRun:
    """Log one or more generation reports (and their review files) as one run.

    Pass every stage's report of each case (panel, adjudication, union), in that
    order, to account for all the calls made: each stage records only its own. The
    run is the one ``docevals generate`` logs for the same reports (see
    :func:`layout_generation_run`); ``settings`` adds how the generation was run.

    The run goes to ``experiment`` (default ``docevals-ground-truth``, next to the
    approval runs). ``options`` (:class:`~docevals_mlflow.tracking.options.RunOptions`)
    holds the same settings as the keywords, which win over it. If logging fails and
    ``keep_bundle_at`` is given, the run bundle is kept there for ``docevals log``.
    """
    from docevals_mlflow.tracking.assembly import assemble_generation, log_assembled
    from docevals_mlflow.tracking.options import RunOptions

    reports = (
        [report_or_reports]
        if isinstance(report_or_reports, GenerationReport)
        else list(report_or_reports)
    )
    chosen = (options or RunOptions()).merged(
        tracking_uri=tracking_uri,
        experiment=experiment,
        run_name=run_name,
        keep_bundle_at=keep_bundle_at,
        params=params,
        tags=tags,
    )
    return log_assembled(
        assemble_generation(reports, chosen, review_files=review_files, settings=settings)
    )
