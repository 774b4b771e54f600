"""What the server refuses: paths out of the folder, other hosts, missing tokens,
cross-site writes; and how broken input shows (a message, never a traceback)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from docevals_mlflow.cli import main
from docevals_mlflow.errors import ConfigurationError
from docevals_mlflow.groundtruth.review_layers import layer_path, load_layers
from docevals_mlflow.reviewapp.folder import PathRefused, ReviewFolder, confined
from docevals_mlflow.reviewapp.security import check_bind
from tests.reviewapp.conftest import answer
from tests.reviewapp.documents import make_review

TOKEN = "s3cret-token-0123456789"


@pytest.mark.parametrize(
    "url",
    [
        "/doc/../outside.review.json",
        "/doc/%2e%2e/outside.review.json",
        "/doc/batch/%2e%2e/%2e%2e/outside.review.json",
        "/doc//etc/passwd",
        "/doc/%2Fetc%2Fpasswd",
        "/doc/..%5Coutside.review.json",
        "/doc/doc-a.pdf",
        "/doc/linked.review.json",
        "/page/%2e%2e/outside.review.json?source=outside.pdf",
        "/page/doc-a.review.json?source=../outside.pdf",
        "/page/doc-a.review.json?source=%2Fetc%2Fpasswd",
        "/boxes/doc-a.review.json?source=..%2F..%2Foutside.pdf",
    ],
)
def test_paths_out_of_the_folder_are_refused(client_for, folder, url):
    outside = make_review(folder.parent, "outside")
    (folder / "linked.review.json").symlink_to(outside)
    reply = client_for().get(url)
    assert reply.status_code in (404, 422), reply.text
    assert "outside" not in reply.text.replace("outside.", "")  # no content leaked
    assert "Traceback" not in reply.text


def test_answers_for_paths_out_of_the_folder_are_refused(client_for, folder):
    make_review(folder.parent, "outside")
    reply = answer(client_for(), "../outside.review.json", "$.currency", "accept")
    assert reply.status_code == 404
    assert not layer_path(folder.parent / "outside.review.json", "ann").exists()


def test_confined_refuses_every_escape(tmp_path):
    root = tmp_path.resolve()
    for bad in ("", "/etc/passwd", "../x", "a/../../x", "a\\b", "C:/x", "~/x", "a//b", "a\x00"):
        with pytest.raises(PathRefused):
            confined(root, bad)
    (root / "out").symlink_to(tmp_path.parent)
    with pytest.raises(PathRefused):
        confined(root, "out/x")
    assert confined(root, "a/b.json") == root / "a" / "b.json"


def test_the_folder_lists_no_review_file_outside_it(folder):
    outside = make_review(folder.parent, "outside")
    (folder / "linked.review.json").symlink_to(outside)
    assert ReviewFolder.open(folder).review_files() == [
        "batch/doc-c.review.json",
        "doc-a.review.json",
        "doc-b.review.json",
    ]


def test_binding_beyond_loopback_needs_allow_remote_and_a_token():
    check_bind("127.0.0.1", allow_remote=False, token=None)
    check_bind("::1", allow_remote=False, token=None)
    with pytest.raises(ConfigurationError, match="--allow-remote"):
        check_bind("0.0.0.0", allow_remote=False, token=TOKEN)
    with pytest.raises(ConfigurationError, match="needs --token"):
        check_bind("192.168.1.5", allow_remote=True, token=None)
    with pytest.raises(ConfigurationError, match="at least 16"):
        check_bind("192.168.1.5", allow_remote=True, token="short")
    check_bind("192.168.1.5", allow_remote=True, token=TOKEN)


def test_the_command_refuses_a_remote_bind_in_one_line(folder, capsys):
    assert main(["review", "serve", str(folder), "--person", "ann", "--host", "0.0.0.0"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("docevals: error: --host 0.0.0.0 serves the review beyond")
    assert len(error.strip().splitlines()) == 1
    assert main(["review", "serve", str(folder), "--person", "../x"]) == 2
    assert "not a person id" in capsys.readouterr().err


def test_with_a_token_every_request_needs_it(client_for):
    client = client_for(token=TOKEN)
    assert client.get("/").status_code == 401
    assert client.get("/static/review.js").status_code == 401
    assert client.get("/", params={"token": "wrong-token-0123456789"}).status_code == 401
    assert client.get("/", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
    first = client.get("/", params={"token": TOKEN})
    assert first.status_code == 200
    assert "HttpOnly; SameSite=Strict" in first.headers["set-cookie"]
    assert client.get("/doc/doc-a.review.json").status_code == 200  # the cookie now


def test_writes_need_json_the_page_token_and_the_same_origin(client_for, folder):
    client = client_for()
    body = {"document": "doc-a.review.json", "path": "$.currency", "action": "accept"}
    assert client.post("/api/answer", json=body).status_code == 403
    wrong = {"x-docevals-csrf": "nope"}
    assert client.post("/api/answer", json=body, headers=wrong).status_code == 403
    form = {"x-docevals-csrf": client.csrf, "content-type": "application/x-www-form-urlencoded"}
    assert client.post("/api/answer", content="a=b", headers=form).status_code == 403
    other = {"x-docevals-csrf": client.csrf, "origin": "http://evil.example"}
    reply = client.post("/api/answer", json=body, headers=other)
    assert reply.status_code == 403
    assert "another site" in reply.text
    assert not layer_path(folder / "doc-a.review.json", "ann").exists()
    same = {"x-docevals-csrf": client.csrf, "origin": "http://127.0.0.1:8765"}
    assert client.post("/api/answer", json=body, headers=same).status_code == 200


def test_other_host_names_are_refused(client_for):
    reply = client_for().get("/", headers={"host": "evil.example:8765"})
    assert reply.status_code == 400


def test_pages_carry_the_security_headers(client_for):
    headers = client_for().get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"


def test_a_tampered_layer_is_a_message_in_the_page_and_nothing_is_lost(client_for, folder):
    client = client_for()
    assert answer(client, "doc-a.review.json", "$.currency", "accept").status_code == 200
    file = layer_path(folder / "doc-a.review.json", "ann")
    data = json.loads(file.read_text(encoding="utf-8"))
    data["entries"][0]["action"] = "approve"
    tampered = json.dumps(data)
    file.write_text(tampered, encoding="utf-8")
    queue = client.get("/")
    assert queue.status_code == 200
    assert "Documents that cannot be shown" in queue.text
    assert "ann.json" in queue.text
    page = client.get("/doc/doc-a.review.json")
    assert page.status_code == 422
    assert "ann.json" in page.text
    assert "Traceback" not in page.text
    reply = answer(client, "doc-a.review.json", "$.currency", "accept")
    assert reply.status_code == 422
    assert file.read_text(encoding="utf-8") == tampered  # left as it was


def test_a_missing_source_document_is_a_message_and_fields_stay_answerable(client_for, folder):
    make_review(folder, "no-pdf", pdf=False)
    client = client_for()
    page = client.get("/doc/no-pdf.review.json")
    assert page.status_code == 200
    assert "no-pdf.pdf is not beside the review file" in page.text
    assert answer(client, "no-pdf.review.json", "$.currency", "accept").status_code == 200
    reply = client.get("/page/no-pdf.review.json?source=no-pdf.pdf&page=1&zoom=1.5")
    assert reply.status_code == 422
    assert "not beside" in reply.json()["error"]


def test_an_unexpected_failure_is_a_short_message_without_traceback(client_for, monkeypatch):
    import docevals_mlflow.reviewapp.app as app_module

    def broken(*args, **kwargs):
        raise RuntimeError("secret internals /home/x")

    monkeypatch.setattr(app_module, "build_queue", broken)
    reply = client_for().get("/")
    assert reply.status_code == 500
    assert "internal error RuntimeError" in reply.text
    assert "secret internals" not in reply.text
    assert "Traceback" not in reply.text


def test_concurrent_sessions_never_lose_an_answer(client_for, folder):
    # Two people, and one of them in two tabs, answering at once.
    sessions = [client_for("ann"), client_for("ann"), client_for("bob")]
    paths = ["$.currency", "$.amount", "$.account_name"]
    failures: list[str] = []

    def work(client, tab: int) -> None:
        for round_ in range(8):
            for path in paths:
                value = f"{tab}-{round_}"
                reply = answer(client, "doc-b.review.json", path, "set", value=value)
                if reply.status_code != 200:
                    failures.append(reply.text)

    threads = [threading.Thread(target=work, args=(s, i)) for i, s in enumerate(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    layers = load_layers(folder / "doc-b.review.json")
    assert len(layers.layers["ann"].entries) == 2 * 8 * 3
    assert len(layers.layers["bob"].entries) == 8 * 3
    assert {e.value for e in layers.layers["ann"].entries} == {
        f"{tab}-{r}" for tab in (0, 1) for r in range(8)
    }
    assert os.listdir(layer_path(folder / "doc-b.review.json", "ann").parent)  # no temp left
    assert not [
        n
        for n in os.listdir(layer_path(folder / "doc-b.review.json", "ann").parent)
        if n.endswith(".tmp")
    ]


def test_a_missing_target_is_a_clear_error(tmp_path: Path):
    from docevals_mlflow.errors import InputFileNotFoundError

    with pytest.raises(InputFileNotFoundError, match="no such review file or folder"):
        ReviewFolder.open(tmp_path / "nope")
