"""The cases ``docevals generate`` reads: from ``--source`` files or a ``--sources-dir``,
with their sources as evidence, their route, and where their files go."""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from docevals_mlflow.cli.paths import Input, Output
from docevals_mlflow.core.artifacts import ReferenceArtifact, artifact_from_path
from docevals_mlflow.errors import DocEvalsError, InputError
from docevals_mlflow.groundtruth.review import human_work, load_review
from docevals_mlflow.groundtruth.router import GroundTruthRouter
from docevals_mlflow.groundtruth.sources import check_sources

Route = Literal["images", "documents", "text"]
_TEXT_KINDS = frozenset({"text", "structured"})
_UNSAFE_ID = re.compile(r"[/\\\x00]")
MAX_CASE_ID_BYTES = 200
"""A case id names files such as ``<case>.generation.adjudication.json``: with the
longest suffix and an atomic write's temporary name it stays within the 255 bytes
most file systems allow for a name."""
STAGES = ("panel", "adjudication", "union")
"""Stages whose reports are kept next to the final one (``<case>.generation.<stage>.json``)."""


@dataclass
class Case:
    """One case's sources and how they are routed."""

    case_id: str
    references: list[ReferenceArtifact]
    route: Route = "text"
    derivatives: list[ReferenceArtifact] = field(default_factory=list)
    """Markdown copies of its documents (``document_mode: markdown``)."""


@dataclass(frozen=True)
class Outputs:
    """Where one case's files go."""

    out_dir: Path
    case_id: str

    @property
    def generation(self) -> Path:
        return self.out_dir / f"{self.case_id}.generation.json"

    @property
    def review(self) -> Path:
        return self.out_dir / f"{self.case_id}.review.json"

    def stage(self, stage: str) -> Path:
        return self.out_dir / f"{self.case_id}.generation.{stage}.json"

    def markdown(self, derivative_id: str) -> Path:
        return self.out_dir / f"{self.case_id}.{derivative_id}.md"


def collect_cases(args: argparse.Namespace) -> list[Case]:
    """The cases named on the command line, with their sources loaded as evidence.

    Raises:
        InputError: no source, a repeated case id, an unsafe ``--case-id``, several
            ``--source`` files with different stems and no ``--case-id``.
        InputFileNotFoundError: a source file or the folder is missing.
    """
    if args.sources_dir is not None:
        if args.case_id is not None:
            raise InputError(
                "--case-id names the case of --source files; with --sources-dir each "
                "case is named by its folder or file stem"
            )
        return cases_from_dir(args.sources_dir, args.output_dir)
    files: list[Path] = list(args.sources)
    case_id = args.case_id
    if case_id is None:
        stems = sorted({file.stem for file in files})
        if len(stems) != 1:
            raise InputError(
                f"the --source files have different stems ({', '.join(stems)}): name the "
                "case with --case-id"
            )
        case_id = stems[0]
        check_case_id(case_id, option="the --source files' stem")
    else:
        check_case_id(case_id)
    return [Case(case_id, evidence(files))]


def cases_from_dir(directory: Path, out_dir: Path) -> list[Case]:
    """One case per subfolder (its files) and per file stem of the files in ``directory``.

    Hidden entries (``.name``) are skipped; folders inside a case folder are ignored.
    """
    if not directory.is_dir():
        raise InputError("no such folder", source=str(directory), expected="--sources-dir DIR")
    resolved_out = out_dir.resolve()
    root = directory.resolve()
    if resolved_out == root or root in resolved_out.parents:
        raise InputError(
            "the output folder is inside --sources-dir, where its files would be read as "
            "cases next time",
            source=str(out_dir),
        )
    grouped: dict[str, list[Path]] = {}
    folders: dict[str, list[Path]] = {}
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            folders[entry.name] = sorted(
                item for item in entry.iterdir() if item.is_file() and not item.name.startswith(".")
            )
        elif entry.is_file():
            grouped.setdefault(entry.stem, []).append(entry)
    clash = sorted(set(grouped) & set(folders))
    if clash:
        raise InputError(
            f"case {clash[0]!r} is both a folder and a file stem; keep one",
            source=str(directory),
        )
    empty = sorted(name for name, files in folders.items() if not files)
    if empty:
        raise InputError(f"case folder {empty[0]!r} holds no files", source=str(directory))
    everything = {**grouped, **folders}
    if not everything:
        raise InputError(
            "no cases found",
            source=str(directory),
            expected="a subfolder per case, or source files named by case",
        )
    for case_id in sorted(everything):
        try:
            check_case_id(case_id, option="case")
        except InputError as exc:
            raise exc.located(source=str(directory)) from None
    return [Case(case_id, evidence(everything[case_id])) for case_id in sorted(everything)]


def evidence(files: Sequence[Path]) -> list[ReferenceArtifact]:
    """The files as evidence references; ids are file stems, or file names where stems
    repeat (``inv-7.pdf`` and ``inv-7.txt``)."""
    stems = Counter(file.stem for file in files)
    return [
        artifact_from_path(
            file,
            authority="evidence",
            artifact_id=file.stem if stems[file.stem] == 1 else file.name,
        )
        for file in files
    ]


def check_case_id(case_id: str, *, option: str = "--case-id") -> None:
    """Refuse an id that cannot name the case's output files (``option`` says where
    it came from): empty, a slash, or too long for a file name."""
    if not case_id.strip() or case_id in (".", "..") or _UNSAFE_ID.search(case_id):
        raise InputError(
            f"{option} {case_id!r} cannot name output files",
            expected="a name without slashes, such as statement-001",
        )
    size = len(case_id.encode("utf-8", "surrogateescape"))
    if size > MAX_CASE_ID_BYTES:
        shown = case_id[:40] + "…"
        raise InputError(
            f"{option} {shown!r} is {size} bytes long, too long to name the case's files",
            expected=f"a case id of at most {MAX_CASE_ID_BYTES} bytes (UTF-8)",
        )


def case_paths(
    args: argparse.Namespace, cases: Sequence[Case], *, bundle: Path | None
) -> tuple[list[Input | None], list[Output | None]]:
    """What ``generate`` reads and writes, for :func:`~docevals_mlflow.cli.common.check_paths`:
    the configuration, sources and prices; every file of every case in OUT (the
    stage files too, which a generation without that stage deletes), the generation
    cache and the run bundle."""
    out_dir: Path = args.output_dir
    inputs: list[Input | None] = [
        Input("--config", args.config),
        Input("--sources-dir", args.sources_dir) if args.sources_dir is not None else None,
        Input("--prices", args.prices) if args.prices is not None else None,
    ]
    outputs: list[Output | None] = [
        Output("--output-dir", out_dir, "folder"),
        Output("--generation-cache", args.generation_cache, "owned")
        if args.generation_cache is not None
        else None,
        Output("the run bundle", bundle, "owned") if bundle is not None else None,
    ]
    for case in cases:
        inputs += [
            Input(f"case {case.case_id!r} source", Path(reference.path))
            for reference in case.references
        ]
        files = Outputs(out_dir, case.case_id)
        named = f"case {case.case_id!r}"
        outputs += [
            Output(f"{named} generation report", files.generation),
            Output(f"{named} review file", files.review),
            *(Output(f"{named} {stage} report", files.stage(stage)) for stage in STAGES),
            *(
                Output(f"{named} Markdown copy", files.markdown(derivative.id))
                for derivative in case.derivatives
            ),
        ]
    return inputs, outputs


def route_of(router: GroundTruthRouter, case: Case) -> Route:
    """The case's route; only text or structured evidence is read by the panel
    directly. Every source is checked here, before any provider is asked."""
    check_sources(case.references, case_id=case.case_id)
    if all(reference.kind in _TEXT_KINDS for reference in case.references):
        return "text"
    return router.route(case.references, case_id=case.case_id)


def refuse_reviewed(out_dir: Path, cases: Sequence[Case]) -> None:
    """Stop before anything is generated (or paid for) when a review file to be
    replaced holds a reviewer's work, listing every such file."""
    problems: list[str] = []
    for case in cases:
        target = Outputs(out_dir, case.case_id).review
        if not (target.exists() or target.is_symlink()):
            continue
        try:
            work = human_work(load_review(target))
        except DocEvalsError as exc:
            problems.append(f"{target} (not a review file this version can read: {exc.message})")
            continue
        if work:
            problems.append(f"{target} ({'; '.join(work)})")
    if problems:
        raise InputError(
            "review files hold a reviewer's work that a new generation would replace: "
            + ", ".join(problems)
            + "; nothing was generated (finish them, use another --output-dir, or pass "
            "--force to replace them)"
        )
