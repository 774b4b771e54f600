"""The "What changed" section of a comparison in Markdown: operations, prompts, specs
and judge panels that differ between the runs, with unified diffs."""

from __future__ import annotations

from docevals_mlflow.compare.changes import Changes, OperationChange, PanelChange, TextDiff
from docevals_mlflow.compare.text import short
from docevals_mlflow.reports.markdown import table


def _diff_block(diff: TextDiff) -> list[str]:
    if not diff.diff:
        return []
    # A fence longer than any backtick run inside keeps the block intact.
    fence = "```"
    while fence in diff.diff:
        fence += "`"
    return [f"{fence}diff", diff.diff, fence, ""]


def _operation_lines(change: OperationChange) -> list[str]:
    title = f"**{change.operation}**" + (f" ({change.variant})" if change.variant else "")
    versions = change.versions
    version = (
        f", version {versions.baseline} → {versions.candidate}"
        if versions.baseline != versions.candidate and change.status == "changed"
        else ""
    )
    lines = [f"- {title}: {change.status}{version}"]
    if change.hashes:
        lines.append("  - differing: " + ", ".join(entry.name for entry in change.hashes))
    if change.spec_status is not None:
        lines.append(
            f"  - evaluation spec status: {change.spec_status.baseline} → "
            f"{change.spec_status.candidate}"
        )
    if change.criteria_added:
        lines.append("  - criteria added: " + "; ".join(change.criteria_added))
    if change.criteria_removed:
        lines.append("  - criteria removed: " + "; ".join(change.criteria_removed))
    lines.append("")
    for diff in change.diffs:
        lines += _diff_block(diff)
    return lines


def _panel_lines(change: PanelChange) -> list[str]:
    lines = [f"- **{change.panel}**: {change.status}"]
    for member in change.members:
        if member.status == "unchanged":
            continue
        if member.status == "changed":
            detail = ", ".join(
                f"{name} {short((member.baseline or {}).get(name))} → "
                f"{short((member.candidate or {}).get(name))}"
                for name in member.changed
            )
        else:
            spec = member.candidate if member.status == "added" else member.baseline
            detail = (
                f"{(spec or {}).get('provider')}:{(spec or {}).get('model')} "
                f"@{(spec or {}).get('temperature')}"
            )
        lines.append(f"  - member {member.name} {member.status}: {detail}")
    for rule in change.rules:
        lines.append(f"  - {rule.name}: {short(rule.baseline)} → {short(rule.candidate)}")
    return lines


def changes_markdown(changes: Changes) -> list[str]:
    """The "what changed" section."""
    if not changes.any:
        return ["Nothing: same params, prompts, specs and judge panels.", ""]
    lines: list[str] = []
    for headers, entries in (
        (["ground truth", "baseline digest", "candidate digest"], changes.datasets),
        (["param", "baseline", "candidate"], changes.params),
    ):
        if entries:
            rows = ((item.name, short(item.baseline), short(item.candidate)) for item in entries)
            lines += [*table(headers, rows), ""]
    operations = [entry for entry in changes.operations if entry.status != "unchanged"]
    if operations:
        lines += ["Operations:", ""]
        for change in operations:
            lines += _operation_lines(change)
    panels = [entry for entry in changes.panels if entry.status != "unchanged"]
    if panels:
        lines += ["Judge panels:", ""]
        for panel in panels:
            lines += _panel_lines(panel)
        lines.append("")
    for diff in changes.texts:
        if diff.status == "unchanged":
            continue
        lines += [f"`{diff.name}` ({diff.status}):", ""]
        lines += _diff_block(diff)
    return lines
