"""``act`` of Reflexion: one attempt at the request, as a ReAct run in a subgraph.

The attempt sees the conversation with the latest request rewritten to carry
the lessons of the earlier trials, so it knows what went wrong before without
seeing the failed attempts' tool traffic. As in Plan-and-Execute's
``execute``, the subgraph is called inside the node: it inherits the
checkpointer, context and stream, its approval interrupts reach the caller,
and on resume it continues from its own checkpoint while this node's cheap,
pure preparation is repeated — with the same lessons, because they are state.
The question's rejections and spending cross into the attempt and back in
:func:`~reasoning_graphs.nodes.subgraph.subgraph_node`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.pregel import Pregel

from reasoning_graphs.graphs.reflexion.prompts import ATTEMPT_TASK
from reasoning_graphs.graphs.reflexion.trials import (
    Attempt,
    describe_lessons,
    lessons_of,
    split_at_request,
    trials_of,
)
from reasoning_graphs.nodes.subgraph import subgraph_node
from reasoning_graphs.nodes.turn import last_ai_message


def make_attempt(attempt_graph: Pregel) -> RunnableLambda:
    """Build the ``act`` node: each trial runs through ``attempt_graph``."""
    return subgraph_node("act", attempt_graph, attempt_input, attempt_update)


def attempt_input(state: Mapping[str, Any]) -> dict[str, Any]:
    """The attempt's conversation: the user's, with the lessons so far added to the request."""
    lessons = lessons_of(state)
    if not lessons:
        return {"messages": list(state["messages"])}
    earlier, task = split_at_request(state["messages"])
    request = ATTEMPT_TASK.format(task=task, reflections=describe_lessons(lessons))
    return {"messages": [*earlier, HumanMessage(request)]}


def attempt_update(state: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """Keep the attempt's answer for grading; its trajectory joins the run's, tagged by trial."""
    trial = len(trials_of(state)) + 1
    attempt = Attempt(
        answer=last_ai_message(result["messages"]).text.strip(),
        outcome=result.get("outcome") or {"status": "answered"},
    )
    events = [{**event, "trial": trial} for event in result["trajectory"]]
    return {"attempt": attempt, "trajectory": events, "outcome": None}
