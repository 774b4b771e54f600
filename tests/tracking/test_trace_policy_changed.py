"""``--traces N`` beyond the limit: wrong-and-changed, changed, wrong, then the rest, where
*changed* is measured against a baseline run in the same temporary SQLite store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli import main
from docevals_mlflow.errors import DocEvalsWarning
from docevals_mlflow.tracking import trace_baseline, trace_baseline_sqlite
from docevals_mlflow.tracking.trace_policy import TracePolicy, parse_trace_policy
from tests.tracking.invoices import SCHEMA

IDS = [f"d{number:02d}" for number in range(1, 13)]
WRONG_V1 = {"d01": "X1", "d02": "X2", "d03": "X3", "d04": "X4"}
# d03 fixed; d04 still wrong (another wrong value: the same FD outcome, not changed);
# d10 and d11 newly wrong.
WRONG_V2 = {"d01": "X1", "d02": "X2", "d04": "Y4", "d10": "X10", "d11": "X11"}
CHANGED_FIRST = ["d01", "d02", "d03", "d10", "d11"]
"""wrong-and-changed d10, d11; changed d03; wrong d01, d02 (d04 left out)."""
WRONG_FIRST = ["d01", "d02", "d04", "d10", "d11"]


def _write(path: Path, numbers: dict[str, str]) -> Path:
    lines = [
        json.dumps({"id": doc, "class": "Invoice", "data": {"number": numbers.get(doc, doc)}})
        for doc in IDS
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    (tmp_path / "schema.json").write_text(SCHEMA.model_dump_json(), encoding="utf-8")
    _write(tmp_path / "expected.jsonl", {})
    _write(tmp_path / "v1.jsonl", WRONG_V1)
    _write(tmp_path / "v2.jsonl", WRONG_V2)
    return tmp_path


def _fields(folder: Path, version: str, name: str, *extra: str) -> str:
    argv = ["fields", "--schema", str(folder / "schema.json")]
    argv += ["--expected", str(folder / "expected.jsonl")]
    argv += ["--predicted", str(folder / f"{version}.jsonl"), "--output", str(folder / "r.json")]
    argv += ["--experiment", "extraction", "--run-name", name, *extra]
    assert main(argv) == 0
    return name


def _run(store: str, output: str) -> object:
    match = re.search(r"MLflow run ([0-9a-f]{32})", output)
    assert match, output
    return MlflowClient(store).get_run(match.group(1))


def _traced(store: str, run: object) -> list[str]:
    client = MlflowClient(store)
    found = client.search_traces(
        locations=[run.info.experiment_id],  # type: ignore[attr-defined]
        filter_string=f"metadata.`mlflow.sourceRun` = '{run.info.run_id}'",  # type: ignore[attr-defined]
    )
    return sorted(trace.info.tags["docevals.document.id"] for trace in found)


@pytest.mark.parametrize("reader", ["sqlite", "mlflow"])
def test_the_documents_that_changed_since_the_last_comparable_run_are_traced_first(
    mlflow_store, inputs, capsys, monkeypatch, reader
):
    if reader == "mlflow":
        # Not a store the SQLite reader takes: the same search through MLflow's client.
        monkeypatch.setattr(trace_baseline_sqlite, "store_file", lambda uri: None)
    else:
        # A local SQLite store at the known schema is read without MLflow's client.
        def no_client(*args: object) -> None:
            raise AssertionError("MLflow's client was used")

        monkeypatch.setattr(trace_baseline, "_mlflow_baseline", no_client)
    _fields(inputs, "v1", "prompt-v1", "--traces", "all")
    v1 = _run(mlflow_store, capsys.readouterr().out)
    _fields(inputs, "v2", "prompt-v2", "--traces", "5")
    out = capsys.readouterr().out
    v2 = _run(mlflow_store, out)
    assert _traced(mlflow_store, v2) == CHANGED_FIRST
    tags = v2.data.tags  # type: ignore[attr-defined]
    assert tags["docevals.traces.baseline"] == v1.info.run_id  # type: ignore[attr-defined]
    assert tags["docevals.traces.changed"] == "3"
    assert tags["docevals.traces.changed_traced"] == "3"
    assert tags["docevals.traces"] == "5"
    assert f"traces: 3 changed since baseline run {v1.info.run_id}, 3 of them traced" in out  # type: ignore[attr-defined]


def test_an_explicit_baseline_wins_over_the_latest_run(mlflow_store, inputs, capsys):
    _fields(inputs, "v1", "prompt-v1")
    _fields(inputs, "v2", "prompt-v2")
    capsys.readouterr()
    # The latest comparable run is prompt-v2 itself (nothing changed: wrong first);
    # named, prompt-v1 is the baseline.
    _fields(inputs, "v2", "prompt-v2-again", "--traces", "5")
    latest = _run(mlflow_store, capsys.readouterr().out)
    assert _traced(mlflow_store, latest) == WRONG_FIRST
    assert latest.data.tags["docevals.traces.changed"] == "0"  # type: ignore[attr-defined]
    _fields(inputs, "v2", "prompt-v2-vs-v1", "--traces", "5", "--traces-baseline", "prompt-v1")
    named = _run(mlflow_store, capsys.readouterr().out)
    assert _traced(mlflow_store, named) == CHANGED_FIRST


def test_no_comparable_run_says_so_and_traces_the_wrong_ones_first(mlflow_store, inputs, capsys):
    # Another ground truth (same ids, another content digest) is not comparable.
    other = inputs / "other"
    other.mkdir()
    (other / "schema.json").write_text(SCHEMA.model_dump_json(), encoding="utf-8")
    _write(other / "expected.jsonl", {"d12": "Z"})
    _write(other / "v1.jsonl", WRONG_V1)
    _fields(other, "v1", "prompt-v1")
    capsys.readouterr()
    _fields(inputs, "v2", "prompt-v2", "--traces", "5")
    out = capsys.readouterr().out
    run = _run(mlflow_store, out)
    assert _traced(mlflow_store, run) == WRONG_FIRST
    assert run.data.tags["docevals.traces.baseline"] == "none"  # type: ignore[attr-defined]
    assert "traces: no earlier comparable run" in out


def test_a_baseline_without_field_outcomes_warns_once_and_falls_back(mlflow_store, inputs, capsys):
    _fields(inputs, "v1", "prompt-v1", "--no-rows")
    capsys.readouterr()
    with pytest.warns(DocEvalsWarning) as caught:
        _fields(inputs, "v2", "prompt-v2", "--traces", "5")
    (warning,) = caught
    text = str(warning.message)
    assert "\n" not in text
    assert "baseline run 'prompt-v1'" in text
    assert "results/fields.parquet" in text
    assert "the wrong documents are traced first" in text
    run = _run(mlflow_store, capsys.readouterr().out)
    assert _traced(mlflow_store, run) == WRONG_FIRST
    assert run.data.tags["docevals.traces.baseline"] == "unreadable"  # type: ignore[attr-defined]
    assert run.data.tags["docevals.warning.traces_baseline"] == text  # type: ignore[attr-defined]


def test_a_named_baseline_that_does_not_exist_warns_and_falls_back(mlflow_store, inputs, capsys):
    _fields(inputs, "v1", "prompt-v1")
    capsys.readouterr()
    with pytest.warns(DocEvalsWarning, match=r"baseline 'prompt-v0' cannot be read: .*no run"):
        _fields(inputs, "v2", "prompt-v2", "--traces", "5", "--traces-baseline", "prompt-v0")
    run = _run(mlflow_store, capsys.readouterr().out)
    assert _traced(mlflow_store, run) == WRONG_FIRST


def test_within_the_limit_the_store_is_not_consulted(mlflow_store, inputs, capsys):
    _fields(inputs, "v1", "prompt-v1")
    capsys.readouterr()
    _fields(inputs, "v2", "prompt-v2", "--traces-baseline", "prompt-v0")  # 12 ≤ 1,000
    run = _run(mlflow_store, capsys.readouterr().out)
    assert "docevals.traces.baseline" not in run.data.tags  # type: ignore[attr-defined]
    assert len(_traced(mlflow_store, run)) == 12


def test_changed_suite_cases_are_traced_first(mlflow_store):
    def case_reports(folder: str, totals: dict[str, int]) -> list[str]:
        Path(folder).mkdir()
        for name, total in totals.items():
            Path(f"{folder}/{name}.json").write_text(json.dumps({"total": total}), "utf-8")
            Path(f"{name}-truth.json").write_text(json.dumps({"total": 1}), "utf-8")
            argv = ["evaluate-case", "--prediction", f"{folder}/{name}.json", "--case-id", name]
            argv += ["--ground-truth", f"{name}-truth.json", "--output", f"{folder}/r-{name}.json"]
            assert main([*argv, "--no-mlflow", "--fail-on", "never"]) == 0
        return [f"{folder}/r-{name}.json" for name in totals]

    v1 = case_reports("v1", {"c1": 1, "c2": 2, "c3": 1})
    v2 = case_reports("v2", {"c1": 1, "c2": 2, "c3": 5})  # c3 now fails: wrong and changed
    assert main(["suite", *v1, "--output", "s1.json", "--run-name", "suite-v1"]) == 0
    assert main(["suite", *v2, "--output", "s2.json", "--traces", "1"]) == 0
    client = MlflowClient(mlflow_store)
    (experiment,) = [e for e in client.search_experiments() if e.name == "docevals"]
    (latest, first) = client.search_runs(
        [experiment.experiment_id], order_by=["attributes.start_time DESC"]
    )
    found = client.search_traces(
        locations=[experiment.experiment_id],
        filter_string=f"metadata.`mlflow.sourceRun` = '{latest.info.run_id}'",
    )
    # Wrong first alone would trace c2 (the first failing case).
    assert [trace.info.tags["docevals.case.id"] for trace in found] == ["c3"]
    assert latest.data.tags["docevals.traces.baseline"] == first.info.run_id
    assert latest.data.tags["docevals.traces.changed"] == "1"


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (set(), [0, 1, 4]),  # wrong first: 0, 1, 4
        ({2, 5}, [0, 2, 5]),  # changed and wrong (5), changed (2), wrong (0)
        ({0, 1, 2, 3, 5}, [0, 1, 5]),  # the wrong among the changed before the others
    ],
)
def test_rank_order_beyond_the_limit(changed, expected):
    wrong = {1, 4, 5, 0}
    policy = parse_trace_policy("3").with_changed(lambda item: item in changed)
    assert policy.select(list(range(8)), lambda item: item in wrong) == expected


def test_the_policy_keeps_its_baseline_and_compares_without_the_predicate():
    policy = TracePolicy("limit", 5).with_baseline("prompt-v1")
    assert policy.baseline == "prompt-v1"
    assert policy.with_changed(lambda item: True) == policy
    assert str(policy) == "5"
