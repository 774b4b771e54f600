"""The *changed* of ``--traces``: which documents (suite cases) moved since a baseline run.

When a traces limit leaves documents out, the ones traced rank wrong-and-changed,
changed, wrong, then the rest (:class:`~docevals_mlflow.tracking.trace_policy.TracePolicy`),
so that MLflow's evaluation-run comparison of prompt v2 against v1 shows the documents
that moved. A document *changed* when it is in both runs and its per-field outcomes
(the set of ``(path, outcome)`` of its comparisons) differ; a suite case changed when
its stages' verdicts differ. A document the baseline does not hold is not changed.

The baseline is the run the policy names (``--traces-baseline``: a run id,
``experiment/run-name`` or run name, resolved as ``docevals compare`` resolves them,
preferring the run's own experiment), else the latest ``FINISHED`` run of the same
report kind in the run's experiment with the same fingerprints (``schema.sha256`` for
field runs; the suite id and every ``op.*.eval_spec_sha256`` for suites) and the same
ground-truth digests. Nothing is guessed: with no such run nothing changed-based is
applied (the run's tag ``docevals.traces.baseline`` says ``none``); a baseline that
cannot be read (no ``results/fields.parquet`` or ``results/cases.parquet``, a store
that does not answer, a run that cannot be found) gives one warning line
(:class:`~docevals_mlflow.errors.DocEvalsWarning`) and the wrong ones first.

The store is consulted only when the limit leaves some out; reading a baseline
downloads its one or two result tables, never its traces.
"""

from __future__ import annotations

import contextlib
import tempfile
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.errors import DocEvalsWarning
from docevals_mlflow.tracking.bundle import BundleWriter, RunBundle
from docevals_mlflow.tracking.trace_policy import TracePolicy

if TYPE_CHECKING:
    from docevals_mlflow.core.reports import EvaluationReport
    from docevals_mlflow.tracking.options import RunOptions

BASELINE_TAG = "docevals.traces.baseline"
"""The baseline run's id (``none``: no comparable run; ``unreadable``: see the warning)."""
CHANGED_TAG = "docevals.traces.changed"
"""How many documents (cases) changed since the baseline."""
CHANGED_TRACED_TAG = "docevals.traces.changed_traced"
"""How many of the changed ones got a trace."""
WARNING_TAG = "docevals.warning.traces_baseline"
"""Why no changed ones could be found although a baseline was wanted."""
_FIELDS = "results/fields.parquet"
_DOCUMENTS = "results/documents.parquet"
_CASES = "results/cases.parquet"
_IDENTITIES = ("suite.id", "pipeline.id", "case.id")
_CANDIDATES = 50

Signatures = dict[str, frozenset[Hashable]]
"""Item id → what its outcomes were."""


class _Unreadable(Exception):
    """Why the baseline's outcomes cannot be read."""


class _OwnRows(Exception):
    """This run's own outcomes cannot be paired with the baseline's."""


def rank_documents(
    policy: TracePolicy, writer: BundleWriter, options: RunOptions, report: Mapping[str, Any]
) -> TracePolicy:
    """``policy`` with the documents of a field comparison report that changed since
    the baseline bound as its *changed* (``policy`` itself when nothing leaves
    documents out, or no baseline is known). ``writer`` holds the run's params and
    inputs (options applied) and gets the tags."""
    documents = [entry for entry in report.get("documents") or () if isinstance(entry, Mapping)]
    if not policy.leaves_out(len(documents)):
        return policy

    def current() -> Signatures:
        found: Signatures = {}
        for document in documents:
            rows = document.get("rows")
            if rows is None:
                raise _OwnRows("this run kept no field rows (--no-rows) to pair with the baseline")
            found[str(document.get("id"))] = frozenset(
                (str(row.get("path")), str(row.get("outcome"))) for row in rows
            )
        return found

    return _ranked(
        policy,
        writer,
        options,
        current=current,
        read=_document_outcomes,
        key=lambda document: str(document.get("id")),
        what="documents",
    )


def rank_cases(
    policy: TracePolicy,
    writer: BundleWriter,
    options: RunOptions,
    stage_reports: Sequence[EvaluationReport] | None,
) -> TracePolicy:
    """As :func:`rank_documents`, for the cases of a suite (its ``stage_reports``,
    grouped by case id; a case or pipeline report is one case, never left out). The
    predicate takes the ``(case id, verdict, stages)`` items of
    :mod:`~docevals_mlflow.tracking.trace_pipeline`."""
    grouped: dict[str, set[tuple[str, str]]] = {}
    for stage in stage_reports or ():
        grouped.setdefault(str(stage.case_id), set()).add((stage.stage_id, stage.verdict))
    if writer.bundle.tags.get("docevals.report_kind") != "suite" or not policy.leaves_out(
        len(grouped)
    ):
        return policy
    return _ranked(
        policy,
        writer,
        options,
        current=lambda: {case: frozenset(stages) for case, stages in grouped.items()},
        read=_case_outcomes,
        key=lambda case: str(case[0]),
        what="cases",
    )


def _ranked(
    policy: TracePolicy,
    writer: BundleWriter,
    options: RunOptions,
    *,
    current: Callable[[], Signatures],
    read: Callable[[Callable[[str], Path | None]], Signatures],
    key: Callable[[Any], str],
    what: str,
) -> TracePolicy:
    wanted = f"baseline {policy.baseline!r}" if policy.baseline else "the baseline run"
    try:
        with tempfile.TemporaryDirectory(prefix="docevals-baseline-") as folder:
            run = _baseline_run(policy.baseline, writer.bundle, options, Path(folder))
            if run is None:
                writer.tag(BASELINE_TAG, "none")
                return policy
            wanted = f"baseline run {run.run_name or run.run_id!r} ({run.run_id})"
            now = current()
            before = read(run.fetch)
    except _OwnRows as exc:
        return _unranked(policy, writer, f"{exc}", what)
    except Exception as exc:  # the evaluation is complete; the ranking is a convenience
        reason = str(exc) if isinstance(exc, _Unreadable) else f"{type(exc).__name__}: {exc}"
        first = reason.splitlines()[0] if reason else type(exc).__name__
        return _unranked(policy, writer, f"{wanted} cannot be read: {first}", what)
    # An item the baseline does not hold has nothing to differ from: not changed.
    changed = frozenset(
        item for item, outcome in now.items() if before.get(item, outcome) != outcome
    )
    writer.tag(BASELINE_TAG, run.run_id)
    writer.tag(CHANGED_TAG, str(len(changed)))
    # Every changed item ranks before every unchanged one, so the limit takes them first.
    writer.tag(CHANGED_TRACED_TAG, str(min(len(changed), policy.limit or 0)))
    return policy.with_changed(lambda item: key(item) in changed)


def _unranked(policy: TracePolicy, writer: BundleWriter, why: str, what: str) -> TracePolicy:
    """``policy`` as it was, after one warning line (and the run's tags) saying why."""
    message = f"traces: changed {what} not known ({why}); the wrong {what} are traced first"
    warnings.warn(message, DocEvalsWarning, stacklevel=3)
    writer.tag(BASELINE_TAG, "unreadable")
    writer.tag(WARNING_TAG, message[:5000])
    return policy


def traces_note(tags: Mapping[str, str]) -> str | None:
    """One line for the terminal about the changed ones, from a run's tags (``None``
    when the traces limit left nothing out)."""
    baseline = tags.get(BASELINE_TAG)
    if baseline is None or baseline == "unreadable":
        return None  # nothing ranked, or the warning already said why
    if baseline == "none":
        return (
            "traces: no earlier comparable run to find changed ones against "
            "(--traces-baseline RUN names one); the wrong ones were traced first"
        )
    return (
        f"traces: {tags.get(CHANGED_TAG, '0')} changed since baseline run {baseline}, "
        f"{tags.get(CHANGED_TRACED_TAG, '0')} of them traced first"
    )


# ------------------------------------------------------------------ finding the baseline


@dataclass(frozen=True)
class _Baseline:
    run_id: str
    run_name: str | None
    fetch: Callable[[str], Path | None]
    """An artifact of the run as a local file (``None``: the run holds none)."""


def _baseline_run(
    reference: str | None, bundle: RunBundle, options: RunOptions, folder: Path
) -> _Baseline | None:
    """The baseline (its artifacts fetched into ``folder`` when they are not local),
    ``None`` when no comparable run exists."""
    from docevals_mlflow.tracking.project_runs import active_project_run_id
    from docevals_mlflow.tracking.runs import DEFAULT_EXPERIMENT, resolve_tracking_uri
    from docevals_mlflow.tracking.store import sqlite_database

    uri = resolve_tracking_uri(options.tracking_uri)
    database = sqlite_database(uri)
    if database is not None and not database.exists():
        # Looking must not create (and migrate) a store: no store, no earlier run.
        if reference is not None:
            raise _Unreadable(f"the tracking store {database} does not exist")
        return None
    project = active_project_run_id(uri)
    experiment = options.experiment or DEFAULT_EXPERIMENT
    kind, params = _fingerprints(bundle)
    digests = {entry.digest for entry in bundle.inputs if entry.context == "ground_truth"}
    if reference is None:
        from docevals_mlflow.tracking.trace_baseline_sqlite import NotDirect, latest_comparable

        with contextlib.suppress(NotDirect):
            local = latest_comparable(
                uri,
                experiment=experiment,
                project_run_id=project,
                report_kind=kind,
                params=params,
                digests=digests,
                candidates=_CANDIDATES,
            )
            return None if local is None else _Baseline(local.run_id, local.run_name, local.fetch)
    run = _mlflow_baseline(uri, reference, experiment, project, kind, params, digests)
    if run is None:
        return None
    client, found = run
    run_id = found.info.run_id
    return _Baseline(
        run_id, found.info.run_name, lambda path: _download(client, run_id, path, folder)
    )


def _mlflow_baseline(
    uri: str,
    reference: str | None,
    experiment: str,
    project: str | None,
    kind: str,
    params: dict[str, str],
    digests: set[str],
) -> tuple[Any, Any] | None:
    """``(client, run)`` of the baseline found through MLflow's client."""
    from docevals_mlflow.tracking.runs import probe
    from docevals_mlflow.tracking.store import open_client

    probe(uri)
    client = open_client(uri)
    if reference is not None:
        from docevals_mlflow.tracking.snapshots import resolve_run

        return client, resolve_run(reference, client=client, prefer=[experiment])
    if project is not None:
        experiment_id = client.get_run(project).info.experiment_id
    else:
        found = client.get_experiment_by_name(experiment)
        if found is None:
            return None
        experiment_id = found.experiment_id
    from mlflow.entities import ViewType

    clauses = ["attributes.status = 'FINISHED'", f"tags.`docevals.report_kind` = {_quoted(kind)}"]
    clauses += [f"params.`{key}` = {_quoted(value)}" for key, value in params.items()]
    for run in client.search_runs(
        [experiment_id],
        filter_string=" AND ".join(clauses),
        run_view_type=ViewType.ACTIVE_ONLY,
        order_by=["attributes.start_time DESC"],
        max_results=_CANDIDATES,
    ):
        if run.info.run_id != project and _ground_truth_digests(run) == digests:
            return client, run
    return None


def _fingerprints(bundle: RunBundle) -> tuple[str, dict[str, str]]:
    """The report kind and the params a comparable run holds with the same values."""
    kind = bundle.tags.get("docevals.report_kind", "")
    if kind == "fields":
        keys = ["schema.sha256"]
    else:
        keys = [key for key in _IDENTITIES if key in bundle.params]
        keys += sorted(key for key in bundle.params if key.endswith(".eval_spec_sha256"))
    return kind, {key: bundle.params[key] for key in keys if key in bundle.params}


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _ground_truth_digests(run: Any) -> set[str]:
    found = set()
    for entry in getattr(getattr(run, "inputs", None), "dataset_inputs", None) or ():
        tags = {tag.key: tag.value for tag in entry.tags}
        if tags.get("mlflow.data.context") == "ground_truth":
            found.add(entry.dataset.digest)
    return found


# ------------------------------------------------------------ reading its outcomes


def _download(client: Any, run_id: str, path: str, folder: Path) -> Path | None:
    listed = {item.path for item in client.list_artifacts(run_id, path.rsplit("/", 1)[0])}
    if path not in listed:
        return None
    return Path(client.download_artifacts(run_id, path, str(folder)))


def _document_outcomes(fetch: Callable[[str], Path | None]) -> Signatures:
    """Document id → its ``(path, outcome)`` set, from ``results/fields.parquet`` (and
    ``results/documents.parquet`` for the documents without a comparison)."""
    import pandas as pd

    fields = fetch(_FIELDS)
    if fields is None:
        raise _Unreadable(f"it holds no per-field outcomes ({_FIELDS})")
    frame = pd.read_parquet(fields, columns=["document_id", "path", "outcome"])
    found: dict[str, set[Hashable]] = {}
    documents = fetch(_DOCUMENTS)
    if documents is not None:
        for document in pd.read_parquet(documents, columns=["document_id"])["document_id"].tolist():
            found[str(document)] = set()
    # Plain lists: iterating Arrow-backed columns value by value is several times slower.
    columns = (frame[name].tolist() for name in ("document_id", "path", "outcome"))
    for document, path, outcome in zip(*columns, strict=True):
        found.setdefault(str(document), set()).add((str(path), str(outcome)))
    return {document: frozenset(outcomes) for document, outcomes in found.items()}


def _case_outcomes(fetch: Callable[[str], Path | None]) -> Signatures:
    """Case id → its ``(stage id, verdict)`` set, from ``results/cases.parquet``."""
    import pandas as pd

    cases = fetch(_CASES)
    if cases is None:
        raise _Unreadable(f"it holds no per-case verdicts ({_CASES})")
    frame = pd.read_parquet(cases, columns=["case_id", "stage_id", "verdict"])
    found: dict[str, set[Hashable]] = {}
    columns = (frame[name].tolist() for name in ("case_id", "stage_id", "verdict"))
    for case, stage, verdict in zip(*columns, strict=True):
        found.setdefault(str(case), set()).add((str(stage), str(verdict)))
    return {case: frozenset(stages) for case, stages in found.items()}


__all__ = [
    "BASELINE_TAG",
    "CHANGED_TAG",
    "CHANGED_TRACED_TAG",
    "WARNING_TAG",
    "rank_cases",
    "rank_documents",
    "traces_note",
]
