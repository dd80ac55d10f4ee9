"""The crash-and-resume harness the durability tests share.

Two sides: the agent drivers (``*_agent.py``, run as separate processes)
build their tools and checkpointer here, and the tests start, kill and
resume those drivers here.

Driver side: ``python DRIVER.py DB LOG [ARGS…]``, where DB is a SQLite file
path or a ``postgresql://`` connection string and every tool appends a line
to LOG when it finishes (``done NAME ITEM``); a slow tool also appends one
when it starts (``start NAME``) and then sleeps for two minutes, unless
``SLOW=0``. The thread id comes from ``$THREAD_ID``. These tools are idempotent,
so a call killed while it runs runs again on resume (test_unknown_outcome.py
kills tools that are not).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from reasoning_graphs import checkpointers
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
SLOW_SECONDS = 120

# --- the driver's side ----------------------------------------------------------------------


def command_line() -> tuple[str, Path, list[str]]:
    """The driver's arguments: DB, LOG and the rest."""
    return sys.argv[1], Path(sys.argv[2]), sys.argv[3:]


def thread_config(default: str) -> dict[str, Any]:
    """The run config for the thread ``$THREAD_ID`` (``default`` when unset); with
    ``$RUN_ID``, the run carries that id as an engine's runs do (in its metadata)."""
    config: dict[str, Any] = {"configurable": {"thread_id": os.environ.get("THREAD_ID", default)}}
    if os.environ.get("RUN_ID"):
        config["metadata"] = {"run_id": os.environ["RUN_ID"]}
    return config


def logging_tool(log: Path, name: str, *, slow: bool, **options: Any) -> ToolSpec:
    """A tool ``name(item)`` that writes to ``log``; ``options`` go to :func:`tool_spec`
    (``idempotent`` unless they say otherwise)."""

    def run(item: str) -> str:
        if slow and os.environ.get("SLOW", "1") == "1":
            with log.open("a") as out:
                out.write(f"start {name}\n")
            time.sleep(SLOW_SECONDS)
        with log.open("a") as out:
            out.write(f"done {name} {item}\n")
        return f"{name} done with {item}"

    run.__name__ = name
    run.__doc__ = f"Test tool {name}."
    return tool_spec(run, **{"idempotent": True, **options})


def open_checkpointer(db: str) -> BaseCheckpointSaver:
    """The library's checkpointer for ``db``: a SQLite file path or a ``postgresql://`` URL."""
    return checkpointers.open_checkpointer(db if checkpointers.url_scheme(db) else Path(db))


def report(result: dict[str, Any]) -> None:
    """Print the driver's result as the JSON line the test reads."""
    print(json.dumps(result))


# --- the test's side ------------------------------------------------------------------------


def agent_env(**extra: str) -> dict[str, str]:
    """This environment plus ``extra``, with the source tree and ``tests.helpers`` importable."""
    env = dict(os.environ, **extra)
    paths = [str(SRC), str(REPO), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    return env


def run_agent(agent: Path, *args: str, **env: str) -> dict:
    """Run the driver to the end; it must succeed. Its last line of output, as JSON."""
    done = subprocess.run(
        [sys.executable, str(agent), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=agent_env(**env),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def saved_observation(store: str | Path, thread_id: str, text: str) -> bool:
    """True once the checkpointer has stored a task write of the thread containing ``text``."""
    store = str(store)
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


def wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the agent")
        time.sleep(0.05)


def crash_mid_tool(
    agent: Path,
    store: str | Path,
    log: Path,
    *args: str,
    thread_id: str,
    saved: str,
    running: str = "second",
    **env: str,
) -> None:
    """Start the driver (``agent STORE LOG ARGS…``) on ``thread_id`` and kill it hard mid-run.

    The kill (SIGKILL to its whole process group) comes once a tool result
    containing ``saved`` is in the checkpointer and the slow tool ``running``
    has started.
    """
    process = subprocess.Popen(
        [sys.executable, str(agent), str(store), str(log), *args],
        env=agent_env(THREAD_ID=thread_id, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_for(lambda: saved_observation(store, thread_id, saved))
        wait_for(lambda: log.exists() and f"start {running}" in log.read_text())
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def finished_calls(log: Path) -> list[str]:
    """The ``done …`` lines of the tool log, in order."""
    return [line for line in log.read_text().splitlines() if line.startswith("done")]
