"""A person's answer survives a hard kill right after the resume (ReAct, LLM Compiler, LATS).

Three real processes per thread (answer_kept_agent.py, SQLite file): the
first asks and gets the approval request for one dangerous ``transfer``; the
second resumes with an approval and is killed with SIGKILL; the third
continues the thread with ``invoke(None)``. The person must not be asked the
plain question again: either nothing is asked and the transfer runs, or —
only when the kill landed while the transfer ran — every call put to them is
marked ``possibly_ran``.

Two kills: one ~0.05 s after the approved transfer started (it runs for a
second), and one right after the first checkpoint of the resumed run is
saved, which must be the step that took the answer, saved before the
transfer starts. A step that both took the answer and ran the call (as LLM
Compiler's ``schedule`` and LATS's ``act`` could) would lose the answer to
the first kill, since LangGraph keeps a resume value only until the step
that asked is saved, and would start the call before the second. ReAct,
whose ``approve`` step runs nothing, is the reference.

One process asks on every thread and one continues them all, to keep the
number of Python start-ups (about two seconds each here) down.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import HELPERS
from tests.helpers.crash_harness import agent_env, run_agent

AGENT = HELPERS / "answer_kept_agent.py"
PATTERNS = ["react", "llm_compiler", "lats"]
KILL_DELAY = 0.05
WAIT_SECONDS = 60.0


@dataclass(frozen=True)
class Kill:
    """Where the resuming process is killed: ``KILL_DELAY`` after ``line`` is logged."""

    name: str
    line: str
    env: dict[str, str]


WHILE_RUNNING = Kill("while-running", "start transfer", {})
AFTER_DECISION_SAVED = Kill("after-decision-saved", "saved", {"PAUSE": "saved"})


@dataclass(frozen=True)
class Outcome:
    """One thread after its kill and its continuation.

    Attributes:
        at_kill: The tool log's lines when the resuming process was killed.
        log: All the tool log's lines at the end.
        continued: What the continuing process reported (interrupts, decisions).
    """

    at_kill: list[str]
    log: list[str]
    continued: dict[str, Any]


def thread_id(pattern: str, kill: Kill) -> str:
    return f"{pattern}-{kill.name}"


def log_lines(folder: Path, thread: str) -> list[str]:
    path = folder / f"{thread}.log"
    return path.read_text().splitlines() if path.exists() else []


def approve_and_kill(folder: Path, kills: dict[str, Kill]) -> dict[str, list[str]]:
    """Resume every thread with an approval, each in its own process, all at once; kill each
    ``KILL_DELAY`` after its kill line is logged. The log lines at each kill, by thread."""
    running = {
        thread: subprocess.Popen(
            [sys.executable, str(AGENT), str(folder), "approve", thread],
            env=agent_env(**kill.env),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for thread, kill in kills.items()
    }
    logged_at: dict[str, float] = {}
    at_kill: dict[str, list[str]] = {}
    deadline = time.monotonic() + WAIT_SECONDS
    try:
        while running:
            assert time.monotonic() < deadline, f"never logged their kill line: {list(running)}"
            for thread, process in list(running.items()):
                assert process.poll() is None, process.communicate()[1]
                if thread not in logged_at and kills[thread].line in log_lines(folder, thread):
                    logged_at[thread] = time.monotonic()
                if time.monotonic() >= logged_at.get(thread, float("inf")) + KILL_DELAY:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    at_kill[thread] = log_lines(folder, thread)
                    del running[thread]
            time.sleep(0.01)
    finally:
        for process in running.values():
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return at_kill


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every pattern's thread for each kill: asked, approved and killed, then continued."""
    folder = tmp_path_factory.mktemp("answer-kept")
    kills = {
        thread_id(pattern, kill): kill
        for pattern in PATTERNS
        for kill in (WHILE_RUNNING, AFTER_DECISION_SAVED)
    }
    asked = run_agent(AGENT, str(folder), "ask", *kills)
    for thread, result in asked.items():
        assert plain_question(result["interrupts"]), thread
    at_kill = approve_and_kill(folder, kills)
    continued = run_agent(AGENT, str(folder), "continue", *kills)
    return {
        thread: Outcome(at_kill[thread], log_lines(folder, thread), continued[thread])
        for thread in kills
    }


def calls_asked(interrupts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [call for request in interrupts for call in request["calls"]]


def plain_question(interrupts: list[dict[str, Any]]) -> bool:
    """An approval request for ``transfer`` that does not say it may have run."""
    calls = calls_asked(interrupts)
    return bool(calls) and all(
        call["name"] == "transfer" and not call.get("possibly_ran") for call in calls
    )


def assert_answer_kept(outcome: Outcome) -> None:
    """The person is not asked the plain question again after the kill."""
    was_running = "start transfer" in outcome.at_kill and "done transfer 100" not in outcome.at_kill
    interrupts = outcome.continued["interrupts"]
    if not interrupts:
        assert outcome.continued["decisions"] == ["approved"]
        assert outcome.log.count("done transfer 100") == 1
        return
    assert not plain_question(interrupts), "the person's answer was lost: asked again"
    assert was_running, "asked again about a call that had not started"
    assert all(call.get("possibly_ran") is True for call in calls_asked(interrupts))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_an_answer_survives_a_kill_while_the_approved_call_runs(
    outcomes: dict[str, Outcome], pattern: str
) -> None:
    outcome = outcomes[thread_id(pattern, WHILE_RUNNING)]
    assert "done transfer 100" not in outcome.at_kill  # the kill landed mid-call

    assert_answer_kept(outcome)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_answer_is_saved_before_the_approved_call_starts(
    outcomes: dict[str, Outcome], pattern: str
) -> None:
    outcome = outcomes[thread_id(pattern, AFTER_DECISION_SAVED)]
    # the first checkpoint of the resumed run is saved before the transfer starts
    assert "start transfer" not in outcome.at_kill

    assert_answer_kept(outcome)
    assert outcome.continued["interrupts"] == []  # nothing had started: nothing to ask
