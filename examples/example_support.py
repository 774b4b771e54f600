"""What every example shares: a workspace and the ``docevals`` command.

Each example works in a folder of its own (a new temporary folder unless
``--output-dir`` is given) with its own SQLite tracking store in that folder
(``--tracking-uri`` to log elsewhere). It runs ``docevals`` commands exactly as you
would type them in a shell from that folder, after
``export MLFLOW_TRACKING_URI=...``, and prints each command before its output. The
commands run in the example's own process (``docevals_mlflow.cli.main``), which
saves starting Python and MLflow once per command.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from docevals_mlflow.cli import main as docevals_main

# The examples promise to run offline: MLflow would otherwise send usage telemetry.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")


def parse_arguments(
    doc: str | None,
    *,
    documents: int,
    documents_help: str = "number of documents to generate",
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
    argv: Sequence[str] | None = None,
) -> argparse.Namespace:
    """The options every example takes (``--output-dir``, ``--tracking-uri``,
    ``--documents``) plus those ``extra`` adds."""
    summary = (doc or "").strip().splitlines()[0] if doc else None
    parser = argparse.ArgumentParser(description=summary)
    parser.add_argument(
        "--output-dir",
        type=Path,
        help="folder to work in (default: a new temporary folder, kept and printed)",
    )
    parser.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: sqlite:///<output dir>/mlflow.db)",
    )
    parser.add_argument(
        "--documents", type=int, default=documents, help=f"{documents_help} (default: {documents})"
    )
    if extra is not None:
        extra(parser)
    args = parser.parse_args(argv)
    if args.documents < 1:
        parser.error("--documents must be at least 1")
    return args


def add_model_options(parser: argparse.ArgumentParser, *, models: str) -> None:
    """``--base-url`` and ``--models``: ask a real OpenAI-compatible server instead
    of the built-in fake."""
    group = parser.add_argument_group("models")
    group.add_argument(
        "--base-url",
        help="an OpenAI-compatible API root, such as http://localhost:8000/v1 (vLLM) or "
        "http://localhost:11434/v1 (Ollama); default: a fake server on 127.0.0.1 "
        "started by the example",
    )
    group.add_argument(
        "--models",
        help=f"comma-separated model names on --base-url (default with the fake: {models})",
    )


class Workspace:
    """The example's folder and tracking store; the working directory moves there."""

    def __init__(self, name: str, args: argparse.Namespace) -> None:
        if args.output_dir is None:
            root = Path(tempfile.mkdtemp(prefix=f"docevals-example-{name}-"))
        else:
            root = args.output_dir
            root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()
        self.tracking_uri: str = args.tracking_uri or f"sqlite:///{self.root / 'mlflow.db'}"
        # Relative paths in the commands, and MLflow's default artifact folder
        # (./mlruns next to a SQLite store), both land in the example's folder.
        os.chdir(self.root)
        os.environ["MLFLOW_TRACKING_URI"] = self.tracking_uri
        if os.environ.pop("DOCEVALS_NO_MLFLOW", None):
            print("note: DOCEVALS_NO_MLFLOW is ignored here: the example logs its runs")
        print(f"working in {self.root}")
        print(f"$ export MLFLOW_TRACKING_URI={self.tracking_uri}")

    def docevals(self, *args: str | Path, expect: int | Iterable[int] = 0) -> int:
        """Print and run one ``docevals`` command; stop the example on an
        unexpected exit code."""
        argv = [str(arg) for arg in args]
        print(f"\n$ docevals {shlex.join(argv)}", flush=True)
        code = docevals_main(argv)
        sys.stdout.flush()
        allowed = {expect} if isinstance(expect, int) else set(expect)
        if code not in allowed:
            raise SystemExit(f"example stopped: 'docevals {argv[0]}' exited with {code}")
        return code

    def finish(self) -> None:
        """Say where everything is and how to look at the runs."""
        print(f"\neverything is in {self.root}")
        print(f"look at the runs with: mlflow ui --backend-store-uri {self.tracking_uri}")


def heading(text: str) -> None:
    """A section heading in the example's output."""
    print(f"\n== {text}")


def write_json(path: str | Path, value: Any) -> Path:
    """Write ``value`` as indented JSON (parents created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


def write_jsonl(path: str | Path, records: Iterable[Any]) -> Path:
    """Write one compact JSON record per line (parents created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    target.write_text(lines, encoding="utf-8")
    return target


def read_json(path: str | Path) -> Any:
    """Read a JSON file."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def model_names(args: argparse.Namespace, defaults: Sequence[str], *, minimum: int) -> list[str]:
    """The model names to use: ``--models`` with ``--base-url``, else the fake's."""
    if args.models:
        names = [name.strip() for name in args.models.split(",") if name.strip()]
    else:
        names = list(defaults)
    if len(names) < minimum:
        raise SystemExit(f"--models: give at least {minimum} model names, separated by commas")
    return names
