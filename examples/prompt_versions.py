"""Two prompt versions of an invoice extractor, evaluated and compared.

The example renders synthetic invoices to PDF (the quickstart's generator), writes
what two versions of an extraction prompt "extracted" from them (simulated, with
seeded, realistic errors), and then works as you would with your own predictions:

1. ``docevals fields`` compares each version's predictions with the ground truth
   field by field and logs one MLflow run per version (``prompt-v1``, ``prompt-v2``);
2. ``docevals compare prompt-v1 prompt-v2`` says what moved and whether it is real:
   per-field deltas with paired bootstrap intervals, randomisation tests with
   Holm's correction, and the documents that flipped; ``--fail-on-regression``
   makes it a CI gate (run the other way round, it exits 1);
3. the same comparison from Python (``load_run_snapshot`` and ``compare_runs``),
   as a pandas DataFrame.

Run: ``python examples/prompt_versions.py [--documents 30] [--output-dir DIR]
[--tracking-uri URI]``. Offline; about 10 s.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from example_support import Workspace, heading, parse_arguments, write_jsonl

from docevals_mlflow import compare_runs, load_run_snapshot
from docevals_mlflow.quickstart import (
    PROMPTS,
    generate_invoices,
    simulate_extraction,
    write_document_set,
)

EXPERIMENT = "prompt-versions"
SEED = 7


def main(argv: Sequence[str] | None = None) -> int:
    """Generate, evaluate both versions, compare them; print what it shows."""
    args = parse_arguments(__doc__, documents=30, documents_help="invoices", argv=argv)
    workspace = Workspace("prompt-versions", args)

    heading("1. Documents: synthetic invoices rendered to PDF, with their ground truth")
    documents = write_document_set("invoices", generate_invoices(args.documents, SEED))
    print(
        f"{len(documents.invoices)} invoices in invoices/documents/, ground truth in "
        "invoices/ground_truth.jsonl, comparison rules in invoices/schema.yaml"
    )

    heading("2. What each prompt version extracted (simulated, seeded errors)")
    for prompt in PROMPTS:
        (workspace.root / "prompts").mkdir(exist_ok=True)
        (workspace.root / "prompts" / f"{prompt.run_name}.txt").write_text(
            prompt.text, encoding="utf-8"
        )
        records = []
        for invoice in documents.invoices:
            data, confidence = simulate_extraction(invoice, prompt, SEED)
            records.append(
                {"id": invoice.id, "class": "Invoice", "data": data, "confidence": confidence}
            )
        write_jsonl(f"predictions/{prompt.run_name}.jsonl", records)
        first_line = prompt.text.splitlines()[0]
        print(f"{prompt.run_name}: predictions/{prompt.run_name}.jsonl ({first_line} ...)")

    heading("3. Evaluate each version field by field; one MLflow run each")
    for prompt in PROMPTS:
        workspace.docevals(
            "fields",
            "--schema",
            "invoices/schema.yaml",
            "--expected",
            "invoices/ground_truth.jsonl",
            "--predicted",
            f"predictions/{prompt.run_name}.jsonl",
            "--output",
            f"reports/{prompt.run_name}.json",
            "--markdown",
            f"reports/{prompt.run_name}.md",
            "--experiment",
            EXPERIMENT,
            "--run-name",
            prompt.run_name,
            # What made the predictions, recorded on the run for the comparison below:
            # the prompt text (and its version in MLflow's prompt registry).
            "--prompt",
            f"prompts/{prompt.run_name}.txt",
            "--prompt-name",
            "invoice-extract",
            "--param",
            f"prompt.version={prompt.version}",
        )

    heading("4. Compare the runs: what moved, and is it real?")
    workspace.docevals(
        "compare",
        f"{EXPERIMENT}/prompt-v1",
        f"{EXPERIMENT}/prompt-v2",
        "--output-dir",
        "comparison",
        "--fail-on-regression",
    )
    print("\nThe same gate the other way round (v2 as the baseline) finds the regression:")
    code = workspace.docevals(
        "compare",
        f"{EXPERIMENT}/prompt-v2",
        f"{EXPERIMENT}/prompt-v1",
        "--fail-on-regression",
        "--no-mlflow",
        expect=(0, 1),
    )
    print(f"exit code {code}: {'a significant regression' if code else 'no significant change'}")

    heading("5. The same comparison from Python")
    comparison = compare_runs(
        load_run_snapshot(f"{EXPERIMENT}/prompt-v1"),
        load_run_snapshot(f"{EXPERIMENT}/prompt-v2"),
        metric="f1",
        seed=0,
    )
    effects = comparison.effects
    significant = effects[effects["significant"]]
    print(f"{len(effects)} tests, {len(significant)} significant after Holm's correction:")
    for row in significant.itertuples():
        print(
            f"  {row.family:<8} {row.unit:<28} {row.baseline:.4f} -> {row.candidate:.4f} "
            f"({row.delta:+.4f}, 95% CI [{row.ci_low:+.4f}, {row.ci_high:+.4f}], "
            f"p_adj {row.p_adjusted:.2g}) {row.direction}"
        )
    flips = comparison.pairs[0].flips
    print(f"documents that flipped: {len(flips)}")

    heading("What this shows")
    print(
        "Both versions were scored with one counting rule (TP/FA/FD/FN per field), each "
        "logged as a run;\nthe comparison pairs documents by id and reports only the "
        "changes that survive a paired test\nwith Holm's correction, so a better F1 on a "
        "handful of documents is not called an improvement."
    )
    workspace.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
