"""Throwaway PostgreSQL and MLflow tracking servers on loopback ports, for tests.

Each server lives in a temporary folder, listens on 127.0.0.1 only, writes its
output to log files whose tails end every error message, and is stopped (and its
folder removed) by its context manager whatever happens inside the ``with`` block.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

POSTGRES_PROGRAMS = ("initdb", "pg_ctl", "postgres", "createdb")
ROLE = "docevals"
"""The database superuser initdb creates; the OS account that runs the server differs."""
SERVICE_USERS = ("postgres", "nobody")
"""Existing unprivileged accounts tried, in order, to run PostgreSQL when we are root."""
CREATED_USER = "docevals-postgres"
"""The system account created when none of SERVICE_USERS exists."""
PORT_TAKEN = ("could not bind", "already in use")
"""Log phrases meaning a free port was taken by someone else before the server bound it."""
PORT_ATTEMPTS = 3
TAIL_LINES = 40


class ServerError(RuntimeError):
    """A server did not start (or stop); the message ends with the tails of its logs."""

    def __init__(self, message: str, logs: Sequence[Path]) -> None:
        super().__init__(f"{message}\n{log_tails(logs)}")


def log_tails(logs: Sequence[Path], lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of each log, under its name."""
    parts = []
    for log in logs:
        try:
            text = log.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            text = f"(unreadable: {exc})"
        tail = "\n".join(text.splitlines()[-lines:]) or "(empty)"
        parts.append(f"--- last {lines} lines of {log} ---\n{tail}")
    return "\n".join(parts)


def _version(folder: Path) -> int:
    # /usr/lib/postgresql/<major>/bin: the major version sits two levels up.
    name = folder.parent.name
    return int(name) if name.isdigit() else 0


def postgres_bin_dir() -> Path | None:
    """The folder holding initdb, pg_ctl, postgres and createdb, or None.

    PATH comes first; Debian keeps the server programs in /usr/lib/postgresql/<major>/bin
    (only client wrappers are on PATH), so those folders are searched too, newest first.
    """
    candidates = []
    initdb = shutil.which("initdb")
    if initdb:
        # Resolved: PATH may hold a symlink, while createdb must come from the same folder.
        candidates.append(Path(initdb).resolve().parent)
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version, reverse=True)
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in POSTGRES_PROGRAMS):
            return folder
    return None


def free_port() -> int:
    """A loopback port nobody listens on right now (it can still be taken before use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _port_taken(log: Path) -> bool:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False
    return any(phrase in text for phrase in PORT_TAKEN)


# --- PostgreSQL ----------------------------------------------------------------------


def _service_user() -> pwd.struct_passwd | None:
    """The account that runs PostgreSQL; None means our own.

    PostgreSQL refuses to run as root, so as root an unprivileged account is used,
    created (as a system account without home or shell) only when none exists.
    """
    if os.geteuid() != 0:
        return None
    for name in SERVICE_USERS:
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(CREATED_USER)
    result = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", CREATED_USER],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"useradd {CREATED_USER} failed: {result.stderr.strip()}")
    return pwd.getpwnam(CREATED_USER)


def _reachable_by_others(folder: Path) -> bool:
    return all(part.stat().st_mode & stat.S_IXOTH for part in (folder, *folder.parents))


def _temporary_root() -> str:
    # The service account must traverse every parent of its folder: TMPDIR may be
    # private to root (pytest's own tmp_path is 0700), /tmp is open to everyone.
    candidate = Path(tempfile.gettempdir())
    return str(candidate) if _reachable_by_others(candidate) else "/tmp"


@dataclass
class Postgres:
    """A running PostgreSQL server with one empty database."""

    bin_dir: Path
    folder: Path
    user: pwd.struct_passwd | None
    port: int
    database: str

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def server_log(self) -> Path:
        return self.folder / "postgres.log"

    @property
    def setup_log(self) -> Path:
        return self.folder / "setup.log"

    @property
    def logs(self) -> list[Path]:
        return [self.setup_log, self.server_log]

    @property
    def url(self) -> str:
        """The SQLAlchemy URI MLflow takes (no password: trust authentication).

        The driver is named: SQLAlchemy 2.1 defaults ``postgresql://`` to psycopg 3,
        while the dev extra installs psycopg2-binary.
        """
        return f"postgresql+psycopg2://{ROLE}@127.0.0.1:{self.port}/{self.database}"

    def _environment(self) -> dict[str, str]:
        # A clean environment: the caller's PGHOST/PGPORT/PGDATA or locale must not
        # leak into the servers' settings. TZ spares initdb a scan of the zone files.
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LC_ALL": "C",
            "LANG": "C",
            "TZ": "UTC",
            "HOME": str(self.folder),
        }

    def run(self, program: str, *arguments: str, timeout: float) -> None:
        """Run a PostgreSQL program as the service account; output goes to setup.log."""
        argv = [str(self.bin_dir / program), *arguments]
        account: dict[str, Any] = {}
        if self.user is not None:
            account = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        with self.setup_log.open("ab") as log:
            log.write(f"$ {shlex.join(argv)}\n".encode())
            log.flush()
            try:
                result = subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=self._environment(),
                    timeout=timeout,
                    check=False,
                    **account,
                )
            except subprocess.TimeoutExpired:
                message = f"{program} did not finish within {timeout:.0f} s"
                raise ServerError(message, self.logs) from None
        if result.returncode != 0:
            raise ServerError(f"{program} exited with code {result.returncode}", self.logs)

    def start(self, timeout: float) -> None:
        # Durability is pointless for a database deleted within a minute; without the
        # flushes, MLflow's migrations do not wait on a slow disk's fsync (on a disk
        # where fsync is cheap, as here, it makes no measurable difference).
        options = [
            f"-p {self.port}",
            f"-k {shlex.quote(str(self.folder))}",
            "-h 127.0.0.1",
            "-c fsync=off",
            "-c synchronous_commit=off",
            "-c full_page_writes=off",
        ]
        self.run(
            "pg_ctl",
            *("-D", str(self.data), "-l", str(self.server_log), "-w", "-t", f"{timeout:.0f}"),
            *("-o", " ".join(options), "start"),
            timeout=timeout + 10,
        )

    def stop(self) -> None:
        """Stop the server: pg_ctl first, then SIGKILL to the postmaster if that fails."""
        with contextlib.suppress(ServerError):
            self.run(
                "pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop", timeout=40
            )
        pid = self._postmaster_pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _postmaster_pid(self) -> int | None:
        # postmaster.pid outlives a crash, and its pid may have been reused since: only
        # a process whose command line names our data folder is ours to kill.
        try:
            pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            return None
        return pid if str(self.data).encode() in command else None


@contextlib.contextmanager
def postgres_server(
    bin_dir: Path, *, database: str = "mlflow", timeout: float = 60.0
) -> Iterator[Postgres]:
    """A fresh PostgreSQL cluster on a free loopback port, removed on exit.

    Authentication is ``trust``: the server accepts loopback connections only, its
    socket sits in a private folder, and it lives for the duration of a test.
    """
    user = _service_user()
    folder = Path(tempfile.mkdtemp(prefix="docevals-pg-", dir=_temporary_root()))
    server = Postgres(bin_dir, folder, user, port=0, database=database)
    try:
        if user is not None:
            os.chown(folder, user.pw_uid, user.pw_gid)
        server.run(
            "initdb",
            *("-D", str(server.data), "-U", ROLE, "--auth=trust"),
            *("--encoding=UTF8", "--locale=C", "--no-sync"),
            timeout=timeout,
        )
        for attempt in range(PORT_ATTEMPTS):
            server.port = free_port()
            try:
                server.start(timeout)
                break
            except ServerError:
                if attempt + 1 == PORT_ATTEMPTS or not _port_taken(server.server_log):
                    raise
                # Start over with a clean log, so the next check sees the new attempt only.
                server.server_log.unlink(missing_ok=True)
        server.run(
            "createdb",
            *("-h", "127.0.0.1", "-p", str(server.port), "-U", ROLE, database),
            timeout=timeout,
        )
        yield server
    finally:
        try:
            server.stop()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


# --- MLflow tracking server ----------------------------------------------------------

LOG_NAME = "mlflow-server.log"


@dataclass
class MlflowServer:
    """A running ``mlflow server``."""

    process: subprocess.Popen[bytes]
    port: int
    folder: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / LOG_NAME

    @property
    def artifacts(self) -> Path:
        return self.folder / "artifacts"


def _stop_group(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL, to the process group the server leads (its workers too)."""
    # start_new_session made the server's pid its group id. Workers stay in the group
    # even when the parent exits first, so the group gets SIGKILL after the grace
    # period whatever the parent did; a group already empty raises ProcessLookupError.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)


def _no_proxy_opener() -> urllib.request.OpenerDirector:
    # A proxy configured in the environment must not intercept loopback requests.
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _wait_for_health(server: MlflowServer, timeout: float) -> None:
    opener = _no_proxy_opener()
    deadline = time.monotonic() + timeout
    while True:
        code = server.process.poll()
        if code is not None:
            raise ServerError(
                f"mlflow server exited with code {code} before answering /health", [server.log]
            )
        try:
            with opener.open(f"{server.url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass  # not listening yet, or still running migrations
        if time.monotonic() > deadline:
            raise ServerError(
                f"mlflow server did not answer /health within {timeout:.0f} s", [server.log]
            )
        time.sleep(0.25)


def _launch(backend_uri: str, folder: Path, port: int) -> MlflowServer:
    environment = dict(os.environ)
    environment.update(
        {
            # No network beyond loopback: the server must not try to send usage telemetry.
            "MLFLOW_DISABLE_TELEMETRY": "true",
            "DO_NOT_TRACK": "true",
            # The job runner (seven huey processes, for GenAI jobs) is not needed for
            # tracking; it slows the start and leaves its queue folder in /dev/shm when
            # the server is killed.
            "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
        }
    )
    argv = [
        # The test's own interpreter, so the server runs the same MLflow and driver.
        *(sys.executable, "-m", "mlflow", "server"),
        *("--backend-store-uri", backend_uri),
        *("--artifacts-destination", str(folder / "artifacts")),
        *("--host", "127.0.0.1", "--port", str(port)),
        # One worker starts fastest and is plenty for one client.
        *("--workers", "1"),
        # Explicit rather than the default list: the clients send Host 127.0.0.1:<port>
        # and this checks that the security middleware lets exactly that through.
        *("--allowed-hosts", f"127.0.0.1:{port}"),
    ]
    with (folder / LOG_NAME).open("ab") as log:
        log.write(f"$ {shlex.join(argv)}\n".encode())
        log.flush()
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environment,
            # Its working folder is the temporary one, so nothing lands in the work tree.
            cwd=folder,
            start_new_session=True,
        )
    return MlflowServer(process, port, folder)


@contextlib.contextmanager
def mlflow_server(
    backend_uri: str, folder: Path, *, timeout: float = 90.0
) -> Iterator[MlflowServer]:
    """``mlflow server`` on ``backend_uri``, answering /health, stopped on exit.

    Artifacts are proxied by the server into ``folder/artifacts``; its output goes to
    ``folder/mlflow-server.log``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for attempt in range(PORT_ATTEMPTS):
        server = _launch(backend_uri, folder, free_port())
        try:
            _wait_for_health(server, timeout)
            break
        except BaseException as exc:
            _stop_group(server.process)
            retry = isinstance(exc, ServerError) and _port_taken(server.log)
            if attempt + 1 == PORT_ATTEMPTS or not retry:
                raise
            server.log.rename(server.log.with_suffix(f".{attempt}.log"))
    try:
        yield server
    finally:
        _stop_group(server.process)
