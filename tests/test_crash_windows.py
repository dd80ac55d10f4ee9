"""A stateful call that finished before a hard kill is not run again on resume.

ReAct's guarantee: each finished call is saved before the next one starts.
The driver kills itself with SIGKILL the moment call ``b`` starts, so call
``a`` had finished and its run must be on disk. Task writes are slowed, as a
remote checkpointer's are, so a result that is saved only in the background
is reliably lost instead of now and then.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from crash_harness import agent_env, run_agent

AGENT = Path(__file__).with_name("crash_window_agent.py")


def repeated_after_finishing(lines: list[str]) -> list[str]:
    """Calls that started again after a kill although they had finished before it."""
    finished: set[str] = set()
    before_kill: set[str] = set()
    repeated = []
    for line in lines:
        if line == "kill":
            before_kill |= finished
        elif line.startswith("start ") and line[6:] in before_kill:
            repeated.append(line[6:])
        elif line.startswith("finish "):
            finished.add(line[7:])
    return repeated


@pytest.mark.parametrize("pattern", ["react", "plan_execute", "lats"])
def test_a_call_finished_before_a_kill_is_not_repeated(tmp_path: Path, pattern: str) -> None:
    db, log = str(tmp_path / "runs.sqlite"), tmp_path / "tools.log"
    env = agent_env(THREAD_ID="crash", KILL_AT="b", WRITE_DELAY="0.3")
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
