"""The examples in docs/concepts.md and docs/configuration.md are true.

concepts.md: every Python block runs, and when a ```text block follows it, that block
is exactly what it prints. configuration.md: every block marked ``<!-- check: KIND -->``
is a valid file of that kind, so a renamed or removed key breaks the build.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from docevals_mlflow import DocumentSchema
from docevals_mlflow.evaluation.config import PipelineConfig
from docevals_mlflow.groundtruth.config import GenerationConfig
from docevals_mlflow.judges.config import PanelConfig, refuse_api_keys
from docevals_mlflow.judges.usage import PriceTable

DOCS = Path(__file__).resolve().parent.parent / "docs"
_BLOCK = re.compile(r"```(\w+)\n(.*?)```", flags=re.DOTALL)
_CHECKED = re.compile(r"<!-- check: (\w+) -->\n```(\w+)\n(.*?)```", flags=re.DOTALL)


def _python_blocks_with_output(text: str) -> list[tuple[str, str | None]]:
    """Each Python block, with the ```text block right after it (if any)."""
    blocks = [(match.group(1), match.group(2), match.end()) for match in _BLOCK.finditer(text)]
    found = []
    for index, (language, body, end) in enumerate(blocks):
        if language != "python":
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        adjacent = following is not None and text[end : text.index("```", end)].strip() == ""
        output = following[1] if adjacent and following and following[0] == "text" else None
        found.append((body, output))
    return found


CONCEPT_BLOCKS = _python_blocks_with_output((DOCS / "concepts.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("source", "output"), CONCEPT_BLOCKS, ids=lambda value: str(value)[:30])
def test_concepts_python_examples_print_what_the_page_says(source, output, capsys):
    exec(compile(source, str(DOCS / "concepts.md"), "exec"), {"__name__": "concepts"})
    printed = capsys.readouterr().out
    if output is not None:
        assert printed == output


def test_concepts_has_runnable_examples():
    assert len(CONCEPT_BLOCKS) >= 3
    assert all(output is not None for _, output in CONCEPT_BLOCKS)


def _load(language: str, body: str) -> Any:
    return json.loads(body) if language == "json" else yaml.safe_load(body)


def _schema(data: Any) -> None:
    schema = DocumentSchema.from_dict(data)
    assert schema.classes
    assert all(schema_class.fields for schema_class in schema.classes)


def _pipeline(data: Any) -> None:
    refuse_api_keys(data.get("metrics"), source="configuration.md", path="metrics")
    assert PipelineConfig.model_validate(data).entries()


def _panel(data: Any) -> None:
    refuse_api_keys(data, source="configuration.md")
    assert PanelConfig.model_validate(data).variants


def _generation(data: Any) -> None:
    refuse_api_keys(data, source="configuration.md")
    assert GenerationConfig.model_validate(data).generators


def _prices(data: Any) -> None:
    assert PriceTable.from_mapping(data).prices


CHECKS: dict[str, Callable[[Any], None]] = {
    "schema": _schema,
    "pipeline": _pipeline,
    "panel": _panel,
    "generation": _generation,
    "prices": _prices,
}
CONFIG_BLOCKS = _CHECKED.findall((DOCS / "configuration.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("kind", "language", "body"), CONFIG_BLOCKS, ids=lambda value: str(value)[:20]
)
def test_configuration_examples_are_valid(kind, language, body):
    CHECKS[kind](_load(language, body))


def test_every_kind_of_configuration_has_a_checked_example():
    assert {kind for kind, _, _ in CONFIG_BLOCKS} == set(CHECKS)


def test_the_json_schema_example_imports_as_documented():
    blocks = [body for kind, language, body in CONFIG_BLOCKS if language == "json"]
    (schema,) = [DocumentSchema.from_dict(json.loads(body)) for body in blocks]
    fields = schema.class_schema("Invoice").fields
    assert fields["issue_date"].date_order == "day_first"
    assert (fields["vendor"].threshold, fields["vendor"].fuzzy_scorer) == (0.85, "token_sort_ratio")
    line_items = fields["line_items"]
    assert line_items.match_threshold == 0.6
    amount = line_items.items.fields["amount"]
    assert (amount.method, amount.threshold, amount.relative_tolerance) == (
        "NUMERIC_EXACT",
        0.01,
        0.001,
    )
    assert line_items.items.fields["description"].weight == 2
    assert fields["tags"].items.method == "EXACT"


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = text.find("\n## ", start + len(heading))
    return text[start : following if following != -1 else len(text)]


def test_the_plugin_method_example_in_field_methods_works():
    """docs/field-methods.md "Your own method": the Python block builds a record the
    registry accepts, the YAML block is a schema using it, and the record says what the
    example package installed by the plugin tests says."""
    from docevals_mlflow import register_field_method
    from docevals_mlflow.fields.compare import compare_document
    from docevals_mlflow.fields.registry import unregister_field_method
    from tests.fields.plugin_example.docevals_jaccard import JACCARD as PACKAGED

    section = _section(
        (DOCS / "field-methods.md").read_text(encoding="utf-8"), "## Your own method"
    )
    blocks = _BLOCK.findall(section)
    python = [body for language, body in blocks if language == "python"]
    schema_yaml = next(body for language, body in blocks if language == "yaml")
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(python[0], str(DOCS / "field-methods.md"), "exec"), namespace)
    record = namespace["JACCARD"]
    same = ("name", "default_threshold", "threshold_kind", "identical_text_matches")
    assert {key: getattr(record, key) for key in same} == {
        key: getattr(PACKAGED, key) for key in same
    }
    assert [o.name for o in record.options] == [o.name for o in PACKAGED.options]
    assert record.explanation == PACKAGED.explanation
    register_field_method(record)
    try:
        schema = DocumentSchema.model_validate(yaml.safe_load(schema_yaml))
        result = compare_document(
            {"title": "Quarterly report", "body": "the cat sat", "tags": ["a b"]},
            {"title": "quarterly REPORT", "body": "the dog sat", "tags": ["a b"]},
            schema,
            document_class="Note",
        )
        assert result.rows is not None
        scores = {row[0]: row[4] for row in result.rows}
        assert scores["$.title"] == 1.0
        assert scores["$.body"] == 0.5  # {the, sat} of {the, cat, dog, sat}
    finally:
        unregister_field_method("JACCARD")
