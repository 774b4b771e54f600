"""ask_structured: the malformed -> one repair -> give up logic, for any answer shape."""

import asyncio
import json

import pytest

from docevals_mlflow.judges.judge import AdapterReply, ask_structured
from docevals_mlflow.judges.output import OutputParseError
from docevals_mlflow.judges.request import JudgeRequest
from docevals_mlflow.judges.testing import ScriptedAdapter

REQUEST = JudgeRequest(instructions="Count.", task={"n": 1})


def parse_count(value):
    """A toy answer shape: {"count": <int>}."""
    text = value if isinstance(value, str) else json.dumps(value)
    try:
        data = json.loads(text) if isinstance(value, str) else value
    except json.JSONDecodeError as exc:
        raise OutputParseError(f"not valid JSON: {exc.msg}", text) from None
    if not isinstance(data, dict) or not isinstance(data.get("count"), int):
        raise OutputParseError("count must be an integer", text)
    return data["count"]


def ask(respond, **options):
    adapter = ScriptedAdapter(respond)
    answer = asyncio.run(ask_structured(adapter, REQUEST, parse_count, **options))
    return adapter, answer


def test_a_good_answer_is_parsed_once():
    adapter, answer = ask(lambda request, repair: {"count": 3})
    assert (answer.value, answer.status, answer.attempts, adapter.calls) == (3, "ok", 1, 1)
    assert answer.usable
    assert answer.usage.requests == 1


def test_one_repair_with_what_to_keep():
    hints = []

    def respond(request, repair):
        hints.append(repair)
        return '{"count": "three"}' if repair is None else '{"count": 3}'

    _, answer = ask(respond, keep="the number you counted")
    assert (answer.value, answer.status, answer.attempts) == (3, "repaired", 2)
    assert answer.usage.requests == 2
    assert hints[1].previous == '{"count": "three"}'
    assert "count must be an integer" in hints[1].message()
    assert hints[1].message().endswith("keeping the number you counted.")


def test_malformed_twice_gives_up_with_the_text():
    _, answer = ask(lambda request, repair: "nope" if repair is None else "still nope")
    assert answer.status == "malformed"
    assert answer.value is None
    assert answer.raw_text == "still nope"
    assert "after one repair attempt" in (answer.error or "")
    assert not answer.usable


@pytest.mark.parametrize(
    ("reply", "status", "message"),
    [
        (AdapterReply(status="refused", refusal="policy"), "refused", "refused: policy"),
        (AdapterReply(text='{"cou', status="truncated"), "truncated", "cut off"),
    ],
)
def test_refusals_and_truncation_are_never_parsed(reply, status, message):
    adapter, answer = ask(lambda request, repair: reply)
    assert answer.status == status
    assert message in (answer.error or "")
    assert adapter.calls == 1


def test_adapter_errors_become_results():
    def respond(request, repair):
        raise RuntimeError("connection reset")

    _, answer = ask(respond)
    assert answer.status == "error"
    assert answer.error == "RuntimeError: connection reset"

    def fails_on_repair(request, repair):
        if repair is None:
            return "garbage"
        raise RuntimeError("gone")

    _, answer = ask(fails_on_repair)
    assert answer.status == "error"
    assert answer.error == "repair attempt failed: RuntimeError: gone"
    assert answer.raw_text == "garbage"
    assert answer.attempts == 2
