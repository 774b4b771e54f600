"""``docevals review answer / agreement / status``: outputs, exit codes, one-line errors,
and the old ``docevals review FILE`` form beside them."""

from __future__ import annotations

import json

import pytest

from docevals_mlflow.cli import main
from docevals_mlflow.groundtruth.review import write_ground_truth_review
from docevals_mlflow.groundtruth.review_layers import layer_path, load_layers
from tests.groundtruth.approval_fakes import generation_report
from tests.helpers import one_error_line


@pytest.fixture
def folder(tmp_path):
    for case in ("a", "b"):
        write_ground_truth_review(generation_report(case), tmp_path / f"{case}.review.json")
    return tmp_path


def answer(path, person, *options):
    return main(["review", "answer", str(path), "--person", person, *options])


def test_answer_records_in_the_persons_layer(folder, capsys):
    review = folder / "a.review.json"
    code = answer(
        review, "alice", "--accept", "currency", "--set", "$.amount=12.5", "--absent", "$.iban"
    )
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        'alice: $.currency accept (before: proposed "EUR")',
        "alice: $.amount set 12.5 (before: proposed null)",
        "alice: $.iban absent (before: proposed null)",
        f"layer: {layer_path(review, 'alice')}",
    ]
    assert answer(review, "alice", "--set", '$.amount="12.05"') == 0
    assert 'set "12.05" (before: set 12.5)' in capsys.readouterr().out
    answers = load_layers(review).answers("$.amount")
    assert answers["alice"].value == "12.05"
    assert answers["alice"].edits == 2


def test_adjudicator_answers_need_a_reason(folder, capsys):
    review = folder / "a.review.json"
    assert answer(review, "carol", "--role", "adjudicator", "--unreadable", "$.iban") == 2
    assert "needs a reason" in one_error_line(capsys.readouterr().err)
    assert not layer_path(review, "carol").exists()
    args = ("--role", "adjudicator", "--unreadable", "$.iban", "--reason", "smudged")
    assert answer(review, "carol", *args) == 0
    assert load_layers(review).answers("$.iban")["carol"].reason == "smudged"


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ((), "nothing to record"),
        (("--accept", "$.nope"), "$.nope: the review file has no such field path"),
        (("--accept", "$.amount"), "no majority value"),
        (("--accept", "currency", "--absent", "$.currency"), "one field given twice"),
        (("--set", "amount"), "PATH=VALUE"),
    ],
)
def test_bad_answers_are_one_line_errors(folder, capsys, options, fragment):
    assert answer(folder / "a.review.json", "alice", *options) == 2
    assert fragment in one_error_line(capsys.readouterr().err)


def test_bad_person_and_missing_file(folder, capsys):
    assert answer(folder / "a.review.json", "../x", "--accept", "currency") == 2
    assert "is not a person id" in one_error_line(capsys.readouterr().err)
    assert answer(folder / "missing.review.json", "alice", "--accept", "currency") == 2
    assert "missing.review.json" in one_error_line(capsys.readouterr().err)


def test_status_per_document(folder, capsys):
    for person in ("alice", "bob"):
        answer(folder / "a.review.json", person, "--accept", "currency", "--absent", "$.iban")
    answer(folder / "a.review.json", "bob", "--set", "amount=1")
    capsys.readouterr()
    assert main(["review", "status", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{folder / 'a.review.json'}: a: 5 field(s); answered by 2+ reviewer(s): 2; disagreed: 0; "
        "final: 2/5; people: alice (reviewer), bob (reviewer)",
        f"{folder / 'b.review.json'}: b: 5 field(s); answered by 2+ reviewer(s): 0; disagreed: 0; "
        "final: 0/5; people: nobody yet",
        "total: 10 field(s); answered 2; disagreed 0; final 2",
    ]
    assert main(["review", "status", str(folder / "a.review.json"), "--reviewers", "1"]) == 0
    assert "answered by 1+ reviewer(s): 3;" in capsys.readouterr().out
    assert main(["review", "status", str(folder), "--reviewers", "0"]) == 2
    assert "--reviewers" in one_error_line(capsys.readouterr().err)


def test_agreement_table_and_json(folder, capsys):
    for review in ("a", "b"):
        path = folder / f"{review}.review.json"
        answer(path, "alice", "--accept", "currency", "--absent", "$.iban", "--set", "amount=1")
        other = "1" if review == "a" else "2"
        answer(
            path,
            "bob",
            "--accept",
            "currency",
            "--unreadable",
            "$.iban",
            "--set",
            f"amount={other}",
        )
    capsys.readouterr()
    out_file = folder / "agreement.json"
    code = main(["review", "agreement", str(folder), "--json", str(out_file), "--resamples", "50"])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "2 document(s), 2 reviewer(s): alice, bob; 50 bootstrap resamples of the documents, seed 0"
    )
    assert lines[2].startswith("$.amount ")
    assert lines[-2].startswith("overall ")
    assert lines[-1] == f"report: {out_file}"
    report = json.loads(out_file.read_text())
    assert report["overall"]["units"] == 6
    # amount: (1, 1) and (1, 2): hand-computed Cohen kappa = (2*1 - 3) / (4 - 3) = -1 ...
    # per field: n = 2 units, 1 agreeing; marginals alice {1: 2}, bob {1: 1, 2: 1}:
    # chance = 2*1 = 2; kappa = (2*1 - 2) / (4 - 2) = 0.
    amount = next(f for f in report["fields"] if f["path"] == "$.amount")
    assert amount["cohen_kappa"]["value"] == pytest.approx(0.0)


def test_agreement_warns_about_stale_layers(folder, capsys):
    review = folder / "a.review.json"
    answer(review, "alice", "--accept", "currency")
    assert main(["review", str(review), "--omit", "$.iban"]) == 0  # the review changes
    capsys.readouterr()
    assert main(["review", "agreement", str(review), "--resamples", "0"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("docevals: warning: ")
    assert "stale layer of alice" in err


def test_the_old_review_form_and_help_keep_working(folder, capsys):
    review = folder / "a.review.json"
    assert main(["review", str(review)]) == 0
    assert "3 pending" in capsys.readouterr().out
    assert main(["review", str(review), "--omit", "$.iban"]) == 0
    assert "omitted $.iban" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main(["review", "--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "Subcommands for several reviewers: agreement, answer," in shown
    assert "status (docevals review SUBCOMMAND --help)" in shown
    with pytest.raises(SystemExit) as exited:
        main(["review", "answer", "--help"])
    assert "usage: docevals review answer" in capsys.readouterr().out


def test_non_utf8_options_of_subcommands_are_refused(folder, capsys):
    code = answer(folder / "a.review.json", "alice", "--set", "amount=\udcff")
    assert code == 2
    assert "--set" in one_error_line(capsys.readouterr().err)
