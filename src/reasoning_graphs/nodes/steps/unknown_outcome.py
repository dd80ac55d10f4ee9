"""A call that started before a crash and has no saved result is never run again unseen.

A finished call's result is saved by LangGraph in the background, so a process
killed between a tool's side effect and that save would run the call again on
resume. Before a call that must not simply repeat starts — one that needs a
person under the run's policy, or whose tool is not retry-safe
(:attr:`~reasoning_graphs.tools.spec.ToolSpec.retry_safe`) — its start is
committed to the checkpointer's database, or else to the run's store
(:mod:`reasoning_graphs.call_journal`).
Should the call come to run again in the same task, the task was cut short after
the call started (a call whose result was saved never runs again), so:

- a call that needs a person is put to them again, marked as possibly run:
  approve runs it once more, reject never runs it, respond answers it with
  their words; each start needs a go-ahead of its own, so a second crash asks again;
- any other call does not run: the model is told its outcome is unknown.

The record's key holds the checkpoint namespace, which holds LangGraph's task
id: the same for a crashed task that runs again, new when a fresh approval sends
the call anew. With LangGraph's ``durability="async"`` (not the default of a graph
with a checkpointer here) a crash can lose the step that sent the task, and the
call then runs again as a new task. A retry-safe call that needs no person is
run as it always was, and costs nothing. A call on a checkpointer without a
journal (in memory, or unknown to this library) and without a store keeps
at-least-once execution.
"""

from __future__ import annotations

from langgraph.config import get_config, get_store
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.errors import GraphBubbleUp

from reasoning_graphs.call_journal import CallKey, Journal, run_journal
from reasoning_graphs.effects import Blocking, Body
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.steps.approve import REJECTED_NOW, ask_again
from reasoning_graphs.nodes.steps.call_request import CallOutcome, CallRequest, Next
from reasoning_graphs.state import ClearedCall
from reasoning_graphs.tools.output import ToolResult

UNKNOWN_OUTCOME = (
    "Error: this call started before the run stopped and its result was lost; it may or "
    "may not have taken effect. Check before calling it again."
)


def at_most_once(request: CallRequest, then: Next) -> Body[CallOutcome]:
    """The chain's link that hands the call on (``then``, the call not yet started) unless an
    earlier start of it in this task makes its outcome unknown; see the module docstring."""
    run, call, needs_person = request.run, request.call, request.needs_person
    spec = run.registry.get(call["name"])
    found = None if spec is None or (spec.retry_safe and not needs_person) else _journal(call)
    if found is None:
        return (yield from then(request))
    journal, key = found
    starts: int = yield Blocking(journal.starts, key)
    if starts and not needs_person:
        return CallOutcome(ToolResult(UNKNOWN_OUTCOME, "error", 0.0), call["decision"])
    for _ in range(starts):  # LangGraph hands each earlier answer back, in order
        decision = ask_again(call, run.registry)
        if decision["type"] == "reject":
            reason = decision["reason"]
            rejected = ToolResult(REJECTED_NOW.format(reason=reason), "error", 0.0)
            return CallOutcome(rejected, "rejected", reason)
        if decision["type"] == "respond":
            return CallOutcome(ToolResult(decision["content"], "success", 0.0), "responded")
    yield Blocking(journal.record_start, key)
    try:
        return (yield from then(request))
    except GraphBubbleUp:  # the tool paused the run: it runs from its start on resume
        yield Blocking(journal.take_back_start, key)
        raise


def _journal(call: ClearedCall) -> tuple[Journal, CallKey] | None:
    """The run's journal and the call's key in it, if the run has one."""
    configurable = get_config().get("configurable", {})
    journal = run_journal(configurable.get(CONFIG_KEY_CHECKPOINTER), get_store())
    if journal is None:
        return None
    key = CallKey(
        str(configurable.get("thread_id", "")), configurable.get("checkpoint_ns", ""), call["id"]
    )
    return journal, key


own_texts(UNKNOWN_OUTCOME)
