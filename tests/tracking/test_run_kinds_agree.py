"""Every run kind holds the same run whichever entry point logs it (issue 17).

Each kind is logged through every entry point it has (the CLI, the Python API, the
``mlflow.models.evaluate`` plugin) into one temporary SQLite store, and the runs are
compared: the same params (apart from values that legitimately differ, named per
test), the same metric keys and the same artifacts. The Spark entry point is in
``test_run_kinds_spark.py``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import mlflow
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow import (
    DatasetUse,
    Evaluator,
    ExactStructuredMetric,
    GenerationReport,
    GenerationSettings,
    RunOptions,
    RunPrompt,
    artifact_from_path,
    build_suite_report,
    compare_documents,
    compare_runs,
    load_ground_truth,
    load_report,
    load_run_snapshot,
    log_calibration_report,
    log_comparison,
    log_evaluation_report,
    log_field_comparison,
    log_generation,
    log_split_report,
    register_ground_truth_dataset,
)
from docevals_mlflow.core.cases import EvaluationCase
from docevals_mlflow.core.fingerprints import sha256_file
from docevals_mlflow.core.reports import EvaluationReport, PipelineEvaluationReport
from docevals_mlflow.errors import InputError
from docevals_mlflow.evaluation.config import load_pipelines_config
from docevals_mlflow.fields.inputs import pair_records
from docevals_mlflow.fields.schema import DocumentSchema
from docevals_mlflow.groundtruth.approval import write_approved
from docevals_mlflow.groundtruth.config import load_generation_config
from docevals_mlflow.judges.calibration import calibrate, load_human_labels
from docevals_mlflow.split.batch import evaluate_split_batch
from docevals_mlflow.split.inputs import pair_packets
from docevals_mlflow.tracking import plugin
from docevals_mlflow.tracking.assembly import AssembledRun, assemble_fields
from docevals_mlflow.tracking.dataset_use import dataset_pairs
from tests.groundtruth.approval_fakes import approved
from tests.helpers import run, write_json, write_jsonl, write_text
from tests.judges import conftest as judges_conftest
from tests.judges.provider_server import ProviderServer
from tests.judges.test_calibration import judge_labels, judge_reports, write_labels
from tests.split.test_seed_metrics import EXPECTED, PREDICTED

pytestmark = [
    # mlflow.models.evaluate imports mlflow.pyfunc, which warns about its own type hints.
    pytest.mark.filterwarnings(
        r"ignore:.*Any type hint is inferred as AnyType:UserWarning:mlflow\..*"
    ),
]

# --- what a run holds -----------------------------------------------------------------


def artifact_paths(client: MlflowClient, run_id: str, path: str | None = None) -> list[str]:
    """Every artifact file of a run, sorted."""
    found: list[str] = []
    for item in client.list_artifacts(run_id, path):
        found += artifact_paths(client, run_id, item.path) if item.is_dir else [item.path]
    return sorted(found)


class Held:
    """What a logged run holds: params, metric keys, artifacts, kind tags."""

    def __init__(self, client: MlflowClient, run_id: str) -> None:
        data = client.get_run(run_id).data
        self.run_id = run_id
        self.params: dict[str, str] = dict(data.params)
        self.metrics: set[str] = set(data.metrics)
        self.artifacts = artifact_paths(client, run_id)
        self.kind = {key: data.tags.get(key) for key in ("docevals.kind", "docevals.report_kind")}


def assert_same_run(
    first: Held, second: Held, *, differing: Iterable[str] = (), absent: Iterable[str] = ()
) -> None:
    """The same run: params (``differing`` ones may hold other values, ``absent`` ones
    may be missing from either), metric keys, artifacts and kind."""
    ignored = set(absent)
    left = {key: value for key, value in first.params.items() if key not in ignored}
    right = {key: value for key, value in second.params.items() if key not in ignored}
    assert sorted(left) == sorted(right)
    for key in set(left) - set(differing):
        assert left[key] == right[key], key
    assert first.metrics == second.metrics
    assert first.artifacts == second.artifacts
    assert first.kind == second.kind


RUN_ID = re.compile(r"MLflow run ([0-9a-f]{32})")


def logged_id(out: str) -> str:
    match = RUN_ID.search(out)
    assert match, out
    return match.group(1)


def cli_run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> str:
    """``docevals ARGV`` (exit 0 or 1, a gate), the id of the run it logged."""
    code, out, err = run(capsys, *argv)
    assert code in (0, 1), err
    return logged_id(out)


# --- field comparisons ----------------------------------------------------------------

SCHEMA = {
    "schema_id": "receipts",
    "version": "2",
    "classes": [
        {
            "name": "Receipt",
            "fields": {
                "number": {"method": "EXACT"},
                "total": {"method": "NUMERIC_EXACT", "threshold": 0.01},
                "vendor": {"method": "EXACT"},
                "lines": {
                    "items": {
                        "fields": {"sku": {"method": "EXACT"}, "qty": {"method": "NUMERIC_EXACT"}}
                    }
                },
            },
        }
    ],
}
EXPECTED_DOCUMENTS = [
    {"number": "1", "total": "10.00", "vendor": "ACME", "lines": [{"sku": "A", "qty": 1}]},
    {"number": "2", "total": "5.00", "vendor": "Bolt", "lines": []},
    {"number": "3", "total": "7.50", "lines": [{"sku": "B", "qty": 2}, {"sku": "C", "qty": 1}]},
]
PREDICTED_DOCUMENTS = [
    {"number": "1", "total": 10, "lines": [{"sku": "A", "qty": 1}]},
    {"number": "3", "total": 5, "vendor": "Bolt", "lines": [{"sku": "Z", "qty": 1}]},
    {"number": "3", "total": 7.5, "vendor": "Cog", "lines": [{"sku": "B", "qty": 2}]},
]
IDS = ["r1", "r2", "r3"]


class FieldInputs:
    """A schema, expected and predicted documents and a prompt, as files."""

    def __init__(self, folder: Path) -> None:
        self.schema_file = write_json(folder / "schema.json", SCHEMA)
        self.schema = DocumentSchema.load(self.schema_file)
        self.expected = write_jsonl(
            folder / "expected.jsonl",
            [{"id": i, "data": d} for i, d in zip(IDS, EXPECTED_DOCUMENTS, strict=True)],
        )
        self.predicted = write_jsonl(
            folder / "predicted.jsonl",
            [{"id": i, "data": d} for i, d in zip(IDS, PREDICTED_DOCUMENTS, strict=True)],
        )
        self.prompt = write_text(folder / "prompts" / "extract.txt", "Extract the receipt.\n")

    def comparison(self) -> Any:
        paired = pair_records(self.expected, self.predicted)
        return compare_documents(
            paired.pairs,
            self.schema,
            expected_only=paired.expected_only,
            predicted_only=paired.predicted_only,
        )


@pytest.fixture
def field_inputs(tmp_path: Path) -> FieldInputs:
    return FieldInputs(tmp_path / "inputs")


ANNOTATIONS = {"params": {"model": "local-7b"}, "tags": {"team": "billing"}}


def test_fields_cli_and_python_hold_the_same_run(
    mlflow_store: str, tmp_path: Path, field_inputs: FieldInputs, capsys: Any
) -> None:
    client = MlflowClient(mlflow_store)
    cli = cli_run(
        capsys, "fields", "--schema", field_inputs.schema_file,
        "--expected", field_inputs.expected, "--predicted", field_inputs.predicted,
        "--output", tmp_path / "report.json", "--fail-under", "f1=0.99",
        "--prompt", field_inputs.prompt, "--param", "model=local-7b", "--tag", "team=billing",
    )  # fmt: skip
    python = log_field_comparison(
        field_inputs.comparison(),
        ground_truth=field_inputs.expected,
        verdict="fail",
        schema=field_inputs.schema,
        prompt=RunPrompt("Extract the receipt.\n", file="extract.txt"),
        **ANNOTATIONS,
    )
    from_cli, from_python = Held(client, cli), Held(client, python.run_id)
    assert_same_run(from_cli, from_python)
    # The fixed inconsistency: a run logged from Python holds the schema too.
    assert "specs/schema.json" in from_python.artifacts
    assert from_python.params["prompt.file"] == "extract.txt"
    assert from_python.params["model"] == "local-7b"
    tags = client.get_run(python.run_id).data.tags
    assert (tags["team"], tags["docevals.verdict"]) == ("billing", "fail")
    # The same schema text, byte for byte.
    texts = [
        Path(client.download_artifacts(run_id, "specs/schema.json", str(tmp_path / run_id)))
        for run_id in (cli, python.run_id)
    ]
    assert texts[0].read_bytes() == texts[1].read_bytes()


def test_fields_options_value_equals_the_keywords(
    mlflow_store: str, field_inputs: FieldInputs
) -> None:
    client = MlflowClient(mlflow_store)
    options = RunOptions(
        ground_truth=field_inputs.expected,
        schema=field_inputs.schema,
        prompt=RunPrompt("Extract the receipt.\n", file="extract.txt"),
        **ANNOTATIONS,
    )
    by_options = log_field_comparison(field_inputs.comparison(), options=options)
    by_keywords = log_field_comparison(
        field_inputs.comparison(),
        ground_truth=field_inputs.expected,
        schema=field_inputs.schema,
        prompt=RunPrompt("Extract the receipt.\n", file="extract.txt"),
        **ANNOTATIONS,
    )
    assert_same_run(Held(client, by_options.run_id), Held(client, by_keywords.run_id))


def test_fields_plugin_assembles_the_run_the_python_api_logs(
    mlflow_store: str, field_inputs: FieldInputs, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = MlflowClient(mlflow_store)
    assembled: list[Any] = []
    logged_into_run = plugin.log_bundle_into_run

    def spy(client: Any, run_id: str, writer: Any) -> None:
        assembled.append(writer)
        logged_into_run(client, run_id, writer)

    monkeypatch.setattr(plugin, "log_bundle_into_run", spy)
    data = pd.DataFrame(
        {"id": IDS, "expected": EXPECTED_DOCUMENTS, "predicted": PREDICTED_DOCUMENTS}
    )
    with mlflow.start_run() as active:
        mlflow.models.evaluate(
            data=data,
            predictions="predicted",
            targets="expected",
            model_type=plugin.MODEL_TYPE,
            evaluators="docevals",
            evaluator_config={"schema": str(field_inputs.schema_file), "id_col": "id"},
        )
    # The ground truth of the plugin is MLflow's evaluation dataset, never a file: the
    # Python run it is compared with is given none either.
    python = log_field_comparison(field_inputs.comparison(), schema=field_inputs.schema)
    from_plugin, from_python = Held(client, active.info.run_id), Held(client, python.run_id)
    assert from_plugin.metrics == from_python.metrics
    assert from_plugin.artifacts == from_python.artifacts
    assert "specs/schema.json" in from_plugin.artifacts
    # The plugin assembles the same params; it leaves them out of the caller's run on
    # purpose (the run is the caller's, and params in MLflow are immutable).
    (writer,) = assembled
    assert writer.bundle.params == from_python.params
    assert from_plugin.params == {}


def test_a_schema_that_is_not_the_compared_one_is_refused(field_inputs: FieldInputs) -> None:
    other = DocumentSchema.model_validate({**SCHEMA, "version": "3"})
    with pytest.raises(InputError, match="not the one the comparison used"):
        assemble_fields(field_inputs.comparison(), RunOptions(schema=other))


def test_fields_with_a_registered_dataset_agree(
    mlflow_store: str, tmp_path: Path, capsys: Any
) -> None:
    client = MlflowClient(mlflow_store)
    register_ground_truth_dataset(
        "receipts-truth",
        [
            approved("r1", [{"path": "$.number", "expected": "1"}]),
            approved("r2", [{"path": "$.number", "expected": "2"}]),
        ],
    )
    predicted = write_jsonl(
        tmp_path / "predicted.jsonl",
        [{"id": "r1", "data": {"number": "1"}}, {"id": "r2", "data": {"number": "3"}}],
    )
    cli = cli_run(
        capsys, "fields", "--ground-truth-dataset", "receipts-truth", "--predicted", predicted,
        "--output", tmp_path / "report.json",
    )  # fmt: skip
    dataset = load_ground_truth("receipts-truth")
    paired = dataset_pairs(dataset, predicted)
    batch = compare_documents(
        paired.pairs, expected_only=paired.expected_only, predicted_only=paired.predicted_only
    )
    python = log_field_comparison(batch, datasets=[DatasetUse(dataset, ("r1", "r2"))])
    from_cli, from_python = Held(client, cli), Held(client, python.run_id)
    assert_same_run(from_cli, from_python)
    assert from_python.params["dataset.name"] == "receipts-truth"
    inputs = client.get_run(python.run_id).inputs.dataset_inputs
    assert [item.dataset.name for item in inputs] == ["receipts-truth"]


# --- case, pipeline and suite evaluations ---------------------------------------------


def test_case_pipeline_and_suite_cli_and_python_hold_the_same_runs(
    mlflow_store: str, tmp_path: Path, capsys: Any, checks_module: Any
) -> None:
    from tests.test_cli import write_pipeline

    client = MlflowClient(mlflow_store)
    prediction = write_json(tmp_path / "case" / "pred.json", {"total": 3, "vendor": "ACME"})
    truth = write_json(tmp_path / "case" / "truth.json", {"total": 4, "vendor": "ACME"})
    case_report = tmp_path / "reports" / "case.json"
    cli_case = cli_run(
        capsys, "evaluate-case", "--prediction", prediction, "--ground-truth", truth,
        "--output", case_report, "--param", "model=m1", "--tag", "team=t",
    )  # fmt: skip
    case = EvaluationCase(
        case_id="pred",
        stage_id="output",
        operation="generic",
        prediction={"total": 3, "vendor": "ACME"},
        references=[artifact_from_path(truth, authority="ground_truth", artifact_id="truth")],
    )
    report = Evaluator([ExactStructuredMetric(1e-6, 1e-6, case_sensitive=False)]).evaluate(case)
    python_case = log_evaluation_report(report, params={"model": "m1"}, tags={"team": "t"})
    assert_same_run(Held(client, cli_case), Held(client, python_case.run_id))

    config = write_pipeline(tmp_path / "pipeline", checks_module)
    pipeline_report = tmp_path / "reports" / "pipeline.json"
    cli_pipeline = cli_run(capsys, "evaluate-pipeline", config, "--output", pipeline_report)
    pipelines, evaluator = load_pipelines_config(config)
    python_pipeline = log_evaluation_report(evaluator.evaluate(pipelines[0]))
    from_cli = Held(client, cli_pipeline)
    assert_same_run(from_cli, Held(client, python_pipeline.run_id))
    assert "specs/operations.json" in from_cli.artifacts

    suite_report = tmp_path / "reports" / "suite.json"
    cli_suite = cli_run(capsys, "suite", case_report, pipeline_report, "--output", suite_report)
    reports = [load_report(case_report), load_report(pipeline_report)]
    stages = [
        stage
        for one in reports
        for stage in (one.stage_reports if isinstance(one, PipelineEvaluationReport) else [one])
    ]
    assert all(isinstance(stage, EvaluationReport) for stage in stages)
    python_suite = log_evaluation_report(
        build_suite_report(reports, suite_id="suite"),  # type: ignore[arg-type]
        stage_reports=stages,  # type: ignore[arg-type]
    )
    assert_same_run(Held(client, cli_suite), Held(client, python_suite.run_id))


# --- split evaluations ----------------------------------------------------------------


def test_split_cli_and_python_hold_the_same_run(
    mlflow_store: str, tmp_path: Path, capsys: Any
) -> None:
    client = MlflowClient(mlflow_store)
    expected = tmp_path / "expected"
    predicted = tmp_path / "predicted"
    for packet, sections in (("a", PREDICTED), ("b", EXPECTED)):
        write_json(expected / f"{packet}.json", {"sections": EXPECTED})
        write_json(predicted / f"{packet}.json", {"sections": sections})
    prompt = write_text(tmp_path / "split-prompt.txt", "Split the packet.\n")
    cli = cli_run(
        capsys, "split", "--expected", expected, "--predicted", predicted,
        "--output", tmp_path / "split.json", "--prompt", prompt, "--param", "model=m1",
    )  # fmt: skip
    paired = pair_packets(expected, predicted)
    report = evaluate_split_batch(
        paired.pairs, expected_only=paired.expected_only, predicted_only=paired.predicted_only
    )
    python = log_split_report(
        report,
        ground_truth=expected,
        prompt=RunPrompt("Split the packet.\n", file="split-prompt.txt"),
        params={"model": "m1"},
    )
    from_cli = Held(client, cli)
    assert_same_run(from_cli, Held(client, python.run_id))
    assert "specs/prompt.txt" in from_cli.artifacts


# --- generations ----------------------------------------------------------------------

_loopback_only = judges_conftest._loopback_only
_no_real_keys = judges_conftest._no_real_keys


@pytest.fixture
def served(_no_real_keys: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderServer]:
    from tests.test_cli_generate import ANTHROPIC_KEY, LOCAL_KEY, OPENAI_KEY

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("LOCAL_KEY", LOCAL_KEY)
    with ProviderServer(latency=0.0) as server:
        yield server


def test_generation_cli_and_python_hold_the_same_run(
    mlflow_store: str, tmp_path: Path, capsys: Any, served: ProviderServer
) -> None:
    from tests.test_cli_generate import answers, config

    client = MlflowClient(mlflow_store)
    answers(served, local_name=None)  # one provider omits the name: adjudicated, then union
    gen = config(tmp_path, served, "union: true\n")
    source = write_text(tmp_path / "notes.txt", "Account Ann Smith, 1,234.50 EUR")
    out = tmp_path / "out"
    cli = cli_run(
        capsys, "generate", "--config", gen, "--source", source, "--output-dir", out,
        "--adjudicate",
    )  # fmt: skip
    stages = [
        GenerationReport.model_validate_json((out / name).read_text(encoding="utf-8"))
        for name in (
            "notes.generation.panel.json",
            "notes.generation.adjudication.json",
            "notes.generation.json",
        )
    ]
    # Given in any order, a case's stages are taken in the order they ran.
    python = log_generation(
        [stages[2], stages[0], stages[1]],
        review_files=[out / "notes.review.json"],
        settings=GenerationSettings(
            adjudicate=True,
            union=True,
            document_mode=load_generation_config(gen).document_mode,
            config_sha256=sha256_file(gen),
        ),
    )
    from_cli, from_python = Held(client, cli), Held(client, python.run_id)
    assert_same_run(from_cli, from_python)
    assert from_python.params["generation.stage"] == "union"
    assert "generation/stages/notes.adjudication.json" in from_python.artifacts
    metrics = [client.get_run(run_id).data.metrics for run_id in (cli, python.run_id)]
    assert metrics[0]["usage/requests"] == metrics[1]["usage/requests"] == 6
    assert python.experiment_name == "docevals-ground-truth"
    assert client.get_run(python.run_id).info.run_name == "generation notes"


def test_one_stage_given_twice_is_refused() -> None:
    from docevals_mlflow.tracking.assembly import assemble_generation
    from tests.tracking.test_generation_runs import DISPUTED

    with pytest.raises(InputError, match="two panel reports of case 'inv-a'"):
        assemble_generation([DISPUTED, DISPUTED])


# --- approvals ------------------------------------------------------------------------


def test_approval_cli_and_python_hold_the_same_run(
    mlflow_store: str, tmp_path: Path, capsys: Any
) -> None:
    client = MlflowClient(mlflow_store)
    folder = tmp_path / "approved"
    for case in (
        approved("inv-a", [{"path": "$.number", "expected": "0123"}]),
        approved("inv-b", [{"path": "$.number", "expected": "7"}], by="bob"),
    ):
        write_approved(case, folder / f"{case.case_id}.json")
    code, out, err = run(capsys, "register-dataset", "invoices", "--from", folder)
    assert code == 0, err
    cli = re.search(r"run: ([0-9a-f]{32})", out)
    assert cli, out
    python = register_ground_truth_dataset("invoices", folder, force=True)
    assert python.version == 2
    assert_same_run(
        Held(client, cli.group(1)),
        Held(client, python.run_id),
        differing=["dataset.version"],
    )


# --- comparisons ----------------------------------------------------------------------


def test_comparison_cli_and_python_hold_the_same_run(
    mlflow_store: str, tmp_path: Path, field_inputs: FieldInputs, capsys: Any
) -> None:
    client = MlflowClient(mlflow_store)
    baseline = log_field_comparison(field_inputs.comparison(), run_name="baseline")
    perfect = compare_documents(
        [(document, document) for document in EXPECTED_DOCUMENTS], field_inputs.schema
    )
    candidate = log_field_comparison(perfect, run_name="candidate")
    cli = cli_run(
        capsys, "compare", baseline.run_id, candidate.run_id, "--resamples", "200",
        "--output-dir", tmp_path / "comparison",
    )  # fmt: skip
    comparison = compare_runs(
        load_run_snapshot(baseline.run_id), load_run_snapshot(candidate.run_id), resamples=200
    )
    python = log_comparison(comparison)
    assert_same_run(Held(client, cli), Held(client, python.run_id))
    assert client.get_run(python.run_id).info.run_name == "compare candidate vs baseline"


# --- judge calibrations ---------------------------------------------------------------


def test_calibration_cli_and_python_hold_the_same_run(
    mlflow_store: str, tmp_path: Path, capsys: Any
) -> None:
    from tests.test_cli_calibrate import write_reports

    client = MlflowClient(mlflow_store)
    reports = write_reports(tmp_path, judge_reports())
    labels = write_labels(tmp_path / "labels.jsonl", judge_labels(extra=False))
    cli = cli_run(
        capsys, "calibrate", *reports, "--labels", labels, "--output", tmp_path / "cal.json",
        "--bootstrap", "200", "--min-kappa", "0.2",
    )  # fmt: skip
    report = calibrate(
        [load_report(path) for path in reports], load_human_labels(labels), bootstrap=200
    )
    python = log_calibration_report(report, labels=labels, verdict="pass")
    from_cli, from_python = Held(client, cli), Held(client, python.run_id)
    assert_same_run(from_cli, from_python)
    assert from_python.params["calibration.labels_sha256"] == sha256_file(labels)
    assert from_python.kind["docevals.report_kind"] == "calibration"


# --- the options value ----------------------------------------------------------------


def test_run_options_are_frozen_and_merge_keywords() -> None:
    params = {"model": "a"}
    options = RunOptions(params=params, tags={"team": "x"})
    params["model"] = "changed"
    assert options.params == {"model": "a"}
    with pytest.raises(AttributeError):
        options.run_name = "x"  # type: ignore[misc]
    merged = options.merged(params={"prompt.version": "2"}, run_name="r", experiment=None)
    assert merged.params == {"model": "a", "prompt.version": "2"}
    assert (merged.run_name, merged.experiment, merged.tags) == ("r", None, {"team": "x"})
    assert options.merged(run_name=None) is options
    assert RunPrompt("Extract.\n").sha256 == hashlib.sha256(b"Extract.\n").hexdigest()


def test_every_kind_has_one_assembly_function() -> None:
    from docevals_mlflow.tracking import assembly

    kinds = {name for name in assembly.__all__ if name.startswith("assemble_")}
    assert kinds == {
        "assemble_approval",
        "assemble_calibration",
        "assemble_comparison",
        "assemble_evaluation",
        "assemble_fields",
        "assemble_generation",
        "assemble_split",
    }
    assert AssembledRun.__doc__


def test_quickstart_prompt_fingerprint_is_the_prompt_options(
    mlflow_store: str, tmp_path: Path, capsys: Any
) -> None:
    from docevals_mlflow.quickstart.run import PROMPTS

    code, _, err = run(capsys, "quickstart", "--documents", "3", "--output-dir", tmp_path / "q")
    assert code == 0, err
    client = MlflowClient(mlflow_store)
    experiment = client.get_experiment_by_name("docevals-quickstart")
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    for prompt in PROMPTS:
        params = runs[prompt.run_name].data.params
        assert params["prompt.sha256"] == RunPrompt(prompt.text).sha256
        assert params["prompt.version"] == prompt.version
        held = Held(client, runs[prompt.run_name].info.run_id)
        assert {"specs/prompt.txt", "specs/schema.json"} <= set(held.artifacts)
    assert sorted(runs) == ["prompt-v1", "prompt-v2"]
