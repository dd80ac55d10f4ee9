"""Aegra, the open engine for ``langgraph.json``, run as several replicas for tests.

Aegra serves LangGraph's HTTP API (so ``langgraph_sdk`` talks to it) from PostgreSQL, with
Redis as the broker between processes. :func:`aegra_cluster` starts what a deployment of
several machines has, on this one: a private ``redis-server``, a fresh database on the
PostgreSQL server ``$REASONING_GRAPHS_TEST_POSTGRES`` names, the schema, then the replicas.
Aegra needs Python >= 3.12, so it runs from a venv of its own (``.ci/aegra.sh`` makes it and
prints its python for ``$REASONING_GRAPHS_TEST_AEGRA``): that python runs the graphs, not the
test's. Without either variable the tests skip; ``REASONING_GRAPHS_REQUIRE_AEGRA=1`` (CI)
makes that a failure. :func:`aegra_fixture` makes a ready fixture of it.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NoReturn

import pytest

from tests.helpers.dev_server import stop
from tests.helpers.openai_server import free_port
from tests.helpers.postgres_db import POSTGRES_ENV, drop_database, with_database

AEGRA_ENV = "REASONING_GRAPHS_TEST_AEGRA"
"""The python of a venv with ``aegra-api`` and this project (``.ci/aegra.sh`` prints it)."""
REQUIRE_ENV = "REASONING_GRAPHS_REQUIRE_AEGRA"
"""Set to 1 where Aegra must run (CI): a missing setting then fails instead of skipping."""
REPO = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 90.0

LEASES = {
    "LEASE_DURATION_SECONDS": "6",
    "HEARTBEAT_INTERVAL_SECONDS": "2",
    "REAPER_INTERVAL_SECONDS": "2",
    "STUCK_PENDING_THRESHOLD_SECONDS": "10",
}
"""Short leases: a killed replica's run is taken over within ~8 s, not Aegra's ~50 s.
Aegra demands a lease longer than two heartbeats. A queued run no worker ever claimed
is queued again after 10 s, not Aegra's 120."""

POOLS = {
    "SQLALCHEMY_POOL_SIZE": "4",
    "SQLALCHEMY_MAX_OVERFLOW": "6",
    "LANGGRAPH_MIN_POOL_SIZE": "1",
    "LANGGRAPH_MAX_POOL_SIZE": "8",
    "WORKER_COUNT": "2",
    "N_JOBS_PER_WORKER": "3",
}
"""Small pools, and few enough runs at once for them: Aegra's defaults (up to 50
connections and 30 runs a replica) would fill a test server's 100 connections with two
replicas, and 30 runs on a pool of 10 wait on each other for connections until the pool
times out and drops the run it was starting (measured: 20 double resumes at once)."""

MIGRATE = """
import asyncio

from aegra_api.config import load_store_config
from aegra_api.core.migrations import run_migrations
from aegra_api.settings import settings
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres.aio import AsyncPostgresStore


async def langgraph_tables() -> None:
    url = settings.db.database_url_sync
    index = (load_store_config() or {}).get("index")
    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        await saver.setup()
    async with AsyncPostgresStore.from_conn_string(url, index=index) as store:
        await store.setup()


run_migrations()
asyncio.run(langgraph_tables())
"""
"""The schema, made once before any replica starts: Aegra's own tables (``aegra db
upgrade``) and LangGraph's checkpointer and store tables, which every replica sets up
as it starts and which two replicas starting on an empty database race to create."""

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail where ``$REASONING_GRAPHS_REQUIRE_AEGRA`` says Aegra must run."""
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1, but {reason}")
    pytest.skip(reason)


def aegra_settings() -> tuple[str, str]:
    """The Aegra python and the PostgreSQL server's URL, or a skip saying how to set them."""
    python = os.environ.get(AEGRA_ENV)
    dsn = os.environ.get(POSTGRES_ENV)
    if not python:
        unavailable(f"set {AEGRA_ENV} to the python `bash .ci/aegra.sh` prints to run this")
    if not dsn:
        unavailable(f"set {POSTGRES_ENV} to a postgresql:// URL (.ci/postgres.sh) to run this")
    if not os.access(python, os.X_OK):
        unavailable(f"{AEGRA_ENV}={python} is not an executable python")
    return python, dsn


def create_database(dsn: str) -> str:
    """A new empty database ``aegra_<hex>`` on the server; its URL."""
    import psycopg

    name = f"aegra_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(dsn, name)


def engine_env(
    python: str, database_url: str, redis_url: str, config: Path, workspace: Path
) -> dict[str, str]:
    """What every Aegra process gets: no LangSmith, no analytics, the broker on, migrations
    left to :data:`MIGRATE`, short leases, small pools; the Aegra venv first on ``PATH``
    and the repository importable (a test's graphs may import ``tests.helpers``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    bin_dir = str(Path(python).parent)
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        PYTHONDONTWRITEBYTECODE="1",
        PATH=os.pathsep.join([bin_dir, env.get("PATH", "")]),
        VIRTUAL_ENV=str(Path(bin_dir).parent),
        PYTHONPATH=os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH", "")] if p),
        AEGRA_CONFIG=str(config.resolve()),
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        REDIS_BROKER_ENABLED="true",
        RUN_MIGRATIONS_ON_STARTUP="false",
        REASONING_GRAPHS_WORKSPACE=str(workspace),
        **LEASES,
        **POOLS,
    )
    env.pop("PYTHONHOME", None)
    return env


def answers(url: str) -> bool:
    """Whether ``GET url`` answers 200 now."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def redis_answers(port: int) -> bool:
    """Whether a Redis server answers ``PING`` on the loopback ``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_redis(scratch: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A private ``redis-server`` without persistence, on a free loopback port, and its URL."""
    port = free_port()
    log = scratch / "redis.log"
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1"]
    command += ["--save", "", "--appendonly", "no", "--dir", str(scratch)]
    command += ["--logfile", str(log)]
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True
        )
    except FileNotFoundError:
        unavailable("redis-server is not installed (`bash .ci/aegra.sh` installs it)")
    deadline = time.monotonic() + 10
    while not redis_answers(port):
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process, timeout=0)
            text = log.read_text(errors="replace") if log.exists() else ""
            pytest.fail(f"redis-server did not start on port {port}:\n{text}")
        time.sleep(0.05)
    return process, f"redis://127.0.0.1:{port}/0"


def migrate(python: str, env: Mapping[str, str], scratch: Path) -> None:
    """Run :data:`MIGRATE` with the Aegra python; fail with its output when it fails."""
    done = subprocess.run(
        [python, "-c", MIGRATE],
        cwd=scratch,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=STARTUP_TIMEOUT,
        check=False,
    )
    (scratch / "migrate.log").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        pytest.fail(f"Aegra's migrations failed ({done.returncode}):\n{done.stderr[-4000:]}")


@dataclass
class AegraCluster:
    """Running Aegra replicas sharing one database and one Redis.

    ``urls[i]``, ``pids[i]`` and ``log(i)`` belong to replica ``i``; a replica that
    :meth:`kill` stopped can be started again on its port with :meth:`restart`.
    """

    python: str
    env: dict[str, str]
    scratch: Path
    database_url: str
    redis_url: str
    urls: list[str] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def log_path(self, i: int) -> Path:
        """Where replica ``i`` writes its output (kept across restarts)."""
        return self.scratch / f"aegra-{i}.log"

    def log(self, i: int) -> str:
        """Replica ``i``'s output so far, without colour codes."""
        path = self.log_path(i)
        return ANSI.sub("", path.read_text(errors="replace")) if path.exists() else ""

    def tail(self, i: int, lines: int = 60) -> str:
        """The last lines of :meth:`log`, for failure messages."""
        return "\n".join(self.log(i).splitlines()[-lines:])

    def start(self, port: int | None = None) -> int:
        """Start one more replica (on a free port unless given) and wait until it is healthy;
        its index."""
        i = len(self.urls)
        self.urls.append(f"http://127.0.0.1:{port or free_port()}")
        self.pids.append(0)
        self.processes.append(self._launch(i))
        return i

    def restart(self, i: int) -> None:
        """Start replica ``i`` again, on its own port, after :meth:`kill` or a crash."""
        if self.processes[i].poll() is None:
            raise RuntimeError(f"replica {i} is still running (pid {self.pids[i]})")
        self.processes[i] = self._launch(i)

    def kill(self, i: int) -> None:
        """SIGKILL replica ``i``: a crash, with no chance to drain or hand back its runs."""
        process = self.processes[i]
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def runner(self, run_id: str) -> int | None:
        """The replica whose worker picked up ``run_id`` last (Redis hands a run to any
        replica, whichever one was asked), by its log; ``None`` before any did."""
        picked = [
            (line[:32], i)
            for i in range(len(self.urls))
            for line in self.log(i).splitlines()
            if "Worker picked up run" in line and run_id in line
        ]
        return max(picked)[1] if picked else None

    def alive(self, i: int) -> bool:
        """Whether replica ``i``'s process is running."""
        return self.processes[i].poll() is None

    def close(self) -> None:
        """Stop every replica, all at once: each drains its runs in parallel."""
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            stop(process)

    def _launch(self, i: int) -> subprocess.Popen[bytes]:
        port = self.urls[i].rsplit(":", 1)[1]
        command = [self.python, "-m", "uvicorn", "aegra_api.main:app"]
        command += ["--host", "127.0.0.1", "--port", port, "--no-access-log"]
        env = {**self.env, "HOST": "127.0.0.1", "PORT": port}
        with self.log_path(i).open("ab") as log:
            process = subprocess.Popen(
                command,
                cwd=self.scratch,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.pids[i] = process.pid
        self._wait_healthy(i, process)
        return process

    def _wait_healthy(self, i: int, process: subprocess.Popen[bytes]) -> None:
        """Poll ``GET /health`` (database, checkpointer and store reachable) until it
        answers; fail early if the replica exits or loses its port to someone else."""
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"Aegra replica {i} exited with {process.returncode}:\n{self.tail(i)}")
            if answers(f"{self.urls[i]}/health"):
                return
            time.sleep(0.1)
        stop(process)
        pytest.fail(f"Aegra replica {i} not healthy in {STARTUP_TIMEOUT:.0f} s:\n{self.tail(i)}")


@contextmanager
def aegra_cluster(
    config: Path,
    scratch: Path,
    *,
    replicas: int = 2,
    env: Mapping[str, str] | None = None,
) -> Iterator[AegraCluster]:
    """Serve ``config`` (a ``langgraph.json``, its paths relative to its own folder) from
    ``replicas`` Aegra processes, started one after another: on a new database each one's
    first start inserts the default assistants, and two at once collide there.

    ``env`` is added to every Aegra process's environment (over the defaults above).
    Skips (or fails, see :func:`unavailable`) without the settings. On exit the replicas
    and Redis stop and the database is dropped.
    """
    python, dsn = aegra_settings()
    scratch.mkdir(parents=True, exist_ok=True)
    workspace = scratch / "workspace"
    workspace.mkdir(exist_ok=True)
    database_url = create_database(dsn)
    redis: subprocess.Popen[bytes] | None = None
    cluster: AegraCluster | None = None
    try:
        redis, redis_url = start_redis(scratch)
        settings = engine_env(python, database_url, redis_url, config, workspace)
        settings.update(env or {})
        migrate(python, settings, scratch)
        cluster = AegraCluster(python, settings, scratch, database_url, redis_url)
        for _ in range(replicas):
            cluster.start()
        yield cluster
    finally:
        if cluster is not None:
            cluster.close()
        if redis is not None:
            stop(redis)
        drop_database(dsn, database_url)


def aegra_fixture(
    config: Path,
    *,
    replicas: int = 2,
    env: Mapping[str, str] | None = None,
    scope: Literal["function", "module", "session"] = "module",
) -> Callable[..., Iterator[AegraCluster]]:
    """A fixture serving ``config`` from an :func:`aegra_cluster`: starting one takes
    seconds, so by default a test module shares it. Assign it in the test module,
    ``aegra = aegra_fixture(REPO / "langgraph.json")``, and ask for ``aegra``."""

    @pytest.fixture(scope=scope)
    def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AegraCluster]:
        with aegra_cluster(
            config, tmp_path_factory.mktemp("aegra"), replicas=replicas, env=env
        ) as running:
            yield running

    return cluster
