"""The recipes, the Docker image and the console script point at real commands."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import yaml

from docevals_mlflow.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def _subcommands() -> set[str]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if a.dest == "command"]
    return set(action.choices)


def test_console_script_targets_cli_main():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"docevals": "docevals_mlflow.cli:main"}


def test_mlproject_entry_points_call_existing_subcommands():
    spec = yaml.safe_load((ROOT / "recipes" / "MLproject").read_text(encoding="utf-8"))
    assert spec["entry_points"]
    for name, entry in spec["entry_points"].items():
        # Each command first changes to the `workdir` parameter (see recipes/README.md).
        argv = shlex.split(entry["command"].removeprefix("cd {workdir} && "))
        assert argv[:3] == ["python", "-m", "docevals_mlflow"], name
        assert argv[3] in _subcommands(), name
        placeholders = set(re.findall(r"\{(\w+)\}", entry["command"]))
        assert placeholders == set(entry["parameters"]), name


def test_dockerfile_entrypoint_is_the_console_script():
    text = (ROOT / "docker" / "Dockerfile").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["docevals"]' in text
    for source in re.findall(r"^COPY (.+) \S+$", text, flags=re.MULTILINE):
        for name in source.split():
            assert (ROOT / name).exists(), name


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.DOTALL)
    test_command = next(command for command in commands if "pytest" in command)
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
