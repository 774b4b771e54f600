"""``--param``, ``--tag``, ``--prompt`` and ``--prompt-name``: what made the evaluated
outputs, recorded on the run; bad values refused before any work is done."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.cli.annotations import PROMPT_PARAMS, RESERVED_PARAM_NAMESPACES
from docevals_mlflow.compare.comparison import compare_runs
from docevals_mlflow.compare.markdown import render_comparison_markdown
from docevals_mlflow.tracking.snapshots import load_run_snapshot
from tests.helpers import run, write_json
from tests.split.test_seed_metrics import EXPECTED, PREDICTED
from tests.tracking.test_cli_tracking import run_id_from, write_inputs


def fields(
    capsys: pytest.CaptureFixture[str], folder: Path, *options: str | Path
) -> tuple[int, str, str]:
    expected, predicted = write_inputs(folder)
    argv = ["fields", "--expected", expected, "--predicted", predicted]
    return run(capsys, *argv, "--output", folder / "report.json", *options)


def refused(capsys: pytest.CaptureFixture[str], folder: Path, *options: str | Path) -> str:
    """``docevals fields OPTIONS`` refused while reading the command line: exit 2,
    nothing written; returns stderr."""
    with pytest.raises(SystemExit) as exited:
        fields(capsys, folder, *options)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert not (folder / "report.json").exists()
    return err


def prompt_file(folder: Path, name: str, text: str) -> Path:
    path = folder / "prompts" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_fields_run_records_prompt_params_and_tags(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = prompt_file(tmp_path, "extract.txt", "Extract the total and the name.\n")
    code, out, err = fields(
        capsys,
        tmp_path,
        "--prompt", prompt,
        "--param", "prompt.version=1",
        "--param", "model=local-7b",
        "--tag", "team=billing",
    )  # fmt: skip
    assert code == 0, err
    client = MlflowClient(mlflow_store)
    logged = client.get_run(run_id_from(out))
    params = logged.data.params
    assert params["prompt.version"] == "1"
    assert params["model"] == "local-7b"
    assert params["prompt.file"] == "extract.txt"
    assert len(params["prompt.sha256"]) == 64
    assert "prompt.uri" not in params  # registered only when named
    assert logged.data.tags["team"] == "billing"
    # The file's name, never its path.
    assert not any(str(tmp_path) in value for value in params.values())
    text = Path(client.download_artifacts(logged.info.run_id, "specs/prompt.txt", str(tmp_path)))
    assert text.read_text(encoding="utf-8") == "Extract the total and the name.\n"


def test_named_prompt_versions_in_the_registry_and_compare_shows_the_change(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = MlflowClient(mlflow_store)
    run_ids = []
    for version, text in enumerate(
        ("Read the total.", "Read the total.", "Read the total as a number.")
    ):
        prompt = prompt_file(tmp_path, f"v{version}.txt", text)
        code, out, err = fields(
            capsys, tmp_path, "--prompt", prompt, "--prompt-name", "invoice-extract",
            "--run-name", f"v{version}",
        )  # fmt: skip
        assert code == 0, err
        run_ids.append(run_id_from(out))
    uris = [client.get_run(run_id).data.params["prompt.uri"] for run_id in run_ids]
    # Same text → same version; a new text → a new version.
    assert uris == ["prompts:/invoice-extract/1"] * 2 + ["prompts:/invoice-extract/2"]
    assert client.get_prompt_version("invoice-extract", 2).template == "Read the total as a number."
    linked = client.get_run(run_ids[2]).data.tags["mlflow.linkedPrompts"]
    assert '"version": "2"' in linked

    comparison = compare_runs(load_run_snapshot(run_ids[0]), load_run_snapshot(run_ids[2]))
    markdown = render_comparison_markdown(comparison)
    assert "specs/prompt.txt" in markdown
    assert "prompt.sha256" in markdown
    assert "+Read the total as a number." in markdown


def test_split_and_pipeline_commands_take_annotations(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_json(tmp_path / "gt.json", {"sections": EXPECTED})
    write_json(tmp_path / "pred.json", {"sections": PREDICTED})
    prompt = prompt_file(tmp_path, "classify.txt", "Split the packet into documents.")
    code, out, err = run(
        capsys, "split", "--expected", tmp_path / "gt.json", "--predicted", tmp_path / "pred.json",
        "--output", tmp_path / "split.json", "--prompt", prompt, "--param", "model=splitter-2",
    )  # fmt: skip
    assert code == 0, err
    params = MlflowClient(mlflow_store).get_run(run_id_from(out)).data.params
    assert params["model"] == "splitter-2"
    assert params["prompt.file"] == "classify.txt"

    prediction = write_json(tmp_path / "pred-case.json", {"total": 3})
    truth = write_json(tmp_path / "truth-case.json", {"total": 3})
    code, out, err = run(
        capsys, "evaluate-case", "--prediction", prediction, "--ground-truth", truth,
        "--output", tmp_path / "case.json", "--param", "model=m", "--tag", "ticket=DOC-1",
    )  # fmt: skip
    assert code == 0, err
    logged = MlflowClient(mlflow_store).get_run(run_id_from(out))
    assert logged.data.params["model"] == "m"
    assert logged.data.tags["ticket"] == "DOC-1"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--param", "model"], "is not KEY=VALUE"),
        (["--param", "=x"], "is not KEY=VALUE"),
        (["--param", "schema.sha256=abc"], "one docevals writes itself"),
        (["--param", "prompt.sha256=abc"], "one docevals writes itself"),
        (["--param", "docevals.version=9"], "one docevals writes itself"),
        (["--param", "model|x=1"], "characters MLflow refuses"),
        (["--tag", "mlflow.runName=x"], "one docevals writes itself"),
        (["--tag", "docevals.kind=x"], "one docevals writes itself"),
        (["--prompt", "missing.txt"], "no prompt file missing.txt"),
        (["--prompt-name", "has space"], "letters, digits"),
    ],
)
def test_bad_annotations_exit_2_before_any_work(
    mlflow_store: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    message: str,
) -> None:
    assert message in refused(capsys, tmp_path, *options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--prompt-name", "x"], "--prompt-name names the prompt given with --prompt"),
        (["--param", "a=1", "--param", "a=2"], "--param a is given twice"),
        (["--tag", "t=1", "--tag", "t=2"], "--tag t is given twice"),
    ],
)
def test_inconsistent_annotations_are_one_line_errors(
    mlflow_store: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    message: str,
) -> None:
    code, _, err = fields(capsys, tmp_path, *options)
    assert code == 2
    assert err.startswith("docevals: error: ")
    assert message in err
    assert not (tmp_path / "report.json").exists()


def test_empty_or_binary_prompt_files_are_refused(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = prompt_file(tmp_path, "empty.txt", "  \n")
    binary = tmp_path / "prompts" / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    for path, message in ((empty, "is empty"), (binary, "not valid UTF-8")):
        assert message in refused(capsys, tmp_path, "--prompt", path)


def test_the_layout_writes_params_only_in_reserved_namespaces(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """So a user's --param can never collide with a param the layout writes."""
    schema = write_json(
        tmp_path / "schema.json",
        {"schema_id": "s", "classes": [{"name": "c", "fields": {"total": {"method": "EXACT"}}}]},
    )
    code, out, err = fields(capsys, tmp_path, "--schema", schema)
    assert code == 0, err
    run_ids = [run_id_from(out)]
    write_json(tmp_path / "gt.json", {"sections": EXPECTED})
    write_json(tmp_path / "pred.json", {"sections": PREDICTED})
    code, out, err = run(
        capsys, "split", "--expected", tmp_path / "gt.json", "--predicted", tmp_path / "pred.json",
        "--output", tmp_path / "split.json",
    )  # fmt: skip
    assert code == 0, err
    run_ids.append(run_id_from(out))
    client = MlflowClient(mlflow_store)
    for run_id in run_ids:
        for key in client.get_run(run_id).data.params:
            assert key.startswith(RESERVED_PARAM_NAMESPACES) or key in PROMPT_PARAMS, key


@pytest.mark.parametrize(
    "options",
    [
        ["--param", "note=use sk-proj-abcdef123456 for this"],
        ["--param", "api_key=anything"],
        ["--tag", "deploy=tok-SECRET-99887766"],
        ["--param", "endpoint=https://u:tok-SECRET-99887766@host"],
    ],
)
def test_secrets_never_become_params_or_tags(
    mlflow_store: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    options: list[str],
) -> None:
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", "tok-SECRET-99887766")
    err = refused(capsys, tmp_path, *options)
    assert "secret" in err
    assert "tok-SECRET-99887766" not in err
    assert "sk-proj-abcdef123456" not in err


@pytest.mark.parametrize(
    "text",
    [
        "Call the API with key sk-ant-abcdef0123456789.",
        "Use api_key=abcdefghijklmnop1234 for the call.",
        "Send the header Authorization: Bearer abcdefghijklmnop.",
    ],
)
def test_a_prompt_file_holding_a_key_is_refused(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    prompt = prompt_file(tmp_path, "p.txt", text)
    err = refused(capsys, tmp_path, "--prompt", prompt)
    assert "holds an API key" in err
    assert "abcdef" not in err


@pytest.mark.parametrize(
    "options",
    [
        ["--param", "sk-proj-abcdef123456"],  # not KEY=VALUE, and never echoed
        ["--param", "sk-proj-abcdef123456|x=1"],
        ["--param", "header=api_key=abcdefghijklmnop1234"],
        ["--tag", "auth=Authorization: Bearer abcdefghijklmnop"],
    ],
)
def test_secrets_are_refused_before_anything_is_echoed(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    err = refused(capsys, tmp_path, *options)
    assert "secret" in err
    for fragment in ("sk-proj-abcdef123456", "abcdefghijklmnop"):
        assert fragment not in err


def test_prompt_uri_is_reserved(
    mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "one docevals writes itself" in refused(capsys, tmp_path, "--param", "prompt.uri=x")
