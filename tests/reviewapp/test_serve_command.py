"""``docevals review serve`` as a user runs it: a process that prints its address and
answers on loopback."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request

from docevals_mlflow.cli import main


def test_the_command_prints_the_address_and_serves_the_queue(folder):
    command = [sys.executable, "-m", "docevals_mlflow", "review", "serve", str(folder)]
    with subprocess.Popen(
        [*command, "--person", "ann", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            _check_serving(process)
        finally:
            process.terminate()
            process.wait(timeout=20)


def _check_serving(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("reviewing as ann (reviewer): http://127.0.0.1:"), line
    url = line.split(": ", 1)[1].strip()
    page = ""
    for _ in range(100):
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                page = reply.read().decode("utf-8")
            break
        except OSError:
            assert process.poll() is None, "the server stopped"
            time.sleep(0.1)
    assert "doc-a.review.json" in page


def test_a_person_without_the_role_in_the_policy_is_refused(folder, tmp_path, capsys):
    for person in ("ann", "carol"):
        assert main(["keygen", "--out", str(tmp_path / "keys" / person)]) == 0
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "reviewers: 1\nadjudication: never\npeople:\n"
        "  ann: {roles: [reviewer], public_key: keys/ann.pub}\n"
        "  carol: {roles: [approver], public_key: keys/carol.pub}\n",
        encoding="utf-8",
    )
    capsys.readouterr()
    code = main(["review", "serve", str(folder), "--person", "bob", "--policy", str(policy)])
    error = capsys.readouterr().err
    assert code == 2
    assert "--person bob is not a reviewer in the policy" in error
    assert "one of: ann" in error
