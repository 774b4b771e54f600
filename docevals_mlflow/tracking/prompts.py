"""Operation prompts in MLflow's prompt registry, linked to the evaluation runs.

When an evaluation run is logged, each operation's action instruction (the prompt
under test, from ``specs/operations.json``) is registered as a version of the prompt
``docevals-<operation>`` and linked to the run, and the run gets the param
``op.<operation>.prompt_uri`` (``prompts:/docevals-extract/3``). The MLflow UI's
prompt page then lists the versions the runs used and diffs them.

* A new version is registered only when the text differs from the prompt's latest
  version; an unchanged prompt reuses that version, so re-running an evaluation does
  not add versions. (Going back to an older text registers it again as the newest
  version: "latest" always means "what was evaluated last".)
* ``DOCEVALS_PROMPT_NAME`` changes the name template (``{operation}`` is replaced
  by the operation name, with characters MLflow rejects in prompt names replaced by
  ``-``); ``DOCEVALS_PROMPT_REGISTRY=0`` turns registration off.
* Registration never fails a run: any error is recorded as the run tag
  ``docevals.warning.prompt_registry`` and the run is logged as usual.
* A series of versions made together (the quickstart's v1 and v2,
  :func:`register_prompt_series`) reuses any version with the same text, so running
  it again keeps versions 1 and 2 rather than adding two.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docevals_mlflow.tracking.bundle import RunBundle

NAME_VARIABLE = "DOCEVALS_PROMPT_NAME"
SWITCH_VARIABLE = "DOCEVALS_PROMPT_REGISTRY"
DEFAULT_NAME = "docevals-{operation}"
WARNING_TAG = "docevals.warning.prompt_registry"
EXPERIMENT_VARIABLE = "MLFLOW_EXPERIMENT_ID"
LINKED_PROMPTS_TAG = "mlflow.linkedPrompts"
"""The run tag MLflow's UI reads to show a run's prompts (JSON list of name/version)."""
_ILLEGAL = re.compile(r"[^A-Za-z0-9_.-]+")
_URL_CREDENTIALS = re.compile(r"://[^/@\s]+@")
_MAX_WARNING = 500


@dataclass(frozen=True)
class RegisteredPrompt:
    """An operation's prompt version, as registered (or reused) for one run."""

    operation: str
    name: str
    version: int
    created: bool

    @property
    def uri(self) -> str:
        """``prompts:/<name>/<version>``."""
        return f"prompts:/{self.name}/{self.version}"


def registry_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether prompts are registered (``DOCEVALS_PROMPT_REGISTRY`` is not 0/false/off)."""
    value = (os.environ if environ is None else environ).get(SWITCH_VARIABLE, "")
    return value.strip().lower() not in {"0", "false", "no", "off"}


def prompt_name(operation: str, template: str | None = None) -> str:
    """The registry name of an operation's prompt (``docevals-extract``)."""
    pattern = template or os.environ.get(NAME_VARIABLE) or DEFAULT_NAME
    name = pattern.replace("{operation}", operation)
    return _ILLEGAL.sub("-", name).strip("-") or "docevals-prompt"


def action_instructions(operations: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per operation, its distinct action instructions (in the order stages used them)."""
    found: dict[str, list[str]] = {}
    for operation, entry in (operations.get("operations") or {}).items():
        texts: list[str] = []
        for variant in ((entry or {}).get("variants") or {}).values():
            text = (variant or {}).get("action_instruction")
            if isinstance(text, str) and text.strip() and text not in texts:
                texts.append(text)
        if texts:
            found[str(operation)] = texts
    return found


def _latest(client: Any, name: str) -> Any:
    """The newest version of a prompt, ``None`` when the prompt does not exist yet."""
    if client.get_prompt(name) is None:
        return None
    versions = client.search_prompt_versions(name, max_results=1)
    return versions[0] if versions else None


def register_prompt_version(
    client: Any,
    name: str,
    text: str,
    *,
    operation: str | None,
    run_id: str,
) -> RegisteredPrompt:
    """Register ``text`` under ``name`` unless it equals the latest version's text.

    ``operation`` is the pipeline operation whose action instruction it is; ``None``
    for a prompt a run was given (``--prompt``)."""
    latest = _latest(client, name)
    if latest is not None and latest.template == text:
        return RegisteredPrompt(operation or name, name, int(latest.version), created=False)
    what = (
        f"action instruction of operation {operation!r}"
        if operation is not None
        else "the prompt an evaluated run was given"
    )
    version = client.register_prompt(
        name,
        text,
        commit_message=f"docevals: {what} (run {run_id})",
        tags={"docevals.operation": operation} if operation is not None else {},
    )
    return RegisteredPrompt(operation or name, name, int(version.version), created=True)


def link_to_run(client: Any, run_id: str, prompts: list[RegisteredPrompt]) -> None:
    """Add the prompts to the run's ``mlflow.linkedPrompts`` tag (kept, not replaced).

    Written with this client rather than ``MlflowClient.link_prompt_version_to_run``,
    which reaches the run through the process-wide tracking URI and so fails for a
    client given another URI.
    """
    current = client.get_run(run_id).data.tags.get(LINKED_PROMPTS_TAG)
    entries = json.loads(current) if current else []
    known = {(entry.get("name"), str(entry.get("version"))) for entry in entries}
    for prompt in prompts:
        if (prompt.name, str(prompt.version)) not in known:
            entries.append({"name": prompt.name, "version": str(prompt.version)})
            known.add((prompt.name, str(prompt.version)))
    client.set_tag(run_id, LINKED_PROMPTS_TAG, json.dumps(entries))


def _link_to_experiment(client: Any, prompts: list[RegisteredPrompt], experiment_id: str) -> None:
    # Shows the prompts on the experiment's "Prompts" tab. MLflow has no public call
    # for it; best effort, since the run link and the param are what matter.
    link = getattr(client, "_link_prompt_to_experiment", None)
    if link is None:
        return
    for prompt in prompts:
        link(client.get_prompt_version(prompt.name, prompt.version), experiment_id)


def _warning_text(error: BaseException) -> str:
    text = f"prompt registration skipped: {type(error).__name__}: {error}"
    text = _URL_CREDENTIALS.sub("://***@", text)
    return text if len(text) <= _MAX_WARNING else text[: _MAX_WARNING - 1] + "…"


def register_operation_prompts(
    client: Any,
    run_id: str,
    operations: Mapping[str, Any],
    *,
    experiment_id: str | None = None,
    name_template: str | None = None,
) -> list[RegisteredPrompt]:
    """Register every operation's action instruction, link the versions to the run and
    log ``op.<operation>.prompt_uri``.

    ``operations`` is the content of ``specs/operations.json``. An operation whose
    stages used several instructions gets each registered and linked, and the param
    says ``mixed (N variants)``, as the run's other ``op.*`` params do.
    """
    from docevals_mlflow.tracking.keys import legal_key

    registered: list[RegisteredPrompt] = []
    for operation, texts in action_instructions(operations).items():
        name = prompt_name(operation, name_template)
        versions = [
            register_prompt_version(client, name, text, operation=operation, run_id=run_id)
            for text in texts
        ]
        registered += versions
        key = f"op.{legal_key(operation).replace('/', '_')}.prompt_uri"
        value = versions[0].uri if len(versions) == 1 else f"mixed ({len(versions)} variants)"
        client.log_param(run_id, key, value)
    if registered:
        link_to_run(client, run_id, registered)
        if experiment_id is not None:
            _link_to_experiment(client, registered, experiment_id)
    return registered


def register_named_prompt(
    client: Any, run_id: str, name: str, text: str, *, experiment_id: str | None = None
) -> RegisteredPrompt:
    """Register a run's own prompt (``docevals fields --prompt F --prompt-name NAME``)
    as a version of ``name``, link it to the run and log ``prompt.uri``."""
    registered = register_prompt_version(client, name, text, operation=None, run_id=run_id)
    client.log_param(run_id, "prompt.uri", registered.uri)
    link_to_run(client, run_id, [registered])
    if experiment_id is not None:
        _link_to_experiment(client, [registered], experiment_id)
    return registered


def _versions(client: Any, name: str) -> list[Any]:
    """Every version of a prompt (none when it does not exist yet)."""
    if client.get_prompt(name) is None:
        return []
    found: list[Any] = []
    token = None
    while True:
        page = client.search_prompt_versions(name, max_results=100, page_token=token)
        found += list(page)
        token = getattr(page, "token", None)
        if not token:
            return found


@contextlib.contextmanager
def _experiment_in_environment(experiment_id: str) -> Iterator[None]:
    # MLflow links a new prompt to the process's current experiment (Default unless
    # MLFLOW_EXPERIMENT_ID says otherwise): make that the run's experiment.
    saved = os.environ.get(EXPERIMENT_VARIABLE)
    os.environ[EXPERIMENT_VARIABLE] = experiment_id
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(EXPERIMENT_VARIABLE, None)
        else:
            os.environ[EXPERIMENT_VARIABLE] = saved


def register_prompt_series(
    tracking_uri: str,
    name: str,
    runs: list[tuple[str, str, str]],
) -> tuple[list[RegisteredPrompt], str | None]:
    """Register a series of prompt texts as versions of ``name``, in order, and link
    each to its run; returns the versions and a warning (``None`` when all went well).

    ``runs`` holds ``(run_id, experiment_id, text)``. Unlike an evaluation's own
    prompt, a text that any version already holds reuses that version, so a series
    run again (the quickstart's v1 and v2) keeps its version numbers. Each run gets
    ``prompt.uri`` and the ``mlflow.linkedPrompts`` tag; each experiment the prompt.
    Honours ``DOCEVALS_PROMPT_REGISTRY``; never raises.
    """
    if not registry_enabled() or not runs:
        return [], None
    from docevals_mlflow.tracking.store import open_client

    registered: list[RegisteredPrompt] = []
    try:
        client = open_client(tracking_uri)
        known = {version.template: int(version.version) for version in _versions(client, name)}
        for run_id, experiment_id, text in runs:
            number = known.get(text)
            created = number is None
            if number is None:
                with _experiment_in_environment(experiment_id):
                    version = client.register_prompt(
                        name, text, commit_message=f"docevals: the prompt of run {run_id}"
                    )
                number = known[text] = int(version.version)
            prompt = RegisteredPrompt(name, name, number, created=created)
            client.log_param(run_id, "prompt.uri", prompt.uri)
            link_to_run(client, run_id, [prompt])
            _link_to_experiment(client, [prompt], experiment_id)
            registered.append(prompt)
        return registered, None
    except Exception as error:  # the registry must never cost the user the runs
        return registered, _warning_text(error)


def register_bundle_prompts(
    client: Any, run_id: str, experiment_id: str, bundle: RunBundle, artifacts: Path
) -> list[RegisteredPrompt]:
    """The hook :func:`~docevals_mlflow.tracking.runs.log_bundle` calls for every run.

    Evaluation runs register their operations' prompts (``specs/operations.json``)
    and, when the run names it (param ``prompt.name``), the prompt it was given
    (``specs/prompt.txt``). Never raises: a failure becomes the run tag
    ``docevals.warning.prompt_registry``.
    """
    if bundle.kind != "evaluation" or not registry_enabled():
        return []
    source = artifacts / "specs" / "operations.json"
    prompt = artifacts / "specs" / "prompt.txt"
    name = bundle.params.get("prompt.name")
    try:
        registered: list[RegisteredPrompt] = []
        if source.is_file():
            operations = json.loads(source.read_text(encoding="utf-8"))
            registered += register_operation_prompts(
                client, run_id, operations, experiment_id=experiment_id
            )
        if name and prompt.is_file():
            text = prompt.read_text(encoding="utf-8")
            registered.append(
                register_named_prompt(client, run_id, name, text, experiment_id=experiment_id)
            )
        return registered
    except Exception as error:  # the registry must never cost the user the run
        # The run itself is logged: if even the tag cannot be set, there is nothing left.
        with contextlib.suppress(Exception):
            client.set_tag(run_id, WARNING_TAG, _warning_text(error))
        return []
