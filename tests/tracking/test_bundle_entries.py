"""``docevals log`` uploads only the regular files inside a bundle."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from docevals_mlflow.errors import InputError
from docevals_mlflow.tracking.bundle import ARTIFACTS, BundleWriter, DatasetInput
from docevals_mlflow.tracking.bundle_folders import read_bundle
from docevals_mlflow.tracking.runs import log_bundle

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file types")


def a_bundle(tmp_path: Path) -> Path:
    writer = BundleWriter(run_name="entries")
    writer.param("docevals.version", "test")
    writer.text("report/report.md", "# report\n")
    return writer.write(tmp_path / "bundle.run")


def runs_in(store: str) -> int:
    client = MlflowClient(store)
    return sum(
        len(client.search_runs([experiment.experiment_id]))
        for experiment in client.search_experiments()
    )


def log_cli(capsys: pytest.CaptureFixture[str], bundle: Path) -> tuple[int, str]:
    from docevals_mlflow.cli import main

    code = main(["log", str(bundle)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "make", "kind"),
    [
        ("outside.txt", lambda path, outside: path.symlink_to(outside), "a symbolic link"),
        ("inside.md", lambda path, _: path.symlink_to("report/report.md"), "a symbolic link"),
        ("folder", lambda path, outside: path.symlink_to(outside.parent), "a symbolic link"),
        ("dangling", lambda path, _: path.symlink_to("nowhere"), "a symbolic link"),
        ("pipe", lambda path, _: os.mkfifo(path), "a FIFO"),
    ],
)
def test_links_and_special_files_are_refused_by_name(
    mlflow_store, tmp_path, capsys, name, make, kind
):
    secret = tmp_path / "secret" / "outside.txt"
    secret.parent.mkdir()
    secret.write_text("not for the tracking server\n", encoding="utf-8")
    bundle = a_bundle(tmp_path)
    make(bundle / ARTIFACTS / name, secret)
    code, err = log_cli(capsys, bundle)
    assert code == 2
    assert err.count("\n") == 1
    assert f"bundle entry artifacts/{name} is {kind}; nothing was logged" in err
    # Refused before any run is made.
    assert runs_in(mlflow_store) == 0


def test_a_socket_is_refused(mlflow_store, tmp_path):
    bundle = a_bundle(tmp_path)
    path = bundle / ARTIFACTS / "s"
    if len(str(path)) > 100:
        pytest.skip("socket paths are limited to about 100 bytes")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(InputError, match="artifacts/s is a socket"):
            log_bundle(bundle)


def test_a_device_is_refused(tmp_path):
    import stat

    bundle = a_bundle(tmp_path)
    try:
        os.mknod(bundle / ARTIFACTS / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("making a device file needs privileges")
    with pytest.raises(InputError, match="artifacts/null is a device"):
        read_bundle(bundle)


def test_a_linked_manifest_is_refused(tmp_path):
    bundle = a_bundle(tmp_path)
    real = tmp_path / "run.json"
    (bundle / "run.json").rename(real)
    (bundle / "run.json").symlink_to(real)
    with pytest.raises(InputError, match=r"bundle entry run\.json is a symbolic link"):
        read_bundle(bundle)


def test_a_records_path_outside_the_bundle_is_refused(tmp_path):
    import pandas as pd

    writer = BundleWriter()
    writer.dataset(
        DatasetInput(name="gt", digest="d", source="s", records="inputs/gt.parquet"),
        pd.DataFrame({"a": [1]}),
    )
    bundle = writer.write(tmp_path / "b")
    outside = tmp_path / "other.parquet"
    pd.DataFrame({"a": [2]}).to_parquet(outside)
    manifest = bundle / "run.json"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("inputs/gt.parquet", "../../other.parquet"),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="which is not a file of the bundle"):
        read_bundle(bundle)


def test_the_folder_given_may_itself_be_a_link(mlflow_store, tmp_path):
    # Only what is inside the bundle is checked: `latest.run -> batch.run` is fine.
    bundle = a_bundle(tmp_path)
    link = tmp_path / "latest.run"
    link.symlink_to(bundle)
    run = MlflowClient(mlflow_store).get_run(log_bundle(link).run_id)
    assert run.data.params["docevals.version"] == "test"
