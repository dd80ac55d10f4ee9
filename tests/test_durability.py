"""Runs survive the process: resume in a new process, and after a hard kill."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

AGENT = Path(__file__).with_name("durable_agent.py")
SRC = Path(__file__).resolve().parents[1] / "src"
POSTGRES_ENV = "REASONING_GRAPHS_TEST_POSTGRES"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh durable store: a SQLite file, or a thread in the PostgreSQL from the environment."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    dsn = os.environ.get(POSTGRES_ENV)
    if not dsn:
        pytest.skip(f"set {POSTGRES_ENV} to a PostgreSQL connection string to run this")
    pytest.importorskip("langgraph.checkpoint.postgres", reason="pip install '.[postgres]'")
    return dsn


@pytest.fixture(autouse=True)
def fresh_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THREAD_ID", f"durable-{uuid.uuid4().hex[:8]}")


def agent_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    return env


def run_agent(*args: str, **env: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(AGENT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=agent_env(**env),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def saved_observation(store: str, text: str) -> bool:
    """True once the checkpointer has stored a task write of this thread containing ``text``."""
    thread_id = os.environ["THREAD_ID"]
    if store.startswith("postgresql://"):
        import psycopg

        query = (
            "SELECT count(*) FROM checkpoint_writes "
            "WHERE thread_id = %s AND position(%s::bytea in blob) > 0"
        )
        try:
            with psycopg.connect(store) as conn:
                return conn.execute(query, (thread_id, text.encode())).fetchone()[0] > 0
        except psycopg.errors.UndefinedTable:
            return False
    if not Path(store).exists():
        return False
    query = "SELECT count(*) FROM writes WHERE thread_id = ? AND instr(CAST(value AS TEXT), ?) > 0"
    try:
        with sqlite3.connect(store) as conn:
            return conn.execute(query, (thread_id, text)).fetchone()[0] > 0
    except sqlite3.OperationalError:  # tables not created yet
        return False


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the agent")
        time.sleep(0.05)


@pytest.mark.parametrize("pattern", ["react", "react_text"])
def test_resume_after_an_interrupt_in_a_new_process(
    store: str, tmp_path: Path, pattern: str
) -> None:
    db, log = store, tmp_path / "tools.log"

    first = run_agent(db, str(log), "approval", PATTERN=pattern)
    (call,) = first["interrupts"][0]["calls"]
    assert (call["name"], call["args"]) == ("deploy", {"item": "prod"})
    assert not log.exists()

    approve = json.dumps([{"type": "approve"}])
    second = run_agent(db, str(log), "approval", approve, PATTERN=pattern)
    assert second["interrupts"] == []
    assert second["last"] == "deployed"
    assert log.read_text().splitlines() == ["done deploy prod"]


@pytest.mark.parametrize(
    ("mode", "finished_line"),
    [("parallel", "first done with first"), ("ordered", "first done with first")],
)
def test_a_call_finished_before_a_crash_is_not_run_again(
    store: str, tmp_path: Path, mode: str, finished_line: str
) -> None:
    db, log = store, tmp_path / "tools.log"
    agent = subprocess.Popen(
        [sys.executable, str(AGENT), db, str(log), mode],
        env=agent_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        # one call has finished and been saved; another is still running
        wait_for(lambda: saved_observation(db, finished_line))
        wait_for(lambda: log.exists() and "start second" in log.read_text())
    finally:
        os.killpg(agent.pid, signal.SIGKILL)
        agent.wait()
    assert "done first first" in log.read_text()

    result = run_agent(db, str(log), mode, "null", SLOW="0")

    assert result["last"] == "all done"
    finished = [line for line in log.read_text().splitlines() if line.startswith("done")]
    assert sorted(finished) == ["done first first", "done second second", "done third third"]
    if mode == "ordered":
        assert finished == ["done first first", "done second second", "done third third"]
