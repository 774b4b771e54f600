"""Reviewer layers: append-only answers per person, concurrency, tampering, stale
layers, final values and the review file they give to approve_review."""

from __future__ import annotations

import datetime as dt
import gc
import json
import multiprocessing

import pytest

from docevals_mlflow.errors import InputError
from docevals_mlflow.groundtruth.approval import approve_review
from docevals_mlflow.groundtruth.layer_records import layer_digest
from docevals_mlflow.groundtruth.models import GeneratedClaim
from docevals_mlflow.groundtruth.review import (
    apply_decisions,
    load_review,
    write_ground_truth_review,
)
from docevals_mlflow.groundtruth.review_layers import (
    current_digest,
    layer_folder,
    layer_path,
    load_layers,
    load_many,
    read_layer,
    record_answer,
    review_files,
)
from docevals_mlflow.groundtruth.review_rows import review_digest
from tests.groundtruth.approval_fakes import generation_report

T0 = dt.datetime(2026, 3, 1, 9, 30, tzinfo=dt.UTC)


@pytest.fixture
def review_path(tmp_path):
    report = generation_report()
    report.providers[0].claims = [
        GeneratedClaim(path="$.currency", expected_value="EUR", confidence=0.9),
        GeneratedClaim(path="$.amount", expected_value="12.50", confidence=0.4),
    ]
    report.providers[1].claims = [
        GeneratedClaim(path="$.currency", expected_value="EUR", confidence=0.7)
    ]
    return write_ground_truth_review(report, tmp_path / "doc.review.json")


def at(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def both_review(review_path, person, *, iban="absent"):
    record_answer(review_path, person, "$.currency", "accept", now=at(1))
    record_answer(review_path, person, "$.items[0].sku", "accept", now=at(2))
    record_answer(review_path, person, "$.amount", "set", "12.50", now=at(3))
    record_answer(review_path, person, "$.iban", iban, now=at(4))


def test_layers_live_beside_the_review_file(review_path, tmp_path):
    assert layer_folder(review_path) == tmp_path / "doc.review.layers"
    assert layer_path(review_path, "alice@example.org") == (
        tmp_path / "doc.review.layers" / "alice@example.org.json"
    )
    for bad in ("", "../x", ".hidden", "a b", "x" * 65, "a/b"):
        with pytest.raises(InputError, match="is not a person id"):
            layer_path(review_path, bad)


def test_an_edit_appends_with_who_when_and_previous(review_path):
    record_answer(review_path, "alice", "currency", "accept", now=at(1))
    record_answer(review_path, "alice", "$['currency']", "set", "USD", now=at(2))
    record_answer(review_path, "alice", "$.currency", "absent", now=at(3))
    raw = json.loads(layer_path(review_path, "alice").read_text())
    assert raw["person"] == "alice"
    assert raw["role"] == "reviewer"
    assert raw["review_sha256"] == review_digest(load_review(review_path))
    assert raw["entries"] == [
        {
            "path": "$.currency",
            "action": "accept",
            "previous": "EUR",
            "at": "2026-03-01T09:31:00.000000Z",
        },
        {
            "path": "$.currency",
            "action": "set",
            "value": "USD",
            "previous": "EUR",
            "previous_action": "accept",
            "at": "2026-03-01T09:32:00.000000Z",
        },
        {
            "path": "$.currency",
            "action": "absent",
            "previous": "USD",
            "previous_action": "set",
            "at": "2026-03-01T09:33:00.000000Z",
        },
    ]
    (answer,) = load_layers(review_path).answers("currency").values()
    assert (answer.person, answer.action, answer.value, answer.edits) == (
        "alice",
        "absent",
        None,
        3,
    )
    assert answer.absent


def _append_many(review_path, offset: int, count: int) -> None:
    for index in range(count):
        record_answer(review_path, "alice", "$.amount", "set", offset + index)


def test_two_processes_appending_to_one_layer_never_lose_an_answer(review_path):
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_append_many, args=(review_path, offset, 40))
        for offset in (1000, 2000)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    layer = load_layers(review_path).layers["alice"]  # the previous-chain holds
    values = sorted(entry.value for entry in layer.entries)
    assert values == [*range(1000, 1040), *range(2000, 2040)]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("$.total", "accept"), {}, r"\$\.total: the review file has no such field path"),
        (("$.amount", "accept"), {}, "no majority value"),
        (("$.amount", "set", ""), {}, "'set' needs a value"),
        (("$.amount", "set", None), {}, "'set' needs a value"),
        (("$.amount", "absent", 3), {}, "takes no value"),
        (("$.amount", "guess"), {}, "action 'guess'"),
        (("$.amount", "absent"), {"role": "adjudicator"}, "needs a reason"),
        (("$.amount", "absent"), {"role": "approver"}, "role 'approver'"),
        (("$.amount", "absent"), {"now": dt.datetime(2026, 1, 1)}, "no time zone"),
    ],
)
def test_bad_answers_are_refused_and_nothing_is_written(review_path, args, kwargs, message):
    with pytest.raises(InputError, match=message):
        record_answer(review_path, "alice", *args, **kwargs)
    assert not layer_path(review_path, "alice").exists()


def test_accept_on_a_disputed_item_takes_the_panels_majority(review_path, tmp_path):
    report = generation_report()
    report.disagreements[0].candidates[0].votes = 2  # "12.50": 2 votes of 3
    path = write_ground_truth_review(report, tmp_path / "majority.review.json")
    record_answer(path, "alice", "$.amount", "accept")
    assert load_layers(path).answers("$.amount")["alice"].value == "12.50"


def test_one_person_one_role(review_path):
    record_answer(review_path, "carol", "$.amount", "set", 1, role="adjudicator", reason="p. 2")
    with pytest.raises(InputError, match="holds adjudicator answers"):
        record_answer(review_path, "carol", "$.amount", "set", 2)


def _tamper(review_path, person, edit):
    file = layer_path(review_path, person)
    raw = json.loads(file.read_text())
    edit(raw)
    file.write_text(json.dumps(raw))
    return file


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda r: r["entries"][2].update(value="99.99"),
            r"entries\[4\] \(\$\.amount\): 'previous'",
        ),
        (lambda r: r["entries"].pop(2), r"entries\[3\] \(\$\.amount\): 'previous'"),
        (
            lambda r: r["entries"][0].update(path="$.total"),
            r"entries\[0\] \(\$\.total\): the review file has no",
        ),
        (
            lambda r: r["entries"][1].update(colour="red"),
            r"entries\[1\] \(\$\.items\[0\]\.sku\).*colour: Extra inputs",
        ),
        (
            lambda r: r["entries"][3].update(at="yesterday"),
            r"entries\[3\] \(\$\.iban\).*at: 'yesterday' is not a UTC time",
        ),
        (
            lambda r: r["entries"][0].update(action="set"),
            r"entries\[0\] \(\$\.currency\).*needs a value",
        ),
        (lambda r: r.update(person="bob"), "filed as 'alice.json'"),
        (lambda r: r.update(review_sha256="xyz"), "review_sha256"),
    ],
)
def test_tampered_layers_give_one_line_naming_file_entry_and_path(review_path, edit, message):
    both_review(review_path, "alice")
    record_answer(review_path, "alice", "$.amount", "set", "12.05", now=at(5))
    file = _tamper(review_path, "alice", edit)
    with pytest.raises(InputError, match=message) as caught:
        load_layers(review_path)
    text = str(caught.value)
    assert str(file) in text
    assert "\n" not in text
    with pytest.raises(InputError):  # and no answer is appended to it either
        record_answer(review_path, "alice", "$.iban", "unreadable")


@pytest.mark.parametrize(
    ("content", "message"), [(b"", "empty"), (b"{", "JSON"), (b"[]", "not list")]
)
def test_malformed_layer_files(review_path, content, message):
    file = layer_path(review_path, "alice")
    file.parent.mkdir()
    file.write_bytes(content)
    with pytest.raises(InputError, match=message) as caught:
        load_layers(review_path)
    assert str(file) in str(caught.value)


def test_a_layer_for_another_version_of_the_review_is_stale(review_path):
    both_review(review_path, "alice")
    both_review(review_path, "bob")
    edited = apply_decisions(load_review(review_path), omit=["$.iban"])
    write_ground_truth_review(edited, review_path)
    layers = load_layers(review_path)
    assert [s.person for s in layers.stale] == ["alice", "bob"]
    assert layers.stale[0].entries == 4
    assert layers.stale[0].review_sha256 != layers.review_sha256
    assert layers.layers == {}
    assert layers.answers("$.amount") == {}
    with pytest.raises(InputError, match="another version of the review file"):
        record_answer(review_path, "alice", "$.amount", "set", 1)
    record_answer(review_path, "dave", "$.amount", "set", 1)  # a fresh layer is fine
    assert load_layers(review_path).people() == ["dave"]


def test_signature_is_dropped_when_the_layer_changes(review_path):
    record_answer(review_path, "alice", "$.amount", "set", 1)
    layer = read_layer(layer_path(review_path, "alice"))
    signature = {
        "key_id": "a" * 64,
        "public_key": "k",
        "signature": "s",
        "at": "2026-03-01T09:30:00Z",
    }
    _tamper(review_path, "alice", lambda r: r.update(signature=signature))
    assert read_layer(layer_path(review_path, "alice")).signature is not None
    assert layer_digest(read_layer(layer_path(review_path, "alice"))) == layer_digest(layer)
    record_answer(review_path, "alice", "$.amount", "set", 2)
    assert read_layer(layer_path(review_path, "alice")).signature is None


def test_disagreements_final_values_and_approval(review_path):
    both_review(review_path, "alice")
    both_review(review_path, "bob", iban="unreadable")
    record_answer(review_path, "alice", "$.account_name", "set", "ACME Ltd", now=at(6))
    layers = load_layers(review_path)
    found = {(d.path, d.kind) for d in layers.disagreements(required_reviewers=2)}
    assert found == {("$.iban", "differ"), ("$.account_name", "incomplete")}
    finals = layers.final_values(required_reviewers=2)
    assert finals["$.amount"].status == "agreed"
    assert finals["$.amount"].value == "12.50"
    assert finals["$.iban"].status == "unresolved"
    with pytest.raises(InputError, match=r"unresolved: .*\$\.account_name.*\$\.iban"):
        approve_review(layers.to_review_file(required_reviewers=2), "erin", sign=False)
    record_answer(review_path, "carol", "$.iban", "absent", role="adjudicator", reason="no IBAN")
    record_answer(review_path, "bob", "$.account_name", "set", "acme  LTD", now=at(7))
    layers = load_layers(review_path)
    finals = layers.final_values(required_reviewers=2)
    assert (finals["$.iban"].status, finals["$.iban"].absent, finals["$.iban"].reason) == (
        "adjudicated",
        True,
        "no IBAN",
    )
    # Equal under the panel's value rules; the earliest answer's spelling is kept.
    assert finals["$.account_name"].value == "ACME Ltd"
    approved = approve_review(layers.to_review_file(required_reviewers=2), "erin", sign=False)
    assert approved.rows == [
        {"path": "$.account_name", "expected": "ACME Ltd"},
        {"path": "$.amount", "expected": "12.50"},
        {"path": "$.currency", "expected": "EUR"},
        {"path": "$.items[0].sku", "expected": "A-1"},
    ]
    assert {r.path: r.decision for r in approved.record.resolutions}["$.iban"] == "omit"


def test_corrected_absent_and_unanswered_claims(review_path):
    record_answer(review_path, "alice", "$.currency", "set", "USD")
    record_answer(review_path, "alice", "$.items[0].sku", "absent")
    review = load_layers(review_path).to_review_file()
    assert [(c.path, c.expected) for c in review.claims] == [("$.currency", "USD")]
    items = {item.path: item for item in review.review_items}
    assert items["$.items[0].sku"].decision == "omit"
    assert items["$.items[0].sku"].provider_candidates[0].value == "A-1"
    assert items["$.amount"].decision == "unresolved"  # nobody answered it


def test_fields_give_what_the_page_shows(review_path):
    record_answer(review_path, "alice", "$.currency", "accept")
    views = {view.path: view for view in load_layers(review_path).fields()}
    assert list(views) == ["$.currency", "$.items[0].sku", "$.amount", "$.account_name", "$.iban"]
    currency = views["$.currency"]
    assert (currency.kind, currency.proposed, currency.has_proposal, currency.agreement) == (
        "claim",
        "EUR",
        True,
        1.0,
    )
    assert currency.evidence == ["top right: EUR"]
    assert currency.confidence == 0.7
    assert currency.answers["alice"].action == "accept"
    assert currency.final.status == "agreed"
    amount = views["$.amount"]
    assert (amount.kind, amount.has_proposal, amount.reason, amount.agreement) == (
        "item",
        False,
        "conflict",
        0.5,
    )
    assert [c.value for c in amount.candidates] == ["12.50", "12.05"]
    assert amount.confidence == 0.4
    assert not amount.failed_upstream
    assert views["$.iban"].failed_upstream
    assert views["$.iban"].omitted_by == ["claude", "openai"]


def test_failed_provider_marks_fields_failed_upstream(tmp_path):
    report = generation_report()
    report.providers[1].status = "error"
    path = write_ground_truth_review(report, tmp_path / "x.review.json")
    views = load_layers(path).fields()
    assert all(v.failed_upstream and v.failed_providers == ["claude"] for v in views)


def test_fast_digest_equals_review_digest(review_path):
    review = load_review(review_path)
    assert current_digest(review) == review_digest(review)
    edited = apply_decisions(review, set={"$.amount": {"x": [1.5, "é", None, True]}})
    assert current_digest(edited) == review_digest(edited)


def test_review_files_of_a_folder(review_path, tmp_path):
    (tmp_path / "sub").mkdir()
    other = write_ground_truth_review(generation_report("b"), tmp_path / "sub" / "b.review.json")
    assert review_files(tmp_path) == [review_path, other]
    assert review_files(review_path) == [review_path]
    with pytest.raises(InputError, match="no such file"):
        review_files(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no \*\.review\.json"):
        review_files(tmp_path / "empty")


def test_load_many_equals_load_layers_and_restores_the_collector(review_path, tmp_path):
    other = write_ground_truth_review(generation_report("b"), tmp_path / "b.review.json")
    record_answer(other, "bob", "$.amount", "set", 3)
    assert gc.isenabled()
    loaded = load_many([review_path, other])
    assert gc.isenabled()
    assert [x.review_path for x in loaded] == [review_path, other]
    assert loaded[1].answers("$.amount")["bob"].value == 3
    _tamper(other, "bob", lambda r: r.update(person="eve"))
    with pytest.raises(InputError, match=r"filed as 'bob\.json'"):
        load_many([review_path, other])
    assert gc.isenabled()
