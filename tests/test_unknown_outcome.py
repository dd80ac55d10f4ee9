"""A call killed after its side effect, before its result was saved, is never re-run silently.

The driver's ``transfer`` writes its side effect to a log and then kills its own
process with SIGKILL, so the kill lands in exactly the window LangGraph leaves
open (a task's result is saved in the background). A resumed process then
finds the call's start in the checkpointer's database: a call that needs a
person goes back to them marked as possibly run; any other call that is not
idempotent becomes an error observation; an idempotent one runs again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from reasoning_graphs.call_journal import CallKey, StoreJournal, journal_of, run_journal
from reasoning_graphs.checkpointers import open_checkpointer
from reasoning_graphs.graphs import react
from reasoning_graphs.review import ApprovalError, PendingCall, parse_decisions
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers import HELPERS
from tests.helpers.crash_harness import agent_env, run_agent

AGENT = HELPERS / "unknown_outcome_agent.py"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh SQLite file, or a fresh PostgreSQL database when the tests have a server."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return request.getfixturevalue("postgres_url")


class Thread:
    """One thread of the driver on ``store``: its runs, its kills and its tool log."""

    def __init__(self, store: str, folder: Path, pattern: str, kind: str, **env: str) -> None:
        self.args = [store, str(folder / "tools.log"), pattern, kind]
        self.log = folder / "tools.log"
        self.env = {"THREAD_ID": f"unknown-{uuid.uuid4().hex[:8]}", **env}

    def run(self, resume: Any = ..., **env: str) -> dict[str, Any]:
        """Run (or resume, with ``resume``) to the end or to the next interrupt."""
        return run_agent(AGENT, *self.args, *self._resume(resume), **self.env, **env)

    def killed(self, resume: Any = ..., *, at: str = "after_effect", **env: str) -> None:
        """Run (or resume) and kill the process at ``at`` (see the driver)."""
        done = subprocess.run(
            [sys.executable, str(AGENT), *self.args, *self._resume(resume)],
            env=agent_env(**self.env, **env, KILL=at),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == -9, done.stderr

    def effects(self) -> list[str]:
        """The lines the tool wrote, one per time its side effect happened."""
        return self.log.read_text().splitlines() if self.log.exists() else []

    @staticmethod
    def _resume(resume: Any) -> list[str]:
        return [] if resume is ... else [json.dumps(resume)]


def pending_call(result: dict[str, Any]) -> dict[str, Any]:
    """The one call the run waits for a person's decision on."""
    (request,) = result["interrupts"]
    (call,) = request["calls"]
    return call


def approved_then_killed(thread: Thread) -> None:
    """Ask, approve, and kill the process right after the approved call's side effect."""
    first = pending_call(thread.run())
    assert not first.get("possibly_ran")
    thread.killed("approve")
    assert len(thread.effects()) == 1


@pytest.mark.parametrize("pattern", ["react", "llm_compiler", "lats"])
def test_a_dangerous_call_cut_short_is_put_to_the_person_again(
    store: str, tmp_path: Path, pattern: str
) -> None:
    thread = Thread(store, tmp_path, pattern, "dangerous")
    approved_then_killed(thread)

    asked = pending_call(thread.run(None))

    assert asked["possibly_ran"] is True
    assert asked["name"] == "transfer"
    assert "edit" not in asked["allowed_decisions"]
    assert len(thread.effects()) == 1  # not run before the person answers
    final = thread.run("approve")  # the person chose to run it once more
    assert final["interrupts"] == []
    assert final["outcome"]["status"] == "answered"
    assert len(thread.effects()) == 2


@pytest.mark.parametrize(
    ("pattern", "face"),
    [("react", "sync"), ("react", "async"), ("plan_execute", "sync"), ("llm_compiler", "async")],
)
def test_a_resume_run_again_after_a_crash_answers_nothing_it_was_not_given_for(
    store: str, tmp_path: Path, pattern: str, face: str
) -> None:
    # an engine whose worker died runs the run again, same run id, with its original input:
    # the approval given for the first question must not answer the one the crash raises
    thread = Thread(store, tmp_path, pattern, "dangerous", FACE=face)
    assert not pending_call(thread.run()).get("possibly_ran")
    thread.killed("approve", RUN_ID="run-2")
    assert len(thread.effects()) == 1

    for _ in range(2):  # the engine tries the run again, and once more
        asked = pending_call(thread.run("approve", RUN_ID="run-2"))
        assert asked["possibly_ran"] is True
        assert len(thread.effects()) == 1  # nothing ran on the old approval
    # the person's decision on the re-ask, in a run of its own, runs the call once more
    final = thread.run("approve", RUN_ID="run-3")
    assert final["interrupts"] == []
    assert len(thread.effects()) == 2


def test_a_call_the_person_rejects_after_a_crash_never_runs_again(tmp_path: Path) -> None:
    thread = Thread(str(tmp_path / "runs.sqlite"), tmp_path, "react", "dangerous")
    approved_then_killed(thread)
    assert pending_call(thread.run(None))["possibly_ran"] is True

    final = thread.run({"type": "reject", "reason": "the payment went through"})

    assert final["interrupts"] == []
    assert len(thread.effects()) == 1
    (observation,) = final["observations"]
    assert (observation["status"], observation["decision"]) == ("error", "rejected")
    assert final["rejected"]  # the model proposing it again is answered from this decision
    assert thread.run(None)["interrupts"] == []  # nothing left to ask or to run
    assert len(thread.effects()) == 1


def test_a_call_approved_again_and_cut_short_again_is_asked_about_again(tmp_path: Path) -> None:
    thread = Thread(str(tmp_path / "runs.sqlite"), tmp_path, "react", "dangerous")
    approved_then_killed(thread)
    assert pending_call(thread.run(None))["possibly_ran"] is True

    thread.killed("approve")
    assert len(thread.effects()) == 2

    assert pending_call(thread.run(None))["possibly_ran"] is True
    assert len(thread.effects()) == 2


def test_an_edit_of_a_call_that_may_have_run_is_refused_and_asked_again(tmp_path: Path) -> None:
    thread = Thread(str(tmp_path / "runs.sqlite"), tmp_path, "react", "dangerous")
    approved_then_killed(thread)
    thread.run(None)

    again = thread.run({"type": "edit", "args": {"amount": 50}})

    (request,) = again["interrupts"]
    assert request["error"]
    assert request["calls"][0]["possibly_ran"] is True
    assert len(thread.effects()) == 1


@pytest.mark.parametrize("pattern", ["react", "plan_execute", "llm_compiler", "lats"])
def test_a_call_that_is_not_idempotent_is_not_run_again(
    store: str, tmp_path: Path, pattern: str
) -> None:
    thread = Thread(store, tmp_path, pattern, "once")
    thread.killed()
    assert len(thread.effects()) == 1

    final = thread.run(None)

    assert final["interrupts"] == []
    assert final["outcome"]["status"] == "answered"
    assert len(thread.effects()) == 1
    (observation,) = final["observations"]
    assert observation["status"] == "error"


def test_an_idempotent_call_is_run_again(tmp_path: Path) -> None:
    thread = Thread(str(tmp_path / "runs.sqlite"), tmp_path, "react", "idempotent")
    thread.killed()

    final = thread.run(None)

    assert len(thread.effects()) == 2
    (observation,) = final["observations"]
    assert observation["status"] == "success"


def test_the_async_face_records_the_start_too(tmp_path: Path) -> None:
    thread = Thread(str(tmp_path / "runs.sqlite"), tmp_path, "react", "once", FACE="async")
    thread.killed()

    final = thread.run(None)

    assert len(thread.effects()) == 1
    (observation,) = final["observations"]
    assert observation["status"] == "error"


def test_a_dangerous_call_killed_before_it_started_runs_without_asking_again(
    tmp_path: Path,
) -> None:
    thread = Thread(str(tmp_path / "runs.sqlite"), tmp_path, "react", "dangerous")
    pending_call(thread.run())
    thread.killed("approve", at="before_start")
    assert thread.effects() == []

    final = thread.run(None)

    assert final["interrupts"] == []
    assert len(thread.effects()) == 1
    (observation,) = final["observations"]
    assert (observation["status"], observation["decision"]) == ("success", "approved")


def test_a_call_killed_before_it_started_runs_on_resume(tmp_path: Path) -> None:
    thread = Thread(str(tmp_path / "runs.sqlite"), tmp_path, "react", "once")
    thread.killed(at="before_start")
    assert thread.effects() == []

    final = thread.run(None)

    assert len(thread.effects()) == 1
    (observation,) = final["observations"]
    assert observation["status"] == "success"


def test_a_tool_that_dedupes_by_its_call_id_pays_once_across_a_crash(tmp_path: Path) -> None:
    """The guarantees page's example (``dedupe_transfer.py``): the call id is the same after a
    resume."""
    thread = Thread(str(tmp_path / "runs.sqlite"), tmp_path, "react", "dedupe")
    thread.killed()

    final = thread.run(None)

    assert thread.effects() == ["ran transfer pay-1", "ran transfer pay-1"]
    with sqlite3.connect(tmp_path / "bank.db") as bank:
        assert bank.execute("SELECT call_id, amount, payee FROM payments").fetchall() == [
            ("pay-1", 100, "ada")
        ]
    (observation,) = final["observations"]
    assert observation["status"] == "success"


def test_only_lookups_may_be_retried_unless_the_tool_says_otherwise() -> None:
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    assert not tool_spec(pay).retry_safe
    assert tool_spec(pay, concurrency_safe=True).retry_safe
    assert tool_spec(pay, idempotent=True).retry_safe
    assert not tool_spec(pay, concurrency_safe=True, idempotent=False).retry_safe


def test_a_decision_a_call_does_not_allow_is_refused() -> None:
    call = PendingCall(
        id="c1", name="pay", args={}, description="pay()", allowed_decisions=["approve", "reject"]
    )

    with pytest.raises(ApprovalError):
        parse_decisions([{"type": "respond", "content": "done by hand"}], [call])
    assert parse_decisions(["approve"], [call]) == [{"type": "approve"}]


def journal_counts(saver: Any, *, ours: bool = True) -> None:
    """Starts count per call and task, can be taken back, and go with their thread (which
    the library's savers drop when they delete the thread)."""
    journal = journal_of(saver)
    assert journal is not None
    key = CallKey("t1", "act:task-1", "pay-1")
    other_task = key._replace(checkpoint_ns="act:task-2")

    assert journal.starts(key) == 0
    journal.record_start(key)
    journal.record_start(key)
    assert (journal.starts(key), journal.starts(other_task)) == (2, 0)
    journal.take_back_start(key)
    assert journal.starts(key) == 1
    if ours:
        saver.delete_thread("t1")
    else:
        journal.forget_thread("t1")
    assert journal.starts(key) == 0


def test_the_journal_lives_in_the_sqlite_file(tmp_path: Path) -> None:
    journal_counts(open_checkpointer(tmp_path / "runs.sqlite"))


def test_the_journal_lives_in_the_postgres_database(postgres_url: str) -> None:
    journal_counts(open_checkpointer(postgres_url))


def test_a_postgres_saver_on_a_pool_keeps_a_journal_too(postgres_url: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    with ConnectionPool(postgres_url, kwargs=kwargs, open=True) as pool:
        saver = PostgresSaver(pool)
        saver.setup()
        journal_counts(saver, ours=False)


def test_a_saver_in_memory_keeps_no_journal() -> None:
    assert journal_of(open_checkpointer("memory")) is None


def test_the_journal_counts_in_a_store_too() -> None:
    store = InMemoryStore()
    journal = run_journal(InMemorySaver(), store)
    assert isinstance(journal, StoreJournal)
    key = CallKey("t.1", "act:task-1", "pay-1")  # a period may not be in a namespace label
    journal.record_start(key)
    journal.record_start(CallKey("t2", "act:task-1", "pay-1"))
    journal.take_back_start(key)
    journal.take_back_start(key)  # never below zero
    assert journal.starts(key) == 0
    journal.record_start(key)
    journal.forget_thread("t.1")
    assert (journal.starts(key), journal.starts(CallKey("t2", "act:task-1", "pay-1"))) == (0, 1)
    assert run_journal(InMemorySaver(), None) is None


class CancelledPayment:
    """A thread whose approved ``pay(5)`` is cancelled while it runs (as LangGraph Server's
    run cancel does: the call's thread goes on and pays, its result is lost), then resumed."""

    def __init__(self, store: InMemoryStore | None) -> None:
        self.paid: list[int] = []
        self.started = threading.Event()

        def pay(amount: int) -> str:
            """Pay an amount."""
            self.started.set()
            time.sleep(0.3)
            self.paid.append(amount)
            return "paid"

        self.graph = react.build_graph(
            ScriptedChatModel(script=[tool_call("pay", amount=5), "Done."]),
            tools=[tool_spec(pay, dangerous=True)],
            checkpointer=InMemorySaver(),
            store=store,
        )
        self.config: RunnableConfig = {"configurable": {"thread_id": "stopped"}}

    def resumed(self) -> dict[str, Any]:
        """Ask, approve, cancel mid-call, let the call finish, and resume: the state."""
        return asyncio.run(self._scenario())

    async def _scenario(self) -> dict[str, Any]:
        first = await self.graph.ainvoke({"messages": [("user", "Pay 5.")]}, self.config)
        assert not first["__interrupt__"][0].value["calls"][0].get("possibly_ran")
        run = asyncio.create_task(self.graph.ainvoke(Command(resume="approve"), self.config))
        await asyncio.to_thread(self.started.wait, 5)
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
        await asyncio.sleep(0.5)  # the cut-off call pays meanwhile
        return await self.graph.ainvoke(None, self.config)


def test_a_run_cancelled_mid_call_on_a_store_puts_the_call_to_the_person_again() -> None:
    """A LangGraph Server run stopped while its approved call runs: the saver keeps no
    journal, the run's store does, so the resumed run asks again instead of paying twice."""
    payment = CancelledPayment(InMemoryStore())

    (request,) = payment.resumed()["__interrupt__"]

    (call,) = request.value["calls"]
    assert call["possibly_ran"] is True
    assert payment.paid == [5]
    reject = Command(resume={"type": "reject", "reason": "it went through"})
    assert "__interrupt__" not in payment.graph.invoke(reject, payment.config)
    assert payment.paid == [5]


def test_a_run_on_a_saver_in_memory_without_a_store_runs_a_cut_call_again() -> None:
    """Without a journal anywhere, a cancelled call runs again (at least once, as documented)."""
    payment = CancelledPayment(None)

    final = payment.resumed()

    assert "__interrupt__" not in final
    assert payment.paid == [5, 5]
