"""Replays gold tasks (:mod:`gold_tasks`) through an agent and judges the run.

A task's model turns are played by a :class:`~reasoning_graphs.testing.ScriptedChatModel`
through our ``react`` graph or LangChain's ``create_agent``, each on a fresh copy
of the task's world and its own thread. A run is *solved* when every question
ends on the gold answer, the world ends as the task says, and the agent asked
the model for every gold turn (no fewer: a guard ended the question; no more:
it asked again). The *audit* compares the tool messages of two runs field by
field: an agent that lets a correct run through untouched shows the model
exactly what the tools returned, as ``create_agent`` does.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.graphs import react
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.gold_tasks import GoldTask, World

GOLD_MAX_STEPS = 40
"""Model calls per question for ``react``: well above the longest gold question, so that
only the guards, never a budget, can stop a gold run (the token, tool-call and time
budgets are off by default)."""

AUDITED_FIELDS = ("name", "content", "artifact", "status")
"""What the audit compares of the tool messages answering the same call (besides their order)."""

Builder = Callable[[ScriptedChatModel, list[BaseTool]], CompiledStateGraph]

AGENTS: dict[str, Builder] = {
    "react": lambda model, tools: react.build_graph(
        model, tools, InMemorySaver(), max_model_calls=GOLD_MAX_STEPS
    ),
    "create_agent": lambda model, tools: create_agent(model, tools, checkpointer=InMemorySaver()),
}
"""The agents compared, each built with an in-memory saver so a thread keeps its questions."""

RUN_OPTIONS: dict[str, dict[str, Any]] = {"create_agent": {"max_concurrency": 1}}
"""Config beyond the thread, per agent. ``create_agent`` runs the calls of one turn on a
thread pool, so a write and a read of the same turn race; one at a time, in the model's
order, it gives the one correct result. Ours runs plain tools in order already."""


@dataclass(frozen=True)
class Run:
    """What one agent did with one task."""

    agent: str
    finals: list[BaseMessage]
    """The last message of the conversation after each question."""
    tool_messages: list[ToolMessage]
    world: World
    model_calls: int
    outcomes: list[Any]
    """Our graph's outcome of each question (``None`` for ``create_agent``)."""
    error: str | None = None
    """The exception that ended the run, as one line."""


def replay(task: GoldTask, agent: str) -> Run:
    """Play ``task``'s gold turns through ``agent`` on a fresh world and thread."""
    world, tools = task.fresh_world()
    model = ScriptedChatModel(script=task.script)
    graph = AGENTS[agent](model, tools)
    thread = {
        "configurable": {"thread_id": f"gold-{uuid.uuid4().hex[:8]}"},
        **RUN_OPTIONS.get(agent, {}),
    }
    finals: list[BaseMessage] = []
    outcomes: list[Any] = []
    messages: list[BaseMessage] = []
    error = None
    try:
        for question in task.questions:
            state = graph.invoke({"messages": [HumanMessage(question.ask)]}, thread)
            messages = state["messages"]
            finals.append(messages[-1])
            outcomes.append(state.get("outcome"))
    except Exception as exc:  # a failed run is a finding to report, not a crash of the suite
        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        messages = graph.get_state(thread).values.get("messages", [])
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    return Run(agent, finals, tool_messages, world, len(model.calls), outcomes, error)


def unsolved_reason(task: GoldTask, run: Run) -> str | None:
    """Why ``run`` did not solve ``task`` (``None``: solved)."""
    if run.error:
        return f"raised {run.error}"
    expected_calls = len(task.script)
    if run.model_calls != expected_calls:
        return (
            f"asked the model {run.model_calls} times instead of {expected_calls}; "
            f"outcomes {run.outcomes}"
        )
    for number, (question, final) in enumerate(zip(task.questions, run.finals, strict=True), 1):
        if not isinstance(final, AIMessage) or final.tool_calls or final.content != question.answer:
            return f"question {number} ended on {_short(final)} instead of {question.answer!r}"
    if run.world != task.end:
        return f"world ended as {run.world} instead of {task.end}"
    return None


def audit_difference(run: Run, reference: Run) -> str | None:
    """The first way ``run``'s tool messages differ from ``reference``'s (``None``: identical):
    the message answering each call, then their number, then their order."""
    ours = {message.tool_call_id: message for message in run.tool_messages}
    for theirs in reference.tool_messages:
        call = f"{theirs.tool_call_id} ({theirs.name or 'a tool message'})"
        mine = ours.get(theirs.tool_call_id)
        if mine is None:
            return f"no tool message answers call {call}"
        for field_name in AUDITED_FIELDS:
            got, expected = getattr(mine, field_name), getattr(theirs, field_name)
            if got != expected:
                return (
                    f"the answer to call {call} differs in {field_name}: "
                    f"{_short(got)} instead of {_short(expected)}"
                )
    if len(run.tool_messages) != len(reference.tool_messages):
        return f"{len(run.tool_messages)} tool messages instead of {len(reference.tool_messages)}"
    order = [message.tool_call_id for message in run.tool_messages]
    expected_order = [message.tool_call_id for message in reference.tool_messages]
    if order != expected_order:
        return f"tool messages in the order {order} instead of {expected_order}"
    return None


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
