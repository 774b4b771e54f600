"""``compare_documents(..., workers=N)``: the same batch, report, row order and errors
as one process, with the input read a bounded distance ahead."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from docevals_mlflow.errors import (
    ConfigurationError,
    DocEvalsError,
    InputError,
    ShapeMismatchError,
    WorkerProcessError,
)
from docevals_mlflow.fields import parallel
from docevals_mlflow.fields.aggregates import f1_total
from docevals_mlflow.fields.batch import BatchComparison, DocumentPair, compare_documents
from docevals_mlflow.fields.compare import DocumentComparison
from docevals_mlflow.fields.methods import make_comparator
from docevals_mlflow.fields.processes import Failure
from docevals_mlflow.fields.schema import DocumentSchema, FieldSpec
from tests.fields.test_properties import SCHEMA, document_batch
from tests.helpers import assert_one_line_error, run, write_jsonl


def report_text(batch: BatchComparison) -> str:
    return json.dumps(batch.to_report(), ensure_ascii=False, default=repr)


def sunk(keep_rows: bool, **options: Any) -> tuple[BatchComparison, list[str]]:
    """Compare with a rows sink; the batch and the sink's view of each document."""
    seen: list[str] = []

    def sink(document: DocumentComparison) -> None:
        seen.append(json.dumps([document.id, document.row_dicts()], default=repr))

    batch = compare_documents(rows_sink=sink, keep_rows=keep_rows, **options)
    return batch, seen


# --- exactly the serial figures ------------------------------------------------------


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(records=document_batch(max_size=8, invalid=True))
def test_two_workers_give_the_serial_report(records: list[dict[str, Any]]) -> None:
    # Wrong-shaped ground truth is counted apart alike (and stops both alike).
    options: dict[str, Any] = {"shape_mismatch": "count"}
    serial = compare_documents(records, SCHEMA, chunk_size=2, **options)
    parallel_batch = compare_documents(records, SCHEMA, chunk_size=2, workers=2, **options)
    assert report_text(parallel_batch) == report_text(serial)
    assert parallel_batch.macro_f1 == serial.macro_f1
    lean = compare_documents(records, SCHEMA, chunk_size=2, workers=2, keep_rows=False, **options)
    assert report_text(lean) == report_text(
        compare_documents(records, SCHEMA, keep_rows=False, **options)
    )
    if serial.invalid_documents:
        with pytest.raises(ShapeMismatchError) as serial_error:
            compare_documents(records, SCHEMA, chunk_size=2)
        with pytest.raises(ShapeMismatchError) as parallel_error:
            compare_documents(records, SCHEMA, chunk_size=2, workers=2)
        assert str(parallel_error.value) == str(serial_error.value)


@pytest.mark.parametrize("keep_rows", [True, False])
def test_rows_sink_sees_the_same_documents_in_order(keep_rows: bool) -> None:
    records = _records(9)
    serial, serial_seen = sunk(keep_rows, pairs=records, schema=SCHEMA, chunk_size=2)
    batch, seen = sunk(keep_rows, pairs=records, schema=SCHEMA, chunk_size=2, workers=2)
    assert seen == serial_seen
    assert len(seen) == 9
    assert report_text(batch) == report_text(serial)


def test_a_streamed_generator_is_read_a_bounded_distance_ahead() -> None:
    records = _records(40)
    read = 0

    def stream() -> Iterator[dict[str, Any]]:
        nonlocal read
        for record in records:
            read += 1
            yield record

    ahead: list[int] = []

    def sink(document: DocumentComparison) -> None:
        ahead.append(read - len(ahead) - 1)

    batch = compare_documents(
        stream(), SCHEMA, chunk_size=2, workers=2, keep_rows=False, rows_sink=sink
    )
    assert batch.document_count == 40
    # At most the helper's chunks and this process's own in flight, plus one being read.
    assert max(ahead) <= (parallel.IN_FLIGHT_PER_HELPER + parallel.AHEAD + 1) * 2
    assert report_text(batch) == report_text(compare_documents(records, SCHEMA, keep_rows=False))


def test_one_chunk_is_compared_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_helpers(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no helper process should start for one chunk")

    monkeypatch.setattr(parallel, "helpers", no_helpers)
    records = _records(5)
    batch = compare_documents(records, SCHEMA, workers=2)
    assert report_text(batch) == report_text(compare_documents(records, SCHEMA))


def test_exact_macro_f1_does_not_depend_on_the_order() -> None:
    records = _records(30)
    # These records' keys are not in the schema: count them, so every F1 is defined.
    forward = compare_documents(records, SCHEMA, keep_rows=False, discovered="include")
    backward = compare_documents(records[::-1], SCHEMA, keep_rows=False, discovered="include")
    assert forward.macro_f1 == backward.macro_f1
    f1s = [d.counts.metrics()["f1"] for d in forward.documents]
    defined = [f1 for f1 in f1s if f1 is not None]
    assert forward.macro_f1 == pytest.approx(sum(defined) / len(defined), rel=1e-12)


def test_f1_total_is_the_exact_sum() -> None:
    assert f1_total({}) == 0.0
    # 1/3 + 1/3 + 1/3 is exactly 1 (the float sum of three 1/3 is not).
    assert f1_total({3: 3}) == 1.0
    assert f1_total({7: 6, 2: 1, 1: 0}) == pytest.approx(6 / 7 + 1 / 2)


# --- the same errors -----------------------------------------------------------------


def _error(call: Any) -> DocEvalsError:
    with pytest.raises(DocEvalsError) as caught:
        call()
    return caught.value


def _same_error(records: Any, **options: Any) -> DocEvalsError:
    serial = _error(lambda: compare_documents(list(records), SCHEMA, chunk_size=2, **options))
    parallel_error = _error(
        lambda: compare_documents(list(records), SCHEMA, chunk_size=2, workers=2, **options)
    )
    assert type(parallel_error) is type(serial)
    assert str(parallel_error) == str(serial)
    assert parallel_error.context() == serial.context()
    return parallel_error


def test_duplicate_id_in_a_later_chunk() -> None:
    records = _records(7)
    records.append({**records[1]})
    error = _same_error(records)
    assert isinstance(error, InputError)
    assert "duplicate document id" in str(error)
    assert error.record == records[1]["id"]


def test_an_unreadable_item_names_its_index() -> None:
    records: list[Any] = _records(6)
    records.insert(5, 42)
    error = _same_error(records)
    assert error.record == "5"


def test_an_error_inside_a_worker_comes_back_with_its_context() -> None:
    records = _records(8)
    records[5]["confidence"] = {"$.total": "very"}
    error = _same_error(records)
    assert error.record == records[5]["id"]


def test_the_first_error_in_input_order_wins() -> None:
    # A bad document in the first chunk is reported before a duplicate id read later.
    records = _records(8)
    records[0]["confidence"] = {"$.total": "very"}
    records.append({**records[3]})
    error = _same_error(records)
    assert error.record == records[0]["id"]


def test_an_error_raised_by_the_input_itself() -> None:
    records = _records(9)

    def stream() -> Iterator[dict[str, Any]]:
        yield from records[:7]
        raise InputError("the input broke", source="in.jsonl", record="line 8")

    def attempt(workers: int) -> tuple[str, list[str]]:
        seen: list[str] = []
        with pytest.raises(InputError) as caught:
            compare_documents(
                stream(),
                SCHEMA,
                chunk_size=2,
                workers=workers,
                rows_sink=lambda document: seen.append(str(document.id)),
            )
        return str(caught.value), seen

    assert attempt(2) == attempt(1)
    assert attempt(2)[1] == [record["id"] for record in records[:6]]


def test_errors_survive_pickling_with_their_context() -> None:
    error = InputError("bad value", source="a.jsonl", record="line 3", path="$.x", expected="y")
    carried = pickle.loads(pickle.dumps(Failure(error))).error()
    assert type(carried) is InputError
    assert str(carried) == str(error)
    assert carried.context() == error.context()


# --- providers, worker counts --------------------------------------------------------

SEMANTIC_SCHEMA = DocumentSchema.model_validate(
    {
        "schema_id": "s",
        "classes": [
            {
                "name": "Memo",
                "fields": {
                    "title": {"method": "SEMANTIC"},
                    "lines": {"items": {"fields": {"text": {"method": "LLM"}}}},
                },
            }
        ],
    }
)


def test_provider_fields_are_found() -> None:
    assert parallel.provider_fields(SEMANTIC_SCHEMA) == ["$.title", "$.lines[].text"]
    assert parallel.provider_fields(SCHEMA) == []


def test_provider_fields_refuse_several_workers() -> None:
    fuzzy = make_comparator(FieldSpec(method="FUZZY"))
    providers: Any = {"SEMANTIC": lambda spec: fuzzy, "LLM": lambda spec: fuzzy}
    with pytest.raises(ConfigurationError, match=r"\$\.title, \$\.lines\[\]\.text"):
        compare_documents([({}, {})], SEMANTIC_SCHEMA, providers=providers, workers=2)


def test_a_missing_provider_fails_as_in_one_process() -> None:
    serial = _error(lambda: compare_documents([({}, {})], SEMANTIC_SCHEMA))
    several = _error(lambda: compare_documents([({}, {})], SEMANTIC_SCHEMA, workers=2))
    assert str(several) == str(serial)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, 1), (3, 3), ("4", 4), (0, parallel.cpu_count()), ("auto", parallel.cpu_count())],
)
def test_worker_counts(value: Any, expected: int) -> None:
    assert parallel.resolve_workers(value) == expected


@pytest.mark.parametrize("value", [-1, "-2", "many", 1.5, True])
def test_bad_worker_counts(value: Any) -> None:
    with pytest.raises(InputError, match="invalid worker count"):
        parallel.resolve_workers(value)


# --- the command -----------------------------------------------------------------------


def test_cli_workers_write_the_same_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    records = _records(600, rng_seed=3)
    expected = write_jsonl(
        tmp_path / "expected.jsonl",
        [{"id": r["id"], "class": r["class"], "data": r["expected"]} for r in records],
    )
    predicted = write_jsonl(
        tmp_path / "predicted.jsonl", [{"id": r["id"], "data": r["predicted"]} for r in records]
    )
    schema = tmp_path / "schema.json"
    schema.write_text(SCHEMA.model_dump_json(), encoding="utf-8")
    outputs = {}
    for workers in ("1", "2", "auto"):
        output = tmp_path / f"report-{workers}.json"
        code, _out, err = run(
            capsys,
            "fields",
            "--expected", expected,
            "--predicted", predicted,
            "--schema", schema,
            "--output", output,
            "--workers", workers,
        )  # fmt: skip
        assert code == 0, err
        outputs[workers] = output.read_text(encoding="utf-8")
    assert outputs["2"] == outputs["1"] == outputs["auto"]
    assert json.loads(outputs["1"])["overall"]["documents"] == 600


@pytest.mark.parametrize("value", ["-1", "lots"])
def test_cli_rejects_a_bad_worker_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    expected = write_jsonl(tmp_path / "e.jsonl", [{"id": "1", "data": {}}])
    code, _, err = run(
        capsys,
        "fields",
        "--expected", expected,
        "--predicted", expected,
        "--output", tmp_path / "r.json",
        "--workers", value,
    )  # fmt: skip
    assert code == 2
    assert_one_line_error(err, "invalid worker count")


# --- documents -------------------------------------------------------------------------


def _records(count: int, *, rng_seed: int = 1) -> list[dict[str, Any]]:
    """``count`` documents of the property tests' schema, deterministic."""
    import random

    rng = random.Random(rng_seed)
    records = []
    for index in range(count):
        lines = [
            {"code": rng.choice(["A1", "B1", "C3"]), "amount": rng.choice([1, 2, 3.5, "4"])}
            for _ in range(rng.randint(0, 4))
        ]
        predicted_lines = [dict(line) for line in lines if rng.random() > 0.2]
        for line in predicted_lines:
            if rng.random() < 0.3:
                line["amount"] = rng.choice([1, 9, "x"])
        rng.shuffle(predicted_lines)
        records.append(
            {
                "id": f"doc-{index}",
                "class": rng.choice(["Statement", "Receipt", None]),
                "expected": {
                    "account": rng.choice(["A-1", "B-2"]),
                    "total": rng.choice([10, 12.5, None]),
                    "lines": lines,
                },
                "predicted": {
                    "account": rng.choice(["A-1", "a-1", "B-2", ""]),
                    "total": rng.choice([10, 12.49, 13, None]),
                    "lines": predicted_lines,
                    "note": rng.choice(["x", None]),
                },
            }
        )
    return records


def test_document_pairs_keep_their_fields_through_the_workers() -> None:
    pairs = [
        DocumentPair(
            id=f"p{index}",
            expected={"total": index},
            predicted={"total": index + (index % 2)},
            document_class="Receipt",
            confidence={"$.total": 0.25 * (index % 4)},
        )
        for index in range(6)
    ]
    serial = compare_documents(pairs, SCHEMA, chunk_size=2)
    several = compare_documents(pairs, SCHEMA, chunk_size=2, workers=2)
    assert report_text(several) == report_text(serial)
    assert "calibration" in several.to_report()


# --- helper processes ----------------------------------------------------------------


def _ready_helper() -> Any:
    """The one helper of ``workers=2``, started and past its hello (a short call may
    have been compared by the parent alone while the helper was still starting)."""
    from docevals_mlflow.fields import processes

    (helper,) = processes.helpers(1)
    if helper.launcher is not None:
        helper.launcher.join()
    if not helper.started:
        assert helper.results.poll(60)
        assert helper.check_started()
    return helper


def test_a_helper_that_died_between_calls_is_replaced() -> None:
    import os
    import signal

    from docevals_mlflow.fields import processes

    records = _records(600)  # three chunks of 256: a helper is used
    expected = report_text(compare_documents(records, SCHEMA, chunk_size=256))
    assert report_text(compare_documents(records, SCHEMA, chunk_size=256, workers=2)) == expected
    helper = _ready_helper()
    os.kill(helper.process.pid, signal.SIGKILL)
    helper.process.join(timeout=10)
    assert report_text(compare_documents(records, SCHEMA, chunk_size=256, workers=2)) == expected
    (replacement,) = processes.helpers(1)
    assert replacement is not helper
    assert replacement.alive()


def test_a_helper_that_dies_mid_run_is_reported_and_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os
    import signal

    from docevals_mlflow.fields import processes

    records = _records(3_000)
    expected = report_text(compare_documents(records, SCHEMA, chunk_size=64))
    compare_documents(records[:300], SCHEMA, chunk_size=64, workers=2)
    helper = _ready_helper()
    sent = processes.Helper.send

    def send_then_die(self: Any, job: Any, packed: Any) -> None:
        sent(self, job, packed)
        if self.outstanding == 2:  # with chunks in flight, as a crash would find it
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.join(timeout=10)

    monkeypatch.setattr(processes.Helper, "send", send_then_die)
    with pytest.raises(WorkerProcessError, match="killed by signal 9") as raised:
        compare_documents(records, SCHEMA, chunk_size=64, workers=2)
    monkeypatch.setattr(processes.Helper, "send", sent)
    assert "--workers" in str(raised.value)
    assert not helper.alive()
    # The next call starts a new helper and gets the serial figures.
    assert report_text(compare_documents(records, SCHEMA, chunk_size=64, workers=2)) == expected


def test_chunks_and_results_larger_than_a_pipe_do_not_deadlock() -> None:
    # A chunk and its rows both larger than the pipe: writing the next chunk must not
    # wait for the helper while the helper waits for its result to be read.
    import signal

    def documents() -> Iterator[dict[str, Any]]:
        for index in range(800):
            expected = {f"f{k}": "x" * 200 + str(k) for k in range(20)}
            yield {"id": str(index), "expected": expected, "predicted": {**expected, "f0": "y"}}

    serial = report_text(compare_documents(documents(), keep_rows=True))
    compare_documents(documents(), keep_rows=True, workers=2)  # the helper starts
    _ready_helper()

    def hung(*_: Any) -> None:
        raise AssertionError("workers=2 hung on large chunks")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    try:
        assert report_text(compare_documents(documents(), keep_rows=True, workers=2)) == serial
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(
    "options",
    [{"discovered": "include"}, {"list_pairing": "strict"}, {"shape_mismatch": "count"}],
)
def test_helpers_compare_with_the_callers_settings(options: dict[str, Any]) -> None:
    # Each setting changes these figures: the helpers must be built with it too.
    records = _records(40, rng_seed=3)
    records[7]["expected"] = {"Account": ["A-1"]}
    records[20]["expected"] = {"Tags": "urgent"}
    counting = {"shape_mismatch": "count", **options}
    serial = compare_documents(records, SCHEMA, chunk_size=4, **counting)
    default = compare_documents(records, SCHEMA, chunk_size=4, shape_mismatch="count")
    if options != {"shape_mismatch": "count"}:
        assert report_text(serial) != report_text(default)
    assert serial.invalid_documents == 2
    parallel_batch = compare_documents(records, SCHEMA, chunk_size=4, workers=2, **counting)
    assert report_text(parallel_batch) == report_text(serial)
