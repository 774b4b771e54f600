"""``docevals review / approve / keygen / verify``: outputs, exit codes, one-line errors."""

from __future__ import annotations

import json
import stat

import pytest

from docevals_mlflow.cli import build_parser, main
from docevals_mlflow.cli.review import parse_assignment, parse_value
from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.approval import load_approved_ground_truth
from docevals_mlflow.groundtruth.review import load_review, write_ground_truth_review
from tests.groundtruth.approval_fakes import APPROVED_ROWS, generation_report, read_json, write_json
from tests.groundtruth.test_signing import secret_forms
from tests.helpers import one_error_line


@pytest.fixture
def review_path(tmp_path):
    return write_ground_truth_review(generation_report(), tmp_path / "review.json")


@pytest.fixture
def keys(tmp_path, capsys):
    assert main(["keygen", "--out", str(tmp_path / "keys" / "alice")]) == 0
    capsys.readouterr()
    return tmp_path / "keys" / "alice", tmp_path / "keys" / "alice.pub"


def decide(review_path):
    return main(
        [
            "review",
            str(review_path),
            "--set",
            '$.amount="12.50"',
            "--set",
            "account_name=ACME Ltd",
            "--omit",
            "$.iban",
            "--notes",
            "page 1",
        ]
    )


def test_commands_are_registered():
    help_text = build_parser().format_help()
    for command in ("review", "approve", "keygen", "verify"):
        assert command in help_text


# --- review -------------------------------------------------------------------------


def test_review_lists_pending_items_with_candidates(review_path, capsys):
    assert main(["review", str(review_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"{review_path}: case statement-001 (needs_review); 2 agreed claim(s), "
        "3 review item(s), 3 pending",
        "pending:",
        "  $.amount  (conflict)",
        '    "12.50"  from openai (1 vote(s))',
        '    "12.05"  from claude (1 vote(s))',
        "  $.account_name  (omitted_by_some; omitted by claude)",
        '    "ACME Ltd"  from openai (1 vote(s))',
        "  $.iban  (omitted_by_all; omitted by claude, openai)",
        "    (no provider gave a value)",
        f"decide with: docevals review {review_path} --set PATH=VALUE ... --omit PATH ... "
        "[--notes TEXT]",
    ]


def test_review_applies_decisions_and_rewrites_the_file(review_path, capsys):
    assert decide(review_path) == 0
    out = capsys.readouterr().out
    assert 'set $.amount = "12.50"' in out
    assert 'set $.account_name = "ACME Ltd"' in out
    assert "omitted $.iban" in out
    assert "no item pending; approve with: docevals approve" in out
    review = load_review(review_path)
    assert [(i.decision, i.expected, i.notes) for i in review.review_items] == [
        ("set", "12.50", "page 1"),
        ("set", "ACME Ltd", "page 1"),
        ("omit", None, "page 1"),
    ]
    assert main(["review", str(review_path)]) == 0
    listing = capsys.readouterr().out
    assert "0 pending" in listing
    assert '  $.amount = "12.50"  # page 1' in listing
    assert "  $.iban omitted  # page 1" in listing


def test_set_values_are_json_when_they_parse(review_path):
    assert main(["review", str(review_path), "--set", "$.amount=12.5"]) == 0
    assert load_review(review_path).review_items[0].expected == 12.5


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "$.amont=1"], "--set $.amont: no review item has this path (expected a pending"),
        (["--set", "$.amount"], "--set '$.amount' (expected PATH=VALUE, such as $.total=12.5)"),
        (["--set", "=1"], "(expected PATH=VALUE"),
        (["--set", "$.amount="], "--set $.amount: the value is empty; to leave the field out"),
        (["--omit", "$.currency"], "--omit $.currency: this field is an agreed claim"),
        (["--notes", "why"], "--notes needs a decision (--set, --omit or --reopen)"),
        (
            ["--set", "$.amount=1", "--set", "amount=2"],
            "one field given twice: --set $.amount and --set amount",
        ),
    ],
)
def test_bad_decisions_exit_2_with_one_line_and_leave_the_file(review_path, capsys, argv, message):
    before = review_path.read_bytes()
    assert main(["review", str(review_path), *argv]) == 2
    assert message in one_error_line(capsys.readouterr().err)
    assert review_path.read_bytes() == before


def test_review_of_a_broken_file_exits_2(review_path, capsys):
    data = read_json(review_path)
    data["review_items"][0]["decision"] = "maybe"
    write_json(review_path, data)
    assert main(["review", str(review_path)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{review_path}: invalid ReviewFile: review_items[0] ($.amount)" in line
    assert "'unresolved', 'set' or 'omit' (got 'maybe')" in line


def test_review_refuses_when_the_file_changed_meanwhile(review_path, capsys, monkeypatch):
    # `docevals review` imports apply_decisions when it runs (keeping `--help` light).
    import docevals_mlflow.groundtruth.review as review_module

    real_apply = review_module.apply_decisions

    def apply_then_someone_edits(*args, **kwargs):
        result = real_apply(*args, **kwargs)
        data = read_json(review_path)
        data["approval_notes"] = "edited elsewhere"
        write_json(review_path, data)
        return result

    monkeypatch.setattr(review_module, "apply_decisions", apply_then_someone_edits)
    assert main(["review", str(review_path), "--omit", "$.iban"]) == 2
    assert "holds a reviewer's work (approval notes)" in one_error_line(capsys.readouterr().err)
    assert read_json(review_path)["approval_notes"] == "edited elsewhere"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$.a=12.5", ("$.a", 12.5)),
        ("$.a=true", ("$.a", True)),
        ('$.a="007"', ("$.a", "007")),
        ("$.a=007", ("$.a", "007")),
        ("$.a=ACME Ltd", ("$.a", "ACME Ltd")),
        ('$.a=["x", 1]', ("$.a", ["x", 1])),
        ("$.a=a=b", ("$.a", "a=b")),
        ("$['k=v']=1", ("$['k=v']", 1)),
        ("$.a=NaN", ("$.a", "NaN")),
        ("$.a=1e400", ("$.a", "1e400")),
        (" $.a =x", ("$.a", "x")),
    ],
)
def test_parse_assignment(text, expected):
    assert parse_assignment(text) == expected


def test_parse_value_keeps_null_for_the_empty_check():
    assert parse_value("null") is None
    with pytest.raises(InputError, match="expected PATH=VALUE"):
        parse_assignment("no equals sign")


# --- approve / verify ---------------------------------------------------------------


def test_full_lifecycle_through_the_command_line(review_path, keys, tmp_path, capsys):
    private_path, public_path = keys
    output = tmp_path / "approved.json"
    assert decide(review_path) == 0
    capsys.readouterr()
    argv = ["approve", str(review_path), "--approved-by", "alice", "--output", str(output)]
    assert main([*argv, "--signing-key", str(private_path), "--notes", "checked"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("approved case statement-001 by alice at ")
    assert "4 row(s), 3 resolution(s); content sha256 " in out
    assert f"wrote {output}" in out
    approved = load_approved_ground_truth(output, public_path)
    assert approved.rows == APPROVED_ROWS
    assert approved.record.approval_notes == "checked"

    assert main(["verify", str(output), "--public-key", str(public_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"OK {output}: case statement-001, 4 row(s), approved by alice at ")
    assert f"content sha256 {approved.record.content_sha256}" in out
    assert f"signed by the trusted key {approved.record.key_id}" in out
    assert "note:" not in out

    assert main(["verify", str(output)]) == 0
    out = capsys.readouterr().out
    assert "(not pinned)" in out
    assert "note: no trusted key given" in out


def test_approve_refuses_unresolved_items_and_writes_nothing(review_path, keys, tmp_path, capsys):
    output = tmp_path / "approved.json"
    code = main(
        [
            "approve",
            str(review_path),
            "--approved-by",
            "alice",
            "--signing-key",
            str(keys[0]),
            "--output",
            str(output),
        ]
    )
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{review_path}: 3 review item(s) unresolved: review_items[0] $.amount" in line
    assert not output.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keys", "review.json"]


def test_approve_needs_a_key_unless_unsigned(review_path, tmp_path, capsys, monkeypatch):
    assert decide(review_path) == 0
    output = tmp_path / "approved.json"
    argv = ["approve", str(review_path), "--approved-by", "alice", "--output", str(output)]
    assert main(argv) == 2
    assert "no signing key: pass --signing-key PATH or set DOCEVALS_SIGNING_KEY" in (
        one_error_line(capsys.readouterr().err)
    )
    assert main([*argv, "--unsigned"]) == 0
    assert "NOT signed" in capsys.readouterr().out
    assert main(["verify", str(output)]) == 2
    assert "unsigned record" in one_error_line(capsys.readouterr().err)
    assert main(["verify", str(output), "--allow-unsigned"]) == 0
    assert "UNSIGNED" in capsys.readouterr().out


def test_approve_with_the_environment_key_and_force(
    review_path, keys, tmp_path, capsys, monkeypatch
):
    assert decide(review_path) == 0
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY", str(keys[0]))
    output = tmp_path / "approved.json"
    argv = ["approve", str(review_path), "--approved-by", "alice", "--output", str(output)]
    assert main(argv) == 0
    first = output.read_bytes()
    assert main(argv) == 2
    assert "exists already; an approval is never replaced silently (pass --force)" in (
        one_error_line(capsys.readouterr().err)
    )
    assert output.read_bytes() == first
    assert main([*argv, "--force", "--approved-by", "bob"]) == 0
    assert read_json(output)["record"]["approved_by"] == "bob"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--approved-by", "  "], "at approved_by: no approver"),
        (["--unsigned", "--signing-key", "k"], "--unsigned and --signing-key contradict"),
    ],
)
def test_approve_usage_errors(review_path, tmp_path, capsys, extra, message):
    assert decide(review_path) == 0
    capsys.readouterr()
    code = main(["approve", str(review_path), "--output", str(tmp_path / "a.json"), *extra])
    assert code == 2
    assert message in one_error_line(capsys.readouterr().err)


def test_verify_names_what_failed_for_each_file(review_path, keys, tmp_path, capsys):
    assert decide(review_path) == 0
    good = tmp_path / "good.json"
    argv = ["approve", str(review_path), "--approved-by", "alice", "--signing-key", str(keys[0])]
    assert main([*argv, "--output", str(good)]) == 0
    data = read_json(good)
    data["record"]["approved_by"] = "mallory"
    bad = write_json(tmp_path / "bad.json", data)
    capsys.readouterr()
    assert main(["verify", str(good), str(bad), "--public-key", str(keys[1])]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith(f"OK {good}: ")
    line = one_error_line(captured.err)
    assert line.startswith(f"docevals: error: {bad}: signature invalid")

    assert main(["keygen", "--out", str(tmp_path / "other")]) == 0
    capsys.readouterr()
    assert main(["verify", str(good), "--public-key", str(tmp_path / "other.pub")]) == 2
    assert f"{good}: key mismatch: signed by key " in one_error_line(capsys.readouterr().err)
    assert main(["verify", str(good), "--public-key", str(tmp_path / "missing.pub")]) == 2
    assert "missing.pub: public key file not found" in one_error_line(capsys.readouterr().err)


# --- keygen -------------------------------------------------------------------------


def test_keygen_writes_both_files_and_refuses_to_overwrite(tmp_path, capsys):
    prefix = tmp_path / "keys" / "team"
    assert main(["keygen", "--out", str(prefix), "--comment", "team key"]) == 0
    out = capsys.readouterr().out
    assert f"wrote private key {prefix} (keep it secret) and public key {prefix}.pub" in out
    assert "key id " in out
    assert stat.S_IMODE(prefix.stat().st_mode) == 0o600
    assert prefix.with_name("team.pub").read_text().endswith(" team key\n")
    before = prefix.read_bytes()
    assert main(["keygen", "--out", str(prefix)]) == 2
    assert "exists already; a key is never overwritten" in one_error_line(capsys.readouterr().err)
    assert prefix.read_bytes() == before


def test_no_key_material_or_passphrase_in_any_command_output(
    review_path, tmp_path, capsys, monkeypatch
):
    passphrase = "planted-cli-Passphrase-91c2"
    prefix = tmp_path / "keys" / "enc"
    monkeypatch.setenv("KEY_PASSPHRASE", passphrase)
    outputs: list[str] = []

    def run(argv):
        code = main(argv)
        captured = capsys.readouterr()
        outputs.extend([captured.out, captured.err])
        return code

    assert run(["keygen", "--out", str(prefix), "--passphrase-env", "KEY_PASSPHRASE"]) == 0
    assert run(["keygen", "--out", str(tmp_path / "x"), "--passphrase-env", "UNSET_VARIABLE"]) == 2
    assert decide(review_path) == 0
    capsys.readouterr()
    output = tmp_path / "approved.json"
    argv = ["approve", str(review_path), "--approved-by", "alice", "--output", str(output)]
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY", str(prefix))
    assert run(argv) == 2  # no passphrase
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY_PASSPHRASE", passphrase + "-wrong")
    assert run(argv) == 2
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY", prefix.read_text())  # key text in the variable
    assert run(argv) == 2
    monkeypatch.setenv("DOCEVALS_SIGNING_KEY_PASSPHRASE", passphrase)
    assert run(argv) == 0
    assert run(["verify", str(output), "--public-key", str(prefix)]) == 2  # private as public
    assert run(["verify", str(output), "--public-key", prefix.read_text()]) == 2
    assert run(["verify", str(output), "--public-key", f"{prefix}.pub"]) == 0
    assert run(["review", str(review_path)]) == 0
    files = [
        p.read_text(encoding="utf-8") for p in tmp_path.rglob("*") if p.is_file() and p != prefix
    ]
    secrets = secret_forms(prefix, passphrase)
    leaked = sorted({s for s in secrets for text in outputs + files if s in text})
    assert leaked == []
    assert any("wrong passphrase" in text for text in outputs)
    assert any("this holds a private key" in text for text in outputs)
    assert json.loads(output.read_text())["record"]["signature"]
