"""``docevals review answer``, ``review agreement`` and ``review status``: several
reviewers' layers from the command line (the web app writes the same files).

Registered as subcommands of ``docevals review`` by :mod:`docevals_mlflow.cli.review`;
only argparse is imported until a handler runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docevals_mlflow.cli.common import EXIT_OK, check_number
from docevals_mlflow.errors import InputError

if TYPE_CHECKING:
    from docevals_mlflow.core.statistics.reviewer_agreement import AgreementStat, FieldAgreement


def register(review_commands: Any) -> None:
    """Add ``answer``, ``agreement`` and ``status`` under ``docevals review``."""
    answer = review_commands.add_parser(
        "answer",
        help="record a person's answers in their layer beside a review file",
        description="Append answers to PERSON's layer (REVIEW.layers/PERSON.json): accept "
        "the proposed value, set a value, or mark a field absent or unreadable. Earlier "
        "answers are kept; the last one per field counts.",
    )
    answer.add_argument("review", type=Path, help="review file (JSON)")
    answer.add_argument("--person", required=True, help="who answers (1-64 of A-Z a-z 0-9 ._@+-)")
    answer.add_argument("--role", choices=("reviewer", "adjudicator"), default="reviewer")
    for option, metavar, text in (
        ("--accept", "PATH", "accept the proposed value"),
        ("--set", "PATH=VALUE", "set VALUE (JSON when it parses, e.g. 12.5, true; else text)"),
        ("--absent", "PATH", "the document does not hold the field"),
        ("--unreadable", "PATH", "the document holds the field, but it cannot be read"),
    ):
        answer.add_argument(
            option,
            dest=option[2:] + "_paths",
            action="append",
            default=[],
            metavar=metavar,
            help=f"{text} (repeatable)",
        )
    answer.add_argument("--reason", help="why (required for an adjudicator)")
    answer.set_defaults(handler=run_answer)

    agreement = review_commands.add_parser(
        "agreement",
        help="reviewer agreement per field and overall (kappa, alpha, intervals)",
        description="Cohen's kappa (two reviewers), Fleiss' kappa and Krippendorff's alpha "
        "(nominal; interval for numbers) per field path and overall, with bootstrap 95% "
        "intervals that resample documents.",
    )
    agreement.add_argument("target", type=Path, metavar="FILE_OR_FOLDER")
    agreement.add_argument("--json", type=Path, metavar="OUT", help="also write the report here")
    agreement.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    agreement.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    agreement.set_defaults(handler=run_agreement)

    status = review_commands.add_parser(
        "status",
        help="per review file: answered, disagreed and final fields",
        description="Per review file: the people with layers, how many fields enough "
        "reviewers answered, how many they disagree on, and how many have a final value.",
    )
    status.add_argument("target", type=Path, metavar="FILE_OR_FOLDER")
    status.add_argument(
        "--reviewers", type=int, default=2, help="reviewers each field needs (default 2)"
    )
    status.set_defaults(handler=run_status)


def run_answer(args: argparse.Namespace) -> int:
    """Record each answer given, in order: accept, set, absent, unreadable."""
    from docevals_mlflow.cli.review import parse_assignment
    from docevals_mlflow.groundtruth.records import canonical_field_path
    from docevals_mlflow.groundtruth.review_layers import layer_path, record_answer

    answers: list[tuple[str, Any, Any]] = [(p, "accept", None) for p in args.accept_paths]
    for text in args.set_paths:
        path, value = parse_assignment(text)
        answers.append((path, "set", value))
    answers += [(p, "absent", None) for p in args.absent_paths]
    answers += [(p, "unreadable", None) for p in args.unreadable_paths]
    if not answers:
        raise InputError("nothing to record", expected="--accept, --set, --absent or --unreadable")
    given: dict[str, str] = {}
    for path, action, _ in answers:
        key = canonical_field_path(path)
        if key in given:
            raise InputError(f"one field given twice: {given[key]} and --{action} {path}")
        given[key] = f"--{action} {path}"
    for path, action, value in answers:
        entry = record_answer(
            args.review, args.person, path, action, value, role=args.role, reason=args.reason
        )
        shown = f" {_shown(entry.value)}" if action == "set" else ""
        before = entry.previous_action or "proposed"
        print(
            f"{args.person}: {entry.path} {action}{shown} "
            f"(before: {before} {_shown(entry.previous)})"
        )
    print(f"layer: {layer_path(args.review, args.person)}")
    return EXIT_OK


def _shown(value: Any, limit: int = 60) -> str:
    from docevals_mlflow.core.fingerprints import canonical_json

    text = canonical_json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _load_all(target: Path) -> list[Any]:
    from docevals_mlflow.groundtruth.review_layers import load_many, review_files

    loaded = load_many(review_files(target))
    for layers in loaded:
        for stale in layers.stale:
            print(
                f"docevals: warning: {stale.file}: stale layer of {stale.person} (written for "
                "another version of the review file); left out",
                file=sys.stderr,
            )
    return loaded


def run_agreement(args: argparse.Namespace) -> int:
    """Print (and optionally write) the reviewer agreement report."""
    from docevals_mlflow.core.atomic import atomic_write_text
    from docevals_mlflow.groundtruth.review_layers import review_agreement

    check_number("--resamples", args.resamples, minimum=0, maximum=100_000)
    report = review_agreement(_load_all(args.target), resamples=args.resamples, seed=args.seed)
    print(
        f"{report.documents} document(s), {len(report.raters)} reviewer(s)"
        + (f": {', '.join(report.raters)}" if report.raters else "")
        + f"; {report.resamples} bootstrap resamples of the documents, seed {report.seed}"
    )
    print(
        f"{'field':<32} {'units':>5}  {'Cohen k':<22} {'Fleiss k':<22} {'alpha':<22} "
        "alpha (interval)"
    )
    for row in [*report.fields, report.overall]:
        print(_row(row))
    if args.json is not None:
        atomic_write_text(args.json, report.model_dump_json(indent=2) + "\n")
        print(f"report: {args.json}")
    return EXIT_OK


def _row(row: FieldAgreement) -> str:
    cells = [_stat(s) for s in (row.cohen_kappa, row.fleiss_kappa, row.alpha_nominal)]
    return (
        f"{row.path:<32} {row.units:>5}  {cells[0]:<22} {cells[1]:<22} {cells[2]:<22} "
        f"{_stat(row.alpha_interval)}"
    )


def _stat(stat: AgreementStat) -> str:
    if stat.value is None:
        return "-"
    if stat.low is None or stat.high is None:
        return f"{stat.value:.3f}"
    return f"{stat.value:.3f} [{stat.low:.3f}, {stat.high:.3f}]"


def run_status(args: argparse.Namespace) -> int:
    """Per review file: people, answered, disagreed, final."""
    check_number("--reviewers", args.reviewers, minimum=1, maximum=64)
    totals = [0, 0, 0, 0]
    for layers in _load_all(args.target):
        fields = layers.targets.paths()
        disputes = layers.disagreements(args.reviewers)
        differ = sum(d.kind == "differ" for d in disputes)
        incomplete = sum(d.kind == "incomplete" for d in disputes)
        final = sum(f.status != "unresolved" for f in layers.final_values(args.reviewers).values())
        answered = len(fields) - incomplete
        people = (
            ", ".join(f"{p} ({layers.layers[p].role})" for p in layers.people()) or "nobody yet"
        )
        stale = f"; {len(layers.stale)} stale layer(s)" if layers.stale else ""
        print(
            f"{layers.review_path}: {layers.review.case_id}: {len(fields)} field(s); "
            f"answered by {args.reviewers}+ reviewer(s): {answered}; disagreed: {differ}; "
            f"final: {final}/{len(fields)}; people: {people}{stale}"
        )
        for index, value in enumerate((len(fields), answered, differ, final)):
            totals[index] += value
    print(
        f"total: {totals[0]} field(s); answered {totals[1]}; disagreed {totals[2]}; "
        f"final {totals[3]}"
    )
    return EXIT_OK
