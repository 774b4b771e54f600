"""Credentials in tracking URIs never reach messages or terminal lines."""

from __future__ import annotations

import pytest

from docevals_mlflow.tracking.runs import LoggedRun, TrackingUnavailableError, probe
from docevals_mlflow.tracking.uris import public_uri, scrub_credentials

SECRET = "s3cr3t-Passw0rd"


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        (f"postgresql://mlflow:{SECRET}@db:5432/mlflow", "postgresql://db:5432/mlflow"),
        (f"https://{SECRET}@tracking.example/", "https://tracking.example/"),
        (f"http://127.0.0.1:5000/?token={SECRET}", "http://127.0.0.1:5000/"),
        ("sqlite:////tmp/mlflow.db", "sqlite:////tmp/mlflow.db"),
    ],
)
def test_public_uri_drops_user_password_and_query(uri, shown):
    assert public_uri(uri) == shown


def test_scrub_removes_credentials_anywhere_in_a_message():
    uri = f"postgresql://mlflow:{SECRET}@db/mlflow"
    message = f"could not connect to {uri}; also tried mysql://root:{SECRET}@other/x"
    scrubbed = scrub_credentials(message, uri)
    assert SECRET not in scrubbed
    assert "postgresql://db/mlflow" in scrubbed


def test_unreachable_server_and_run_lines_hide_the_password():
    uri = f"http://user:{SECRET}@127.0.0.1:9/"  # nothing listens on the discard port
    with pytest.raises(TrackingUnavailableError) as raised:
        probe(uri, timeout=2)
    assert SECRET not in str(raised.value)
    run = LoggedRun("r1", "0", "docevals", f"postgresql://u:{SECRET}@db/mlflow")
    assert SECRET not in run.describe()
