import pytest

from docevals_mlflow.errors import (
    CheckpointWarning,
    ConfigurationError,
    DocEvalsError,
    DocEvalsWarning,
    InputError,
    InputFileNotFoundError,
    MetricError,
    OutputError,
    PipelineDefinitionError,
    ProviderError,
)


@pytest.mark.parametrize(
    ("error_type", "builtins"),
    [
        (InputError, (ValueError,)),
        (InputFileNotFoundError, (FileNotFoundError, OSError)),
        (OutputError, (OSError,)),
        (MetricError, (RuntimeError,)),
        (ConfigurationError, (ValueError,)),
        (PipelineDefinitionError, (InputError, ValueError)),
    ],
)
def test_errors_are_docevals_errors_and_builtins(error_type, builtins):
    assert issubclass(error_type, DocEvalsError)
    error = error_type("broken", source="a.csv")
    for builtin in builtins:
        assert isinstance(error, builtin)
        with pytest.raises(builtin, match=r"^a\.csv: broken$"):
            raise error_type("broken", source="a.csv")
    assert str(error) == "a.csv: broken"


def test_message_includes_all_context():
    error = InputError(
        "bad value",
        source="ref.csv",
        record=3,
        stage="ocr",
        path="$.total",
        expected="a number",
    )
    assert str(error) == "ref.csv, record 3, stage 'ocr', at $.total: bad value (expected a number)"
    assert error.message == "bad value"
    assert error.record == "3"
    assert error.context() == {
        "type": "InputError",
        "message": "bad value",
        "source": "ref.csv",
        "record": "3",
        "path": "$.total",
        "stage": "ocr",
        "expected": "a number",
    }


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({}, "plain"),
        ({"expected": "x"}, "plain (expected x)"),
        ({"record": "row 2"}, "record row 2: plain"),
        ({"stage": "judge"}, "stage 'judge': plain"),
        ({"path": "$['a.b']"}, "at $['a.b']: plain"),
        ({"record": 0}, "record 0: plain"),
    ],
)
def test_message_with_partial_context(fields, text):
    assert str(DocEvalsError("plain", **fields)) == text


def test_context_of_bare_error():
    assert PipelineDefinitionError("cycle", stage="a").context() == {
        "type": "PipelineDefinitionError",
        "message": "cycle",
        "source": None,
        "record": None,
        "path": None,
        "stage": "a",
        "expected": None,
    }


def test_warnings_hierarchy():
    assert issubclass(DocEvalsWarning, UserWarning)
    assert issubclass(CheckpointWarning, DocEvalsWarning)


def test_located_fills_missing_context_and_keeps_a_subclasses_details():
    error = ProviderError("refused", provider="openai", status_code=429, attempts=3)
    error.usage = "usage"
    located = error.located(source="case.json", record=2)
    assert isinstance(located, ProviderError)
    assert str(located) == "case.json, record 2: refused"
    assert (located.provider, located.status_code, located.attempts, located.usage) == (
        "openai",
        429,
        3,
        "usage",
    )
    assert located.located(source="other.json") is located  # known context is kept
