"""``docker/``: the team stack's compose file and images, checked without a Docker
daemon: structure, health checks, the order services start in, ports, volumes,
settings resolvable from ``.env.example``, files the images copy, the runner's entry
command, and an ``mlflow server`` command line this MLflow version accepts."""

from __future__ import annotations

import fnmatch
import re
import shlex
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import mlflow
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCKER = REPO / "docker"
SERVICES = {"postgres", "minio", "minio-setup", "mlflow", "runner"}
ONE_SHOT = {"minio-setup"}
REFERENCE = re.compile(r"\$\$|\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}|\$(?P<bare>\w+)")


def env_example() -> dict[str, str]:
    values: dict[str, str] = {}
    for line in (DOCKER / ".env.example").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, separator, value = line.partition("=")
            assert separator, line
            values[key.strip()] = value.strip()
    return values


def references(text: str) -> list[tuple[str, str | None]]:
    """``(variable, operator)`` of every compose reference in ``text``."""
    found = []
    for match in REFERENCE.finditer(text):
        if match.group(0) == "$$":
            continue
        found.append((match.group("name") or match.group("bare"), match.group("op")))
    return found


def interpolate(value: Any, settings: dict[str, str]) -> Any:
    """Compose's variable substitution (``$$``, ``${X}``, ``${X:-d}``, ``${X:?m}``)."""
    if isinstance(value, dict):
        return {key: interpolate(item, settings) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, settings) for item in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group("name") or match.group("bare")
        operator, argument = match.group("op"), match.group("arg") or ""
        current = settings.get(name)
        if operator in (":-", "-") and (current is None or (operator == ":-" and not current)):
            return argument
        if operator in (":?", "?") and (current is None or (operator == ":?" and not current)):
            raise AssertionError(f"{name} is required: {argument}")
        return current or ""

    return REFERENCE.sub(substitute, value)


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    compose: dict[str, Any] = yaml.safe_load((DOCKER / "compose.yaml").read_text("utf-8"))
    return compose


@pytest.fixture(scope="module")
def compose(raw: dict[str, Any]) -> dict[str, Any]:
    resolved: dict[str, Any] = interpolate(raw, env_example())
    return resolved


def mlflow_command(compose: dict[str, Any]) -> list[str]:
    command: list[str] = compose["services"]["mlflow"]["command"]
    assert command[:2] == ["mlflow", "server"]
    return command[2:]


# --- settings ------------------------------------------------------------------------


def test_every_setting_resolves_from_env_example_and_none_is_unused():
    settings = env_example()
    text = (DOCKER / "compose.yaml").read_text(encoding="utf-8")
    used = references(text)
    for name, operator in used:
        if operator in (None, ":?", "?"):
            assert settings.get(name), f"{name} is required by compose.yaml but not in .env.example"
    assert set(settings) == {name for name, _ in used}


def test_secrets_are_references_never_literals(raw):
    # Access key ids and public keys name things; these are what must stay private.
    secret = re.compile(r"PASSWORD|SECRET|API_KEY")
    for name, service in raw["services"].items():
        for key, value in (service.get("environment") or {}).items():
            if secret.search(key):
                assert re.fullmatch(r"\$\{\w+(:?[-?][^}]*)?\}", str(value)), (name, key)
    settings = env_example()
    for key, value in settings.items():
        if secret.search(key):
            # Local-dev placeholders say so; keys for providers are left empty.
            assert value == "" or "change-me" in value, key
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").split()
    assert ".env" in ignored  # docker/.env, which holds the real values


# --- services, start order, health -----------------------------------------------------


def test_services_and_their_start_order(compose):
    services = compose["services"]
    assert set(services) == SERVICES
    expected = {
        "minio-setup": {"minio": "service_healthy"},
        "mlflow": {"postgres": "service_healthy", "minio-setup": "service_completed_successfully"},
        "runner": {"mlflow": "service_healthy"},
    }
    for name, service in services.items():
        depends = service.get("depends_on", {})
        assert isinstance(depends, dict), f"{name}: depends_on needs conditions"
        assert {dependency: spec["condition"] for dependency, spec in depends.items()} == (
            expected.get(name, {})
        ), name
        for dependency, spec in depends.items():
            if spec["condition"] == "service_healthy":
                assert "healthcheck" in services[dependency], dependency
            else:
                assert dependency in ONE_SHOT


@pytest.mark.parametrize("name", sorted(SERVICES - ONE_SHOT))
def test_long_running_services_have_health_checks(compose, name):
    check = compose["services"][name]["healthcheck"]
    assert {"test", "interval", "timeout", "retries"} <= set(check)
    test = check["test"]
    assert test[0] in {"CMD", "CMD-SHELL"}
    if test[1:3] == ["python", "-c"]:
        compile(test[3], f"{name} healthcheck", "exec")  # a typo would never turn healthy


def test_the_one_shot_setup_script_is_valid_shell_over_its_own_environment(compose):
    service = compose["services"]["minio-setup"]
    assert service["restart"] == "no"
    assert service["entrypoint"] == ["/bin/sh", "-ec"]
    (script,) = service["command"]
    subprocess.run(["sh", "-n", "-c", script], check=True)
    used = {name for name, _ in references(script)}
    assert used <= set(service["environment"])
    postgres = compose["services"]["postgres"]
    check = postgres["healthcheck"]["test"]
    assert {name for name, _ in references(check[1])} <= set(postgres["environment"])


# --- ports and volumes -----------------------------------------------------------------


def test_ports_are_documented_bound_and_match_what_listens(compose):
    services = compose["services"]
    published = {}
    for name, service in services.items():
        for entry in service.get("ports", []):
            bind, host, container = entry.split(":")
            assert bind == "127.0.0.1"  # the .env.example default: local until asked
            published[int(host)] = (name, int(container))
    assert published == {5000: ("mlflow", 5000), 9001: ("minio", 9001)}
    command = mlflow_command(compose)
    assert command[command.index("--port") + 1] == "5000"
    assert services["minio"]["command"][-2:] == ["--console-address", ":9001"]
    header = (DOCKER / "compose.yaml").read_text(encoding="utf-8")
    for variable in ("MLFLOW_PORT:-5000", "MINIO_CONSOLE_PORT:-9001"):
        assert "${" + variable + "}" in header.split("name: docevals")[0]


def test_volumes(compose):
    declared = set(compose["volumes"])
    assert declared == {"postgres-data", "minio-data"}
    mounts = {}
    for name, service in compose["services"].items():
        for entry in service.get("volumes", []):
            source, target = entry.split(":")[:2]
            mounts[name] = (source, target)
            if not source.startswith((".", "/")):
                assert source in declared, (name, source)
            else:
                assert (DOCKER / source).resolve().is_dir(), (name, source)
    assert mounts["postgres"] == ("postgres-data", "/var/lib/postgresql/data")
    assert mounts["minio"] == ("minio-data", "/data")
    assert mounts["runner"][1] == "/work"


# --- the MLflow server -----------------------------------------------------------------


def test_the_server_command_uses_options_this_mlflow_accepts(compose, monkeypatch):
    command = mlflow_command(compose)
    shown = subprocess.run(
        [sys.executable, "-m", "mlflow", "server", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    accepted = set(re.findall(r"(--[a-z][a-z-]+)", shown))
    for option in (token for token in command if token.startswith("--")):
        assert option in accepted, option
    # Parse it as `mlflow server` would, with the store URI from the environment.
    environment = compose["services"]["mlflow"]["environment"]
    monkeypatch.setenv("MLFLOW_BACKEND_STORE_URI", environment["MLFLOW_BACKEND_STORE_URI"])
    with warnings.catch_warnings():
        # Importing the CLI loads MLflow's model code, which warns about its own hints.
        warnings.simplefilter("ignore")
        from mlflow.cli import server

    parsed = server.make_context("server", list(command)).params
    assert parsed["backend_store_uri"].startswith("postgresql://mlflow:")
    assert urlsplit(parsed["backend_store_uri"]).hostname == "postgres"
    assert parsed["artifacts_destination"] == "s3://mlflow-artifacts/artifacts"
    assert parsed["serve_artifacts"] is True
    assert parsed["host"] == "0.0.0.0"
    assert environment["MLFLOW_S3_ENDPOINT_URL"] == "http://minio:9000"
    # The runner's Host header (mlflow:5000) must pass the security middleware.
    runner_uri = compose["services"]["runner"]["environment"]["MLFLOW_TRACKING_URI"]
    host = urlsplit(runner_uri).netloc
    assert host == f"mlflow:{parsed['port']}"
    allowed = parsed["allowed_hosts"].split(",")
    assert any(fnmatch.fnmatch(host, pattern) for pattern in allowed), allowed


def test_images_pin_the_mlflow_version_these_checks_ran_against(compose):
    assert env_example()["MLFLOW_VERSION"] == mlflow.__version__
    for dockerfile in ("Dockerfile", "mlflow.Dockerfile"):
        text = (DOCKER / dockerfile).read_text(encoding="utf-8")
        assert f"ARG MLFLOW_VERSION={mlflow.__version__}" in text, dockerfile
    for name in ("mlflow", "runner"):
        assert compose["services"][name]["build"]["args"]["MLFLOW_VERSION"] == (mlflow.__version__)


# --- the images ------------------------------------------------------------------------


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    text = dockerfile.read_text(encoding="utf-8").replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


@pytest.mark.parametrize("service", ["mlflow", "runner"])
def test_every_copy_source_exists_and_the_user_is_not_root(compose, service):
    build = compose["services"][service]["build"]
    context = (DOCKER / build["context"]).resolve()
    dockerfile = context / build["dockerfile"]
    assert dockerfile.is_file()
    steps = instructions(dockerfile)
    ignore = dockerfile.with_name(dockerfile.name + ".dockerignore")
    kept = (
        [line for line in ignore.read_text("utf-8").splitlines() if line.startswith("!")]
        if ignore.is_file()
        else None
    )
    for keyword, rest in steps:
        if keyword in {"COPY", "ADD"}:
            *sources, _ = shlex.split(rest)
            for source in sources:
                assert not source.startswith("--from"), source
                assert (context / source).exists(), f"{dockerfile.name}: COPY {source}"
                if kept is not None:
                    # A source the .dockerignore leaves out is missing at build time.
                    assert f"!{source.rstrip('/')}" in {k.rstrip("/") for k in kept}, source
    users = [rest for keyword, rest in steps if keyword == "USER"]
    assert users, dockerfile.name
    assert users[-1] not in {"root", "0"}


def test_the_runner_entry_command_is_the_console_script():
    steps = instructions(DOCKER / "Dockerfile")
    (entrypoint,) = [rest for keyword, rest in steps if keyword == "ENTRYPOINT"]
    assert yaml.safe_load(entrypoint) == ["docevals"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    target = project["project"]["scripts"]["docevals"]
    module, _, attribute = target.partition(":")
    import importlib

    assert callable(getattr(importlib.import_module(module), attribute))
    # The image installs the package from the copied sources, so the script exists.
    assert any(keyword == "RUN" and "pip install ." in rest for keyword, rest in steps), (
        "the runner image must install the package"
    )
    (cmd,) = [rest for keyword, rest in steps if keyword == "CMD"]
    assert yaml.safe_load(cmd) == ["--help"]
