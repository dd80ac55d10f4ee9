"""Runs survive the process: resume in a new process, and after a hard kill."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

AGENT = Path(__file__).with_name("durable_agent.py")
SRC = Path(__file__).resolve().parents[1] / "src"


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


def saved_observation(db: Path, text: str) -> bool:
    """True once the checkpointer has stored a task write that contains ``text``."""
    if not db.exists():
        return False
    try:
        with sqlite3.connect(db) as conn:
            query = "SELECT count(*) FROM writes WHERE instr(CAST(value AS TEXT), ?) > 0"
            return conn.execute(query, (text,)).fetchone()[0] > 0
    except sqlite3.OperationalError:  # tables not created yet
        return False


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the agent")
        time.sleep(0.05)


def test_resume_after_an_interrupt_in_a_new_process(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.sqlite", tmp_path / "tools.log"

    first = run_agent(str(db), str(log), "approval")
    assert first["interrupts"][0]["calls"][0]["id"] == "d1"
    assert not log.exists()

    second = run_agent(str(db), str(log), "approval", json.dumps([{"type": "approve"}]))
    assert second["interrupts"] == []
    assert second["last"] == "deployed"
    assert log.read_text().splitlines() == ["done deploy prod"]


@pytest.mark.parametrize(
    ("mode", "finished_line"),
    [("parallel", "first done with first"), ("ordered", "first done with first")],
)
def test_a_call_finished_before_a_crash_is_not_run_again(
    tmp_path: Path, mode: str, finished_line: str
) -> None:
    db, log = tmp_path / "runs.sqlite", tmp_path / "tools.log"
    agent = subprocess.Popen(
        [sys.executable, str(AGENT), str(db), str(log), mode],
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

    result = run_agent(str(db), str(log), mode, "null", SLOW="0")

    assert result["last"] == "all done"
    finished = [line for line in log.read_text().splitlines() if line.startswith("done")]
    assert sorted(finished) == ["done first first", "done second second", "done third third"]
    if mode == "ordered":
        assert finished == ["done first first", "done second second", "done third third"]
