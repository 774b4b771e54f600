"""compare_runs end to end on synthetic runs with known effects."""

from __future__ import annotations

import numpy as np
import pytest

from docevals_mlflow.compare import RunSnapshot, compare_runs
from docevals_mlflow.compare.statistics import holm
from docevals_mlflow.errors import ConfigurationError, InputError
from tests.compare.synthetic import FIELDS, case_run, field_run, simulate_cells

BEFORE = [0.05, 0.05, 0.05, 0.30, 0.05]
AFTER = [0.05, 0.05, 0.05, 0.02, 0.05]  # the new prompt fixes $.total, nothing else


@pytest.fixture(scope="module")
def prompt_fix() -> tuple[RunSnapshot, RunSnapshot]:
    rng = np.random.default_rng(7)
    baseline = field_run(
        "v1",
        simulate_cells(rng, 200, BEFORE),
        params={"prompt.version": "v1"},
        texts={"specs/prompt.txt": "Extract the invoice.\n"},
    )
    candidate = field_run(
        "v2",
        simulate_cells(rng, 200, AFTER),
        params={"prompt.version": "v2"},
        texts={"specs/prompt.txt": "Extract the invoice.\nThe total is the amount due.\n"},
    )
    return baseline, candidate


def test_a_prompt_that_fixes_one_field_is_flagged_there_only(prompt_fix):
    baseline, candidate = prompt_fix
    comparison = compare_runs(baseline, candidate, resamples=1000)
    (pair,) = comparison.pairs
    effects = pair.effects.set_index(["family", "unit"])
    assert effects.loc[("field", "$.total"), "direction"] == "improvement"
    assert effects.loc[("overall", "all documents"), "direction"] == "improvement"
    flagged = pair.effects[pair.effects["significant"] & (pair.effects["family"] == "field")]
    assert flagged["unit"].tolist() == ["$.total"]
    assert not comparison.has_regression
    assert len(comparison.regressions) == 0
    assert pair.matched == 200
    assert pair.unit == "document"
    # Flips say which field moved.
    fixed = pair.flips[pair.flips["change"] == "fixed"]
    assert len(fixed) > 20
    assert fixed["why"].str.contains(r"\$\.total errors", regex=True).mean() > 0.6
    assert (pair.flips["why"] != "").all()
    # What changed.
    assert [entry.name for entry in pair.changes.params] == ["prompt.version"]
    assert "+The total is the amount due." in pair.changes.texts[0].diff


def test_the_same_change_backwards_is_a_regression(prompt_fix):
    baseline, candidate = prompt_fix
    comparison = compare_runs(candidate, baseline, resamples=1000)
    assert comparison.has_regression
    regressions = comparison.regressions
    assert "$.total" in set(regressions["unit"])
    assert set(regressions["candidate_run"]) == {"v1"}


def test_noise_is_not_flagged():
    # One seeded draw; how often noise is flagged over many draws is measured in
    # tests/compare/test_statistics.py (and benchmarks/compare_runs.py).
    rng = np.random.default_rng(1)
    rates = [0.05, 0.1, 0.02, 0.2, 0.05]
    first = field_run("a", simulate_cells(rng, 150, rates))
    second = field_run("b", simulate_cells(rng, 150, rates))
    comparison = compare_runs(first, second, resamples=1000)
    assert not comparison.pairs[0].effects["significant"].any()
    assert not comparison.has_regression


def test_lower_is_better_metrics_flip_the_direction(prompt_fix):
    baseline, candidate = prompt_fix
    comparison = compare_runs(baseline, candidate, metric="fdr", resamples=1000)
    effects = comparison.pairs[0].effects.set_index(["family", "unit"])
    assert effects.loc[("field", "$.total"), "delta"] < 0
    assert effects.loc[("field", "$.total"), "direction"] == "improvement"
    assert comparison.settings.lower_is_better


def test_macro_f1(prompt_fix):
    baseline, candidate = prompt_fix
    comparison = compare_runs(baseline, candidate, metric="macro_f1", resamples=500)
    headline = comparison.pairs[0].headline
    assert headline["metric"] == "macro_f1"
    assert headline["direction"] == "improvement"


def test_unmatched_documents_are_listed_and_left_out():
    rng = np.random.default_rng(1)
    cells = simulate_cells(rng, 10, [0.1] * 5)
    first = field_run("a", cells, ids=[f"d{index}" for index in range(10)])
    second = field_run("b", cells[:8], ids=[f"d{index}" for index in range(2, 10)])
    (pair,) = compare_runs(first, second, resamples=200).pairs
    assert pair.matched == 8
    assert pair.unmatched.to_dict("records") == [
        {"unit": "document", "id": "d0", "stage": None, "only_in": "baseline"},
        {"unit": "document", "id": "d1", "stage": None, "only_in": "baseline"},
    ]
    assert any("left out of every paired figure" in note for note in pair.notes)


def test_classes_are_tested_when_there_are_several():
    rng = np.random.default_rng(5)
    classes = ["Invoice", "Receipt"] * 50
    first = field_run("a", simulate_cells(rng, 100, [0.1] * 5), classes=classes)
    second = field_run("b", simulate_cells(rng, 100, [0.1] * 5), classes=classes)
    effects = compare_runs(first, second, resamples=300).pairs[0].effects
    classes_tested = effects[effects["family"] == "class"]
    assert classes_tested["unit"].tolist() == ["Invoice", "Receipt"]
    assert classes_tested["n"].tolist() == [50, 50]


def test_several_candidates_share_one_holm_family_and_get_a_leaderboard(prompt_fix):
    baseline, candidate = prompt_fix
    rng = np.random.default_rng(3)
    worse = field_run("v3", simulate_cells(rng, 200, [0.2] * 5))
    comparison = compare_runs(baseline, candidate, worse, resamples=500)
    fields = comparison.effects[comparison.effects["family"] == "field"]
    assert len(fields) == 2 * len(FIELDS)
    np.testing.assert_allclose(fields["p_adjusted"], holm(fields["p_value"].to_numpy()))
    board = comparison.leaderboard
    assert board is not None
    assert board["run"].tolist() == ["v2", "v1", "v3"]
    assert board["rank"].tolist() == [1, 2, 3]
    assert board.set_index("run").loc["v1", "role"] == "baseline"
    assert (board["ci_low"] <= board["value"]).all()
    assert (board["value"] <= board["ci_high"]).all()
    assert board.set_index("run").loc["v3", "direction"] == "regression"
    assert comparison.has_regression


def test_case_runs_use_mcnemar_and_pass_rates():
    verdicts_a, verdicts_b = {}, {}
    for index in range(40):
        verdicts_a[f"c{index}", "extract"] = "fail" if index < 15 else "pass"
        verdicts_b[f"c{index}", "extract"] = (
            "pass" if index < 12 else verdicts_a[f"c{index}", "extract"]
        )
        verdicts_a[f"c{index}", "total"] = "pass"
        verdicts_b[f"c{index}", "total"] = "pass"
    verdicts_a["c0", "total"] = "not_applicable"
    first, second = case_run("a", verdicts_a), case_run("b", verdicts_b)
    comparison = compare_runs(first, second)
    (pair,) = comparison.pairs
    effects = pair.effects.set_index(["family", "unit"])
    overall = effects.loc[("overall", "all cases")]
    assert overall["test"] == "mcnemar"
    assert overall["n"] == 79  # the not-applicable stage is left out
    assert overall["detail"] == "12 fixed, 0 broken"
    assert overall["p_value"] == pytest.approx(2 / 2**12)
    assert overall["direction"] == "improvement"
    assert effects.loc[("stage", "extract"), "direction"] == "improvement"
    assert effects.loc[("stage", "total"), "direction"] == "none"
    assert len(pair.flips) == 13  # 12 fixed and the not-applicable one
    assert comparison.settings.metric == "pass_rate"
    with pytest.raises(ConfigurationError, match="pass_rate"):
        compare_runs(first, second, metric="f1")


def test_bad_input():
    rng = np.random.default_rng(0)
    fields = field_run("f", simulate_cells(rng, 5, [0.1] * 5))
    cases = case_run("c", {("x", "s"): "pass"})
    with pytest.raises(InputError, match="cannot compare a document run with a case run"):
        compare_runs(fields, cases)
    with pytest.raises(InputError, match="nothing to compare"):
        compare_runs(fields)
    with pytest.raises(InputError, match="no per-document or per-case results"):
        compare_runs(RunSnapshot(run_id="empty"), fields)
    with pytest.raises(ConfigurationError, match="alpha"):
        compare_runs(fields, fields, alpha=1.5)
    with pytest.raises(ConfigurationError, match="unknown metric"):
        compare_runs(fields, fields, metric="auc")
    with pytest.raises(ConfigurationError, match="resamples"):
        compare_runs(fields, fields, resamples=10)


def test_resolution_note_when_the_family_is_too_large():
    rng = np.random.default_rng(0)
    cells = simulate_cells(rng, 20, [0.1] * 5)
    comparison = compare_runs(
        field_run("a", cells), field_run("b", cells), resamples=100, alpha=0.01
    )
    assert any("none can be significant" in note for note in comparison.notes)


def test_markdown_and_html(prompt_fix):
    baseline, candidate = prompt_fix
    hostile = field_run(
        "<script>alert(1)</script>",
        simulate_cells(np.random.default_rng(2), 200, AFTER),
        fields=["$.number", "$.date", "$.vendor", "$.<b>total</b>", "$.lines[].amount"],
    )
    comparison = compare_runs(baseline, candidate, hostile, resamples=300)
    markdown = comparison.to_markdown()
    assert markdown.startswith("# docevals run comparison")
    assert "## Leaderboard" in markdown
    assert "## v2 vs v1" in markdown
    assert "**Headline:** micro F1" in markdown
    assert "```diff" in markdown
    assert "+The total is the amount due." in markdown
    assert "▲ improvement" in markdown
    page = comparison.to_html()
    assert page.count('<script type="text/javascript">') == 1  # plotly.js inlined once
    assert "<script src=" not in page  # nothing loaded from elsewhere
    assert 'id="fig-forest-1"' in page
    assert 'id="fig-leaderboard"' in page
    assert "<script>alert(1)</script>" not in page
    assert "<b>total</b>" not in page
    assert comparison.to_html() == page  # deterministic
    summary = comparison.summary()
    assert "v2 (v2): 200 matched documents" in summary
    tables = comparison.tables()
    assert set(tables) == {"effects", "metrics", "flips", "judges", "unmatched", "leaderboard"}


def test_missing_field_rows_and_one_sided_fields_are_said():
    rng = np.random.default_rng(6)
    cells = simulate_cells(rng, 30, [0.1] * 5)
    full = field_run("a", cells)
    narrower = field_run("b", cells[:, :4], fields=FIELDS[:4])
    (pair,) = compare_runs(full, narrower, resamples=200).pairs
    assert any("1 field(s) only in the baseline" in note for note in pair.notes)
    one_sided = pair.effects.set_index("unit").loc["$.lines[].amount"]
    assert np.isnan(one_sided["delta"])
    assert one_sided["direction"] == "none"
    rowless = full.model_copy(update={"fields": None})
    (pair,) = compare_runs(rowless, full, resamples=200).pairs
    assert any("no per-field rows" in note for note in pair.notes)
    fields = pair.effects[pair.effects["family"] == "field"]
    assert fields["delta"].isna().all()  # undefined on the run without rows: never tested
    assert not fields["significant"].any()


def test_different_ground_truth_is_said_first():
    rng = np.random.default_rng(2)
    cells = simulate_cells(rng, 20, [0.1] * 5)
    first = field_run("a", cells).model_copy(update={"datasets": {"truth": "1" * 32}})
    second = field_run("b", cells).model_copy(update={"datasets": {"truth": "2" * 32}})
    (pair,) = compare_runs(first, second, resamples=200).pairs
    assert pair.notes[0].startswith("The runs were evaluated against different ground truth")
    assert [(entry.name, entry.baseline) for entry in pair.changes.datasets] == [
        ("truth", "1" * 32)
    ]
    assert "| truth |" in compare_runs(first, second, resamples=200).to_markdown()
