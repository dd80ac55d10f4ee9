"""One run at a time per thread: two resumers never both run the approved call.

Real processes answer one waiting thread at the same moment, many times over,
on SQLite and PostgreSQL, through both faces and the CLI; a holder killed
with SIGKILL leaves its thread free; a run waiting for a busy thread on the
async face leaves the event loop free.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from reasoning_graphs.cli import exits
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.thread_lock import WAIT_OPTION, ThreadBusyError, hold
from tests.helpers import HELPERS
from tests.helpers.crash_harness import agent_env, open_checkpointer, run_agent
from tests.helpers.scripted_cli import command_line, listed_threads, run_process

AGENT = HELPERS / "thread_lock_agent.py"
TRIALS = 8
SLOT_SECONDS = 1.2
"""Time between two trials: one resume, whose deploy takes DEPLOY_SECONDS, and a wait."""
DEPLOY_SECONDS = 0.6


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A SQLite file, or a fresh PostgreSQL database (skipped without a server)."""
    if request.param == "sqlite":
        return str(tmp_path / "threads.sqlite")
    return request.getfixturevalue("postgres_url")


def deploys(log: Path) -> Counter[str]:
    """How many times each thread's deploy ran."""
    lines = log.read_text().splitlines() if log.exists() else []
    return Counter(line.split()[1] for line in lines)


def start_resumers(store: str, log: Path, threads: list[str], **env: str) -> subprocess.Popen:
    """A process that approves each of ``threads`` once it is told when to start."""
    env = agent_env(**{"BARRIER": "1", "DEPLOY_SECONDS": str(DEPLOY_SECONDS), **env})
    return subprocess.Popen(
        [sys.executable, str(AGENT), store, str(log), "resume", *threads],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def start_together(*processes: subprocess.Popen) -> None:
    """Once every process has loaded, give them all the same start time."""
    for process in processes:
        assert process.stdout.readline().strip() == "ready", process.stderr.read()
    start = time.time() + 0.2
    for process in processes:
        process.stdin.write(f"{start}\n")
        process.stdin.flush()


def results(process: subprocess.Popen) -> dict[str, Any]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("store", "face", "wait"),
    [
        ("sqlite", "sync", False),
        ("sqlite", "async", True),
        ("postgres", "async", False),
        ("postgres", "sync", True),
    ],
    indirect=["store"],
)
def test_two_processes_approving_one_thread_at_once_run_the_call_once(
    store: str, face: str, wait: bool, tmp_path: Path
) -> None:
    log = tmp_path / "deploys.log"
    threads = [f"race-{number}" for number in range(TRIALS)]
    run_agent(AGENT, store, str(log), "ask", *threads)

    env = {"FACE": face, "WAIT": "1" if wait else "0", "SLOT_SECONDS": str(SLOT_SECONDS)}
    resumers = [start_resumers(store, log, threads, **env) for _ in range(2)]
    start_together(*resumers)
    first, second = (results(process)["outcomes"] for process in resumers)

    assert deploys(log) == Counter(threads)  # every thread's deploy ran exactly once
    # the other resumer was refused, or waited and found nothing left to approve
    loser = "finished" if wait else "busy"
    assert all(sorted([first[t], second[t]]) == ["answered", loser] for t in threads), (
        first,
        second,
    )


def test_a_holder_killed_mid_run_does_not_keep_its_thread(store: str, tmp_path: Path) -> None:
    log = tmp_path / "deploys.log"
    run_agent(AGENT, store, str(log), "ask", "killed")
    holder = start_resumers(store, log, ["killed"], DEPLOY_SECONDS="120")
    start_together(holder)
    deadline = time.monotonic() + 60
    while not deploys(log) and time.monotonic() < deadline:  # it holds the thread, mid-deploy
        time.sleep(0.05)
    holder.kill()  # SIGKILL: no code of the holder runs again
    holder.communicate(timeout=30)

    after = run_agent(AGENT, store, str(log), "resume", "killed", WAIT="1")

    assert after["outcomes"]["killed"] != "busy"
    assert after["seconds"]["killed"] < 2.0
    assert deploys(log) == Counter(["killed"])


# --- in one process --------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    spec = str(tmp_path / "t.sqlite")
    if request.param == "postgres":
        spec = request.getfixturevalue("postgres_url")
    with open_checkpointer(spec) as opened:
        yield opened


class Holder:
    """Holds a thread from another thread of this process until told to let go."""

    def __init__(self, saver: Any, thread_id: str) -> None:
        self.holding, self.release = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold, args=(saver, thread_id))
        self.thread.start()
        assert self.holding.wait(10)

    def _hold(self, saver: Any, thread_id: str) -> None:
        with hold(saver, thread_id):
            self.holding.set()
            self.release.wait(30)

    def let_go(self) -> None:
        self.release.set()
        self.thread.join(10)


def question(text: str = "Hi.") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def test_a_new_question_on_a_busy_thread_fails_at_once_and_writes_nothing(saver: Any) -> None:
    graph = build_graph(ScriptedChatModel(script=["Hello."]), checkpointer=saver)
    config = {"configurable": {"thread_id": "busy"}}
    holder = Holder(saver, "busy")
    try:
        with pytest.raises(ThreadBusyError) as refused:
            graph.invoke(question(), config)
        with pytest.raises(ThreadBusyError):
            asyncio.run(graph.ainvoke(question(), config))
    finally:
        holder.let_go()

    assert refused.value.thread_id == "busy"
    assert len(str(refused.value).splitlines()) == 1
    assert graph.get_state(config).values == {}
    assert graph.invoke(question(), config)["messages"][-1].content == "Hello."  # free again


def test_a_waiting_async_run_starts_when_the_thread_is_let_go_and_leaves_the_loop_free(
    saver: Any,
) -> None:
    graph = build_graph(ScriptedChatModel(script=["Hello."]), checkpointer=saver)
    config = {"configurable": {"thread_id": "held", WAIT_OPTION: True}}
    holder = Holder(saver, "held")

    async def scenario() -> tuple[Any, bool, float]:
        beats: list[float] = []

        async def heartbeat() -> None:
            while True:
                beats.append(time.perf_counter())
                await asyncio.sleep(0.01)

        beating = asyncio.create_task(heartbeat())
        run = asyncio.create_task(graph.ainvoke(question(), config))
        await asyncio.sleep(0.5)
        waited = not run.done()
        longest_gap = max(b - a for a, b in itertools.pairwise(beats))  # while the run waited
        await asyncio.to_thread(holder.let_go)
        state = await run
        beating.cancel()
        return state, waited, longest_gap

    try:
        state, waited, longest_gap = asyncio.run(scenario())
    finally:
        holder.let_go()

    assert waited  # it did not start while the thread was held
    assert state["messages"][-1].content == "Hello."
    assert longest_gap < 0.25  # the loop kept turning while the run waited (0.5 s)


# --- the command -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("store", "wait"),
    [("sqlite", False), ("sqlite", True), ("postgres", False)],
    indirect=["store"],
)
def test_two_resume_commands_at_once_run_the_approved_call_once(
    store: str, wait: bool, tmp_path: Path
) -> None:
    env = {**os.environ, "REASONING_GRAPHS_DB": store}
    log = tmp_path / "deploys.log"
    deploy = {"tool": "shell", "args": {"command": f"echo deployed >> {log}; sleep 3"}}
    asked = run_process(
        [deploy, "Deployed."], "run", "Deploy.", "--workspace", str(tmp_path), env=env
    )
    assert asked.returncode == exits.WAITING, asked.stderr
    thread_id = asked.stdout.splitlines()[0].split()[-1]

    flags = ["--approve-all", *(["--wait"] if wait else [])]
    argv = command_line(["Deployed."], "resume", thread_id, *flags)
    commands = [
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    ended = sorted(
        ((command.wait(timeout=120), command.stderr.read()) for command in commands),
        key=lambda item: item[0],
    )

    assert log.read_text().splitlines() == ["deployed"]
    assert listed_threads(env)[thread_id]["status"] == "answered"
    if wait:  # the second waited, then found nothing left to do
        assert [code for code, _ in ended] == [exits.ANSWERED, exits.ANSWERED]
    else:
        assert [code for code, _ in ended] == [exits.ANSWERED, exits.BUSY]
        assert len(ended[1][1].strip().splitlines()) == 1


async def test_savers_on_pools_of_one_database_share_each_threads_lock(postgres_url: str) -> None:
    """Two engines' savers (Aegra builds an ``AsyncPostgresSaver`` on a pool) are two
    processes' view of one database: a thread one holds is busy for the other."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool

    from reasoning_graphs.thread_lock import thread_lock

    async with (
        AsyncConnectionPool(postgres_url, open=False) as first_pool,
        AsyncConnectionPool(postgres_url, open=False) as second_pool,
    ):
        first, second = AsyncPostgresSaver(first_pool), AsyncPostgresSaver(second_pool)
        held, other = thread_lock(first, "t1"), thread_lock(second, "t1")
        assert held is not None
        assert other is not None
        assert await asyncio.to_thread(held.try_acquire)
        try:
            assert not await asyncio.to_thread(other.try_acquire)
            elsewhere = thread_lock(second, "t2")
            assert elsewhere is not None
            assert await asyncio.to_thread(elsewhere.try_acquire)
            await asyncio.to_thread(elsewhere.release)
        finally:
            await asyncio.to_thread(held.release)
        assert await asyncio.to_thread(other.try_acquire)  # let go: the other may take it
        await asyncio.to_thread(other.release)
