"""The judge part of an evaluation run's layout: judge and panel params, agreement
metrics, ``judges/panel.json`` and the human review queue.

Does not import mlflow; :mod:`docevals_mlflow.tracking.runs` logs what this builds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.reports import EvaluationReport
from docevals_mlflow.core.results import MetricResult
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.keys import KeyMap, legal_key
from docevals_mlflow.tracking.vote_records import log_votes

JUDGE_SETTINGS = ("provider", "model", "temperature", "reasoning_effort")
"""A single judge's identity logged as params (``judge.<setting>``), when set."""


@dataclass
class _JudgeFindings:
    """What the stages' judge and panel results say, gathered before anything is logged."""

    prompts: set[str] = field(default_factory=set)
    panels: dict[str, dict[str, Any]] = field(default_factory=dict)
    judges: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    variant_verdicts: dict[str, list[str]] = field(default_factory=dict)
    panel_figures: dict[str, list[tuple[float | None, bool]]] = field(default_factory=dict)
    queue: list[dict[str, Any]] = field(default_factory=list)

    def add(self, stage: EvaluationReport, result: MetricResult) -> None:
        details = result.details if isinstance(result.details, dict) else {}
        is_panel = result.basis == "judge_panel"
        is_judge = result.basis.startswith("llm_judge")
        if not (is_panel or is_judge):
            return
        if details.get("instructions_sha256"):
            self.prompts.add(details["instructions_sha256"])
        if is_panel:
            self.panels[result.name] = {**details["panel"], "sha256": details["panel_sha256"]}
            self.panel_figures.setdefault(result.name, []).append(
                (result.scores.get("group_agreement"), result.requires_human_review)
            )
            for variant in details.get("variants", []):
                self.variant_verdicts.setdefault(variant["name"], []).append(variant["verdict"])
        else:
            self.variant_verdicts.setdefault(result.name, []).append(result.verdict)
            found = details.get("judge")
            identity: dict[str, Any] = found if isinstance(found, dict) else {}
            settings = self.judges.setdefault(result.name, {})
            for setting in JUDGE_SETTINGS:
                if identity.get(setting) is not None:
                    settings.setdefault(setting, set()).add(str(identity[setting]))
        for item in details.get("review_items", []):
            self.queue.append(
                {
                    "case_id": stage.case_id,
                    "stage_id": stage.stage_id,
                    "metric": result.name,
                    **item,
                }
            )


def judge_layout(writer: BundleWriter, keys: KeyMap, stages: list[EvaluationReport]) -> None:
    """Judge and panel params, metrics and artifacts, from the stages' metric results."""
    found = _JudgeFindings()
    for stage in stages:
        for result in stage.metric_results:
            found.add(stage, result)
    if found.prompts:
        prompts = found.prompts
        writer.param(
            "judge.instructions_sha256",
            next(iter(prompts)) if len(prompts) == 1 else f"mixed ({len(prompts)} prompts)",
        )
    _judge_params(writer, keys, found.judges)
    _panel_params(writer, keys, found.panels)
    if found.panels:
        writer.json("judges/panel.json", found.panels)
    _agreement_metrics(writer, keys, found)
    if found.queue:
        writer.json("review/queue.json", found.queue)
    log_votes(writer, stages)


def _agreement_metrics(writer: BundleWriter, keys: KeyMap, found: _JudgeFindings) -> None:
    """Each judge's (and panel variant's) pass rate; each panel's agreement and review rate."""
    for variant_name, verdicts in found.variant_verdicts.items():
        segment = keys.named("judge", variant_name)
        writer.metric(
            legal_key(f"judge/{segment}/pass_rate"),
            sum(verdict == "pass" for verdict in verdicts) / len(verdicts),
        )
    for panel_name, figures in found.panel_figures.items():
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
