"""Repeat runs in MLflow: finding the runs of a repeat group, the flip-rate metrics
of an evaluation with ``--repeats``, and a repeat report logged as a run.

* a group: runs logged with ``--repeat-group NAME`` carry the tag
  :data:`REPEAT_GROUP_TAG`; :func:`repeat_group_snapshots` finds them (oldest first);
* ``--repeats N`` on an evaluation adds ``repeats/flip_rate``, ``repeats/pass_all``
  and per judge ``judge/<metric>/flip_rate`` (per panel member
  ``judge/<metric>/<member>/flip_rate``) to its run (:func:`repeat_figure_metrics`);
* ``docevals repeats --log`` logs a run of kind ``comparison``
  (``docevals.report_kind=repeats``): params ``repeats.runs``, ``repeats.unit_kind``,
  ``repeats.group``; metrics ``Summary/{flip_rate,pass_all,units}``,
  ``repeats/{flip_rate,pass_all,units,partial_units}``, ``repeats/pass_hat_<k>``
  for k = 1..R and ``judge/<metric>/<member>/flip_rate``; tags
  ``docevals.repeats.runs`` (the run ids, comma separated) and ``docevals.repeats.group``
  (not the group tag itself: the report is no repeat); the
  report as ``repeats/repeats.json`` and ``repeats/repeats.md``.

Does not import mlflow at module level.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from docevals_mlflow._version import __version__
from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.keys import clean_segment, legal_key, legal_tag_value
from docevals_mlflow.tracking.layout_shared import headline

if TYPE_CHECKING:
    from docevals_mlflow.compare.repeats import RepeatReport
    from docevals_mlflow.compare.snapshot import RunSnapshot
    from docevals_mlflow.core.repeat_figures import JudgeRepeatFigures
    from docevals_mlflow.tracking.assembly import AssembledRun
    from docevals_mlflow.tracking.options import RunOptions
    from docevals_mlflow.tracking.runs import LoggedRun

REPEAT_GROUP_TAG = "docevals.repeat_group"
"""The tag ``--repeat-group NAME`` sets on a run: runs sharing it repeat each other."""
RUNS_TAG = "docevals.repeats.runs"
"""On a logged repeat report: the ids of the runs it compares, comma separated."""
_MAX_RUNS = 1000


def repeat_figure_metrics(figures: JudgeRepeatFigures) -> Callable[[BundleWriter], None]:
    """What ``--repeats`` adds to an evaluation run (see the module docstring): a few
    keys, whatever the number of stages."""

    def extend(writer: BundleWriter) -> None:
        writer.metric("repeats/n", figures.repeats)
        writer.metric("repeats/flip_rate", figures.flip_rate)
        writer.metric("repeats/pass_all", figures.pass_all)
        for judge in figures.judges:
            writer.metric(
                legal_key(f"judge/{clean_segment(judge.metric)}/flip_rate"), judge.flip_rate
            )
            # Members: the flip rate only, so a panel adds one key per member.
            for member in judge.members or ():
                key = f"judge/{clean_segment(judge.metric)}/{clean_segment(member.member)}"
                writer.metric(legal_key(f"{key}/flip_rate"), member.flip_rate)

    return extend


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def repeat_group_snapshots(
    group: str, *, tracking_uri: str | None = None, experiment: str | None = None
) -> list[RunSnapshot]:
    """The runs tagged ``--repeat-group group`` (in ``experiment`` when given, else in
    every active experiment), oldest first, as snapshots.

    Raises:
        InputError: no store, no such experiment, or fewer than 2 runs in the group.
    """
    from docevals_mlflow.tracking.approval_runs import missing_store
    from docevals_mlflow.tracking.runs import resolve_tracking_uri

    absent = missing_store(resolve_tracking_uri(tracking_uri))
    if absent is not None:
        raise InputError(
            f"no repeat group {group!r}: the tracking store {absent} does not exist",
            expected="--tracking-uri or MLFLOW_TRACKING_URI naming the store the runs "
            "were logged in",
        )
    from mlflow.entities import ViewType

    from docevals_mlflow.tracking.snapshots import _client, snapshot_from_mlflow

    client = _client(tracking_uri)
    if experiment is not None:
        found = client.get_experiment_by_name(experiment)
        if found is None:
            raise InputError(f"no experiment named {experiment!r}", source=f"--group {group}")
        scopes = [found.experiment_id]
    else:
        scopes = [
            entry.experiment_id
            for entry in client.search_experiments(view_type=ViewType.ACTIVE_ONLY)
        ]
    runs = (
        list(
            client.search_runs(
                scopes,
                filter_string=f"tags.`{REPEAT_GROUP_TAG}` = {_quoted(group)}",
                run_view_type=ViewType.ACTIVE_ONLY,
                order_by=["attributes.start_time ASC"],
                max_results=_MAX_RUNS,
            )
        )
        if scopes
        else []
    )
    where = f" in experiment {experiment!r}" if experiment is not None else ""
    if len(runs) < 2:
        raise InputError(
            f"repeat group {group!r} has {len(runs)} run(s){where}",
            expected="at least 2 runs logged with --repeat-group " + group,
        )
    return [snapshot_from_mlflow(run, client=client) for run in runs]


def layout_repeats(
    writer: BundleWriter, report: RepeatReport, *, markdown: str, group: str | None = None
) -> None:
    """Fill ``writer`` with a repeat report (see the module docstring)."""
    writer.param("docevals.version", __version__)
    writer.param("repeats.runs", len(report.runs))
    writer.param("repeats.unit_kind", report.unit_kind)
    writer.param("repeats.group", group)
    r = report.repeats
    headline(
        writer,
        [
            ("flip_rate", report.flip_rate),
            ("pass_all", report.pass_at_k.get(r)),
            ("units", report.units),
        ],
    )
    writer.metric("repeats/flip_rate", report.flip_rate)
    writer.metric("repeats/pass_all", report.pass_at_k.get(r))
    writer.metric("repeats/units", report.units)
    writer.metric("repeats/partial_units", report.partial_units)
    for k, value in sorted(report.pass_at_k.items()):
        writer.metric(f"repeats/pass_hat_{k}", value)
    for judge in report.judges:
        segment = f"{clean_segment(judge.metric)}/{clean_segment(judge.member)}"
        writer.metric(legal_key(f"judge/{segment}/flip_rate"), judge.flip_rate)
    writer.tag("docevals.report_kind", "repeats")
    writer.tag(RUNS_TAG, legal_tag_value(",".join(report.run_ids)))
    if group is not None:
        writer.tag("docevals.repeats.group", legal_tag_value(group))
    writer.tag("mlflow.note.content", markdown)
    writer.json("repeats/repeats.json", report.model_dump(mode="json"))
    writer.text("repeats/repeats.md", markdown)


def assemble_repeats(
    report: RepeatReport,
    options: RunOptions,
    *,
    markdown: str,
    group: str | None = None,
    experiment: str | None = None,
) -> AssembledRun:
    """The run of ``report`` (kind ``comparison``), named ``repeats <group or first
    run>``, in ``experiment`` (default: the options', else the first repeat run's)."""
    from docevals_mlflow.tracking.assembly import AssembledRun
    from docevals_mlflow.tracking.options import apply_options

    resolved = options.with_defaults(
        run_name=f"repeats {group or report.runs[0]}", experiment=experiment
    )
    writer = BundleWriter(kind="comparison", run_name=resolved.run_name)
    layout_repeats(writer, report, markdown=markdown, group=group)
    apply_options(writer, resolved)
    return AssembledRun(writer, resolved, [])


def log_repeat_report(
    report: RepeatReport,
    options: RunOptions,
    *,
    group: str | None = None,
    experiment: str | None = None,
) -> LoggedRun:
    """Log ``report`` as :func:`assemble_repeats` lays it out (``docevals repeats --log``)."""
    from docevals_mlflow.compare.repeats import repeats_markdown
    from docevals_mlflow.tracking.assembly import log_assembled

    markdown = repeats_markdown(report)
    return log_assembled(
        assemble_repeats(report, options, markdown=markdown, group=group, experiment=experiment)
    )
