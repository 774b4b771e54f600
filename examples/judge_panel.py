"""A panel of LLM judges, served by a local OpenAI-compatible server, checks bank
statement extractions.

The example renders synthetic bank statements to PDF and PNG and writes what an
extractor returned for each: one is right, one misread the closing balance, one
read a debit as a credit. ``docevals evaluate-case --panel panel.yaml`` then has
four judge variants vote on each statement next to the exact comparison:

* ``careful-cold`` and ``careful-warm``: two samples (temperature 0 and 0.7) of one
  model, a *self-consistency group* that casts one vote;
* ``second-opinion``: another careful model;
* ``lenient``: a model that approves everything.

The panel votes per statement, per claim and per rubric criterion. Where the
lenient judge dissents from the majority, the case goes to the review queue
(``review_on_any_disagreement``). Each evaluation is an MLflow run with the panel's
definition (``judge.panel``, ``judge.vote_rule``, ``judges/panel.json``), the
per-variant pass rates and the token usage.

By default the models are served by a fake on 127.0.0.1 (``fake_model.py``), so the
example runs offline and always gives the same votes. To ask real models, point it
at any OpenAI-compatible server and name three models (the first is sampled
twice)::

    python examples/judge_panel.py --base-url http://localhost:11434/v1 \\
        --models qwen2.5vl:7b,llama3.2-vision:11b,gemma3:12b

Run: ``python examples/judge_panel.py [--documents 3] [--output-dir DIR]
[--tracking-uri URI] [--base-url URL --models A,B,C]``. Offline; a few seconds.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from example_documents import BankStatement, generate_statements, render_png, render_statement
from example_support import (
    Workspace,
    add_model_options,
    heading,
    model_names,
    parse_arguments,
    write_json,
)
from fake_model import FakeModelServer, careful_judge, lenient_judge
from mlflow.tracking import MlflowClient

from docevals_mlflow import EvaluationReport, load_report

SEED = 11
EXPERIMENT = "judge-panel"
FAKE_MODELS = ("judge-careful", "judge-second", "judge-lenient")
FAKE_VARIANTS = ("careful-cold", "careful-warm", "second-opinion", "lenient")
REAL_VARIANTS = ("first-cold", "first-warm", "second", "third")
MISTAKES = ("none", "closing balance misread", "a debit read as a credit")


def extraction(statement: BankStatement, position: int) -> dict[str, Any]:
    """What the extractor returned: the truth, with this position's mistake."""
    data = statement.truth()
    mistake = MISTAKES[position % len(MISTAKES)]
    if mistake == "closing balance misread":
        # Read 2.00 too high, as when a 6 is taken for an 8.
        data["closing_balance"] = round(data["closing_balance"] + 2, 2)
    elif mistake == "a debit read as a credit":
        debit = next(row for row in data["transactions"] if row["amount"] < 0)
        debit["amount"] = -debit["amount"]
    return data


def panel_file(base_url: str, models: Sequence[str], names: Sequence[str]) -> dict[str, Any]:
    """The panel configuration (``panel.yaml``): four variants of three models."""
    first, second, third = models[:3]
    common = {"provider": "openai-compatible", "base_url": base_url, "max_output_tokens": 4096}
    settings = ((first, 0), (first, 0.7), (second, 0), (third, 0))
    return {
        "name": "statement_panel",
        "vote_rule": "majority",
        "review_on_any_disagreement": True,
        "variants": [
            {"name": name, "model": model, "temperature": temperature, **common}
            for name, (model, temperature) in zip(names, settings, strict=True)
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Render, extract, judge with the panel; print the votes."""
    args = parse_arguments(
        __doc__,
        documents=3,
        documents_help="bank statements",
        extra=lambda parser: add_model_options(parser, models=",".join(FAKE_MODELS)),
        argv=argv,
    )
    models = model_names(args, FAKE_MODELS, minimum=3)
    workspace = Workspace("judge-panel", args)

    heading("1. Documents: bank statements as PDF and PNG, ground truth, extractions")
    statements = generate_statements(args.documents, SEED)
    for position, statement in enumerate(statements):
        pdf = render_statement(statement)
        Path("statements").mkdir(exist_ok=True)
        Path(f"statements/{statement.id}.pdf").write_bytes(pdf)
        Path(f"statements/{statement.id}.png").write_bytes(render_png(pdf))
        # Reference ids are file stems: ".truth" keeps the truth's id apart from the image's.
        write_json(f"truth/{statement.id}.truth.json", statement.truth())
        write_json(f"predictions/{statement.id}.json", extraction(statement, position))
        mistake = MISTAKES[position % len(MISTAKES)]
        print(f"{statement.id}: {len(statement.transactions)} transactions; mistake: {mistake}")

    with contextlib.ExitStack() as stack:
        if args.base_url:
            base_url, names = args.base_url, REAL_VARIANTS
            print(f"\njudging with {', '.join(models[:3])} at {base_url}")
        else:
            served = {
                FAKE_MODELS[0]: careful_judge,
                FAKE_MODELS[1]: careful_judge,
                FAKE_MODELS[2]: lenient_judge,
            }
            server = stack.enter_context(FakeModelServer(served))
            base_url, names = server.base_url, FAKE_VARIANTS
            print(f"\nfake model server at {base_url} serving {', '.join(FAKE_MODELS)}")

        heading("2. The panel")
        Path("panel.yaml").write_text(
            yaml.safe_dump(panel_file(base_url, models, names), sort_keys=False), encoding="utf-8"
        )
        print(Path("panel.yaml").read_text(encoding="utf-8").rstrip())

        heading("3. Evaluate each statement: exact comparison and the panel")
        for statement in statements:
            workspace.docevals(
                "evaluate-case",
                "--prediction",
                f"predictions/{statement.id}.json",
                "--evidence",
                f"statements/{statement.id}.png",
                "--ground-truth",
                f"truth/{statement.id}.truth.json",
                "--case-id",
                statement.id,
                "--operation",
                "extract_statement",
                "--panel",
                "panel.yaml",
                "--output",
                f"reports/{statement.id}.json",
                "--markdown",
                f"reports/{statement.id}.md",
                "--experiment",
                EXPERIMENT,
                "--run-name",
                statement.id,
                expect=(0, 1),  # 1: the verdict is 'fail'
            )

    heading("4. How the panel voted")
    for statement in statements:
        report = load_report(f"reports/{statement.id}.json")
        assert isinstance(report, EvaluationReport)
        [panel] = [m for m in report.metric_results if m.name == "statement_panel"]
        details = panel.details
        votes = ", ".join(f"{group}={vote}" for group, vote in details["group_votes"].items())
        print(f"{statement.id}: panel {panel.verdict} (group votes: {votes})")
        for item in details.get("review_items", []):
            print(f"  review: {item['reason']}: {item['detail']}")

    # A statement the extractor got wrong, when there is one: its run shows the dissent.
    shown = statements[min(1, len(statements) - 1)].id
    client = MlflowClient(workspace.tracking_uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None
    [run] = client.search_runs([experiment.experiment_id], f"attributes.run_name = '{shown}'")
    print(f"\nthe run of {shown} records the panel, its votes and its usage:")
    for key in ("judge.panel", "judge.vote_rule", "judge.panel_sha256"):
        print(f"  {key} = {run.data.params.get(key)}")
    for key, value in sorted(run.data.metrics.items()):
        if key.startswith(("judge/", "panel/", "usage/requests")):
            print(f"  {key} = {value:g}")

    heading("What this shows")
    print(
        "Samples of one model vote once, so the panel cannot be swayed by sampling a model "
        "more often;\nthe majority decides each statement, and the lenient judge's dissent "
        "sends the failed\nstatements to human review instead of being averaged away. The "
        "panel's definition and\nfingerprint are in every run, so a changed panel is visible "
        "in `docevals compare`."
    )
    workspace.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
