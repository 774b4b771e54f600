"""Ground-truth generations logged as MLflow runs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.errors import InputError, InputFileNotFoundError
from docevals_mlflow.groundtruth.models import (
    Candidate,
    ConsensusRow,
    Disagreement,
    GeneratedClaim,
    GenerationReport,
    ProviderGeneration,
)
from docevals_mlflow.judges.usage import Usage
from docevals_mlflow.tracking.bundle import BundleWriter
from docevals_mlflow.tracking.generation_runs import layout_generation, log_generation


def provider(label: str, model: str, claims: dict, *, status="ok", usage=None, duplicates=()):
    return ProviderGeneration(
        provider=label,
        model=model,
        group=model,
        status=status,
        claims=[GeneratedClaim(path=path, expected_value=value) for path, value in claims.items()],
        duplicate_paths=list(duplicates),
        usage=usage or Usage(),
    )


def report(case_id: str, **overrides) -> GenerationReport:
    fields = {
        "case_id": case_id,
        "instructions_sha256": "a" * 64,
        "expected_fields": ["$.number", "$.total", "$.date"],
        "minimum_agreement": 1.0,
        "providers": [
            provider(
                "gpt",
                "gpt-x",
                {"$.number": "7", "$.total": 10},
                usage=Usage(requests=1, input_tokens=100, output_tokens=20, cost_usd=0.01),
                duplicates=["$.total"],
            ),
            provider(
                "claude",
                "claude-y",
                {"$.number": "7", "$.total": 12},
                usage=Usage(requests=1, input_tokens=120, output_tokens=30, cost_usd=0.02),
            ),
        ],
        "consensus": [
            ConsensusRow(
                path="$.number", expected_value="7", agreement=1.0, providers=["gpt", "claude"]
            )
        ],
        "disagreements": [
            Disagreement(
                path="$.total",
                reason="conflict",
                candidates=[
                    Candidate(value=10, providers=["gpt"], votes=1),
                    Candidate(value=12, providers=["claude"], votes=1),
                ],
                agreement=0.5,
            ),
            Disagreement(path="$.date", reason="omitted_by_all", omitted_by=["gpt", "claude"]),
        ],
        "overall_agreement": 0.5,
        "usage": Usage(
            requests=2, input_tokens=220, output_tokens=50, total_tokens=270, cost_usd=0.03
        ),
    }
    return GenerationReport(**{**fields, **overrides})


DISPUTED = report("inv-a")
AGREED = report(
    "inv-b",
    providers=[
        provider("gpt", "gpt-x", {"$.number": "8"}, usage=Usage(requests=1, input_tokens=50)),
        provider("claude", "claude-y", {}, status="malformed", usage=Usage(requests=1)),
    ],
    expected_fields=["$.number"],
    consensus=[ConsensusRow(path="$.number", expected_value="8", agreement=1.0, providers=["gpt"])],
    disagreements=[],
    overall_agreement=1.0,
    usage=Usage(),
)


def test_generation_run_holds_params_metrics_and_artifacts(mlflow_store, tmp_path):
    review = tmp_path / "inv-a.review.json"
    review.write_text('{"case_id": "inv-a"}\n', encoding="utf-8")
    logged = log_generation([DISPUTED, AGREED], review_files=[review])
    client = MlflowClient(mlflow_store)
    run = client.get_run(logged.run_id)
    params, metrics, tags = run.data.params, run.data.metrics, run.data.tags
    assert logged.experiment_name == "docevals-ground-truth"
    assert tags["docevals.kind"] == "generation"
    assert tags["docevals.generation.requires_review"] == "true"
    assert tags["mlflow.note.content"].startswith("**docevals ground-truth generation**")
    assert params["generation.providers"] == "claude=claude-y, gpt=gpt-x"
    assert params["generation.minimum_agreement"] == "1"
    assert params["generation.instructions_sha256"] == "a" * 64
    assert params["generation.expected_fields"] == "mixed (2 values)"
    assert params["generation.cases"] == "2"
    assert params["generation.stage"] == "panel"
    assert metrics["generation/overall_agreement"] == pytest.approx(0.75)
    assert metrics["generation/fields_expected"] == 4
    assert metrics["generation/fields_agreed"] == 2
    assert metrics["generation/fields_disputed"] == 1  # unanimous omission is counted apart
    assert metrics["generation/fields_omitted_by_all"] == 1
    assert metrics["generation/human_review_rate"] == 0.5
    assert metrics["Summary/agreement"] == pytest.approx(0.75)
    assert metrics["Summary/cases"] == 2
    assert metrics["Summary/fields_agreed"] == 2
    assert metrics["Summary/fields_to_review"] == 2
    assert metrics["Summary/human_review_rate"] == 0.5
    assert metrics["provider/gpt/usable_share"] == 1.0
    assert metrics["provider/claude/usable_share"] == 0.5
    assert metrics["provider/gpt/claims"] == 3
    assert metrics["provider/gpt/duplicate_paths"] == 1
    assert metrics["provider/claude/input_tokens"] == 120
    assert metrics["provider/claude/cost_usd"] == pytest.approx(0.02)
    # inv-b's report carries no usage of its own: its providers' usage counts.
    assert metrics["usage/requests"] == 4
    assert metrics["usage/input_tokens"] == 270
    assert metrics["usage/cost_usd"] == pytest.approx(0.03)

    folder = Path(client.download_artifacts(logged.run_id, "", str(tmp_path / "artifacts")))
    reports = json.loads((folder / "generation" / "reports.json").read_text(encoding="utf-8"))
    assert [GenerationReport.model_validate(r) for r in reports] == [DISPUTED, AGREED]
    reference = json.loads(
        (folder / "references" / "generated" / "inv-a.json").read_text(encoding="utf-8")
    )
    assert reference["authority"] == "generated"
    assert reference["content"] == [{"path": "$.number", "expected": "7"}]
    assert reference["metadata"]["generation_sha256"] == DISPUTED.digest
    assert (folder / "review" / "inv-a.review.json").read_text(encoding="utf-8") == (
        '{"case_id": "inv-a"}\n'
    )
    table = pd.read_parquet(folder / "results" / "generation.parquet")
    assert table["case_id"].tolist() == ["inv-a", "inv-b"]
    assert table["requires_human_review"].tolist() == [True, False]
    assert table["generation_sha256"].tolist() == [DISPUTED.digest, AGREED.digest]


def test_generation_layout_refuses_nothing_and_missing_review_files(tmp_path):
    with pytest.raises(InputError, match="no generation reports"):
        layout_generation(BundleWriter(kind="generation"), [])
    with pytest.raises(InputFileNotFoundError, match="review file not found"):
        layout_generation(
            BundleWriter(kind="generation"), [AGREED], review_files=[tmp_path / "nope.json"]
        )


def test_a_panel_and_its_adjudication_are_kept_apart():
    writer = BundleWriter(kind="generation")
    adjudication = DISPUTED.model_copy(update={"stage": "adjudication"})
    keys = layout_generation(writer, [DISPUTED, adjudication])
    assert "references/generated/inv-a.panel.json" in writer.files
    assert "references/generated/inv-a.adjudication.json" in writer.files
    assert writer.bundle.params["generation.stage"] == "mixed (2 values)"
    assert writer.bundle.params["generation.cases"] == "1"
    assert keys.index()["case"] == {
        "inv-a.adjudication": "inv-a.adjudication",
        "inv-a.panel": "inv-a.panel",
    }


def test_a_union_adds_no_calls_to_the_panel_it_resolves():
    from docevals_mlflow.groundtruth.union import resolve_ground_truth_union
    from docevals_mlflow.tracking.generation_runs import _usage

    panel = GenerationReport(
        case_id="inv-u",
        providers=[
            provider("gpt", "gpt-x", {"$.number": "8"}, usage=Usage(requests=1)),
            provider("claude", "claude-y", {}, usage=Usage(requests=1)),
        ],
        usage=Usage(requests=2),
    )
    union = resolve_ground_truth_union(panel)
    assert union.providers  # the panel's providers, whose calls the panel already counts
    assert (_usage(panel) + _usage(union)).requests == 2
