"""Pipeline configuration files: ``load_pipeline_config``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from docevals_mlflow import (
    ConfigurationError,
    EvaluationCase,
    ExactStructuredMetric,
    FunctionMetric,
    InputError,
    InputFileNotFoundError,
    PipelineCase,
    PipelineDefinitionError,
    PipelineEvaluator,
)
from docevals_mlflow.evaluation.config import load_pipeline_config
from tests.conftest import ModuleWriter
from tests.helpers import write_text

CHECKS_SOURCE = """\
def total_ok(case):
    return case.prediction["total"] == sum(case.input_data["items"])


def ratio(case):
    return 0.75
"""

EXACT_DEFAULTS = {
    "relative_tolerance": 1e-6,
    "absolute_tolerance": 1e-6,
    "case_sensitive": False,
    "fail_on_unexpected": False,
}


def config_error(path: Path, text: str) -> InputError:
    write_text(path, text)
    with pytest.raises(InputError) as raised:
        load_pipeline_config(path)
    return raised.value


# ----------------------------------------------------------------- loading a pipeline


def test_loads_yaml_into_pipeline_and_evaluator(tmp_path: Path) -> None:
    write_text(tmp_path / "outputs" / "extract.json", '{"items": [2, 5]}')
    write_text(tmp_path / "inputs" / "route-input.json", '{"total": 7}')
    write_text(tmp_path / "truth" / "items.csv", "path,expected\n$.items[0],2\n$.items[1],4\n")
    config = write_text(
        tmp_path / "pipeline.yaml",
        """\
        pipeline_id: invoice-7
        metadata: {batch: 12}
        stages:
          - stage_id: extract
            operation: parse_items
            prediction_file: outputs/extract.json
            references:
              - {path: truth/items.csv, authority: ground_truth}
          - stage_id: total
            case_id: invoice-7-total
            operation: sum_total
            input_from: extract
            prediction: {total: 7}
            depends_on: [extract]
          - stage_id: route
            input_file: inputs/route-input.json
            prediction: {queue: approval}
            prediction_name: queue
            depends_on: [total]
        """,
    )
    pipeline, evaluator = load_pipeline_config(config)
    assert isinstance(pipeline, PipelineCase)
    assert isinstance(evaluator, PipelineEvaluator)
    assert pipeline.pipeline_id == "invoice-7"
    assert pipeline.metadata == {"batch": 12}
    extract, total, route = pipeline.stages
    assert all(isinstance(stage, EvaluationCase) for stage in pipeline.stages)
    assert [s.stage_id for s in pipeline.stages] == ["extract", "total", "route"]
    assert [s.case_id for s in pipeline.stages] == ["invoice-7", "invoice-7-total", "invoice-7"]
    assert [s.operation for s in pipeline.stages] == ["parse_items", "sum_total", "generic"]
    assert extract.prediction == {"items": [2, 5]}
    assert extract.input_data is None
    assert total.input_data == {"items": [2, 5]}
    assert total.depends_on == ["extract"]
    assert route.input_data == {"total": 7}
    assert route.prediction_name == "queue"
    [reference] = extract.references
    assert reference.id == "items"
    assert reference.path == str(tmp_path / "truth" / "items.csv")
    assert (reference.kind, reference.authority, reference.content_format) == (
        "structured",
        "ground_truth",
        "path_table",
    )
    assert reference.content == [
        {"path": "$.items[0]", "expected": "2"},
        {"path": "$.items[1]", "expected": "4"},
    ]


def test_json_config_is_equivalent_to_yaml(tmp_path: Path) -> None:
    data = {
        "pipeline_id": "p",
        "stages": [
            {"stage_id": "a", "input_data": {"x": 1}, "prediction": {"y": 2}},
            {"stage_id": "b", "input_from": "a", "prediction": {"z": 3}, "depends_on": ["a"]},
        ],
    }
    json_config = write_text(tmp_path / "p.json", json.dumps(data))
    yaml_config = write_text(
        tmp_path / "p.yml",
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {y: 2}}
          - {stage_id: b, input_from: a, prediction: {z: 3}, depends_on: [a]}
        """,
    )
    from_json, _ = load_pipeline_config(json_config)
    from_yaml, _ = load_pipeline_config(str(yaml_config))
    assert from_json == from_yaml
    assert from_json.stage("b").input_data == {"y": 2}


def test_relative_config_path_resolves_against_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_text(tmp_path / "configs" / "truth.json", '{"x": 1}')
    write_text(
        tmp_path / "configs" / "p.yaml",
        """\
        pipeline_id: p
        stages:
          - stage_id: a
            prediction: {x: 1}
            references: [{path: truth.json, authority: ground_truth, id: t}]
        """,
    )
    monkeypatch.chdir(tmp_path)
    pipeline, evaluator = load_pipeline_config("configs/p.yaml")
    [reference] = pipeline.stage("a").references
    assert reference.path == str(Path("configs") / "truth.json")
    assert (reference.id, reference.content) == ("t", {"x": 1})
    assert evaluator.evaluate(pipeline).verdict == "pass"


# --------------------------------------------------------------------- inline values


def test_inline_value_references(tmp_path: Path) -> None:
    config = write_text(
        tmp_path / "p.yaml",
        """\
        pipeline_id: p
        stages:
          - stage_id: a
            prediction: {queue: approval, note: urgent}
            references:
              - {id: route-truth, value: {queue: approval}, authority: ground_truth}
              - {id: notes, value: "Routed by total.", authority: evidence}
              - id: table
                authority: generated
                comparison_mode: exact
                metadata: {annotator: bot}
                value:
                  - {path: $.note, expected: urgent}
        """,
    )
    pipeline, evaluator = load_pipeline_config(config)
    structured, text, table = pipeline.stage("a").references
    assert (structured.path, structured.kind, structured.content_format) == (
        "inline://route-truth",
        "structured",
        "json",
    )
    assert structured.is_inline
    assert structured.content == {"queue": "approval"}
    assert (text.path, text.kind, text.content, text.authority) == (
        "inline://notes",
        "text",
        "Routed by total.",
        "evidence",
    )
    assert (table.content_format, table.comparison_mode, table.metadata) == (
        "path_table",
        "exact",
        {"annotator": "bot"},
    )
    report = evaluator.evaluate(pipeline)
    result = report.stage("a").metric("exact_structured")
    assert result.verdict == "pass"
    assert result.details["references"] == ["route-truth"]


def test_inline_value_needs_an_id(tmp_path: Path) -> None:
    config = tmp_path / "p.yaml"
    error = config_error(
        config,
        """\
        pipeline_id: p
        stages:
          - stage_id: a
            prediction: {x: 1}
            references: [{value: {x: 1}, authority: ground_truth}]
        """,
    )
    assert error.source == str(config)
    assert "an inline 'value' reference needs an 'id'" in str(error)


def test_reference_needs_exactly_one_of_path_and_value(tmp_path: Path) -> None:
    write_text(tmp_path / "t.json", '{"x": 1}')
    config = tmp_path / "p.yaml"
    error = config_error(
        config,
        """\
        pipeline_id: p
        stages:
          - stage_id: a
            prediction: {x: 1}
            references: [{id: t, path: t.json, value: {x: 1}, authority: ground_truth}]
        """,
    )
    assert error.source == str(config)
    assert "give exactly one of 'path' or 'value'" in str(error)


# --------------------------------------------------------------------- metric choice


def test_metrics_by_stage_then_operation_then_default(
    tmp_path: Path, checks_module: ModuleWriter
) -> None:
    module = checks_module(tmp_path, CHECKS_SOURCE)
    config = write_text(
        tmp_path / "p.yaml",
        f"""\
        pipeline_id: p
        metrics:
          default:
            - {{type: exact, name: fallback}}
          operations:
            sum_total:
              - {{type: function, callable: "{module}:total_ok"}}
            score:
              - {{type: function, callable: "{module}:ratio", name: share,
                  score_name: share_ok, threshold: 0.5}}
          stages:
            special:
              - {{type: exact, name: strict, case_sensitive: true, absolute_tolerance: 0.5,
                  relative_tolerance: 0, fail_on_unexpected: true}}
        stages:
          - {{stage_id: plain, input_data: {{items: [1]}}, prediction: {{x: 1}}}}
          - {{stage_id: total, operation: sum_total, input_data: {{items: [3, 4]}},
              prediction: {{total: 7}}}}
          - {{stage_id: special, operation: sum_total, input_data: {{items: [1]}},
              prediction: {{total: 1}}}}
          - {{stage_id: scored, operation: score, input_data: {{a: 1}}, prediction: {{b: 1}}}}
        """,
    )
    pipeline, evaluator = load_pipeline_config(config)
    chosen = {
        stage.stage_id: evaluator.metrics_for(stage) for stage in pipeline.stages
    }  # stage id beats operation, operation beats default
    assert {key: [m.name for m in value] for key, value in chosen.items()} == {
        "plain": ["fallback"],
        "total": ["total_ok"],
        "special": ["strict"],
        "scored": ["share"],
    }
    [fallback] = chosen["plain"]
    assert isinstance(fallback, ExactStructuredMetric)
    assert fallback.config() == EXACT_DEFAULTS
    [strict] = chosen["special"]
    assert isinstance(strict, ExactStructuredMetric)
    assert strict.config() == {
        "relative_tolerance": 0.0,
        "absolute_tolerance": 0.5,
        "case_sensitive": True,
        "fail_on_unexpected": True,
    }
    [total_ok] = chosen["total"]
    assert isinstance(total_ok, FunctionMetric)
    assert total_ok.fn is sys.modules[module].total_ok
    assert (total_ok.score_name, total_ok.threshold) == ("score", None)
    [share] = chosen["scored"]
    assert isinstance(share, FunctionMetric)
    assert (share.score_name, share.threshold) == ("share_ok", 0.5)

    report = evaluator.evaluate(pipeline)
    assert [(s.stage_id, s.verdict) for s in report.stage_reports] == [
        ("plain", "not_applicable"),
        ("total", "pass"),
        ("special", "not_applicable"),
        ("scored", "pass"),
    ]
    assert report.stage("scored").metric("share").scores == {"share_ok": 0.75}


def test_default_metric_is_exact(tmp_path: Path) -> None:
    config = write_text(
        tmp_path / "p.yaml",
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, operation: anything, input_data: {x: 1}, prediction: {x: 1}}
        """,
    )
    pipeline, evaluator = load_pipeline_config(config)
    [metric] = evaluator.metrics_for(pipeline.stage("a"))
    assert isinstance(metric, ExactStructuredMetric)
    assert metric.name == "exact_structured"
    assert metric.config() == EXACT_DEFAULTS
    assert evaluator.stage_metrics == {}
    assert evaluator.operation_metrics == {}


# ------------------------------------------------------------------------- errors


def test_missing_config_file(tmp_path: Path) -> None:
    config = tmp_path / "absent.yaml"
    with pytest.raises(InputFileNotFoundError) as raised:
        load_pipeline_config(config)
    assert isinstance(raised.value, FileNotFoundError)
    assert raised.value.source == str(config)


def test_malformed_json_config_names_the_line(tmp_path: Path) -> None:
    config = tmp_path / "p.json"
    error = config_error(config, '{"pipeline_id": "p",\n "stages": [,]}\n')
    assert error.source == str(config)
    assert error.message == "malformed JSON at line 2, column 13: Expecting value"


def test_malformed_yaml_config_names_the_line(tmp_path: Path) -> None:
    config = tmp_path / "p.yaml"
    error = config_error(config, "pipeline_id: p\nstages: x\n  bad: y\n")
    assert error.source == str(config)
    assert error.message.startswith(
        "malformed YAML at line 3, column 6: mapping values are not allowed here"
    )


def test_config_must_be_a_mapping(tmp_path: Path) -> None:
    config = tmp_path / "p.yaml"
    error = config_error(config, "- 1\n- 2\n")
    assert error.source == str(config)
    assert error.message.startswith("invalid PipelineConfig: Input should be a valid dictionary")


@pytest.mark.parametrize("text", ["", "# nothing yet\n"], ids=["empty", "comment"])
def test_empty_config_is_refused(tmp_path: Path, text: str) -> None:
    config = tmp_path / "p.yaml"
    error = config_error(config, text)
    assert error.source == str(config)
    assert error.message == "the file is empty (no YAML document)"


STAGE_ERRORS = {
    "unknown-dependency": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
          - {stage_id: b, input_data: {x: 1}, prediction: {x: 1}, depends_on: [ghost]}
        """,
        PipelineDefinitionError,
        "b",
        "pipeline 'p': unknown dependency 'ghost'",
    ),
    "self-dependency": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}, depends_on: [a]}
        """,
        PipelineDefinitionError,
        "a",
        "pipeline 'p': stage depends on itself",
    ),
    "cycle": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: c, input_data: {x: 1}, prediction: {x: 1}}
          - {stage_id: b, input_data: {x: 1}, prediction: {x: 1}, depends_on: [a]}
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}, depends_on: [b]}
        """,
        PipelineDefinitionError,
        "a",
        "pipeline 'p': dependency cycle among stages 'a', 'b'",
    ),
    "duplicate": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
          - {stage_id: a, input_data: {x: 2}, prediction: {x: 2}}
        """,
        PipelineDefinitionError,
        "a",
        "pipeline 'p': duplicate stage id",
    ),
    "input-from-unknown": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_from: nobody, prediction: {x: 1}}
        """,
        InputError,
        "a",
        "input_from names unknown stage 'nobody'",
    ),
    "input-from-later": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_from: b, prediction: {x: 1}, depends_on: [b]}
          - {stage_id: b, input_data: {x: 1}, prediction: {x: 1}}
        """,
        InputError,
        "a",
        "input_from 'b' must name a stage listed earlier in the file",
    ),
    "nothing-to-compare": (
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, prediction: {x: 1}}
        """,
        InputError,
        "a",
        "case 'p' stage 'a': needs references or input_data to evaluate against",
    ),
}


@pytest.mark.parametrize("name", list(STAGE_ERRORS))
def test_stage_errors_carry_source_and_stage(tmp_path: Path, name: str) -> None:
    text, error_type, stage, message = STAGE_ERRORS[name]
    config = tmp_path / "pipeline.yaml"
    error = config_error(config, text)
    assert type(error) is error_type
    assert error.source == str(config)
    assert error.stage == stage
    assert message in error.message
    assert str(error).startswith(f"{config}, stage {stage!r}: ")


def test_missing_prediction_file_names_file_and_stage(tmp_path: Path) -> None:
    config = write_text(
        tmp_path / "p.yaml",
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
          - {stage_id: b, input_data: {x: 1}, prediction_file: out/b.json}
        """,
    )
    with pytest.raises(InputFileNotFoundError) as raised:
        load_pipeline_config(config)
    assert raised.value.source == str(tmp_path / "out" / "b.json")
    assert raised.value.stage == "b"


def test_missing_reference_file_names_file_and_stage(tmp_path: Path) -> None:
    config = write_text(
        tmp_path / "p.yaml",
        """\
        pipeline_id: p
        stages:
          - stage_id: a
            prediction: {x: 1}
            references: [{path: truth/missing.csv, authority: ground_truth}]
        """,
    )
    with pytest.raises(InputFileNotFoundError) as raised:
        load_pipeline_config(config)
    assert raised.value.source == str(tmp_path / "truth" / "missing.csv")
    assert raised.value.stage == "a"


def test_prediction_and_prediction_file_together(tmp_path: Path) -> None:
    write_text(tmp_path / "a.json", '{"x": 1}')
    config = tmp_path / "p.yaml"
    error = config_error(
        config,
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}, prediction_file: a.json}
        """,
    )
    assert error.source == str(config)
    assert "stage 'a': give exactly one of prediction or prediction_file" in error.message


def test_two_input_sources_are_rejected(tmp_path: Path) -> None:
    config = tmp_path / "p.yaml"
    error = config_error(
        config,
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
          - {stage_id: b, input_data: {x: 1}, input_from: a, prediction: {x: 1}}
        """,
    )
    assert error.source == str(config)
    assert "stage 'b': give at most one of input_data, input_from" in error.message


def test_unknown_stage_field_error_says_which_stage(tmp_path: Path) -> None:
    # Documented: every problem names the file "and, where it applies, the stage".
    config = tmp_path / "p.yaml"
    error = config_error(
        config,
        """\
        pipeline_id: p
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
          - {stage_id: b, input_data: {x: 1}, prediction: {x: 1}, colour: red}
        """,
    )
    assert error.source == str(config)
    assert error.stage == "b"
    assert error.path == "stages[1].colour"
    assert "colour: Extra inputs are not permitted (got 'red')" in error.message


def test_unknown_top_level_field_is_rejected(tmp_path: Path) -> None:
    config = tmp_path / "p.yaml"
    error = config_error(
        config,
        """\
        pipeline_id: p
        stagse: []
        stages:
          - {stage_id: a, input_data: {x: 1}, prediction: {x: 1}}
        """,
    )
    assert error.source == str(config)
    assert error.path == "stagse"


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("{type: fuzzy}", "type: Input should be 'exact' or 'function' (got 'fuzzy')"),
        ("{type: function}", "a function metric needs 'callable': 'module:function'"),
        ("{type: exact, callable: 'm:f'}", "'callable' only applies to type 'function'"),
        ("{type: exact, relative_tolerance: -1}", "relative_tolerance"),
    ],
    ids=["unknown-type", "no-callable", "callable-on-exact", "negative-tolerance"],
)
def test_metric_config_errors(tmp_path: Path, metric: str, message: str) -> None:
    config = tmp_path / "p.yaml"
    error = config_error(
        config,
        f"""\
        pipeline_id: p
        metrics: {{default: [{metric}]}}
        stages:
          - {{stage_id: a, input_data: {{x: 1}}, prediction: {{x: 1}}}}
        """,
    )
    assert error.source == str(config)
    assert error.stage is None
    assert message in error.message


@pytest.mark.parametrize(
    ("target", "message", "expected"),
    [
        ("no_such_module_4d1e:check", "cannot import 'no_such_module_4d1e'", None),
        ("just_a_module", "bad callable 'just_a_module'", "'module:function'"),
        (":check", "bad callable ':check'", "'module:function'"),
    ],
    ids=["no-module", "no-colon", "no-module-name"],
)
def test_callable_errors(tmp_path: Path, target: str, message: str, expected: str | None) -> None:
    config = tmp_path / "p.yaml"
    error = config_error(
        config,
        f"""\
        pipeline_id: p
        metrics: {{default: [{{type: function, callable: "{target}"}}]}}
        stages:
          - {{stage_id: a, input_data: {{x: 1}}, prediction: {{x: 1}}}}
        """,
    )
    assert error.source == str(config)
    assert message in error.message
    assert error.expected == expected


def test_callable_attribute_errors(tmp_path: Path, checks_module: ModuleWriter) -> None:
    module = checks_module(tmp_path, "NOT_CALLABLE = 3\n")
    for attribute, message in [
        ("missing", f"module {module!r} has no attribute 'missing'"),
        ("NOT_CALLABLE", f"'{module}:NOT_CALLABLE' is not callable"),
    ]:
        config = tmp_path / f"p-{attribute}.yaml"
        error = config_error(
            config,
            f"""\
            pipeline_id: p
            metrics: {{default: [{{type: function, callable: "{module}:{attribute}"}}]}}
            stages:
              - {{stage_id: a, input_data: {{x: 1}}, prediction: {{x: 1}}}}
            """,
        )
        assert error.source == str(config)
        assert error.path == f"{module}:{attribute}"
        assert error.message == message


@pytest.fixture(autouse=True)
def _no_sys_path_leaks(isolated_sys_path: None) -> None:
    """Every test here may import user modules from a config folder."""


def test_files_sharing_a_stem_are_named_by_file_name(tmp_path: Path) -> None:
    (tmp_path / "invoice-7.txt").write_text("Total 5.00", encoding="utf-8")
    (tmp_path / "invoice-7.json").write_text('{"total": 5}', encoding="utf-8")
    (tmp_path / "notes.txt").write_text("checked", encoding="utf-8")
    config = write_text(
        tmp_path / "p.yaml",
        """\
        pipeline_id: p
        stages:
          - stage_id: a
            prediction: {total: 5}
            references:
              - {path: invoice-7.txt, authority: evidence}
              - {path: invoice-7.json, authority: ground_truth}
              - {path: notes.txt, authority: evidence}
        """,
    )
    pipeline, _ = load_pipeline_config(config)
    ids = [reference.id for reference in pipeline.stage("a").references]
    assert ids == ["invoice-7.txt", "invoice-7.json", "notes"]


def test_two_metrics_of_one_name_are_refused(tmp_path: Path) -> None:
    config = write_text(
        tmp_path / "p.yaml",
        """\
        pipeline_id: p
        metrics:
          default: [{type: exact}, {type: exact, case_sensitive: true}]
        stages:
          - {stage_id: a, prediction: {x: 1}, input_data: {x: 1}}
        """,
    )
    with pytest.raises(
        ConfigurationError, match=r"metric names repeat \(exact_structured\)"
    ) as raised:
        load_pipeline_config(config)
    assert raised.value.source == str(config)


def test_field_metrics_use_a_schema_file(tmp_path: Path) -> None:
    write_text(
        tmp_path / "schema.yaml",
        """\
        classes:
          - name: Invoice
            fields:
              vendor: {method: FUZZY, threshold: 0.8}
              lines:
                items:
                  fields:
                    sku: {method: EXACT}
        """,
    )
    config = write_text(
        tmp_path / "p.yaml",
        """\
        pipeline_id: p
        metrics:
          default:
            - {type: field, schema: schema.yaml, min_scores: {f1: 0.9}}
        stages:
          - stage_id: extract
            prediction: {vendor: "ACME Corp.", lines: [{sku: B}, {sku: A}]}
            references:
              - id: truth
                authority: ground_truth
                value: {vendor: "ACME Corp", lines: [{sku: A}, {sku: B}]}
        """,
    )
    pipeline, evaluator = load_pipeline_config(config)
    result = evaluator.evaluate(pipeline).stage("extract").metric("fields")
    assert result.verdict == "pass"  # fuzzy vendor, list matched regardless of order


def test_field_options_only_apply_to_field_metrics(tmp_path: Path) -> None:
    config = write_text(
        tmp_path / "p.yaml",
        """\
        pipeline_id: p
        metrics:
          default: [{type: exact, schema: schema.yaml}]
        stages:
          - {stage_id: a, prediction: {x: 1}, input_data: {x: 1}}
        """,
    )
    with pytest.raises(InputError, match="'schema' only apply to type 'field'"):
        load_pipeline_config(config)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ({"type": "function", "callable": "m:f", "threshold": True}, "not the boolean true"),
        ({"type": "function", "callable": "m:f", "threshold": float("nan")}, "threshold"),
        ({"type": "exact", "absolute_tolerance": "1e999"}, "absolute_tolerance"),
        ({"type": "exact", "relative_tolerance": False}, "not the boolean false"),
        ({"type": "field", "min_scores": {"f1": float("nan")}}, "min_scores"),
        ({"type": "field", "absolute_tolerance": 0.01}, "'absolute_tolerance' applies to type"),
        ({"type": "exact", "threshold": 0.5}, "'threshold' applies to type 'function' only"),
        ({"type": "field", "case_sensitive": True}, "'case_sensitive' applies to type"),
    ],
)
def test_metric_settings_that_cannot_work_are_refused(
    metric: dict[str, object], message: str
) -> None:
    from docevals_mlflow.evaluation.config import MetricConfig

    with pytest.raises(InputError) as raised:
        MetricConfig.model_validate(metric)
    assert message in str(raised.value)
