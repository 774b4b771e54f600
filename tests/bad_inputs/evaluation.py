"""Bad inputs for ``evaluate-case``, ``evaluate-pipeline`` and ``suite``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.bad_inputs.case import (
    ALIAS_BOMB,
    JUDGE_KEY_ENV,
    OPENAI_KEY,
    UNSET_KEY_ENV,
    Corpus,
    deep_json,
    fifo,
    folder,
    hard_link,
    locked,
    put,
    put_bytes,
    symlink,
)
from tests.helpers import write_json
from tests.test_cli_outputs import BATCH
from tests.test_cli_references import PIPELINE

case = Corpus("evaluate-case")
pipeline = Corpus("evaluate-pipeline")
suite = Corpus("suite")


# ---------------------------------------------------------------- evaluate-case


def evaluate_case(
    *extra: str, prediction: str = "p.json", truth: str | None = "t.json", output: str = "r.json"
) -> list[str]:
    """``evaluate-case`` of ``p.json`` against ``t.json`` (each written when missing)."""
    for name in (prediction, truth):
        if name is not None and name.endswith(".json") and not Path(name).exists():
            write_json(Path(name), {"total": 1, "currency": "EUR"})
    return [
        "evaluate-case", "--prediction", prediction,
        *(["--ground-truth", truth] if truth is not None else []),
        "--output", output, "--no-mlflow", *extra,
    ]  # fmt: skip


PREDICTIONS: Sequence[tuple[str, str, bytes, tuple[str, ...]]] = [
    # (name, kind, bytes of p.json, fragments)
    (
        "malformed-prediction",
        "malformed",
        b'{"total": 1,\n "currency": "EUR",\n}\n',
        ("p.json: malformed JSON at line 3, column 1",),
    ),
    (
        "prediction-repeated-key",
        "repeated-key",
        b'{"total": 1, "currency": "EUR", "total": 2}',
        ("p.json, at $.total: duplicate key 'total' at line 1, column 33",),
    ),
    (
        "prediction-nested-10000",
        "deep-nesting",
        deep_json().encode(),
        ("p.json, at $.a.a.a", "nesting deeper than 1,000 levels"),
    ),
    (
        "prediction-lone-surrogate",
        "surrogate",
        b'{"currency": "\\ud800EUR"}',
        ("p.json, at $.currency: a lone UTF-16 surrogate",),
    ),
    (
        "prediction-invalid-utf8",
        "invalid-utf8",
        b'{"currency":\n "\xe2\x82"}',
        ("p.json: not valid UTF-8 text (byte 15: invalid continuation byte) at line 2, column 3",),
    ),
    (
        "prediction-empty",
        "empty",
        b"",
        ("p.json: the file is empty",),
    ),
    (
        "prediction-infinity",
        "bad-number",
        b'{"total": -Infinity}',
        ("p.json, at $.total: -Infinity is not valid JSON",),
    ),
]

for _name, _kind, _data, _fragments in PREDICTIONS:

    def _build(data: bytes = _data) -> list[str]:
        put_bytes("p.json", data)
        return evaluate_case()

    case.add(_name, _kind, _build, *_fragments)


TABLES: Sequence[tuple[str, str, str, str, tuple[str, ...]]] = [
    # (name, kind, file name, table text, fragments)
    (
        "truth-csv-unclosed-quote",
        "malformed",
        "t.csv",
        'path,expected\n$.total,1\n$.currency,"EUR\n',
        ("t.csv, record line 3: malformed table: unexpected end of data",),
    ),
    (
        "truth-tsv-separated-by-commas",
        "malformed",
        "t.tsv",
        "path,expected\n$.total,1\n",
        ("t.tsv, record line 1: the header is one column 'path,expected', separated by commas",),
    ),
    (
        "truth-csv-repeated-path",
        "duplicate-id",
        "t.csv",
        "path,expected\n$.total,1\ntotal,2\n",
        ("t.csv, record line 3, at $.total: duplicate path $.total (first given in line 2)",),
    ),
    (
        "truth-csv-header-only",
        "empty",
        "t.csv",
        "path,expected\n",
        ("t.csv: the table has a header but no rows",),
    ),
    (
        "truth-csv-long-row",
        "malformed",
        "t.csv",
        "path,expected\n$.total,1\n$.currency,EUR,USD\n",
        ("t.csv, record line 3: 3 cells but the header has 2 columns",),
    ),
    (
        "truth-csv-bad-path",
        "malformed",
        "t.csv",
        "path,expected\n$.total,1\n$.items[x,2\n",
        ("t.csv, record line 3: invalid field path '$.items[x' (column 8): unclosed '['",),
    ),
]

for _name, _kind, _file, _text, _fragments in TABLES:

    def _build(file: str = _file, text: str = _text) -> list[str]:
        put(file, text)
        return evaluate_case(truth=file)

    case.add(_name, _kind, _build, *_fragments)


@case.case("prediction-is-a-folder", "not-a-file", "p.json: this is a folder, not a file")
def _() -> list[str]:
    folder("p.json")
    return evaluate_case()


@case.case(
    "rubric-invalid-utf8",
    "invalid-utf8",
    "--rubric: the argument holds bytes that are not UTF-8 text",
)
def _() -> list[str]:
    # How Python reads the bytes "total \xff" of a command line.
    return evaluate_case("--rubric", "total \udcff")


@case.case("truth-is-a-folder", "not-a-file", "t.json: this is a folder, not a file")
def _() -> list[str]:
    folder("t.json")
    return evaluate_case()


@case.case("evidence-fifo", "not-a-file", "scan.txt: this is a named pipe, not a file")
def _() -> list[str]:
    fifo("scan.txt")
    return evaluate_case("--evidence", "scan.txt")


@case.case("generated-missing", "missing", "draft.json: file not found")
def _() -> list[str]:
    return evaluate_case("--generated", "draft.json")


@case.case(
    "absolute-tolerance-inf", "bad-number", "--absolute-tolerance inf (expected a finite number"
)
def _() -> list[str]:
    return evaluate_case("--absolute-tolerance", "inf")


@case.case("judge-unknown", "unknown-enum", "argument --judge: invalid choice: 'gpt'", usage=True)
def _() -> list[str]:
    return evaluate_case("--judge", "gpt")


@case.case(
    "base-url-ftp",
    "non-http-url",
    "--judge openai-compatible: invalid JudgeConfig: base_url must be an http:// or https:// "
    "URL with a host (got ftp://)",
)
def _() -> list[str]:
    return evaluate_case(
        "--judge", "openai-compatible", "--model", "m", "--base-url", "ftp://127.0.0.1/v1",
        "--api-key-env", JUDGE_KEY_ENV,
    )  # fmt: skip


@case.case(
    "reasoning-effort-on-anthropic",
    "bad-option",
    "--judge anthropic: invalid JudgeConfig: reasoning_effort applies to openai judges only",
)
def _() -> list[str]:
    return evaluate_case("--judge", "anthropic", "--reasoning-effort", "high")


@case.case(
    "judge-key-variable-unset",
    "missing",
    f"--judge anthropic needs an API key: set {UNSET_KEY_ENV} in the environment",
)
def _() -> list[str]:
    return evaluate_case("--judge", "anthropic", "--api-key-env", UNSET_KEY_ENV)


@case.case("panel-and-judge", "bad-option", "--panel and --judge openai cannot be combined")
def _() -> list[str]:
    put("panel.yaml", PANEL)
    return evaluate_case("--panel", "panel.yaml", "--judge", "openai")


PANEL = """\
name: invoice_panel
variants:
  - {name: a, provider: openai, model: gpt-4.1-mini}
  - {name: b, provider: anthropic, model: claude-sonnet-4-5}
"""

PANELS: Sequence[tuple[str, str, str, tuple[str, ...]]] = [
    # (name, kind, panel text, fragments)
    ("panel-alias-bomb", "alias-bomb", ALIAS_BOMB, ("panel.yaml, at $.e[0]: aliases repeat",)),
    (
        "panel-unknown-vote-rule",
        "unknown-enum",
        PANEL + "vote_rule: plurality\n",
        ("panel.yaml, at vote_rule: invalid PanelConfig", "(got 'plurality')"),
    ),
    (
        "panel-unknown-key",
        "unknown-key",
        PANEL.replace("model: gpt-4.1-mini", "modle: gpt-4.1-mini"),
        ("panel.yaml, at variants[0].modle: variant 'a'", "Extra inputs are not permitted"),
    ),
    (
        "panel-variants-a-mapping",
        "wrong-shape",
        "variants:\n  a: {provider: openai}\n",
        ("panel.yaml, at variants: invalid PanelConfig", "Input should be a valid list"),
    ),
    (
        "panel-duplicate-variant",
        "duplicate-id",
        PANEL.replace("name: b,", "name: a,"),
        ("panel.yaml: invalid PanelConfig: variant names repeat (a)",),
    ),
    (
        "panel-minimum-agreement-nan",
        "bad-number",
        PANEL + "minimum_agreement: .nan\n",
        ("panel.yaml: .nan is not a finite number at line 5",),
    ),
    (
        "panel-holds-a-key",
        "secret",
        PANEL.replace("model: gpt-4.1-mini}", f"model: gpt-4.1-mini, api_key: {OPENAI_KEY}}}"),
        (
            "panel.yaml, at variants[0].api_key: variant 'a': an API key is written in this "
            "configuration",
        ),
    ),
]

for _name, _kind, _text, _fragments in PANELS:

    def _build(text: str = _text) -> list[str]:
        put("panel.yaml", text)
        return evaluate_case("--panel", "panel.yaml")

    case.add(
        _name,
        _kind,
        _build,
        *_fragments,
        secret_inputs=("panel.yaml",) if _kind == "secret" else (),
    )


@case.case(
    "prices-boolean",
    "bad-number",
    "prices.yaml, at gpt-4.1-mini.input: invalid Price: input: a number is due here, not the "
    "boolean true",
)
def _() -> list[str]:
    put("prices.yaml", "gpt-4.1-mini: {input: true, output: 1.6}\n")
    return evaluate_case("--judge", "openai", "--prices", "prices.yaml")


@case.case(
    "param-holds-a-key",
    "secret",
    "argument --param: a param holds an API key or another secret of this process",
    usage=True,
)
def _() -> list[str]:
    return evaluate_case("--param", f"api_token={OPENAI_KEY}")


@case.case(
    "dataset-and-ground-truth",
    "bad-option",
    "--ground-truth and --ground-truth-dataset both give ground truth",
)
def _() -> list[str]:
    return evaluate_case("--ground-truth-dataset", "invoices@1")


@case.case(
    "output-links-to-prediction",
    "output-clash",
    "--output link.json is the same file as --prediction p.json",
)
def _() -> list[str]:
    argv = evaluate_case(output="link.json")
    symlink("link.json", "p.json")
    return argv


@case.case(
    "markdown-equals-output",
    "output-clash",
    "--output r.json and --markdown r.json are the same path",
)
def _() -> list[str]:
    return evaluate_case("--markdown", "./r.json")


@case.case(
    "judge-cache-is-a-file", "output-clash", "--judge-cache cache is a file (expected a folder)"
)
def _() -> list[str]:
    put("cache", "x\n")
    return evaluate_case("--judge", "openai", "--judge-cache", "cache")


# ------------------------------------------------------------ evaluate-pipeline


def evaluate_pipeline(
    config: str = "pipeline.yaml", *extra: str, output: str = "r.json"
) -> list[str]:
    return ["evaluate-pipeline", config, "--output", output, "--no-mlflow", *extra]


def write_pipeline(metrics: str = "", *, replace: tuple[str, str] = ("", "")) -> str:
    text = PIPELINE.format(metrics=metrics)
    if replace[0]:
        assert replace[0] in text, replace
        text = text.replace(*replace, 1)
    return put("pipeline.yaml", text)


CONFIGS: Sequence[tuple[str, str, str, tuple[str, str], tuple[str, ...]]] = [
    # (name, kind, metrics section, replacement in PIPELINE, fragments)
    (
        "malformed-yaml",
        "malformed",
        "",
        ("stage_id: extract", "stage_id: [extract"),
        ("pipeline.yaml: malformed YAML at line 5, column 14",),
    ),
    (
        "repeated-key",
        "repeated-key",
        "",
        ("operation: parse", "operation: parse\n    operation: ocr"),
        ("pipeline.yaml: duplicate key 'operation' at line 6, column 5",),
    ),
    (
        "unknown-stage-key",
        "unknown-key",
        "",
        ("prediction: {total: 2}\n    references", "predicton: {total: 2}\n    references"),
        (
            "pipeline.yaml, stage 'extract', at stages[0].predicton: invalid PipelineConfig",
            "predicton: Extra inputs are not permitted",
        ),
    ),
    (
        "metrics-a-list",
        "wrong-shape",
        "metrics: [exact]",
        ("", ""),
        ("pipeline.yaml, at metrics: invalid PipelineConfig", "valid dictionary"),
    ),
    (
        "unknown-metric-type",
        "unknown-enum",
        "metrics:\n  default: [{type: exactly}]",
        ("", ""),
        ("pipeline.yaml, at metrics.default[0].type: invalid PipelineConfig", "(got 'exactly')"),
    ),
    (
        "judge-reasoning-effort-unknown",
        "unknown-enum",
        "metrics:\n  default: [{type: judge, provider: openai, reasoning_effort: extreme}]",
        ("", ""),
        ("pipeline.yaml, at metrics.default[0].reasoning_effort", "(got 'extreme')"),
    ),
    (
        "judge-base-url-file",
        "non-http-url",
        "metrics:\n  default: [{type: judge, provider: openai-compatible, model: m, "
        "base_url: 'file:///etc/passwd'}]",
        ("", ""),
        (
            "pipeline.yaml, at metrics.default[0]: invalid PipelineConfig",
            "base_url must be an http:// or https:// URL with a host (got file://, no host)",
        ),
    ),
    (
        "judge-temperature-boolean",
        "bad-number",
        "metrics:\n  default: [{type: judge, provider: openai, temperature: true}]",
        ("", ""),
        (
            "pipeline.yaml, at metrics.default[0].temperature",
            "a number is due here, not the boolean true",
        ),
    ),
    (
        "exact-tolerance-inf",
        "bad-number",
        "metrics:\n  default: [{type: exact, absolute_tolerance: -.inf}]",
        ("", ""),
        ("pipeline.yaml: -.inf is not a finite number at line 3, column 47",),
    ),
    (
        "metrics-for-a-missing-stage",
        "dangling-reference",
        "metrics:\n  stages:\n    extrct: [{type: exact}]",
        ("", ""),
        ("pipeline.yaml, at metrics.stages.extrct: metrics are configured for stage 'extrct'",),
    ),
    (
        "depends-on-a-missing-stage",
        "dangling-reference",
        "",
        ("depends_on: [extract]", "depends_on: [extrct]"),
        ("pipeline.yaml, stage 'total': pipeline 'invoice-1': unknown dependency 'extrct'",),
    ),
    (
        "dependency-cycle",
        "dangling-reference",
        "",
        ("operation: parse", "operation: parse\n    depends_on: [total]"),
        (
            "pipeline.yaml, stage 'extract': pipeline 'invoice-1': dependency cycle among "
            "stages 'extract', 'total'",
        ),
    ),
    (
        "duplicate-stage-id",
        "duplicate-id",
        "",
        ("stage_id: total", "stage_id: extract"),
        ("pipeline.yaml, stage 'extract': pipeline 'invoice-1': duplicate stage id",),
    ),
    (
        "duplicate-metric-name",
        "duplicate-id",
        "metrics:\n  default: [{type: exact}, {type: exact}]",
        ("", ""),
        ("pipeline.yaml: default_metrics: metric names repeat (exact_structured)",),
    ),
    (
        "function-metric-missing",
        "dangling-reference",
        "metrics:\n  default: [{type: function, callable: 'json:no_such_check'}]",
        ("", ""),
        ("pipeline.yaml, at json:no_such_check: module 'json' has no attribute",),
    ),
    (
        "prediction-file-missing",
        "missing",
        "",
        (
            "prediction: {total: 2}\n    references",
            "prediction_file: out/extract.json\n    references",
        ),
        ("out/extract.json, stage 'extract': file not found",),
    ),
]

for _name, _kind, _metrics, _replace, _fragments in CONFIGS:

    def _build(metrics: str = _metrics, replace: tuple[str, str] = _replace) -> list[str]:
        write_pipeline(metrics, replace=replace)
        return evaluate_pipeline()

    pipeline.add(_name, _kind, _build, *_fragments)


@pipeline.case(
    "alias-bomb", "alias-bomb", "pipeline.yaml, at $.e[0]: aliases repeat more than 10,000"
)
def _() -> list[str]:
    put("pipeline.yaml", ALIAS_BOMB)
    return evaluate_pipeline()


@pipeline.case(
    "alias-cycle",
    "alias-bomb",
    "pipeline.yaml, at $.metadata.loop[1]: alias *loop inside the node it names",
)
def _() -> list[str]:
    write_pipeline()
    with Path("pipeline.yaml").open("a", encoding="utf-8") as file:
        file.write("metadata:\n  loop: &loop\n    - 1\n    - *loop\n")
    return evaluate_pipeline()


@pipeline.case(
    "unreadable-config",
    "permission",
    "pipeline.yaml: cannot read: Permission denied",
    as_user=True,
)
def _() -> list[str]:
    locked(write_pipeline())
    return evaluate_pipeline()


@pipeline.case(
    "json-nested-10000",
    "deep-nesting",
    "pipeline.json, at $.a.a.a",
    "nesting deeper than 1,000 levels at line 1",
)
def _() -> list[str]:
    put("pipeline.json", deep_json())
    return evaluate_pipeline("pipeline.json")


@pipeline.case(
    "config-is-a-list",
    "wrong-shape",
    "pipeline.json: invalid PipelineConfig: Input should be a valid dictionary",
)
def _() -> list[str]:
    write_json(Path("pipeline.json"), [{"pipeline_id": "p", "stages": []}])
    return evaluate_pipeline("pipeline.json")


@pipeline.case(
    "stages-a-mapping",
    "wrong-shape",
    "pipeline.yaml, at stages: invalid PipelineConfig",
    "Input should be a valid list",
)
def _() -> list[str]:
    put(
        "pipeline.yaml",
        """\
        pipeline_id: p
        stages:
          extract: {prediction: {total: 1}, references: [{value: {total: 1}, id: t,
                    authority: ground_truth}]}
        """,
    )
    return evaluate_pipeline()


@pipeline.case("config-fifo", "not-a-file", "pipeline.yaml: this is a named pipe, not a file")
def _() -> list[str]:
    fifo("pipeline.yaml")
    return evaluate_pipeline()


@pipeline.case(
    "reference-is-a-folder", "not-a-file", "truth.json, stage 'extract': this is a folder"
)
def _() -> list[str]:
    folder("truth.json")
    write_pipeline(
        replace=(
            "references:\n      - {value: {total: 3}, id: truth, authority: ground_truth}\n"
            "  - stage_id: total",
            "references:\n      - {path: truth.json, authority: ground_truth}\n  - stage_id: total",
        )
    )
    return evaluate_pipeline()


@pipeline.case(
    "batch-duplicate-pipeline-id",
    "duplicate-id",
    "pipeline.yaml: invalid PipelineConfig: pipeline ids repeat: inv-1",
)
def _() -> list[str]:
    put("pipeline.yaml", BATCH.format(first="inv-1", second="inv-1"))
    return evaluate_pipeline()


@pipeline.case(
    "batch-ids-collide",
    "id-collision",
    "pipeline ids 'inv/1' and 'inv_1' both make the file name 'inv_1'",
)
def _() -> list[str]:
    put("pipeline.yaml", BATCH.format(first="'inv/1'", second="inv_1"))
    return evaluate_pipeline()


@pipeline.case(
    "reruns-unknown-stage",
    "dangling-reference",
    "reruns.json, record rerun 1: recorded rerun for stage 'totl', which pipeline 'invoice-1' "
    "does not have",
)
def _() -> list[str]:
    write_pipeline()
    write_json(
        Path("reruns.json"),
        [{"pipeline_id": "invoice-1", "stage_id": "totl", "prediction": {"total": 3}}],
    )
    return evaluate_pipeline("pipeline.yaml", "--reruns", "reruns.json")


@pipeline.case("reruns-an-object", "wrong-shape", "reruns.json: not a list of reruns")
def _() -> list[str]:
    write_pipeline()
    write_json(
        Path("reruns.json"),
        {"pipeline_id": "invoice-1", "stage_id": "total", "prediction": {"total": 3}},
    )
    return evaluate_pipeline("pipeline.yaml", "--reruns", "reruns.json")


@pipeline.case(
    "action-unknown-stage",
    "dangling-reference",
    "action 'totl' names neither a stage nor an operation of the pipelines",
)
def _() -> list[str]:
    write_pipeline()
    return evaluate_pipeline("pipeline.yaml", "--action", "totl=json:loads")


@pipeline.case(
    "checkpoint-context-without-value",
    "bad-option",
    "--checkpoint-context 'model' (expected KEY=VALUE)",
)
def _() -> list[str]:
    write_pipeline()
    return evaluate_pipeline("pipeline.yaml", "--checkpoint-context", "model")


@pipeline.case(
    "checkpoint-dir-holds-the-config",
    "output-clash",
    "the configuration pipeline.yaml is inside --checkpoint-dir .",
)
def _() -> list[str]:
    write_pipeline()
    return evaluate_pipeline("pipeline.yaml", "--checkpoint-dir", ".", output="out/r.json")


@pipeline.case(
    "output-hard-link-to-prediction-file",
    "output-clash",
    "--output r.json is the same file as stage 'extract' prediction_file",
)
def _() -> list[str]:
    write_json(Path("extract.json"), {"total": 2})
    write_pipeline(
        replace=(
            "prediction: {total: 2}\n    references",
            "prediction_file: extract.json\n    references",
        )
    )
    hard_link("r.json", "extract.json")
    return evaluate_pipeline()


@pipeline.case(
    "panel-file-unknown-key",
    "unknown-key",
    "panel.yaml, at vote_rul: invalid PanelConfig: vote_rul: Extra inputs are not permitted",
)
def _() -> list[str]:
    put("panel.yaml", PANEL + "vote_rul: majority\n")
    write_pipeline("metrics:\n  default: [{type: panel, panel: panel.yaml}]")
    return evaluate_pipeline()


@pipeline.case(
    "judge-key-in-metrics",
    "secret",
    "pipeline.yaml, at metrics.default[0].authorization: an API key is written in this "
    "configuration",
    secret_inputs=("pipeline.yaml",),
)
def _() -> list[str]:
    write_pipeline(
        "metrics:\n  default: [{type: judge, provider: openai, authorization: 'Bearer "
        + OPENAI_KEY
        + "'}]"
    )
    return evaluate_pipeline()


# ------------------------------------------------------------------------ suite


def case_report() -> str:
    """A real case report, ``case.json``, made by ``evaluate-case`` itself."""
    from docevals_mlflow.cli import main

    write_json(Path("p.json"), {"total": 1})
    write_json(Path("t.json"), {"total": 1})
    code = main(evaluate_case(output="case.json", prediction="p.json", truth="t.json"))
    assert code == 0
    return "case.json"


def suite_argv(*reports: str, output: str = "suite.json", extra: Sequence[str] = ()) -> list[str]:
    return ["suite", *reports, "--output", output, "--no-mlflow", *extra]


REPORTS: Sequence[tuple[str, str, bytes, tuple[str, ...]]] = [
    (
        "malformed-report",
        "malformed",
        b'{"case_id": "c1", "verdict": "pass"',
        ("bad.json: malformed JSON at line 1, column 36",),
    ),
    ("empty-report", "empty", b"\n\n", ("bad.json: the file is empty",)),
    (
        "report-is-a-list",
        "wrong-shape",
        b'[{"case_id": "c1"}]',
        ("bad.json: invalid report: Input should be a valid dictionary",),
    ),
    (
        "report-of-unknown-kind",
        "wrong-shape",
        b'{"kind": "fields", "documents": []}',
        ("bad.json: invalid report: Input tag 'fields' found using 'kind'",),
    ),
    (
        "report-repeated-key",
        "repeated-key",
        b'{"case_id": "c1", "case_id": "c2"}',
        ("bad.json, at $.case_id: duplicate key 'case_id'",),
    ),
]

for _name, _kind, _data, _fragments in REPORTS:

    def _build(data: bytes = _data) -> list[str]:
        put_bytes("bad.json", data)
        return suite_argv("bad.json")

    suite.add(_name, _kind, _build, *_fragments)


@suite.case("report-is-a-folder", "not-a-file", "reports: this is a folder, not a file")
def _() -> list[str]:
    folder("reports")
    return suite_argv("reports")


@suite.case("report-device", "not-a-file", "/dev/null: this is a device, not a file")
def _() -> list[str]:
    return suite_argv("/dev/null")


@suite.case(
    "report-twice",
    "duplicate-id",
    "report reports/../case.json is the same file as report case.json; its cases would count twice",
)
def _() -> list[str]:
    folder("reports")
    return suite_argv(case_report(), "reports/../case.json")


@suite.case(
    "output-links-to-report",
    "output-clash",
    "--output link.json is the same file as report case.json",
)
def _() -> list[str]:
    report = case_report()
    symlink("link.json", report)
    return suite_argv(report, output="link.json")


@suite.case(
    "markdown-equals-output",
    "output-clash",
    "--output suite.json and --markdown suite.json are the same path",
)
def _() -> list[str]:
    return suite_argv(case_report(), extra=("--markdown", "suite.json"))


@suite.case("fail-on-unknown", "unknown-enum", "argument --fail-on: invalid choice", usage=True)
def _() -> list[str]:
    return suite_argv("case.json", extra=("--fail-on", "warn"))


CASES = [*case.cases, *pipeline.cases, *suite.cases]
