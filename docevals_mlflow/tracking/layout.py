"""The run layout (DESIGN §4): which params, metrics, tags and artifacts a report becomes.

Does not import mlflow; :mod:`docevals_mlflow.tracking.runs` logs what this builds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow._version import __version__
from docevals_mlflow.core.fingerprints import sha256_bytes, sha256_file, sha256_json
from docevals_mlflow.core.formatting import metric_text as figure_text
from docevals_mlflow.core.literals import VERDICTS
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport, SuiteReport
from docevals_mlflow.evaluation.suite import build_suite_report
from docevals_mlflow.fields.counts import METRIC_NAMES
from docevals_mlflow.fields.report import REPORT_ROW_FIELDS
from docevals_mlflow.reports.markdown import table
from docevals_mlflow.tracking import diagnostics_layout
from docevals_mlflow.tracking.bundle import BundleWriter, DatasetInput
from docevals_mlflow.tracking.keys import KeyMap, legal_key

CELL_NAMES = ("tp", "fa", "fd", "fn", "tn")
AnyEvaluation = EvaluationReport | PipelineEvaluationReport | SuiteReport


def _cell_metrics(
    writer: BundleWriter, prefix: str, counts: Mapping[str, int], metrics: Mapping[str, Any]
) -> None:
    for name in METRIC_NAMES:
        writer.metric(legal_key(f"{prefix}/{name}"), metrics.get(name))
    for name in CELL_NAMES:
        writer.metric(legal_key(f"{prefix}/{name}"), counts.get(name))


LIST_COUNTS = ("matched", "weak", "missed", "extra", "empty", "invented")
"""A list's item counts, logged as ``list/<list>/<count>``."""


def _field_metrics(
    writer: BundleWriter, keys: KeyMap, namespace: str, entries: Sequence[Mapping[str, Any]]
) -> None:
    """``<namespace>/<field>/...`` for each field entry (the method joins the segment
    when two classes compare one template differently); ``unparsed`` when any."""
    templates: dict[str, int] = {}
    for entry in entries:
        templates[entry["template"]] = templates.get(entry["template"], 0) + 1
    for entry in entries:
        shared = templates[entry["template"]] > 1
        segment = keys.field(entry["template"], entry["method"] if shared else None)
        _cell_metrics(writer, f"{namespace}/{segment}", entry["counts"], entry["metrics"])
        if entry.get("unparsed"):
            writer.metric(legal_key(f"{namespace}/{segment}/unparsed"), entry["unparsed"])


def tag_evaluation(
    writer: BundleWriter, report_kind: str, *, verdict: str | None, note: str
) -> None:
    """The tags every evaluation run carries: kind, report kind, verdict (when there is
    one) and the Markdown run description."""
    writer.tag("docevals.kind", "evaluation")
    writer.tag("docevals.report_kind", report_kind)
    if verdict is not None:
        writer.tag("docevals.verdict", verdict)
    writer.tag("mlflow.note.content", note)


# --- field comparisons ------------------------------------------------------------


def layout_fields(
    writer: BundleWriter,
    report: Mapping[str, Any],
    *,
    markdown: str,
    dashboard: str,
    verdict: str | None = None,
    report_json: str | None = None,
) -> KeyMap:
    """Fill ``writer`` with a field comparison report (``BatchComparison.to_report()``).

    ``report_json`` is the report already serialised (as the CLI writes it), so a
    large report is not encoded twice.
    """
    keys = KeyMap()
    schema = report["schema"]
    writer.param("docevals.version", __version__)
    writer.param("schema.id", schema["id"])
    writer.param("schema.version", schema["version"])
    writer.param("schema.sha256", schema["sha256"])

    overall = report["overall"]
    _cell_metrics(writer, "overall", overall["counts"], overall["metrics"])
    writer.metric("overall/macro_f1", overall["macro_f1"])
    writer.metric("overall/documents", overall["documents"])
    # Comparisons a provider failed to decide (inside the FD cell): logged even when
    # zero, so that a run can be told apart from one that never checked.
    writer.metric("overall/undecided", overall.get("undecided", 0))
    unpaired = report["unpaired"]
    writer.metric("unpaired/expected_only", len(unpaired["expected_only"]))
    writer.metric("unpaired/predicted_only", len(unpaired["predicted_only"]))
    if report.get("calibration"):
        diagnostics_layout.calibration_metrics(writer, keys, report["calibration"])

    # Counted even when zero, like undecided: a run that checked says so.
    writer.metric("overall/unparsed", overall.get("unparsed", 0))
    invalid = report.get("invalid_expected") or {}
    writer.metric("overall/invalid_expected", invalid.get("documents", 0))
    for name, value in (report.get("settings") or {}).items():
        writer.param(f"fields.{name}", value)

    _field_metrics(writer, keys, "field", report["fields"])
    discovered = report.get("discovered")
    if discovered and not discovered["included"]:
        # Outside the headline figures: their own namespace, never mixed into field/.
        _cell_metrics(writer, "discovered/overall", discovered["counts"], discovered["metrics"])
        _field_metrics(writer, keys, "discovered", discovered["fields"])
    for name, entry in report["classes"].items():
        segment = keys.named("class", name)
        _cell_metrics(writer, f"class/{segment}", entry["counts"], entry["metrics"])
        writer.metric(legal_key(f"class/{segment}/macro_f1"), entry["macro_f1"])
        writer.metric(legal_key(f"class/{segment}/documents"), entry["documents"])
    for entry in report["lists"]:
        segment = keys.segment("list", entry["template"], keys.field(entry["template"]))
        for name in LIST_COUNTS:
            if name in entry:
                writer.metric(legal_key(f"list/{segment}/{name}"), entry[name])
        for name in ("f1", "far"):
            value = (entry.get("metrics") or {}).get(name)
            writer.metric(legal_key(f"list/{segment}/{name}"), value)

    tag_evaluation(writer, "fields", verdict=verdict, note=fields_summary(report, verdict))

    if report_json is not None:
        writer.text("report/report.json", report_json)
    else:
        writer.json("report/report.json", report)
    writer.text("report/report.md", markdown)
    writer.text("report/dashboard.html", dashboard)
    _fields_tables(writer, report)
    writer.json("metrics_index.json", keys.index())
    return keys


def fields_summary(report: Mapping[str, Any], verdict: str | None) -> str:
    """The Markdown run description for a field comparison."""
    overall = report["overall"]
    metrics = overall["metrics"]
    lines = [
        f"**docevals field comparison**: {overall['documents']:,} documents, "
        f"schema `{report['schema']['id']}`" + (f", verdict **{verdict}**" if verdict else ""),
        "",
        *table(
            ["metric", "value"],
            [
                *((name, figure_text(metrics.get(name))) for name in METRIC_NAMES),
                ("macro F1", figure_text(overall["macro_f1"])),
            ],
        ),
    ]
    worst = sorted(
        (entry for entry in report["fields"] if entry["metrics"]["f1"] is not None),
        key=lambda entry: entry["metrics"]["f1"],
    )[:5]
    if worst:
        lines += ["", "Weakest fields:", ""]
        lines += table(
            ["field", "method", "F1"],
            (
                (entry["template"], entry["method"], figure_text(entry["metrics"]["f1"]))
                for entry in worst
            ),
        )
    return "\n".join(lines) + "\n"


def _text_value(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


_ROW_COLUMNS = ("document_id", "document_class", *REPORT_ROW_FIELDS)


def _fields_tables(writer: BundleWriter, report: Mapping[str, Any]) -> None:
    import pandas as pd

    documents = []
    rows: list[tuple[Any, ...]] = []
    for document in report["documents"]:
        documents.append(
            {
                "document_id": document["id"],
                "document_class": document["class"],
                **document["counts"],
                **document["metrics"],
            }
        )
        doc_id, doc_class = document["id"], document["class"]
        # Values are kept as text, so "0123" stays "0123" (Parquet keeps strings);
        # structured values are JSON.
        rows.extend(
            (
                doc_id,
                doc_class,
                row["path"],
                row["template"],
                row["method"],
                row["threshold"],
                _text_value(row["expected"]),
                _text_value(row["actual"]),
                row["score"],
                row["outcome"],
                row["matched"],
                row["confidence"],
                row["discovered"],
                row["reason"],
            )
            for row in document.get("rows") or ()
        )
    writer.parquet("results/documents.parquet", pd.DataFrame(documents))
    if rows:
        writer.parquet(
            "results/fields.parquet", pd.DataFrame.from_records(rows, columns=list(_ROW_COLUMNS))
        )


def fields_dataset(expected_path: str | os.PathLike[str]) -> tuple[DatasetInput, Any]:
    """The ground-truth dataset of a field comparison: the expected file or folder.

    The digest is the SHA-256 of the file's bytes (of every document file's name and
    bytes, for a folder: its ``.json`` files, or its Parquet part files), so the same
    ground truth always has the same digest.
    """
    import pandas as pd

    from docevals_mlflow.fields.parquet_inputs import is_parquet, parquet_files

    path = Path(expected_path)
    if path.is_dir():
        parts = []
        records = []
        files = parquet_files(path) if is_parquet(path) else sorted(path.glob("*.json"))
        for file in files:
            data = file.read_bytes()
            parts.append(file.name.encode("utf-8") + b"\0" + data)
            records.append({"file": file.name, "sha256": sha256_bytes(data)})
        digest = sha256_bytes(b"\0".join(parts))
        frame = pd.DataFrame(records, columns=["file", "sha256"])
    else:
        # Read in blocks: the same digest as hashing the bytes, in bounded memory.
        digest = sha256_file(path)
        frame = pd.DataFrame([{"file": path.name, "sha256": digest}])
    dataset = DatasetInput(
        name=path.stem or path.name,
        digest=digest[:32],
        source=path.name,
        records="inputs/ground_truth.parquet",
    )
    return dataset, frame


# --- case, pipeline and suite evaluations ------------------------------------------


def _stage_reports(report: AnyEvaluation) -> list[EvaluationReport]:
    if isinstance(report, PipelineEvaluationReport):
        return list(report.stage_reports)
    if isinstance(report, EvaluationReport):
        return [report]
    return []


def layout_evaluation(
    writer: BundleWriter,
    report: AnyEvaluation,
    *,
    markdown: str,
    dashboard: str,
    stage_reports: Iterable[EvaluationReport] | None = None,
) -> KeyMap:
    """Fill ``writer`` with a case, pipeline or suite report.

    A suite report holds no stage reports; pass them as ``stage_reports`` to get
    per-operation params, ``results/cases.parquet`` and ``specs/operations.json``.
    """
    keys = KeyMap()
    stages = list(stage_reports) if stage_reports is not None else _stage_reports(report)
    suite = report if isinstance(report, SuiteReport) else build_suite_report([report])
    writer.param("docevals.version", __version__)
    if isinstance(report, PipelineEvaluationReport):
        writer.param("pipeline.id", report.pipeline_id)
    elif isinstance(report, EvaluationReport):
        writer.param("case.id", report.case_id)
    else:
        writer.param("suite.id", report.suite_id)
    _operation_params(writer, stages)

    writer.metric("overall/cases", suite.case_count)
    writer.metric("overall/stages", suite.stage_count)
    for verdict in VERDICTS:
        writer.metric(
            f"overall/case_{verdict}_rate",
            suite.case_verdict_counts[verdict] / suite.case_count if suite.case_count else None,
        )
    writer.metric("overall/human_review_rate", suite.human_review_rate)
    for stage_id, summary in suite.stages.items():
        segment = keys.named("stage", stage_id)
        for name in ("pass_rate", "fail_rate", "uncertain_rate", "not_applicable_rate"):
            writer.metric(legal_key(f"stage/{segment}/{name}"), getattr(summary, name))
        writer.metric(legal_key(f"stage/{segment}/human_review_rate"), summary.human_review_rate)
        # Every base context, and the counterfactual ones where reruns made them.
        for context, count in summary.failure_contexts.items():
            writer.metric(legal_key(f"stage/{segment}/failure/{context}"), count / summary.count)
        diagnostics_layout.counterfactual_metrics(writer, segment, summary.counterfactual)
    diagnostics_layout.cascade_metrics(writer, keys, suite.cascades)
    diagnostics_layout.disagreement_metrics(writer, suite.disagreement)
    for name, metric in suite.metrics.items():
        segment = keys.named("metric", name)
        writer.metric(legal_key(f"metric/{segment}/pass_rate"), metric.pass_rate)
        writer.metric(legal_key(f"metric/{segment}/human_review_rate"), metric.human_review_rate)
        writer.metric(legal_key(f"metric/{segment}/errors"), metric.error_count)
        for score, value in metric.score_means.items():
            writer.metric(legal_key(f"metric/{segment}/{score}"), value)
    for name, value in suite.usage.items():
        writer.metric(legal_key(f"usage/{name}"), value)

    tag_evaluation(
        writer,
        report.kind,
        verdict=None if isinstance(report, SuiteReport) else report.verdict,
        note=evaluation_summary(report, suite),
    )

    writer.json("report/report.json", report.model_dump(mode="json"))
    writer.text("report/report.md", markdown)
    writer.text("report/dashboard.html", dashboard)
    if stages:
        _cases_table(writer, stages)
        writer.json("specs/operations.json", operations_document(stages))
        _ground_truth_dataset(writer, report, stages)
        _judge_layout(writer, keys, stages)
    writer.json("metrics_index.json", keys.index())
    return keys


def _operation_params(writer: BundleWriter, stages: list[EvaluationReport]) -> None:
    values: dict[str, set[str]] = {}
    for stage in stages:
        fp = stage.fingerprints
        prefix = f"op.{legal_key(stage.operation).replace('/', '_')}"
        for suffix, value in (
            ("spec_id", fp.operation_spec_id),
            ("version", fp.operation_spec_version),
            ("action_sha256", fp.action_instruction_sha256),
            ("eval_spec_sha256", fp.evaluation_spec_sha256),
            ("eval_spec_status", fp.evaluation_spec_status),
            ("operation_spec_sha256", fp.operation_spec_sha256),
        ):
            if value is not None:
                values.setdefault(f"{prefix}.{suffix}", set()).add(value)
    for key, seen in sorted(values.items()):
        # Stages of one operation normally share their spec; if not, the param says
        # so and specs/operations.json holds every variant.
        writer.param(key, next(iter(seen)) if len(seen) == 1 else f"mixed ({len(seen)} variants)")


JUDGE_SETTINGS = ("provider", "model", "temperature", "reasoning_effort")
"""A single judge's identity logged as params (``judge.<setting>``), when set."""


def _judge_layout(writer: BundleWriter, keys: KeyMap, stages: list[EvaluationReport]) -> None:
    """Judge and panel params, metrics and artifacts, from the stages' metric results."""
    prompts: set[str] = set()
    panels: dict[str, dict[str, Any]] = {}
    judges: dict[str, dict[str, set[str]]] = {}
    variant_verdicts: dict[str, list[str]] = {}
    panel_figures: dict[str, list[tuple[float | None, bool]]] = {}
    queue: list[dict[str, Any]] = []
    for stage in stages:
        for result in stage.metric_results:
            details = result.details if isinstance(result.details, dict) else {}
            is_panel = result.basis == "judge_panel"
            is_judge = result.basis.startswith("llm_judge")
            if (is_panel or is_judge) and details.get("instructions_sha256"):
                prompts.add(details["instructions_sha256"])
            if is_panel:
                panels[result.name] = {**details["panel"], "sha256": details["panel_sha256"]}
                panel_figures.setdefault(result.name, []).append(
                    (result.scores.get("group_agreement"), result.requires_human_review)
                )
                for variant in details.get("variants", []):
                    variant_verdicts.setdefault(variant["name"], []).append(variant["verdict"])
            elif is_judge:
                variant_verdicts.setdefault(result.name, []).append(result.verdict)
                found = details.get("judge")
                identity: dict[str, Any] = found if isinstance(found, dict) else {}
                settings = judges.setdefault(result.name, {})
                for setting in JUDGE_SETTINGS:
                    if identity.get(setting) is not None:
                        settings.setdefault(setting, set()).add(str(identity[setting]))
            if is_panel or is_judge:
                for item in details.get("review_items", []):
                    queue.append(
                        {
                            "case_id": stage.case_id,
                            "stage_id": stage.stage_id,
                            "metric": result.name,
                            **item,
                        }
                    )
    if prompts:
        writer.param(
            "judge.instructions_sha256",
            next(iter(prompts)) if len(prompts) == 1 else f"mixed ({len(prompts)} prompts)",
        )
    _judge_params(writer, keys, judges)
    _panel_params(writer, keys, panels)
    if panels:
        writer.json("judges/panel.json", panels)
    for variant_name, verdicts in variant_verdicts.items():
        segment = keys.named("judge", variant_name)
        writer.metric(
            legal_key(f"judge/{segment}/pass_rate"),
            sum(verdict == "pass" for verdict in verdicts) / len(verdicts),
        )
    for panel_name, figures in panel_figures.items():
        segment = keys.named("panel", panel_name)
        agreements = [agreement for agreement, _ in figures if agreement is not None]
        writer.metric(
            legal_key(f"panel/{segment}/model_group_agreement"),
            sum(agreements) / len(agreements) if agreements else None,
        )
        writer.metric(
            legal_key(f"panel/{segment}/human_review_rate"),
            sum(review for _, review in figures) / len(figures),
        )
    if queue:
        writer.json("review/queue.json", queue)


def _judge_params(
    writer: BundleWriter, keys: KeyMap, judges: dict[str, dict[str, set[str]]]
) -> None:
    """``judge.provider``, ``judge.model`` (and ``judge.temperature``,
    ``judge.reasoning_effort`` when set) for the run's single judge; with several
    judge metrics, ``judge.<metric>.<setting>`` for each."""
    for name, settings in judges.items():
        prefix = "judge" if len(judges) == 1 else f"judge.{_param_segment(keys, 'judge', name)}"
        for setting in JUDGE_SETTINGS:
            values = settings.get(setting)
            if values:
                writer.param(
                    f"{prefix}.{setting}",
                    next(iter(values)) if len(values) == 1 else f"mixed ({len(values)} values)",
                )


def _panel_text(spec: dict[str, Any]) -> str:
    return ", ".join(
        f"{variant['name']}={variant['provider']}:{variant['model']}@{variant['temperature']}"
        for variant in spec["variants"]
    )


def _vote_rule(spec: dict[str, Any]) -> str:
    rule = str(spec["vote_rule"])
    if spec.get("minimum_agreement") is not None:
        rule += f">={spec['minimum_agreement']}"
    return rule


def _panel_params(writer: BundleWriter, keys: KeyMap, panels: dict[str, dict[str, Any]]) -> None:
    """``judge.panel``, ``judge.panel_sha256`` and ``judge.vote_rule`` for one panel.
    With several, ``judge.panel`` names them, ``judge.panel_sha256`` fingerprints them
    all, and each gets ``judge.panel.<name>``, ``.sha256`` and ``.vote_rule``."""
    if not panels:
        return
    if len(panels) == 1:
        spec = next(iter(panels.values()))
        writer.param("judge.panel", _panel_text(spec))
        writer.param("judge.panel_sha256", spec["sha256"])
        writer.param("judge.vote_rule", _vote_rule(spec))
        return
    writer.param("judge.panel", f"{len(panels)} panels: {', '.join(panels)}")
    writer.param("judge.panel_sha256", sha256_json({n: s["sha256"] for n, s in panels.items()}))
    rules = {_vote_rule(spec) for spec in panels.values()}
    writer.param("judge.vote_rule", next(iter(rules)) if len(rules) == 1 else "mixed")
    for name, spec in panels.items():
        prefix = f"judge.panel.{_param_segment(keys, 'panel', name)}"
        writer.param(prefix, _panel_text(spec))
        writer.param(f"{prefix}.sha256", spec["sha256"])
        writer.param(f"{prefix}.vote_rule", _vote_rule(spec))


def _param_segment(keys: KeyMap, kind: str, name: str) -> str:
    # Param keys use dots between parts, so a slash from the key map becomes "_".
    return keys.named(kind, name).replace("/", "_")


def operations_document(stages: Iterable[EvaluationReport]) -> dict[str, Any]:
    """``specs/operations.json``: full prompt and spec texts per operation, for diffs."""
    operations: dict[str, dict[str, Any]] = {}
    for stage in stages:
        entry = operations.setdefault(stage.operation, {"variants": {}})
        variant = {
            "operation_spec_id": stage.fingerprints.operation_spec_id,
            "operation_spec_version": stage.fingerprints.operation_spec_version,
            "action_instruction": stage.action_instruction,
            "evaluation_spec": (
                stage.evaluation_spec.model_dump(mode="json") if stage.evaluation_spec else None
            ),
            "rubric": stage.rubric,
            "judge_instruction": stage.judge_instruction,
            "judge_instruction_mode": stage.judge_instruction_mode,
            "fingerprints": stage.fingerprints.model_dump(mode="json"),
        }
        key = stage.fingerprints.operation_spec_sha256
        stored = entry["variants"].setdefault(key, {**variant, "stages": []})
        stored["stages"].append({"case_id": stage.case_id, "stage_id": stage.stage_id})
    return {"package_version": __version__, "operations": operations}


def _cases_table(writer: BundleWriter, stages: list[EvaluationReport]) -> None:
    import pandas as pd

    rows = []
    for stage in stages:
        row: dict[str, Any] = {
            "case_id": stage.case_id,
            "stage_id": stage.stage_id,
            "operation": stage.operation,
            "verdict": stage.verdict,
            "failure_context": stage.failure_context,
            "requires_human_review": stage.requires_human_review,
            "upstream_failed": ",".join(
                name for name, verdict in stage.upstream_verdicts.items() if verdict == "fail"
            ),
        }
        for result in stage.metric_results:
            row[f"{result.name}.verdict"] = result.verdict
            for score, value in result.scores.items():
                row[f"{result.name}.{score}"] = value
        if stage.counterfactual is not None:
            row["counterfactual.outcome"] = stage.counterfactual.outcome
            row["counterfactual.verdict"] = stage.counterfactual.verdict
        rows.append(row)
    writer.parquet("results/cases.parquet", pd.DataFrame(rows))


def _ground_truth_dataset(
    writer: BundleWriter, report: AnyEvaluation, stages: list[EvaluationReport]
) -> None:
    import pandas as pd

    records = [
        {
            "case_id": stage.case_id,
            "stage_id": stage.stage_id,
            "reference_id": reference.id,
            "path": Path(reference.path).name,
            "sha256": reference.sha256,
        }
        for stage in stages
        for reference in stage.reference_summary
        if reference.authority == "ground_truth"
    ]
    if not records:
        return
    if isinstance(report, PipelineEvaluationReport):
        name = report.pipeline_id
    elif isinstance(report, EvaluationReport):
        name = report.case_id
    else:
        name = report.suite_id
    dataset = DatasetInput(
        name=f"{name}-ground-truth",
        digest=sha256_json(sorted((r["reference_id"], r["sha256"] or "") for r in records))[:32],
        source=name,
        records="inputs/ground_truth.parquet",
    )
    writer.dataset(dataset, pd.DataFrame(records))


def evaluation_summary(report: AnyEvaluation, suite: SuiteReport) -> str:
    """The Markdown run description for a case, pipeline or suite evaluation."""
    if isinstance(report, PipelineEvaluationReport):
        head = f"**docevals pipeline** `{report.pipeline_id}`: verdict **{report.verdict}**"
    elif isinstance(report, EvaluationReport):
        head = (
            f"**docevals case** `{report.case_id}` / `{report.stage_id}`: verdict "
            f"**{report.verdict}** ({report.failure_context})"
        )
    else:
        head = f"**docevals suite** `{report.suite_id}`: {suite.case_count} cases"
    lines = [head, ""]
    lines += table(
        ["stage", "evaluated", "pass", "fail", "uncertain", "attribution"],
        (
            (
                stage_id,
                summary.count,
                f"{summary.pass_rate:.0%}",
                f"{summary.fail_rate:.0%}",
                f"{summary.uncertain_rate:.0%}",
                ", ".join(
                    f"{context}: {count}"
                    for context, count in summary.failure_contexts.items()
                    if count and context != "none"
                )
                or "none",
            )
            for stage_id, summary in suite.stages.items()
        ),
    )
    return "\n".join(lines) + "\n"
