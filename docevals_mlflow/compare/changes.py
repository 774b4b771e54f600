"""What changed between two runs: params, prompts and specs per operation, judge panels.

Operations are read from ``specs/operations.json`` (full texts, not only hashes), so
a change is shown as a unified diff of the action instruction and of the evaluation
spec, with the criteria added and removed and the spec status (``draft`` →
``approved``) spelled out. Judge panels are read from ``judges/panel.json``: members
added, removed or changed (provider, model, temperature, sample group), and the vote
rule and threshold. Other spec texts a run holds (``specs/prompt.txt``,
``specs/schema.json``) are diffed too.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import Field

from docevals_mlflow.compare.snapshot import RunSnapshot
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.core.model import FrozenModel

MAX_DIFF_LINES = 400
"""Longer diffs are cut (with a note); the runs' artifacts hold the full texts."""

Status = Literal["added", "removed", "changed", "unchanged"]
_FINGERPRINTS = (
    ("action", "action_instruction_sha256"),
    ("evaluation spec", "evaluation_spec_sha256"),
    ("rubric", "rubric_sha256"),
    ("judge instruction", "judge_instruction_sha256"),
    ("operation spec", "operation_spec_sha256"),
)
_MEMBER_FIELDS = ("provider", "model", "temperature", "group")
_PANEL_RULES = ("vote_rule", "minimum_agreement", "review_on_any_disagreement")


class ValueChange(FrozenModel):
    """One named value in both runs (``None``: absent in that run)."""

    name: str
    baseline: Any = None
    candidate: Any = None


class TextDiff(FrozenModel):
    """A unified diff of one text between the runs."""

    name: str
    status: Status
    baseline_sha256: str | None = None
    candidate_sha256: str | None = None
    diff: str = ""
    truncated: bool = False


class OperationChange(FrozenModel):
    """One operation (or one spec variant of it, when its stages used several)."""

    operation: str
    status: Status
    variant: str | None = None
    """``spec_id vN`` of the variant, when an operation had more than one."""
    versions: ValueChange
    hashes: list[ValueChange] = Field(default_factory=list)
    """Fingerprints that differ (``action``, ``evaluation spec``, ...)."""
    diffs: list[TextDiff] = Field(default_factory=list)
    criteria_added: list[str] = Field(default_factory=list)
    criteria_removed: list[str] = Field(default_factory=list)
    spec_status: ValueChange | None = None
    """The evaluation spec's status when it changed (``draft`` → ``approved``)."""


class MemberChange(FrozenModel):
    """A panel member (variant) added, removed or changed."""

    name: str
    status: Status
    baseline: dict[str, Any] | None = None
    candidate: dict[str, Any] | None = None
    changed: list[str] = Field(default_factory=list)
    """Which of provider, model, temperature, group differ."""


class PanelChange(FrozenModel):
    """One judge panel: its members and its voting rules."""

    panel: str
    status: Status
    members: list[MemberChange] = Field(default_factory=list)
    rules: list[ValueChange] = Field(default_factory=list)


class Changes(FrozenModel):
    """Everything that differs in what the two runs were asked to do."""

    params: list[ValueChange] = Field(default_factory=list)
    datasets: list[ValueChange] = Field(default_factory=list)
    """Ground-truth datasets whose digest differs (or that one run lacks)."""
    operations: list[OperationChange] = Field(default_factory=list)
    panels: list[PanelChange] = Field(default_factory=list)
    texts: list[TextDiff] = Field(default_factory=list)

    @property
    def any(self) -> bool:
        """Whether anything at all changed."""
        return bool(
            self.params
            or self.datasets
            or any(entry.status != "unchanged" for entry in self.operations)
            or any(entry.status != "unchanged" for entry in self.panels)
            or any(entry.status != "unchanged" for entry in self.texts)
        )


# --------------------------------------------------------------------------- texts


def _status(baseline: object, candidate: object, *, changed: bool) -> Status:
    """``added`` or ``removed`` when one side is absent, else whether it ``changed``."""
    if baseline is None:
        return "added"
    if candidate is None:
        return "removed"
    return "changed" if changed else "unchanged"


def unified_diff(
    baseline: str | None,
    candidate: str | None,
    *,
    name: str,
    labels: tuple[str, str] = ("baseline", "candidate"),
) -> TextDiff:
    """A :class:`TextDiff` of two texts (``None``: the text is absent in that run)."""
    if baseline is None and candidate is None:
        return TextDiff(name=name, status="unchanged")
    status = _status(baseline, candidate, changed=baseline != candidate)
    lines = list(
        difflib.unified_diff(
            (baseline or "").splitlines(),
            (candidate or "").splitlines(),
            fromfile=f"{labels[0]}/{name}",
            tofile=f"{labels[1]}/{name}",
            lineterm="",
        )
    )
    truncated = len(lines) > MAX_DIFF_LINES
    if truncated:
        lines = [*lines[:MAX_DIFF_LINES], f"... ({len(lines) - MAX_DIFF_LINES} more lines)"]
    return TextDiff(
        name=name,
        status=status,
        baseline_sha256=None if baseline is None else sha256_json(baseline),
        candidate_sha256=None if candidate is None else sha256_json(candidate),
        diff="\n".join(lines),
        truncated=truncated,
    )


def _spec_text(spec: Any) -> str | None:
    if spec is None:
        return None
    # Sorted, indented JSON: one key per line, so a diff shows exactly what moved.
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False)


# ---------------------------------------------------------------------- operations


def _variants(snapshot: RunSnapshot, operation: str) -> dict[str, dict[str, Any]]:
    entry = (snapshot.operations or {}).get(operation) or {}
    variants = entry.get("variants") or {}
    return {str(key): value for key, value in variants.items() if isinstance(value, dict)}


def _stages(variant: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {
        (str(stage.get("case_id")), str(stage.get("stage_id")))
        for stage in variant.get("stages") or ()
        if isinstance(stage, dict)
    }


def _pair_variants(
    baseline: dict[str, dict[str, Any]], candidate: dict[str, dict[str, Any]]
) -> list[tuple[str | None, str | None]]:
    """Pair spec variants: identical ones first, then by the stages they cover."""
    pairs: list[tuple[str | None, str | None]] = [
        (key, key) for key in baseline if key in candidate
    ]
    left = [key for key in baseline if key not in candidate]
    right = [key for key in candidate if key not in baseline]
    if len(left) == 1 and len(right) == 1:
        return [*pairs, (left[0], right[0])]
    scored = sorted(
        (
            (-len(_stages(baseline[a]) & _stages(candidate[b])), index_a, index_b, a, b)
            for index_a, a in enumerate(left)
            for index_b, b in enumerate(right)
        ),
    )
    used_a: set[str] = set()
    used_b: set[str] = set()
    for overlap, _, _, a, b in scored:
        if overlap == 0 or a in used_a or b in used_b:
            continue
        pairs.append((a, b))
        used_a.add(a)
        used_b.add(b)
    pairs += [(a, None) for a in left if a not in used_a]
    pairs += [(None, b) for b in right if b not in used_b]
    return pairs


def _variant_label(variant: Mapping[str, Any] | None) -> str | None:
    if variant is None:
        return None
    spec_id = variant.get("operation_spec_id")
    version = variant.get("operation_spec_version")
    if spec_id is None:
        return None
    return f"{spec_id} v{version}" if version is not None else str(spec_id)


_TEXT_KEYS = ("action_instruction", "evaluation_spec", "rubric", "judge_instruction")


def _texts(variant: Mapping[str, Any] | None) -> dict[str, str | None]:
    entry = variant or {}
    texts = {key: entry.get(key) for key in _TEXT_KEYS}
    texts["evaluation_spec"] = _spec_text(entry.get("evaluation_spec"))
    return texts


def _criteria(variant: Mapping[str, Any] | None) -> list[str]:
    spec = (variant or {}).get("evaluation_spec") or {}
    return [str(criterion) for criterion in spec.get("criteria") or ()]


def _operation_change(
    operation: str,
    baseline: Mapping[str, Any] | None,
    candidate: Mapping[str, Any] | None,
    *,
    several: bool,
    labels: tuple[str, str],
) -> OperationChange:
    first_prints = (baseline or {}).get("fingerprints") or {}
    second_prints = (candidate or {}).get("fingerprints") or {}
    hashes = [
        ValueChange(name=label, baseline=first_prints.get(key), candidate=second_prints.get(key))
        for label, key in _FINGERPRINTS
        if first_prints.get(key) != second_prints.get(key)
    ]
    first_texts, second_texts = _texts(baseline), _texts(candidate)
    diffs = [
        unified_diff(first_texts[key], second_texts[key], name=f"{operation}/{key}", labels=labels)
        for key in _TEXT_KEYS
    ]
    diffs = [diff for diff in diffs if diff.status != "unchanged"]
    status = _status(baseline, candidate, changed=bool(diffs or hashes))
    before, after = _criteria(baseline), _criteria(candidate)
    spec_status = None
    first_status = ((baseline or {}).get("evaluation_spec") or {}).get("status")
    second_status = ((candidate or {}).get("evaluation_spec") or {}).get("status")
    if baseline is not None and candidate is not None and first_status != second_status:
        spec_status = ValueChange(name="status", baseline=first_status, candidate=second_status)
    return OperationChange(
        operation=operation,
        status=status,
        variant=(_variant_label(candidate) or _variant_label(baseline)) if several else None,
        versions=ValueChange(
            name="version",
            baseline=(baseline or {}).get("operation_spec_version"),
            candidate=(candidate or {}).get("operation_spec_version"),
        ),
        hashes=hashes,
        diffs=diffs,
        criteria_added=[criterion for criterion in after if criterion not in before],
        criteria_removed=[criterion for criterion in before if criterion not in after],
        spec_status=spec_status,
    )


def operation_changes(baseline: RunSnapshot, candidate: RunSnapshot) -> list[OperationChange]:
    """Per operation (and spec variant): status, differing hashes and text diffs."""
    labels = (baseline.label, candidate.label)
    names = list(dict.fromkeys([*(baseline.operations or {}), *(candidate.operations or {})]))
    changes = []
    for operation in names:
        first, second = _variants(baseline, operation), _variants(candidate, operation)
        several = len(first) > 1 or len(second) > 1
        for key_a, key_b in _pair_variants(first, second):
            changes.append(
                _operation_change(
                    operation,
                    first.get(key_a) if key_a is not None else None,
                    second.get(key_b) if key_b is not None else None,
                    several=several,
                    labels=labels,
                )
            )
    return changes


# -------------------------------------------------------------------------- panels


def _members(panel: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    return {
        str(member.get("name")): dict(member)
        for member in (panel or {}).get("variants") or ()
        if isinstance(member, dict)
    }


def panel_changes(baseline: RunSnapshot, candidate: RunSnapshot) -> list[PanelChange]:
    """Per judge panel: members added, removed or changed, and rule changes."""
    first_panels, second_panels = baseline.panels or {}, candidate.panels or {}
    changes = []
    for name in dict.fromkeys([*first_panels, *second_panels]):
        first, second = first_panels.get(name), second_panels.get(name)
        first_members, second_members = _members(first), _members(second)
        members = []
        for member in dict.fromkeys([*first_members, *second_members]):
            a, b = first_members.get(member), second_members.get(member)
            differing = [
                field
                for field in _MEMBER_FIELDS
                if a is not None and b is not None and a.get(field) != b.get(field)
            ]
            members.append(
                MemberChange(
                    name=member,
                    status=_status(a, b, changed=bool(differing)),
                    baseline=a,
                    candidate=b,
                    changed=differing,
                )
            )
        rules = [
            ValueChange(
                name=rule, baseline=(first or {}).get(rule), candidate=(second or {}).get(rule)
            )
            for rule in _PANEL_RULES
            if first is not None and second is not None and first.get(rule) != second.get(rule)
        ]
        changed = bool(rules) or any(member.status != "unchanged" for member in members)
        status = _status(first, second, changed=changed)
        changes.append(PanelChange(panel=name, status=status, members=members, rules=rules))
    return changes


# -------------------------------------------------------------------------- params


def _value_changes(baseline: Mapping[str, str], candidate: Mapping[str, str]) -> list[ValueChange]:
    return [
        ValueChange(name=key, baseline=baseline.get(key), candidate=candidate.get(key))
        for key in sorted(set(baseline) | set(candidate))
        if baseline.get(key) != candidate.get(key)
    ]


def param_changes(baseline: RunSnapshot, candidate: RunSnapshot) -> list[ValueChange]:
    """Params whose values differ (or exist in one run only), sorted by name."""
    return _value_changes(baseline.params, candidate.params)


def dataset_changes(baseline: RunSnapshot, candidate: RunSnapshot) -> list[ValueChange]:
    """Ground-truth datasets whose content differs between the runs.

    Sameness is decided by content digest: a dataset whose digest both runs hold is
    unchanged whatever its name (a renamed ground-truth file is not a change). The
    others are matched by name, as are datasets logged without a digest (old runs).
    """
    shared = {digest for digest in baseline.datasets.values() if digest} & set(
        candidate.datasets.values()
    )

    def unmatched(datasets: Mapping[str, str]) -> dict[str, str]:
        return {name: digest for name, digest in datasets.items() if digest not in shared}

    return _value_changes(unmatched(baseline.datasets), unmatched(candidate.datasets))


def text_changes(baseline: RunSnapshot, candidate: RunSnapshot) -> list[TextDiff]:
    """Diffs of the other spec texts (prompt, schema) both or either run holds."""
    labels = (baseline.label, candidate.label)
    names: Iterable[str] = sorted(set(baseline.texts) | set(candidate.texts))
    return [
        unified_diff(baseline.texts.get(name), candidate.texts.get(name), name=name, labels=labels)
        for name in names
    ]


def changes_between(baseline: RunSnapshot, candidate: RunSnapshot) -> Changes:
    """Everything that differs in what the two runs were asked to do."""
    return Changes(
        params=param_changes(baseline, candidate),
        datasets=dataset_changes(baseline, candidate),
        operations=operation_changes(baseline, candidate),
        panels=panel_changes(baseline, candidate),
        texts=text_changes(baseline, candidate),
    )
