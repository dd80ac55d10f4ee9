"""``schedule``: run a whole task graph as dataflow — each task starts once its deps are done.

First every dangerous task of the plan is put to a person in one interrupt
(the approve node's triage, :func:`~reasoning_graphs.nodes.approve.settle_calls`),
so nothing runs before the decision. Then all cleared tasks are submitted at
once, in topological order, as LangGraph functional-API ``@task`` calls: each
waits on a shared :class:`Board` until the results it needs are posted, then
substitutes its ``$n`` references and runs its tool. A task therefore starts
the moment its own deps finish, not when a whole level does.

Durability: LangGraph saves each finished ``@task`` result as a pending write
of this node and recognises task calls by their order within it, so the
order of submission is fixed by the plan. After a crash the node runs again,
finished tasks return their saved results without running, and the rest
run. Stateful tools are chained in plan order (each waits for the previous
stateful task); read-only ones overlap freely.

The round is recorded like a model turn — one synthetic ``AIMessage`` of
the calls as run plus one ``ToolMessage`` each — so the finish node, the
repetition checks and the CLI read it like any other turn.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from reasoning_graphs.effects import Body, Effect, Gather, durable_task
from reasoning_graphs.nodes.approve import REUSED, TurnTriage, settle_calls
from reasoning_graphs.nodes.compiler_dag import (
    RUNTIME,
    SCHEDULE_KIND,
    CompilerTask,
    is_compiler_message,
    substitute,
)
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.trajectory import action_event
from reasoning_graphs.nodes.turn import decision_of, steps_used, turn_messages, turn_number
from reasoning_graphs.state import PlannedCall
from reasoning_graphs.tools.execute import execute_call
from reasoning_graphs.tools.registry import ToolRegistry

SKIPPED = "Not run: it needs the result of {refs}, which did not succeed."
TASK_CRASHED = "Error: the task stopped unexpectedly ({error})."
TASKS_ONLY = "LLM Compiler tasks pass on only their results"


@dataclass(frozen=True)
class Job:
    """Everything one task needs to run (not saved: only its result is).

    Attributes:
        task: The plan task.
        call: The cleared call (its arguments possibly edited by a person).
        after: Ids to wait for: the deps, plus the previous stateful task.
        registry: The run's tools.
        state: The graph state, for tools that read stored texts or inject the state.
    """

    task: CompilerTask
    call: PlannedCall
    after: tuple[int, ...]
    registry: ToolRegistry
    state: Mapping[str, Any]


class Board:
    """The results of a round's tasks by plan id; tasks wait here for the ones they need.

    On the sync face tasks run on threads and block on a condition; on the
    async face they run on the loop and await an event.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._results: dict[int, dict[str, Any]] = {}
        self._events: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def post(self, task_id: int, result: dict[str, Any]) -> None:
        with self._changed:
            self._results[task_id] = result
            self._changed.notify_all()
            for loop, event in self._events:
                loop.call_soon_threadsafe(event.set)

    def results(self, ids: Sequence[int]) -> dict[int, dict[str, Any]] | None:
        """The results of ``ids`` once all are posted, else ``None``."""
        with self._changed:
            if all(i in self._results for i in ids):
                return {i: self._results[i] for i in ids}
            return None

    def wait_for(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Block until every task of ``ids`` has a result; return those results."""
        with self._changed:
            self._changed.wait_for(lambda: all(i in self._results for i in ids))
            return {i: self._results[i] for i in ids}

    async def await_for(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Wait, without blocking the loop, until every task of ``ids`` has a result."""
        event = asyncio.Event()
        with self._changed:
            self._events.append((asyncio.get_running_loop(), event))
        while (found := self.results(ids)) is None:
            await event.wait()
            event.clear()
        return found

    def poster(self, task_id: int) -> Callable[[Future | asyncio.Future], None]:
        """A callback that posts a settled future's result (or its failure)."""

        def post(done: Future | asyncio.Future) -> None:
            error = "cancelled" if done.cancelled() else done.exception()
            if error is None:
                self.post(task_id, done.result())
            else:
                self.post(task_id, _outcome("error", TASK_CRASHED.format(error=error)))

        return post


class WaitFor(Effect):
    """Wait until the board has the results of ``ids``."""

    def __init__(self, board: Board, ids: Sequence[int]):
        self.board, self.ids = board, ids

    def run(self) -> dict[int, dict[str, Any]]:
        return self.board.wait_for(self.ids)

    async def arun(self) -> dict[int, dict[str, Any]]:
        return await self.board.await_for(self.ids)


def _task_body(job: Job, board: Board) -> Body[dict[str, Any]]:
    """Wait for the task's deps, then run it — or skip it when a dep did not succeed."""
    needed = yield WaitFor(board, job.after)
    failed = [f"${dep}" for dep in job.task["deps"] if needed[dep]["status"] != "success"]
    if failed:
        return _outcome("skipped", SKIPPED.format(refs=", ".join(failed)))
    args = substitute(job.call["args"], {dep: needed[dep]["value"] for dep in job.task["deps"]})
    started = time.time()
    result = yield from execute_call(
        job.registry,
        job.call["name"],
        args,
        call_id=job.call["id"],
        observations=job.state.get("observations") or {},
        state=job.state,
    )
    result = result.without_command(TASKS_ONLY)
    return {
        **_outcome(result.status, result.content, result.full_text),
        "message": result.message,
        "args": args,
        "ref": result.ref,
        "started": started,
        "ended": time.time(),
        "duration_ms": result.duration_ms,
    }


run_task = durable_task("run_task", _task_body)


def make_schedule(setup: AgentSetup) -> Callable[[dict[str, Any]], Body[dict[str, Any]]]:
    """Build the ``schedule`` node for ``setup``."""

    def schedule(state: dict[str, Any]) -> Body[dict[str, Any]]:
        run = setup.for_run()
        plan: list[CompilerTask] = state.get("plan") or []
        turn, step = turn_number(state["messages"]), steps_used(state) + 1
        calls = [
            ToolCall(name=t["tool"], args=t["args"], id=t["call_id"], type="tool_call")
            for t in plan
        ]
        triage = TurnTriage(turn=turn, step=step)
        settle_calls(run, state, calls, triage)  # one interrupt for the dangerous tasks

        cleared = {call["id"]: call for _, call in triage.planned}
        answered = {m.tool_call_id: m for m in triage.answered}
        board = Board()
        for item in plan:
            if item["call_id"] in answered:
                board.post(item["id"], _settled(answered[item["call_id"]]))
        started = time.perf_counter()
        jobs = _jobs(plan, cleared, run.registry, state)
        yield Gather(
            [run_task(job, board, on_settled=board.poster(job.task["id"])) for job in jobs]
        )
        wall_ms = (time.perf_counter() - started) * 1000
        results = board.wait_for([item["id"] for item in plan])
        return _record(state, plan, cleared, triage, results, turn=turn, step=step, wall_ms=wall_ms)

    return schedule


def _jobs(
    plan: Sequence[CompilerTask],
    cleared: Mapping[str, PlannedCall],
    registry: ToolRegistry,
    state: Mapping[str, Any],
) -> list[Job]:
    """The cleared tasks in plan (topological) order, stateful ones chained in that order."""
    jobs: list[Job] = []
    previous_stateful: int | None = None
    for item in plan:
        stateful = not registry.is_read_only(item["tool"])
        after = list(item["deps"])
        if stateful and previous_stateful is not None and previous_stateful not in after:
            after.append(previous_stateful)
        if stateful:
            previous_stateful = item["id"]
        call = cleared.get(item["call_id"])
        if call is not None:
            jobs.append(Job(item, call, tuple(after), registry, state))
    return jobs


def _record(
    state: Mapping[str, Any],
    plan: Sequence[CompilerTask],
    cleared: Mapping[str, PlannedCall],
    triage: TurnTriage,
    results: Mapping[int, dict[str, Any]],
    *,
    turn: int,
    step: int,
    wall_ms: float,
) -> dict[str, Any]:
    """The round as a model turn: the calls as run, one observation each, and events."""
    answered = {m.tool_call_id: m for m in triage.answered}
    messages: list[ToolMessage] = []
    events = list(triage.events)
    observations: dict[str, str] = {}
    calls: list[ToolCall] = []
    for item in plan:
        result, call_id = results[item["id"]], item["call_id"]
        call = cleared.get(call_id)
        args = result.get("args") or (call["args"] if call else item["args"])
        calls.append(ToolCall(name=item["tool"], args=args, id=call_id, type="tool_call"))
        if call_id in answered:
            messages.append(answered[call_id])
            continue
        decision = call["decision"] if call and result["status"] != "skipped" else "skipped"
        status = "success" if result["status"] == "success" else "error"
        messages.append(_observation(result, call_id, item["tool"], status, decision))
        event = action_event(
            turn=turn,
            step=step,
            call_id=call_id,
            tool=item["tool"],
            args=args,
            observation=result["text"],
            status=status,
            decision=decision,
            duration_ms=result.get("duration_ms", 0.0),
        )
        events.append({**event, "started": result.get("started"), "ended": result.get("ended")})
        if result.get("ref") and result["value"] != result["text"]:
            observations[result["ref"]] = result["value"]
    metadata = {
        "runtime": RUNTIME,
        "kind": SCHEDULE_KIND,
        "round": 1
        + sum(is_compiler_message(m, SCHEDULE_KIND) for m in turn_messages(state["messages"])),
        "tasks": {item["call_id"]: item["id"] for item in plan},
        "wall_ms": round(wall_ms, 2),
        "critical_path_ms": round(_critical_path_ms(plan, results), 2),
    }
    message = AIMessage(content="", tool_calls=calls, response_metadata=metadata)
    update: dict[str, Any] = {
        "messages": [message, *messages],
        "trajectory": events,
        "rejected": triage.rejected,
    }
    if observations:
        update["observations"] = observations
    return update


def _observation(
    result: Mapping[str, Any], call_id: str, tool: str, status: str, decision: str
) -> ToolMessage:
    """The task's ``ToolMessage``: the tool's own (content blocks, artifact) when it ran."""
    own: ToolMessage | None = result.get("message")
    if own is None:
        own = ToolMessage(result["text"], tool_call_id=call_id, name=tool)
    metadata = {**own.response_metadata, "decision": decision}
    return own.model_copy(update={"status": status, "response_metadata": metadata})


def _outcome(status: str, text: str, value: str | None = None) -> dict[str, Any]:
    """A task's result on the board: ``value`` replaces ``$n`` (the full text when cut)."""
    return {"status": status, "text": text, "value": text if value is None else value}


def _settled(answer: ToolMessage) -> dict[str, Any]:
    """The board's form of a call the triage answered without running it."""
    text = str(answer.content)
    value = text.removesuffix(REUSED.format(result="")) if decision_of(answer) == "reused" else text
    return _outcome("success" if answer.status == "success" else "error", text, value)


def _critical_path_ms(plan: Sequence[CompilerTask], results: Mapping[int, dict[str, Any]]) -> float:
    """The longest chain of tool time through the deps: the least wall time the round could take."""
    finish: dict[int, float] = {}
    for item in plan:  # topological order: deps come first
        before = max((finish[dep] for dep in item["deps"]), default=0.0)
        finish[item["id"]] = before + results[item["id"]].get("duration_ms", 0.0)
    return max(finish.values(), default=0.0)
