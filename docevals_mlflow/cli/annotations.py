"""What a user adds to an evaluation run: ``--param``, ``--tag`` and ``--prompt``.

The commands that evaluate outputs made elsewhere (``docevals fields``, ``split``,
the case and pipeline commands) cannot know which prompt, model or settings made
those outputs; these options record them on the run, so that ``docevals compare``
can say what changed between two runs, not only what moved.

Everything is checked while the command line is read, before any comparison runs:
a malformed ``KEY=VALUE``, a key in a namespace the run layout writes itself, or
an unreadable prompt file exits 2 at once.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docevals_mlflow.cli.light_constants import PROMPT_ARTIFACT
from docevals_mlflow.cli.paths import Input
from docevals_mlflow.errors import DocEvalsError, InputFileNotFoundError

RESERVED_PARAM_NAMESPACES = (
    "calibration.",
    "case.",
    "compare.",
    "dataset.",
    "docevals.",
    "fields.",
    "generation.",
    "judge.",
    "op.",
    "pipeline.",
    "schema.",
    "split.",
    "suite.",
)
"""Param key prefixes the run layout writes itself (see docs/mlflow-runs.md)."""
PROMPT_PARAMS = ("prompt.file", "prompt.name", "prompt.sha256", "prompt.uri")
"""Params ``--prompt`` and ``--prompt-name`` write (``prompt.uri`` when the prompt is
registered)."""
RESERVED_TAG_PREFIXES = ("docevals.", "mlflow.")
_KEY = re.compile(r"^[\w\-. /]{1,250}$")
"""MLflow's rule for param and tag keys: letters, digits, ``_ - . /`` and spaces."""


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
_SECRET_ASSIGNMENT = re.compile(
    r"(api[_-]?key|access[_-]?key|secret|token|password|passwd)\s*[:=]\s*\S{6,}"
    r"|authorization\s*[:=]|bearer\s+[A-Za-z0-9._~+/=-]{8,}",
    re.IGNORECASE,
)
"""Text that writes a secret out (``api_key=...``, ``Authorization: Bearer ...``)."""
_MIN_SECRET = 8
"""Shorter environment values (``1``, ``true``) would match ordinary text."""


def _holds_secret(*texts: str) -> bool:
    """Whether ``texts`` name or contain an API key (``api_key=``, ``sk-...``), or
    contain the value of an environment variable named like a secret."""
    from docevals_mlflow.judges.config import find_api_key

    if find_api_key({texts[0]: list(texts[1:])} if len(texts) > 1 else texts[0]) is not None:
        return True
    if any(_SECRET_ASSIGNMENT.search(text) for text in texts):
        return True
    secrets = [
        value
        for name, value in os.environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET
    ]
    return any(secret in text for secret in secrets for text in texts)


def _key_value(kind: str, reserved: tuple[str, ...]) -> type:
    """An argparse ``type`` reading ``KEY=VALUE`` for ``--param`` or ``--tag``."""

    def parse(text: str) -> tuple[str, str]:
        # Checked before anything is echoed: a message must never repeat a secret.
        if _holds_secret(text):
            raise argparse.ArgumentTypeError(
                f"a {kind} holds an API key or another secret of this process; secrets are "
                "never logged"
            )
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
        if not _KEY.match(key):
            raise argparse.ArgumentTypeError(
                f"{kind} key {key!r} has characters MLflow refuses "
                "(letters, digits, _ - . / and spaces only)"
            )
        if _holds_secret(key, value):
            raise argparse.ArgumentTypeError(
                f"{kind} {key!r} holds an API key or another secret of this process; "
                "secrets are never logged"
            )
        taken = PROMPT_PARAMS if kind == "param" else ()
        if key.startswith(reserved) or key in taken:
            raise argparse.ArgumentTypeError(
                f"{kind} key {key!r} is one docevals writes itself; choose a name "
                f"outside {', '.join(reserved + taken)}"
            )
        return key, value

    parse.__name__ = f"{kind} KEY=VALUE"  # argparse names the type in its messages
    return parse  # type: ignore[return-value]


@dataclass(frozen=True)
class PromptFile:
    """A prompt text read from a file: only its name and text are ever logged (as a
    :class:`~docevals_mlflow.tracking.options.RunPrompt`; ``path`` is kept so that no
    output may replace the file)."""

    name: str
    text: str
    path: Path | None = None


def _prompt_file(text: str) -> PromptFile:
    from docevals_mlflow.core.datafiles import read_text_file

    path = Path(text)
    try:
        # The shared reader refuses FIFOs, devices and folders before opening them
        # (a named pipe would block forever) and names line and column of bad UTF-8.
        content = read_text_file(path, what="prompt file")
    except InputFileNotFoundError:
        raise argparse.ArgumentTypeError(f"no prompt file {text}") from None
    except DocEvalsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not content.strip():
        raise argparse.ArgumentTypeError(f"{text} is empty; a prompt file holds the prompt")
    if _holds_secret(content):
        raise argparse.ArgumentTypeError(
            f"{text} holds an API key or another secret of this process; it would be "
            "logged with the run"
        )
    return PromptFile(path.name, content, path)


def _prompt_name(text: str) -> str:
    name = text.strip()
    if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,100}", name):
        raise argparse.ArgumentTypeError(
            f"prompt name {text!r}: letters, digits, '_', '-' and '.' only (MLflow's rule)"
        )
    return name


def add_run_annotations(parser: argparse.ArgumentParser, *, prompt: bool = False) -> None:
    """``--param``, ``--tag`` and (with ``prompt``) ``--prompt``, ``--prompt-name``."""
    group = parser.add_argument_group(
        "run annotations",
        "Record what made the evaluated outputs (prompt, model, settings) on the MLflow "
        "run, so that docevals compare can show what changed between runs.",
    )
    group.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_key_value("param", RESERVED_PARAM_NAMESPACES),
        help="an extra run param, e.g. model=gpt-4.1 or prompt.version=3 (repeatable)",
    )
    group.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_key_value("tag", RESERVED_TAG_PREFIXES),
        help="an extra run tag, e.g. team=billing (repeatable)",
    )
    group.add_argument(
        "--repeat-group",
        metavar="NAME",
        type=_repeat_group,
        help="mark the run as a repeat of the other runs of this group (tag "
        "docevals.repeat_group); docevals repeats --group NAME reports their flip rate",
    )
    if prompt:
        group.add_argument(
            "--prompt",
            metavar="FILE",
            type=_prompt_file,
            help=f"the prompt that produced the predictions: logged as {PROMPT_ARTIFACT} "
            "with params prompt.sha256 and prompt.file (its name, never its path)",
        )
        group.add_argument(
            "--prompt-name",
            metavar="NAME",
            type=_prompt_name,
            help="also register the --prompt text as a version of this prompt in MLflow's "
            "prompt registry (a new version only when the text changed) and link it to "
            "the run",
        )


def check_annotations(args: argparse.Namespace) -> None:
    """Refuse what argparse cannot see alone (call before any work is done).

    Raises:
        InputError: ``--prompt-name`` without ``--prompt``, or one key given twice
            with different values.
    """
    from docevals_mlflow.errors import InputError

    if not hasattr(args, "param"):
        return
    if getattr(args, "prompt_name", None) is not None and getattr(args, "prompt", None) is None:
        raise InputError(
            "--prompt-name names the prompt given with --prompt",
            expected="--prompt FILE with --prompt-name",
        )
    for option, pairs in (("--param", args.param), ("--tag", args.tag)):
        seen: dict[str, str] = {}
        for key, value in pairs:
            if seen.get(key, value) != value:
                raise InputError(
                    f"{option} {key} is given twice with different values "
                    f"({seen[key]!r} and {value!r})",
                    expected=f"one value per {option} key",
                )
            seen[key] = value


def annotation_inputs(args: argparse.Namespace) -> list[Input]:
    """The ``--prompt`` file, as an input no output may replace."""
    prompt: PromptFile | None = getattr(args, "prompt", None)
    if prompt is None or prompt.path is None:
        return []
    return [Input("--prompt", prompt.path)]


def _repeat_group(text: str) -> str:
    """An argparse ``type`` for ``--repeat-group``: a name MLflow can store and search."""
    name = text.strip()
    if not name or len(name) > 250 or "\n" in name:
        raise argparse.ArgumentTypeError(
            f"invalid value {text[:40]!r} (expected a name of 1 to 250 characters on one line)"
        )
    return name


def annotation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The annotations of the command line as :class:`~docevals_mlflow.tracking.options.RunOptions`
    fields: ``params``, ``tags`` and ``prompt`` (none for a command without them)."""
    if not hasattr(args, "param"):
        return {}
    from docevals_mlflow.tracking.options import RunPrompt

    given: PromptFile | None = getattr(args, "prompt", None)
    prompt = (
        None
        if given is None
        else RunPrompt(given.text, file=given.name, name=getattr(args, "prompt_name", None))
    )
    tags = dict(args.tag)
    group = getattr(args, "repeat_group", None)
    if group is not None:
        from docevals_mlflow.tracking.repeat_runs import REPEAT_GROUP_TAG

        tags[REPEAT_GROUP_TAG] = group
    return {"params": dict(args.param), "tags": tags, "prompt": prompt}
