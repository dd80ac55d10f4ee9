"""Our guarantees on the engines that serve ``langgraph.json``, held by the graphs themselves.

Two Aegra replicas on one PostgreSQL (Redis between them) and ``langgraph dev`` serve the
app of ``tests/engine_app``: a dangerous, slow ``record`` call that writes one ledger line
per run. Over ``langgraph_sdk``, as a client would:

- a question paused on one process is approved on the other, and the call runs once;
- a run's stream is joined from the other process;
- two resumes of one waiting thread sent at once, one to each process, run the call once;
- a process killed while it runs an approved call: the survivor takes the run over and puts
  the call to a person again, flagged ``possibly_ran``, and nothing runs until a decision
  given to that question (Aegra; ``langgraph dev`` keeps its threads in one process);
- a run naming a model the deployment does not allow is refused.

Aegra does not keep one run per thread (its issue #253) and runs a run again, with its
original input, when its worker dies: the graph's thread lock and its one-question-per-
decision rule hold anyway. Aegra needs ``$REASONING_GRAPHS_TEST_AEGRA`` and
``$REASONING_GRAPHS_TEST_POSTGRES`` (see :mod:`tests.helpers.aegra`).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import UnprocessableEntityError

from tests.helpers.aegra import REPO, AegraCluster, aegra_cluster
from tests.helpers.dev_server import dev_server

pytestmark = pytest.mark.server

APP = REPO / "tests" / "engine_app" / "langgraph.json"
GRAPH = "recorder"
DOUBLE_RESUMES = 20
KILLS = 10
TAKEOVER_S = 60.0
"""How long the survivor may take to pick a dead process's run up (its lease is 6 s)."""


@dataclass
class Engine:
    """An engine serving the app: a base URL per process (``langgraph dev`` has one)."""

    name: str
    urls: list[str]
    ledger: Path
    hold: Path
    cluster: AegraCluster | None = None

    def client(self, i: int) -> Any:
        return get_client(url=self.urls[i % len(self.urls)])

    def records(self) -> Counter[str]:
        """How many times each item was recorded."""
        lines = self.ledger.read_text().splitlines() if self.ledger.exists() else []
        return Counter(line.split()[1] for line in lines)

    def recorder(self, item: str) -> int | None:
        """The process id that recorded ``item`` first, once it has."""
        lines = self.ledger.read_text().splitlines() if self.ledger.exists() else []
        return next((int(line.split()[0]) for line in lines if line.split()[1] == item), None)


@pytest.fixture(scope="module", params=["aegra", "dev"])
def engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    scratch = tmp_path_factory.mktemp(request.param)
    ledger, hold = scratch / "ledger.txt", scratch / "hold"
    env = {"ENGINE_APP_LOG": str(ledger), "ENGINE_APP_HOLD": str(hold)}
    if request.param == "aegra":
        with aegra_cluster(APP, scratch, replicas=2, env=env) as cluster:
            yield Engine("aegra", cluster.urls, ledger, hold, cluster)
    else:
        with dev_server(APP, scratch, env) as server:
            yield Engine("dev", [server.url, server.url], ledger, hold)


def question(item: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"record {item}"}]}


async def paused(engine: Engine, item: str, via: int = 0) -> str:
    """A new thread whose question waits for the approval of ``record(item)``: its id."""
    client = engine.client(via)
    thread_id = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread_id, GRAPH, input=question(item))
    state = await client.threads.get_state(thread_id)
    (interrupt,) = state["interrupts"]
    assert interrupt["value"]["calls"][0]["args"] == {"item": item}
    return thread_id


async def settled(engine: Engine, thread_id: str, via: int = 0) -> dict[str, Any]:
    """The thread's state once no run of it is pending or running."""
    client = engine.client(via)
    deadline = time.monotonic() + TAKEOVER_S
    while time.monotonic() < deadline:
        runs = await client.runs.list(thread_id, limit=20)
        if runs and all(run["status"] not in ("pending", "running") for run in runs):
            return await client.threads.get_state(thread_id)
        await asyncio.sleep(0.2)
    going = [(run["run_id"], run["status"]) for run in runs]
    raise AssertionError(f"runs of {thread_id} still going after {TAKEOVER_S} s: {going}")


def last_words(state: dict[str, Any]) -> str:
    return str(state["values"]["messages"][-1]["content"])


async def test_paused_on_one_process_and_approved_on_the_other(engine: Engine) -> None:
    thread_id = await paused(engine, "moved", via=0)

    await engine.client(1).runs.wait(thread_id, GRAPH, command={"resume": "approve"})

    state = await settled(engine, thread_id, via=0)
    assert state["interrupts"] == []
    assert last_words(state) == "done"
    assert engine.records()["moved"] == 1


async def test_a_stream_is_joined_from_the_other_process(engine: Engine) -> None:
    thread_id = await paused(engine, "joined")
    engine.hold.touch()
    try:
        run = await engine.client(0).runs.create(thread_id, GRAPH, command={"resume": "approve"})
        await until(lambda: engine.records()["joined"] == 1)
        stream = engine.client(1).runs.join_stream(thread_id, run["run_id"])
        engine.hold.unlink()
        events = [part async for part in stream]
    finally:
        engine.hold.unlink(missing_ok=True)

    assert events, "the joined stream gave nothing"
    state = await settled(engine, thread_id)
    assert last_words(state) == "done"
    assert engine.records()["joined"] == 1


async def test_two_resumes_at_once_run_the_approved_call_once(engine: Engine) -> None:
    items = [f"twice-{n}" for n in range(DOUBLE_RESUMES)]
    threads = await asyncio.gather(*(paused(engine, item) for item in items))

    async def resume_twice(thread_id: str) -> None:
        sent = await asyncio.gather(
            *(
                engine.client(i).runs.create(thread_id, GRAPH, command={"resume": "approve"})
                for i in (0, 1)
            ),
            return_exceptions=True,  # an engine may refuse the second run itself
        )
        assert any(isinstance(run, dict) for run in sent), sent
        await settled(engine, thread_id)

    await asyncio.gather(*(resume_twice(thread_id) for thread_id in threads))

    records = engine.records()
    assert {item: records[item] for item in items} == dict.fromkeys(items, 1)
    for thread_id in threads:
        state = await engine.client(0).threads.get_state(thread_id)
        assert state["interrupts"] == [], state["interrupts"]
        assert last_words(state) == "done"


async def test_a_process_killed_mid_call_leaves_the_call_to_a_person(engine: Engine) -> None:
    if engine.cluster is None:
        pytest.skip("langgraph dev keeps its threads in its one process: nothing survives a kill")
    cluster = engine.cluster
    for trial in range(KILLS):
        item = f"killed-{trial}"
        thread_id = await paused(engine, item)
        engine.hold.touch()
        try:
            await engine.client(trial).runs.create(thread_id, GRAPH, command={"resume": "approve"})
            await until(lambda item=item: engine.recorder(item) is not None)
            victim = cluster.pids.index(engine.recorder(item))
            cluster.kill(victim)
        finally:
            engine.hold.unlink(missing_ok=True)
        survivor = 1 - victim
        # the dead process comes back while the survivor takes its run over
        restarted = asyncio.create_task(asyncio.to_thread(cluster.restart, victim))

        state = await settled(engine, thread_id, via=survivor)

        assert state["interrupts"], (engine.records(), state, cluster.tail(survivor, 120))
        (interrupt,) = state["interrupts"]
        (call,) = interrupt["value"]["calls"]
        assert call["possibly_ran"] is True, cluster.tail(survivor)
        assert engine.records()[item] == 1  # nothing ran on the old approval
        await restarted
        decision = "approve" if trial % 2 else {"type": "reject", "reason": "it went through"}
        client = engine.client(survivor)
        await client.runs.wait(thread_id, GRAPH, command={"resume": {interrupt["id"]: decision}})
        state = await settled(engine, thread_id, via=survivor)
        assert state["interrupts"] == []
        assert engine.records()[item] == (2 if trial % 2 else 1)


async def test_a_run_naming_a_model_not_allowed_is_refused(engine: Engine) -> None:
    client = engine.client(0)
    thread_id = (await client.threads.create())["thread_id"]
    options = {"input": question("priced"), "context": {"model": "openai:gpt-4o-mini"}}
    if engine.name == "dev":  # langgraph-api's servers refuse it at the door
        with pytest.raises(UnprocessableEntityError, match="may only name a model"):
            await client.runs.create(thread_id, GRAPH, **options)
    else:  # elsewhere the graph refuses it as the run starts
        run = await client.runs.create(thread_id, GRAPH, **options)
        await client.runs.join(thread_id, run["run_id"])
        assert (await client.runs.get(thread_id, run["run_id"]))["status"] == "error"
    state = await client.threads.get_state(thread_id)
    assert not (state["values"] or {}).get("messages")
    assert engine.records()["priced"] == 0


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)
