"""What a bad-input case is, the kinds of bad input, and small writers of odd files."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.core.test_datafiles_limits import BILLION_LAUGHS
from tests.helpers import write_text

Builder = Callable[[], Sequence[str]]
"""Writes a case's inputs into the working directory; returns the command line."""

STORE = "<store>"
"""Stands for the case's own SQLite tracking URI in a command line."""

OPENAI_KEY = "sk-proj-CORPUSopenai0123456789abcdefXYZ"
ANTHROPIC_KEY = "sk-ant-api03-CORPUSanthropic-0123456789"
JUDGE_KEY = "corpus/PLANTED+judge=0123456789~x"
JUDGE_KEY_ENV = "CORPUS_JUDGE_KEY"
"""The variable ``--api-key-env`` names in the cases that take it."""
UNSET_KEY_ENV = "CORPUS_UNSET_KEY"
"""A key variable that is never set."""
PLANTED = {
    "OPENAI_API_KEY": OPENAI_KEY,
    "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
    JUDGE_KEY_ENV: JUDGE_KEY,
}
"""Set in the environment of every case; none of them may show up anywhere."""

KINDS = {
    "malformed": "malformed JSON, JSON Lines, YAML, CSV or TSV",
    "repeated-key": "a key given twice in one object or mapping",
    "deep-nesting": "JSON nested 10,000 levels deep",
    "alias-bomb": "a YAML alias bomb (or an alias cycle)",
    "surrogate": "a lone UTF-16 surrogate escape",
    "invalid-utf8": "bytes that are not UTF-8",
    "empty": "an empty file, a file of blank lines, a folder without entries",
    "not-a-file": "a FIFO, a folder or a device where a file is expected (or the reverse)",
    "missing": "a file that does not exist",
    "wrong-shape": "a value of the wrong shape (ground truth against the schema, a list "
    "where an object is due, a required key left out)",
    "unknown-key": "a key a configuration does not know",
    "unknown-enum": "an unknown method, pairing, reasoning effort, metric, choice",
    "bad-number": "NaN, infinity, a boolean or an out-of-range number",
    "non-http-url": "a base URL that is not HTTP(S)",
    "dangling-reference": "a reference to a stage, case, class, metric or key that does not exist",
    "duplicate-id": "an id given twice",
    "id-collision": "ids that make one file name",
    "output-clash": "an output that is an input (same path, symlink, hard link), another "
    "output or a folder",
    "bundle-entry": "a run bundle holding a symlink or a FIFO",
    "tampered": "a review, approval or bundle file changed by hand",
    "bad-run": "a run reference that names no usable run",
    "secret": "an API key where none may be",
    "bad-option": "an option value or combination a command refuses",
    "permission": "a file or folder this user may not read or write",
}


@dataclass(frozen=True)
class BadInput:
    """One bad invocation and what it must answer.

    ``fragments`` must all be in the one ``docevals: error:`` line (or, for a
    ``usage`` error, in argparse's ``docevals COMMAND: error:`` line after the usage;
    for a ``warning`` case, in the ``docevals: warning:`` line of a run that exits 0
    and writes exactly ``writes``).
    """

    id: str
    command: str
    kind: str
    build: Builder
    fragments: tuple[str, ...]
    usage: bool = False
    warning: bool = False
    writes: tuple[str, ...] = ()
    store: bool = False
    """The command logs to or reads MLflow and has no ``--no-mlflow``: its command line
    uses :data:`STORE`."""
    as_user: bool = False
    """Needs file permissions to hold: run as an unprivileged user."""
    secret_inputs: tuple[str, ...] = ()
    """Inputs holding a planted key on purpose (not searched for it)."""

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind
        assert self.fragments, self.id
        assert not self.writes or self.warning, self.id

    @property
    def code(self) -> int:
        return 0 if self.warning else 2


@dataclass
class Corpus:
    """The cases of one command, registered with :meth:`case` or :meth:`add`."""

    command: str
    cases: list[BadInput] = field(default_factory=list)

    def add(self, name: str, kind: str, build: Builder, *fragments: str, **options: object) -> None:
        """Register ``COMMAND-NAME``."""
        case_id = f"{self.command}-{name}"
        assert all(case.id != case_id for case in self.cases), case_id
        self.cases.append(
            BadInput(case_id, self.command, kind, build, fragments, **options)  # type: ignore[arg-type]
        )

    def case(
        self, name: str, kind: str, *fragments: str, **options: object
    ) -> Callable[[Builder], Builder]:
        """Register the decorated builder as ``COMMAND-NAME``."""

        def register(build: Builder) -> Builder:
            self.add(name, kind, build, *fragments, **options)
            return build

        return register


# ------------------------------------------------------------------------- writers


def put(name: str, text: str) -> str:
    """Write ``text`` (dedented) to ``name``, creating folders; returns ``name``."""
    write_text(Path(name), text)
    return name


def put_bytes(name: str, data: bytes) -> str:
    """Write raw bytes to ``name``; returns ``name``."""
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return name


def fifo(name: str) -> str:
    """A named pipe at ``name`` (reading it would block forever)."""
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return name


def folder(name: str) -> str:
    """An empty folder at ``name``."""
    Path(name).mkdir(parents=True)
    return name


def symlink(name: str, target: str) -> str:
    Path(name).symlink_to(target)
    return name


def hard_link(name: str, target: str) -> str:
    os.link(target, name)
    return name


def locked(name: str) -> str:
    """Take every permission away from ``name`` (a file or a folder)."""
    Path(name).chmod(0)
    return name


def deep_json(depth: int = 10_000) -> str:
    """An object nested ``depth`` levels deep."""
    return '{"a": ' * depth + "1" + "}" * depth


ALIAS_BOMB = BILLION_LAUGHS
"""Nine levels of nine aliases each: 387 million strings if expanded."""
