"""``schedule``: run a task graph as dataflow, in passes that put each dangerous task to a person
with the arguments it will really run with.

Each pass is one run of this node (one LangGraph super-step); the node runs
again until every task of the plan is settled, then hands over to ``join``.
A pass:

1. skips the tasks a failed, rejected or skipped task was needed by;
2. puts to a person, in one interrupt (the approve node's triage,
   :func:`~reasoning_graphs.nodes.steps.approve.settle_calls`), every undecided
   dangerous task whose referenced results are all known, with those results
   substituted — so what a person approves, edits or rejects is exactly what
   runs. A dangerous task that refers to no result is asked in the first pass;
   one that does waits for the pass after its inputs are done. Calls cleared
   but not yet run are kept in ``to_run``;
3. runs the tasks that can go now as LangGraph functional-API ``@task`` calls,
   each waiting on a shared :class:`Board` for the results it needs and
   starting the moment they are posted, not when a whole level is done.
   Other tasks are triaged (block rules, earlier rejections, reuse) inside
   their ``@task``, once their arguments are substituted.

Which tasks go in a pass: those whose deps are done, or are read-only tasks
of the same pass; a stateful task also waits for the previous stateful task
of the plan (topological, plan order kept where it can be). So read-only tasks
overlap and flow within a pass, while a stateful task is the last link of its
chain in its pass: whatever needs it, or comes after it, starts in a later pass.

Durability (with ``durability="sync"``, the default of a graph with a
checkpointer): a pass ends with a checkpoint saved before the next pass
starts, so a finished stateful task is saved before anything after it starts —
ReAct's guarantee. Within a pass LangGraph saves each finished ``@task``'s
result as a pending write, in the background: a kill in the milliseconds
between a read-only task finishing and that write landing runs the read-only
task again on resume (harmless: it is concurrency-safe, i.e. a lookup), as
does a kill in the same short window after a stateful task finishes (as in
ReAct, between a call finishing and its checkpoint). Resuming re-runs the
pass; tasks are submitted in plan order, which LangGraph's task identities
depend on, so a finished task returns its saved result without running.

Each pass is recorded like a model turn: one synthetic ``AIMessage`` of the
calls it ran, as run, and one ``ToolMessage`` each, so the finish node, the
repetition checks and the CLI read it like any other turn. The passes of a
round share its number (the ``round`` of its :class:`~reasoning_graphs.metadata.Mark`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.messages.tool import ToolCall
from typing_extensions import Required, TypedDict

from reasoning_graphs.effects import Body, Effect, Gather, durable_task
from reasoning_graphs.graphs.llm_compiler.dag import (
    PLAN_KIND,
    RUNTIME,
    SCHEDULE_KIND,
    TASK_RESULTS,
    CompilerTask,
)
from reasoning_graphs.graphs.llm_compiler.state import LlmCompilerState
from reasoning_graphs.metadata import decision_of, mark, mark_of
from reasoning_graphs.nodes.guards.budget import tool_tally
from reasoning_graphs.nodes.guards.call_limits import Tally
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.trajectory import record_call
from reasoning_graphs.nodes.steps.approve import TurnTriage, settle_calls
from reasoning_graphs.nodes.steps.plan import result_value
from reasoning_graphs.nodes.steps.tool_task import run_cleared
from reasoning_graphs.question import (
    model_calls_used,
    question_answers,
    question_bookkeeping,
    question_number,
)
from reasoning_graphs.state import AgentUpdate, CallDecision, ClearedCall
from reasoning_graphs.tools.output import content_text

TaskStatus = Literal["success", "error", "skipped"]

SKIPPED = "Not run: it needs the result of {refs}, which did not succeed."
TASK_CRASHED = "Error: the task stopped unexpectedly ({error})."
TASKS_ONLY = "LLM Compiler tasks pass on only their results"


@dataclass(frozen=True)
class Job:
    """Everything one task of a pass needs to run (not saved: only its result is).

    Attributes:
        task: The plan task.
        cleared: The dangerous task's call as a person cleared it (arguments
            final, possibly edited); ``None`` for a task triaged when it runs.
        run: The run's model, tools and policy.
        state: The graph state, for triage and for tools that read it.
        turn: The question's number.
        step: The step the round's calls count as.
        tally: The tool-call limits' count the pass's tasks share, when the run has any.
    """

    task: CompilerTask
    cleared: ClearedCall | None
    run: RunScope
    state: LlmCompilerState
    turn: int
    step: int
    tally: Tally | None = None


class TaskResult(TypedDict, total=False):
    """A task's result on the board, as its durable task saves it.

    Attributes:
        status: ``success``, ``error`` (failed, rejected or blocked) or ``skipped``.
        text: The observation as the model sees it (cut when long).
        value: What replaces ``$n`` in later tasks (the full text when cut).
        message: The tool's (or the triage's) own ``ToolMessage``, when there is one.
        args: The arguments as run.
        decision: How the call was settled.
        ref: Where the full text of a cut observation is kept.
        started, ended: When the call ran (seconds since the epoch).
        duration_ms: How long the tool ran.
    """

    status: Required[TaskStatus]
    text: Required[str]
    value: Required[str]
    message: ToolMessage | None
    args: dict[str, Any]
    decision: CallDecision
    ref: str | None
    started: float
    ended: float
    duration_ms: float


class Board:
    """The results of a round's tasks by plan id; tasks wait here for the ones they need.

    On the sync face tasks run on threads and block on a condition; on the
    async face they run on the loop and await an event.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._results: dict[int, TaskResult] = {}
        self._events: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def post(self, task_id: int, result: TaskResult) -> None:
        with self._changed:
            self._results[task_id] = result
            self._changed.notify_all()
            for loop, event in self._events:
                loop.call_soon_threadsafe(event.set)

    def results(self, ids: Sequence[int]) -> dict[int, TaskResult] | None:
        """The results of ``ids`` once all are posted, else ``None``."""
        with self._changed:
            if all(i in self._results for i in ids):
                return {i: self._results[i] for i in ids}
            return None

    def wait_for(self, ids: Sequence[int]) -> dict[int, TaskResult]:
        """Block until every task of ``ids`` has a result; return those results."""
        with self._changed:
            self._changed.wait_for(lambda: all(i in self._results for i in ids))
            return {i: self._results[i] for i in ids}

    async def await_for(self, ids: Sequence[int]) -> dict[int, TaskResult]:
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
                self.post(task_id, _task_result("error", TASK_CRASHED.format(error=error)))

        return post


class WaitFor(Effect):
    """Wait until the board has the results of ``ids``."""

    def __init__(self, board: Board, ids: Sequence[int]):
        self.board, self.ids = board, ids

    def run(self) -> dict[int, TaskResult]:
        return self.board.wait_for(self.ids)

    async def arun(self) -> dict[int, TaskResult]:
        return await self.board.await_for(self.ids)


def _task_body(job: Job, board: Board) -> Body[TaskResult]:
    """Wait for the task's deps, then run it — or skip it when a dep did not succeed."""
    task = job.task
    needed = yield WaitFor(board, task["deps"])
    failed = [f"${dep}" for dep in task["deps"] if needed[dep]["status"] != "success"]
    if failed:
        return _task_result("skipped", SKIPPED.format(refs=", ".join(failed)))
    call = job.cleared
    if call is None:
        values = {dep: needed[dep]["value"] for dep in task["deps"]}
        args = TASK_RESULTS.substitute(task["args"], values)
        triage = TurnTriage(turn=job.turn, step=job.step)
        settle_calls(job.run, job.state.copy(), [_call(task, args)], triage, job.tally)
        if triage.answered:
            (answer,) = triage.answered
            return _from_answer(job.state, _call(task, args), answer)
        ((_, call),) = triage.cleared
    started = time.time()
    observations = job.state.get("observations") or {}
    ran = yield from run_cleared(job.run, call, observations, job.state, no_command=TASKS_ONLY)
    return TaskResult(
        **_task_result(ran["status"], ran["content"], ran["full_text"]),
        message=ran["message"],
        args=call["args"],
        decision=ran["decision"],
        ref=ran["ref"],
        started=started,
        ended=time.time(),
        duration_ms=ran["duration_ms"],
    )


run_task = durable_task("run_task", _task_body)


def make_schedule(setup: AgentSetup) -> Callable[[LlmCompilerState], Body[AgentUpdate]]:
    """Build the ``schedule`` node for ``setup``: one pass per run of the node."""

    def schedule(state: LlmCompilerState) -> Body[AgentUpdate]:
        run = setup.for_run()
        plan: list[CompilerTask] = state.get("plan") or []
        turn, step = question_number(state["messages"]), model_calls_used(state)
        done = _settled_tasks(state, plan)
        this_pass = _skipped(plan, done)
        done.update(this_pass)
        open_ids = {task["call_id"] for task in plan if task["id"] not in done}
        cleared = {call["id"]: call for call in state.get("to_run") or [] if call["id"] in open_ids}
        triage = TurnTriage(turn=turn, step=step)
        tally = tool_tally(state, run.limits)
        if tally is not None:
            for call in cleared.values():  # a person cleared it in an earlier pass: it runs now
                tally.count_cleared(call["name"])
        answered, asked = _ask_person(run, state, plan, done, cleared, triage, tally)
        this_pass.update(answered)
        done.update(this_pass)
        if asked:  # the person's answer is saved with this pass; the tasks run in the next
            recorded: AgentUpdate = (
                _record_pass(state, plan, this_pass, turn=turn, step=step, wall_ms=0.0)
                if this_pass
                else {}
            )
            return {
                **recorded,
                **_ended(tally),
                "rejected": triage.rejected,
                "to_run": list(cleared.values()),
            }

        board = Board()
        for task_id, result in done.items():
            board.post(task_id, result)
        batch = _tasks_for_this_pass(run, plan, done, cleared)
        started = time.perf_counter()
        jobs = [
            Job(task, cleared.get(task["call_id"]), run, state, turn, step, tally) for task in batch
        ]
        yield Gather(
            [run_task(job, board, on_settled=board.poster(job.task["id"])) for job in jobs]
        )
        wall_ms = (time.perf_counter() - started) * 1000
        this_pass.update(board.wait_for([task["id"] for task in batch]))
        settled_ids = {task["call_id"] for task in plan if task["id"] in this_pass}
        left = [call for call in cleared.values() if call["id"] not in settled_ids]
        return {
            **_record_pass(state, plan, this_pass, turn=turn, step=step, wall_ms=wall_ms),
            **_ended(tally),
            "rejected": triage.rejected,
            "to_run": left,
        }

    return schedule


def _ended(tally: Tally | None) -> AgentUpdate:
    """The question's incomplete outcome when a tool-call limit ended it during the pass."""
    if tally is None or tally.ended is None:
        return {}
    return {"outcome": {"status": "incomplete", "reason": tally.ended}}


def _ask_person(
    run: RunScope,
    state: LlmCompilerState,
    plan: Sequence[CompilerTask],
    done: Mapping[int, TaskResult],
    cleared: dict[str, ClearedCall],
    triage: TurnTriage,
    tally: Tally | None,
) -> tuple[dict[int, TaskResult], bool]:
    """Settle the undecided dangerous tasks whose inputs are known, with them substituted.

    One interrupt for all that need a person; the cleared ones join ``cleared``,
    the rest (rejected, blocked, answered by a person) are returned as settled,
    with whether a person answered.
    """
    values = _values(done)
    to_ask = {
        task["call_id"]: (task, _call(task, TASK_RESULTS.substitute(task["args"], values)))
        for task in plan
        if task["id"] not in done
        and task["call_id"] not in cleared
        and _dangerous(run, task)
        and all(ref in done for ref in TASK_RESULTS.references(task["args"]))
    }
    asked = settle_calls(run, state, [call for _, call in to_ask.values()], triage, tally)
    cleared.update({call["id"]: call for _, call in triage.cleared})
    settled: dict[int, TaskResult] = {}
    for answer in triage.answered:
        task, call = to_ask[answer.tool_call_id]
        settled[task["id"]] = _from_answer(state, call, answer)
    return settled, asked


def round_settled(state: LlmCompilerState) -> bool:
    """Every task of the plan has its observation: the round is over."""
    plan: list[CompilerTask] = state.get("plan") or []
    answered = question_answers(state["messages"])
    return all(task["call_id"] in answered for task in plan)


def _settled_tasks(state: LlmCompilerState, plan: Sequence[CompilerTask]) -> dict[int, TaskResult]:
    """The round's tasks settled by earlier passes, as the board holds them."""
    answers = question_answers(state["messages"])
    calls = {
        call["id"]: call
        for message in question_bookkeeping(state["messages"], RUNTIME, SCHEDULE_KIND)
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    }
    return {
        task["id"]: _from_answer(state, calls[task["call_id"]], answers[task["call_id"]])
        for task in plan
        if task["call_id"] in answers and task["call_id"] in calls
    }


def _skipped(plan: Sequence[CompilerTask], done: Mapping[int, TaskResult]) -> dict[int, TaskResult]:
    """Tasks that need a task which did not succeed (plan order: deps come first)."""
    skipped: dict[int, TaskResult] = {}
    for task in plan:
        if task["id"] in done:
            continue
        failed = [
            f"${dep}"
            for dep in task["deps"]
            if (found := done.get(dep) or skipped.get(dep)) and found["status"] != "success"
        ]
        if failed:
            skipped[task["id"]] = _task_result("skipped", SKIPPED.format(refs=", ".join(failed)))
    return skipped


def _tasks_for_this_pass(
    run: RunScope,
    plan: Sequence[CompilerTask],
    done: Mapping[int, TaskResult],
    cleared: Mapping[str, ClearedCall],
) -> list[CompilerTask]:
    """The tasks that go now: deps done or read-only in this pass, stateful ones in plan order."""
    chosen: dict[int, bool] = {}  # task id → read-only
    previous_stateful: int | None = None
    for task in plan:
        read_only = run.registry.is_read_only(task["tool"])
        waits_for = list(task["deps"])
        if not read_only:
            waits_for += [] if previous_stateful is None else [previous_stateful]
            previous_stateful = task["id"]
        if task["id"] in done or (_dangerous(run, task) and task["call_id"] not in cleared):
            continue
        if all(dep in done or chosen.get(dep, False) for dep in waits_for):
            chosen[task["id"]] = read_only
    return [task for task in plan if task["id"] in chosen]


def _dangerous(run: RunScope, task: CompilerTask) -> bool:
    return run.policy.needs_approval(run.registry.get(task["tool"]), task["tool"])


def _call(task: CompilerTask, args: dict[str, Any]) -> ToolCall:
    return ToolCall(name=task["tool"], args=args, id=task["call_id"], type="tool_call")


def _values(done: Mapping[int, TaskResult]) -> dict[int, str]:
    return {task_id: r["value"] for task_id, r in done.items() if r["status"] == "success"}


def _from_answer(state: LlmCompilerState, call: ToolCall, answer: ToolMessage) -> TaskResult:
    """The board's form of a call already answered (by a run, the triage or a person)."""
    value = result_value(state["messages"], state.get("observations") or {}, answer)
    decision = decision_of(answer)
    status: TaskStatus = "skipped" if decision == "skipped" else answer.status
    return TaskResult(
        **_task_result(status, content_text(answer.content), value),
        message=answer,
        args=call["args"],
        decision=decision,
    )


def _record_pass(
    state: LlmCompilerState,
    plan: Sequence[CompilerTask],
    this_pass: Mapping[int, TaskResult],
    *,
    turn: int,
    step: int,
    wall_ms: float,
) -> AgentUpdate:
    """The pass as a model turn: the calls as run, one observation each, and events."""
    messages: list[ToolMessage] = []
    events: list[dict[str, Any]] = []
    observations: dict[str, str] = {}
    calls: list[ToolCall] = []
    for task in plan:
        if task["id"] not in this_pass:
            continue
        result, call_id = this_pass[task["id"]], task["call_id"]
        decision = result.get("decision", "skipped")
        status: Literal["success", "error"] = (
            "success" if result["status"] == "success" else "error"
        )
        args = result.get("args", task["args"])  # as run; as planned when it did not run
        call = ToolCall(name=task["tool"], args=args, id=call_id, type="tool_call")
        own = result.get("message") or ToolMessage(
            result["text"], tool_call_id=call_id, name=call["name"]
        )
        observation, event = record_call(
            call,
            own.model_copy(update={"status": status}),
            decision,
            turn=turn,
            step=step,
            observation=result["text"],
            duration_ms=result.get("duration_ms", 0.0),
        )
        calls.append(call)
        messages.append(observation)
        events.append({**event, "started": result.get("started"), "ended": result.get("ended")})
        ref = result.get("ref")
        if ref and result["value"] != result["text"]:
            observations[ref] = result["value"]
    metadata = mark(
        RUNTIME,
        SCHEDULE_KIND,
        round=_current_round(state["messages"]),
        tasks={task["call_id"]: task["id"] for task in plan},
        wall_ms=round(wall_ms, 2),
        critical_path_ms=round(_critical_path_ms(plan, state, events), 2),
    )
    message = AIMessage(content="", tool_calls=calls, response_metadata=metadata)
    update: AgentUpdate = {"messages": [message, *messages], "trajectory": events}
    if observations:
        update["observations"] = observations
    return update


def _current_round(messages: Sequence[AnyMessage]) -> int:
    """The round of the plan being run: its plan message says."""
    plans = question_bookkeeping(messages, RUNTIME, PLAN_KIND)
    return mark_of(plans[-1]).get("round", 1) if plans else 1


def _task_result(status: TaskStatus, text: str, value: str | None = None) -> TaskResult:
    """A task's result on the board: ``value`` replaces ``$n`` (the full text when cut)."""
    return TaskResult(status=status, text=text, value=text if value is None else value)


def _critical_path_ms(
    plan: Sequence[CompilerTask], state: LlmCompilerState, events: Sequence[Mapping[str, Any]]
) -> float:
    """The longest chain of tool time through the deps so far: the least wall time the round's
    tasks could take."""
    ids = {task["call_id"] for task in plan}
    earlier: list[Mapping[str, Any]] = list(state.get("trajectory", []))
    durations: dict[str, float] = {
        event["id"]: event.get("duration_ms", 0.0)
        for event in [*earlier, *events]
        if event.get("kind") == "action" and event.get("id") in ids
    }
    finish: dict[int, float] = {}
    for task in plan:  # topological order: deps come first
        before = max((finish[dep] for dep in task["deps"]), default=0.0)
        finish[task["id"]] = before + durations.get(task["call_id"], 0.0)
    return max(finish.values(), default=0.0)
