"""A stateful call that finished before a hard kill is not run again on resume.

ReAct's guarantee: each finished call is saved before the next one starts.
The driver kills itself with SIGKILL the moment call ``b`` starts, so call
``a`` had finished and its result must be on disk. Checkpointer writes are
slowed, as a remote database's are, so a result saved only in the background
(a task write, or a checkpoint under ``durability="async"``) is reliably lost
instead of now and then.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import HELPERS
from tests.helpers.crash_harness import agent_env, run_agent
from tests.helpers.crash_windows import repeated_after_finishing

AGENT = HELPERS / "crash_window_agent.py"


@pytest.mark.parametrize("pattern", ["react", "plan_execute", "lats", "llm_compiler"])
def test_a_call_finished_before_a_kill_is_not_repeated(tmp_path: Path, pattern: str) -> None:
    db, log = str(tmp_path / "runs.sqlite"), tmp_path / "tools.log"
    env = agent_env(THREAD_ID="crash", KILL_AT="b", WRITE_DELAY="0.1")
    killed = subprocess.run(
        [sys.executable, str(AGENT), db, str(log), pattern],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    assert log.read_text().splitlines() == ["start a", "finish a", "start b", "kill"]

    result = run_agent(AGENT, db, str(log), pattern, "resume", THREAD_ID="crash")

    assert result["outcome"] == {"status": "answered"}
    lines = log.read_text().splitlines()
    assert repeated_after_finishing(lines) == []
    assert [line for line in lines if line.startswith("finish")] == [
        "finish a",
        "finish b",
        "finish c",
    ]
