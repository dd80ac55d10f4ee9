"""Runs survive the process: resume in a new process, and after a hard kill."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from tests.helpers import HELPERS
from tests.helpers.crash_harness import crash_mid_tool, finished_calls, run_agent

AGENT = HELPERS / "durable_agent.py"
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


@pytest.mark.parametrize("pattern", ["react", "react_text"])
def test_resume_after_an_interrupt_in_a_new_process(
    store: str, tmp_path: Path, pattern: str
) -> None:
    db, log = store, tmp_path / "tools.log"

    first = run_agent(AGENT, db, str(log), "approval", PATTERN=pattern)
    (call,) = first["interrupts"][0]["calls"]
    assert (call["name"], call["args"]) == ("deploy", {"item": "prod"})
    assert not log.exists()

    approve = json.dumps([{"type": "approve"}])
    second = run_agent(AGENT, db, str(log), "approval", approve, PATTERN=pattern)
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
    # one call has finished and been saved; another is still running
    crash_mid_tool(AGENT, db, log, mode, thread_id=os.environ["THREAD_ID"], saved=finished_line)
    assert "done first first" in log.read_text()

    result = run_agent(AGENT, db, str(log), mode, "null", SLOW="0")

    assert result["last"] == "all done"
    finished = finished_calls(log)
    assert sorted(finished) == ["done first first", "done second second", "done third third"]
    if mode == "ordered":
        assert finished == ["done first first", "done second second", "done third third"]
