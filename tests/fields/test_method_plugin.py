"""A third-party field method end to end: the example plugin in ``plugin_example/``
(JACCARD over word tokens) installed as pip would install it, found through its entry
point, used from a YAML schema by ``docevals fields`` with two workers, explained in the
Markdown report, its options validated and its version in the schema fingerprint. Also
methods registered by the program, and what goes wrong with plugins."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from docevals_mlflow import FieldMethod, SimpleComparator, register_field_method
from docevals_mlflow.core.fingerprints import sha256_json
from docevals_mlflow.errors import ConfigurationError, InputError
from docevals_mlflow.fields import parallel, processes, registry
from docevals_mlflow.fields.batch import compare_documents
from docevals_mlflow.fields.compare import compare_document
from docevals_mlflow.fields.importers import schema_from_idp_config, schema_from_json_schema
from docevals_mlflow.fields.report import FieldsReport
from docevals_mlflow.fields.schema import ClassSchema, DocumentSchema, FieldSpec
from tests.helpers import run, write_jsonl

PLUGIN = Path(__file__).resolve().parent / "plugin_example"
PACKAGE = "docevals_jaccard"

SCHEMA_YAML = """\
schema_id: notes
classes:
  - name: Note
    fields:
      title: {method: JACCARD, threshold: 0.6}
      body: {method: JACCARD, min_length: 3, lowercase: false}
      tags:
        items: {method: JACCARD, threshold: 0.6}
      total: {method: NUMERIC_EXACT, threshold: 0.01}
"""

Installer = Callable[..., Path]


def _forget_plugins() -> None:
    registry._PLUGINS.clear()
    registry._SOURCES.clear()
    registry._entry_points_loaded = False
    for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
        del sys.modules[name]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Installer]:
    """Installs the example plugin as pip would (its package next to a dist-info holding
    the entry points its pyproject.toml declares) in a folder put on ``sys.path``, with
    the registry starting over; ``version`` overrides the project's."""
    saved = (dict(registry._PLUGINS), dict(registry._SOURCES), registry._entry_points_loaded)
    _forget_plugins()

    def installer(version: str | None = None, *, target: Path | None = None) -> Path:
        project = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))
        meta = project["project"]
        site = target or tmp_path / f"site-{version or meta['version']}"
        dist = site / f"{meta['name'].replace('-', '_')}-{version or meta['version']}.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {version or meta['version']}\n",
            encoding="utf-8",
        )
        lines = []
        for group, entries in meta["entry-points"].items():
            lines.append(f"[{group}]")
            lines.extend(f"{name} = {value}" for name, value in entries.items())
        (dist / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if not (site / PACKAGE).exists():
            shutil.copytree(PLUGIN / PACKAGE, site / PACKAGE)
        monkeypatch.syspath_prepend(str(site))
        return site

    yield installer
    _forget_plugins()
    registry._PLUGINS.update(saved[0])
    registry._SOURCES.update(saved[1])
    registry._entry_points_loaded = saved[2]


@pytest.fixture
def jaccard(install: Installer) -> Path:
    return install()


def _text(batch: Any) -> str:
    return json.dumps(batch.to_report(), ensure_ascii=False, default=repr)


def _note(index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    expected = {
        "title": f"Quarterly report {index} for ACME",
        "body": f"Revenue grew in region {index % 7} and costs fell",
        "tags": ["finance", f"q{index % 4} results", "acme corp"],
        "total": f"{index}.50",
    }
    predicted = {
        "title": f"quarterly REPORT {index}" if index % 3 else f"Annual summary {index}",
        "body": f"revenue grew in Region {index % 5} and costs rose" if index % 2 else "",
        "tags": ["Acme Corp", "finance"] if index % 4 else ["finance", f"q{index % 4} results"],
        "total": f"${index}.50",
    }
    return expected, predicted


# --- found through the entry point ---------------------------------------------------------


def test_the_entry_point_provides_the_method_with_its_version(jaccard: Path) -> None:
    assert registry.registered_field_method("JACCARD") is None  # nothing loaded yet
    method = registry.get_field_method("JACCARD")
    assert method.package == "docevals-jaccard"
    assert method.version == "0.1.0"
    assert not method.builtin
    assert "JACCARD" in registry.field_method_names()
    assert registry.field_method_names()[: len(registry.BUILTIN_METHODS)] == tuple(
        method.name for method in registry.BUILTIN_METHODS
    )


def test_it_compares_word_tokens(jaccard: Path) -> None:
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "c", "fields": {"t": {"method": "JACCARD", "threshold": 0.6}}}]}
    )
    result = compare_document({"t": "ACME Corp Ltd"}, {"t": "acme corp"}, schema)
    (row,) = result.row_dicts()
    assert row["score"] == pytest.approx(2 / 3)
    assert row["outcome"] == "TP"
    assert row["method"] == "JACCARD (threshold: 0.6)"
    assert row["reason"] == "Similarity 0.67 >= threshold 0.6"
    low = compare_document({"t": "ACME Corp Ltd"}, {"t": "acme inc"}, schema).row_dicts()[0]
    assert (low["outcome"], low["score"]) == ("FD", 0.25)


def test_schema_options_are_validated_like_builtin_ones(jaccard: Path) -> None:
    def spec(**settings: Any) -> FieldSpec:
        return FieldSpec.model_validate(settings)

    configured = spec(method="JACCARD", min_length=2, lowercase=False)
    assert configured.option("min_length") == 2
    assert configured.option("lowercase") is False
    assert spec(method="JACCARD").option("min_length") == 1  # the option's default
    with pytest.raises(InputError, match=r"'min_length' of JACCARD: must be a whole number"):
        spec(method="JACCARD", min_length=0)
    with pytest.raises(InputError, match=r"'lowercase' of JACCARD: must be true or false"):
        spec(method="JACCARD", lowercase="yes")
    with pytest.raises(InputError, match=r"'min_length' applies to JACCARD fields only"):
        spec(method="FUZZY", min_length=2)
    with pytest.raises(InputError, match=r"'fuzzy_scorer' applies to FUZZY fields only"):
        spec(method="JACCARD", fuzzy_scorer="ratio")
    with pytest.raises(InputError, match=r"'min_length' applies to scalar fields only"):
        spec(items={"method": "JACCARD"}, min_length=2)
    with pytest.raises(InputError, match=r"min_lenght: Extra inputs are not permitted"):
        spec(method="JACCARD", min_lenght=2)
    with pytest.raises(InputError, match=r"'method_options' is not a schema key"):
        spec(method="JACCARD", method_options={"min_length": 2})
    with pytest.raises(InputError, match=r"threshold 1.5 for JACCARD must be in \[0, 1\]"):
        spec(method="JACCARD", threshold=1.5)


def test_options_are_written_where_they_were_read(jaccard: Path) -> None:
    # Dumped next to 'method', so a schema written out reads back the same.
    spec = FieldSpec.model_validate({"method": "JACCARD", "min_length": 3})
    assert spec.model_dump(exclude_none=True) == {
        "method": "JACCARD",
        "fuzzy_scorer": "ratio",
        "date_order": "month_first",
        "relative_tolerance": 0.0,
        "match_threshold": 0.5,
        "pairing": "stickler",
        "weight": 1.0,
        "min_length": 3,
    }
    assert FieldSpec.model_validate(spec.model_dump()) == spec
    assert FieldSpec.model_validate_json(spec.model_dump_json()) == spec
    assert FieldSpec(method="EXACT").model_dump() == FieldSpec(method="EXACT").model_dump(
        exclude={"method_options"}
    )


def test_the_fingerprint_names_the_plugin_version(install: Installer, tmp_path: Path) -> None:
    install()
    schema_path = tmp_path / "schema.yaml"
    schema_path.write_text(SCHEMA_YAML, encoding="utf-8")
    schema = DocumentSchema.load(schema_path)
    before = schema.sha256
    assert before == sha256_json(
        {
            "schema": schema,
            "methods": {"JACCARD": {"package": "docevals-jaccard", "version": "0.1.0"}},
        }
    )
    # The plugin upgraded: the same schema gets another fingerprint.
    _forget_plugins()
    install("0.2.0")
    assert registry.get_field_method("JACCARD").version == "0.2.0"
    assert DocumentSchema.load(schema_path) == schema
    assert schema.sha256 != before
    assert schema.sha256 == DocumentSchema.load(schema_path).sha256
    # A schema of built-in methods keeps the fingerprint it always had.
    plain = DocumentSchema(classes=[ClassSchema(name="c", fields={"a": FieldSpec()})])
    assert plain.sha256 == sha256_json(plain)


def test_the_importers_know_its_names_and_options(jaccard: Path) -> None:
    imported = schema_from_idp_config(
        {
            "classes": [
                {
                    "name": "Note",
                    "attributes": [
                        {"name": "title", "evaluation_method": "jaccard"},
                        {
                            "name": "body",
                            "evaluation_method": "JACCARD",
                            "evaluation_threshold": 0.4,
                        },
                    ],
                }
            ]
        }
    )
    fields = imported.classes[0].fields
    assert fields["title"] == FieldSpec(method="JACCARD")
    assert fields["body"] == FieldSpec(method="JACCARD", threshold=0.4)
    with pytest.raises(InputError, match=r"valid methods: EXACT, NUMERIC_EXACT, .*, JACCARD"):
        schema_from_idp_config(
            {"classes": [{"name": "c", "attributes": [{"name": "x", "evaluation_method": "JAC"}]}]}
        )
    from_json = schema_from_json_schema(
        {
            "properties": {
                "title": {
                    "type": "string",
                    "x-aws-stickler-comparator": "JaccardComparator",
                    "x-aws-stickler-threshold": 0.7,
                    "x-aws-stickler-comparator-config": {"min_length": 2},
                },
                "body": {"type": "string", "x-aws-stickler-comparator": "jaccard"},
            }
        }
    )
    fields = from_json.classes[0].fields
    assert fields["title"] == FieldSpec.model_validate(
        {"method": "JACCARD", "threshold": 0.7, "min_length": 2}
    )
    assert fields["body"].method == "JACCARD"
    with pytest.raises(InputError, match=r"\(or exact, .*, jaccard\)"):
        schema_from_json_schema(
            {"properties": {"t": {"type": "string", "x-aws-stickler-comparator": "Cosine"}}}
        )


# --- docevals fields, two workers, Markdown ------------------------------------------------


def test_docevals_fields_with_workers_and_markdown(
    jaccard: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    notes = [_note(index) for index in range(600)]  # three chunks: a helper takes some
    expected = write_jsonl(
        tmp_path / "expected.jsonl",
        [{"id": f"n{i}", "class": "Note", "data": e} for i, (e, _) in enumerate(notes)],
    )
    predicted = write_jsonl(
        tmp_path / "predicted.jsonl", [{"id": f"n{i}", "data": p} for i, (_, p) in enumerate(notes)]
    )
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA_YAML, encoding="utf-8")
    outputs = {}
    for workers in ("1", "2"):
        output, markdown = tmp_path / f"report-{workers}.json", tmp_path / f"report-{workers}.md"
        code, _out, err = run(
            capsys,
            "fields",
            "--schema", schema,
            "--expected", expected,
            "--predicted", predicted,
            "--output", output,
            "--markdown", markdown,
            "--workers", workers,
        )  # fmt: skip
        assert (code, err) == (0, "")
        outputs[workers] = (output.read_text(encoding="utf-8"), markdown.read_text("utf-8"))
    assert outputs["2"] == outputs["1"]
    text, markdown_text = outputs["2"]
    report = json.loads(text)
    FieldsReport.model_validate(report)
    assert report["schema"]["sha256"] == DocumentSchema.load(schema).sha256
    assert report["schema"]["methods"] == {
        "JACCARD": {
            "package": "docevals-jaccard",
            "version": "0.1.0",
            "explanation": registry.get_field_method("JACCARD").explanation,
        }
    }
    methods = {entry["template"]: entry["method"] for entry in report["fields"]}
    assert methods == {
        "$.title": "JACCARD (threshold: 0.6)",
        "$.body": "JACCARD (case-sensitive, threshold: 0.5)",
        "$.tags[]": "HUNGARIAN (comparator: JACCARD, threshold: 0.6)",
        "$.total": "NUMERIC_EXACT (tolerance: 0.01)",
    }
    assert report["overall"]["counts"]["tp"] > 0
    assert report["overall"]["counts"]["fd"] > 0
    explanations = markdown_text[markdown_text.index("## Method explanations") :]
    assert [
        line.split("**")[1] for line in explanations.splitlines() if line.startswith("- **")
    ] == [
        "NUMERIC_EXACT",
        "JACCARD",
        "HUNGARIAN",
    ]
    assert (
        "- **JACCARD**: the share of word tokens the two values have in common "
        "(|A ∩ B| / |A ∪ B|); a match when it reaches the threshold." in explanations
    )
    assert "| HUNGARIAN (comparator: JACCARD, threshold: 0.6) |" in markdown_text


def _ready_helper() -> None:
    """Start the helper of ``workers=2`` (and the fork server) and wait until it is
    ready, so that the next call hands it chunks (a short call may otherwise be
    compared by the parent alone while the helper starts)."""
    plain = [{"id": str(i), "expected": {"a": "x"}, "predicted": {"a": "x"}} for i in range(8)]
    compare_documents(plain, chunk_size=2, workers=2)
    (helper,) = processes.helpers(1)
    if helper.launcher is not None:
        helper.launcher.join()
    if not helper.started:
        assert helper.results.poll(60)
        assert helper.check_started()


def _compared_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the chunks the calling process compares itself (the rest go to helpers)."""
    here: list[int] = []
    compare_here = parallel.compare_here

    def counted(*args: Any) -> Any:
        here.append(1)
        return compare_here(*args)

    monkeypatch.setattr(parallel, "compare_here", counted)
    return here


def test_helpers_started_before_the_plugin_was_installed_use_it(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fork server and its helper start without the plugin on their path; the
    # parent's payload brings the path and the entry point along.
    _ready_helper()
    request.getfixturevalue("jaccard")
    schema = DocumentSchema.model_validate(
        {
            "classes": [
                {
                    "name": "Note",
                    "fields": {
                        "title": {"method": "JACCARD", "threshold": 0.6},
                        "body": {"method": "JACCARD", "min_length": 3},
                        "tags": {"items": {"method": "JACCARD"}},
                    },
                }
            ]
        }
    )
    pairs = [
        {"id": str(i), "class": "Note", "expected": expected, "predicted": predicted}
        for i, (expected, predicted) in enumerate(map(_note, range(40)))
    ]
    serial = compare_documents(pairs, schema, chunk_size=2)
    here = _compared_here(monkeypatch)
    both = compare_documents(pairs, schema, chunk_size=2, workers=2)
    assert _text(both) == _text(serial)
    assert len(here) < 20  # the helper compared some of the 20 chunks


# --- methods registered by the program ----------------------------------------------------


class Initials(SimpleComparator):
    """Scores 1 when the values' initials agree."""

    def prepare(self, value: Any) -> str:
        return "".join(word[0] for word in str(value).upper().split())

    def score(self, expected: str, predicted: str) -> float:
        return 1.0 if expected == predicted else 0.0


def initials(spec: FieldSpec) -> Initials:
    return Initials("INITIALS", spec.effective_threshold)


INITIALS = FieldMethod(
    name="INITIALS",
    default_threshold=1.0,
    factory=initials,
    version="7",
    explanation="the initials of the words agree.",
)


@pytest.fixture
def registered(install: Installer) -> FieldMethod:
    # `install` for its clean registry; no plugin is installed here.
    return register_field_method(INITIALS)


def test_a_registered_method_works_with_workers(
    registered: FieldMethod, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert register_field_method(INITIALS) is registered  # again: harmless
    _ready_helper()
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "c", "fields": {"n": {"method": "INITIALS"}}}]}
    )
    pairs = [
        {
            "id": str(i),
            "expected": {"n": "Grace Brewster Hopper"},
            "predicted": {"n": f"G B {'HX'[i % 2]}"},
        }
        for i in range(12)
    ]
    serial = compare_documents(pairs, schema, chunk_size=2)
    assert serial.counts.as_dict()["tp"] == 6
    here = _compared_here(monkeypatch)
    both = compare_documents(pairs, schema, chunk_size=2, workers=2)
    assert _text(both) == _text(serial)
    assert len(here) < 6  # the helper compared some of the 6 chunks
    assert both.to_report()["schema"]["methods"] == {
        "INITIALS": {"package": None, "version": "7", "explanation": INITIALS.explanation}
    }


def test_a_method_workers_cannot_import_is_refused_up_front(install: Installer) -> None:
    def local(spec: FieldSpec) -> Initials:
        return Initials("LOCAL", spec.effective_threshold)

    register_field_method(
        FieldMethod(name="LOCAL", default_threshold=1.0, factory=local, explanation="local.")
    )
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "c", "fields": {"n": {"method": "LOCAL"}}}]}
    )
    pairs = [{"id": "1", "expected": {"n": "a"}, "predicted": {"n": "a"}}]
    assert compare_documents(pairs, schema).counts.as_dict()["tp"] == 1
    with pytest.raises(ConfigurationError, match="LOCAL cannot be used by worker processes"):
        compare_documents(pairs, schema, workers=2)


def test_names_are_taken_once(registered: FieldMethod) -> None:
    other = FieldMethod(
        name="INITIALS", default_threshold=0.5, factory=initials, explanation="other."
    )
    with pytest.raises(ConfigurationError, match="INITIALS is registered twice"):
        register_field_method(other)
    assert register_field_method(other, replace=True) is other
    registry.unregister_field_method("INITIALS")
    with pytest.raises(
        InputError, match=r"Input should be 'EXACT', .* or 'LLM' \(got 'INITIALS'\)"
    ):
        FieldSpec(method="INITIALS")


def test_a_comparator_for_another_method_is_refused(install: Installer) -> None:
    register_field_method(
        FieldMethod(name="MISNAMED", default_threshold=1.0, factory=initials, explanation="x.")
    )
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "c", "fields": {"n": {"method": "MISNAMED"}}}]}
    )
    with pytest.raises(ConfigurationError, match="built a comparator whose method is 'INITIALS'"):
        compare_document({"n": "a"}, {"n": "a"}, schema)


def test_a_broken_plugin_is_named(install: Installer, tmp_path: Path) -> None:
    site = install(target=tmp_path / "broken")
    (site / PACKAGE / "__init__.py").write_text("raise RuntimeError('no luck')\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        FieldSpec(method="JACCARD")
    message = str(raised.value)
    assert "field method plugin JACCARD = docevals_jaccard:JACCARD" in message
    assert "(from docevals-jaccard 0.1.0) could not be loaded: RuntimeError: no luck" in message
    with pytest.raises(ConfigurationError, match="could not be loaded"):
        registry.load_field_method_plugins()


def test_builtin_schemas_never_load_plugins(install: Installer, tmp_path: Path) -> None:
    site = install(target=tmp_path / "broken")
    (site / PACKAGE / "__init__.py").write_text("raise RuntimeError('no luck')\n", encoding="utf-8")
    schema = DocumentSchema.model_validate(
        {"classes": [{"name": "c", "fields": {"a": {"method": "FUZZY", "threshold": 0.8}}}]}
    )
    assert compare_document({"a": "x"}, {"a": "x"}, schema).counts.as_dict()["tp"] == 1
    assert schema.sha256 == sha256_json(schema)
    assert not registry._entry_points_loaded
