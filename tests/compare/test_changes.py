"""What changed: operation prompts and specs, judge panels, params and spec texts."""

from __future__ import annotations

from typing import Any

from docevals_mlflow.compare import RunSnapshot, changes_between
from docevals_mlflow.compare.changes import MAX_DIFF_LINES, unified_diff


def variant(
    action: str,
    *,
    criteria: list[str],
    status: str = "draft",
    version: str = "1",
    stages: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    return {
        "operation_spec_id": "extract-spec",
        "operation_spec_version": version,
        "action_instruction": action,
        "evaluation_spec": {
            "spec_id": "extract-eval",
            "status": status,
            "objective": "Extract the invoice.",
            "criteria": criteria,
        },
        "rubric": "All fields correct.",
        "judge_instruction": None,
        "fingerprints": {
            "action_instruction_sha256": f"a-{action}",
            "evaluation_spec_sha256": f"e-{status}-{len(criteria)}",
        },
        "stages": [{"case_id": case, "stage_id": stage} for case, stage in stages or []],
    }


def run(
    name: str,
    operations: dict[str, Any] | None = None,
    panels: dict[str, Any] | None = None,
    params: dict[str, str] | None = None,
    texts: dict[str, str] | None = None,
) -> RunSnapshot:
    return RunSnapshot(
        run_id=name * 4,
        run_name=name,
        operations=operations,
        panels=panels,
        params=params or {},
        texts=texts or {},
    )


def test_operation_prompt_and_spec_changes():
    before = run(
        "v1",
        {
            "extract": {
                "variants": {"x": variant("Extract fields.", criteria=["totals add up", "dates"])}
            },
            "classify": {"variants": {"c": variant("Classify.", criteria=["one class"])}},
        },
    )
    after = run(
        "v2",
        {
            "extract": {
                "variants": {
                    "y": variant(
                        "Extract every field.\nCopy ids verbatim.",
                        criteria=["totals add up", "ids verbatim"],
                        status="approved",
                        version="2",
                    )
                }
            },
            "classify": {"variants": {"c": variant("Classify.", criteria=["one class"])}},
            "summarise": {"variants": {"s": variant("Summarise.", criteria=["short"])}},
        },
    )
    changes = changes_between(before, after)
    by_name = {change.operation: change for change in changes.operations}
    extract = by_name["extract"]
    assert extract.status == "changed"
    assert (extract.versions.baseline, extract.versions.candidate) == ("1", "2")
    assert extract.criteria_added == ["ids verbatim"]
    assert extract.criteria_removed == ["dates"]
    assert extract.spec_status is not None
    assert (extract.spec_status.baseline, extract.spec_status.candidate) == ("draft", "approved")
    assert {entry.name for entry in extract.hashes} == {"action", "evaluation spec"}
    action = next(diff for diff in extract.diffs if diff.name == "extract/action_instruction")
    assert "-Extract fields." in action.diff
    assert "+Copy ids verbatim." in action.diff
    assert action.diff.startswith("--- v1/extract/action_instruction\n+++ v2/")
    spec = next(diff for diff in extract.diffs if diff.name == "extract/evaluation_spec")
    assert '+  "status": "approved"' in spec.diff
    assert by_name["classify"].status == "unchanged"
    assert by_name["classify"].diffs == []
    assert by_name["summarise"].status == "added"
    assert changes.any


def test_spec_variants_pair_by_the_stages_they_cover():
    before = run(
        "a",
        {
            "extract": {
                "variants": {
                    "p": variant("Prompt P.", criteria=["c"], stages=[("1", "s1")]),
                    "q": variant("Prompt Q.", criteria=["c"], stages=[("2", "s2")]),
                }
            }
        },
    )
    after = run(
        "b",
        {
            "extract": {
                "variants": {
                    "q2": variant("Prompt Q, revised.", criteria=["c"], stages=[("2", "s2")]),
                    "p": variant("Prompt P.", criteria=["c"], stages=[("1", "s1")]),
                }
            }
        },
    )
    changes = changes_between(before, after).operations
    assert [change.status for change in changes] == ["unchanged", "changed"]
    revised = changes[1]
    assert revised.variant == "extract-spec v1"
    assert "+Prompt Q, revised." in revised.diffs[0].diff


def panel(*members: tuple[str, str, str, float], rule: str = "majority", minimum=None):
    return {
        "variants": [
            {"name": name, "provider": provider, "model": model, "temperature": temperature}
            for name, provider, model, temperature in members
        ],
        "vote_rule": rule,
        "minimum_agreement": minimum,
        "review_on_any_disagreement": True,
        "sha256": "x",
    }


def test_panel_members_and_rules():
    before = run(
        "a",
        panels={
            "panel": panel(
                ("gpt", "openai", "gpt-4.1", 0.0),
                ("claude", "anthropic", "claude-3", 0.0),
                ("local", "ollama", "llama", 0.0),
            )
        },
    )
    after = run(
        "b",
        panels={
            "panel": panel(
                ("gpt", "openai", "gpt-4.1", 0.7),
                ("claude", "anthropic", "claude-4", 0.0),
                ("gemini", "google", "gemini-2", 0.0),
                rule="majority",
                minimum=0.75,
            )
        },
    )
    (change,) = changes_between(before, after).panels
    assert change.status == "changed"
    members = {member.name: member for member in change.members}
    assert members["gpt"].changed == ["temperature"]
    assert members["claude"].changed == ["model"]
    assert members["local"].status == "removed"
    assert members["gemini"].status == "added"
    assert [(rule.name, rule.baseline, rule.candidate) for rule in change.rules] == [
        ("minimum_agreement", None, 0.75)
    ]


def test_params_and_texts():
    before = run(
        "a", params={"prompt.version": "v1", "schema.id": "s"}, texts={"specs/prompt.txt": "one\n"}
    )
    after = run(
        "b",
        params={"prompt.version": "v2", "schema.id": "s", "new": "x"},
        texts={"specs/prompt.txt": "two\n"},
    )
    changes = changes_between(before, after)
    assert [(entry.name, entry.baseline, entry.candidate) for entry in changes.params] == [
        ("new", None, "x"),
        ("prompt.version", "v1", "v2"),
    ]
    (text,) = changes.texts
    assert text.status == "changed"
    assert "-one" in text.diff
    assert "+two" in text.diff


def test_nothing_changed():
    same = run("a", params={"k": "v"}, texts={"specs/prompt.txt": "p"})
    assert not changes_between(same, same).any


def test_long_diffs_are_cut():
    first = "\n".join(f"line {index}" for index in range(MAX_DIFF_LINES * 2))
    diff = unified_diff(first, "", name="big")
    assert diff.truncated
    assert diff.diff.count("\n") == MAX_DIFF_LINES
    assert diff.diff.endswith("more lines)")


def test_ground_truth_is_the_same_when_its_digest_is_whatever_its_name():
    def truth(datasets: dict[str, str]) -> RunSnapshot:
        return RunSnapshot(run_id="r" * 32, datasets=datasets)

    renamed = changes_between(truth({"expected": "1" * 32}), truth({"truth-v2": "1" * 32}))
    assert renamed.datasets == []
    edited = changes_between(truth({"expected": "1" * 32}), truth({"expected": "2" * 32}))
    assert [(entry.name, entry.baseline, entry.candidate) for entry in edited.datasets] == [
        ("expected", "1" * 32, "2" * 32)
    ]
    # Renamed and edited: one gone, one new.
    both = changes_between(truth({"expected": "1" * 32}), truth({"truth": "2" * 32}))
    assert [(entry.name, entry.baseline, entry.candidate) for entry in both.datasets] == [
        ("expected", "1" * 32, None),
        ("truth", None, "2" * 32),
    ]
    # Runs logged without a digest fall back to the name.
    assert changes_between(truth({"expected": ""}), truth({"expected": ""})).datasets == []
    assert [
        entry.name
        for entry in changes_between(truth({"expected": ""}), truth({"truth": ""})).datasets
    ] == ["expected", "truth"]
