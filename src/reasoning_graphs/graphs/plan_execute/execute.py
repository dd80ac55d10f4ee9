"""``execute``: carry out the plan's current step with a tool-using agent graph.

The step runs as a subgraph called from this node with a conversation of its
own — one human message naming the request, the earlier results and the step —
so the executor's tool calls and observations stay out of the user's
conversation, and the step's model sees only what the step needs. Called
inside a node, the subgraph still inherits the parent's checkpointer, context
and stream: its nodes show in Studio, its approval interrupts reach the
caller unchanged, and on resume it continues from its own checkpoint (finished
tool calls are not run again) while this node's cheap, pure preparation is
simply repeated. The question's rejections and spending cross into the step
and back in :func:`~reasoning_graphs.nodes.subgraph.subgraph_node`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.pregel import Pregel

from reasoning_graphs.graphs.plan_execute.progress import (
    PastStep,
    describe_done,
    steps_done,
    task_of,
)
from reasoning_graphs.graphs.plan_execute.prompts import STEP_TASK
from reasoning_graphs.nodes.subgraph import subgraph_node
from reasoning_graphs.nodes.turn import last_ai_message, turn_number


def make_execute(step_graph: Pregel) -> RunnableLambda:
    """Build the ``execute`` node: each plan step runs through ``step_graph``."""
    return subgraph_node("execute", step_graph, step_input, step_update)


def step_input(state: Mapping[str, Any]) -> dict[str, Any]:
    """The step's own conversation: a self-contained description of the current step."""
    task = STEP_TASK.format(
        task=task_of(state["messages"]),
        done=describe_done(steps_done(state)),
        step=state["plan"][0],
    )
    return {"messages": [HumanMessage(task)]}


def step_update(state: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """Record the finished step and move the plan on.

    The step's result is its final answer; its trajectory joins the run's,
    tagged with the question's turn and the step's number, so token counts and
    tool calls of the whole run stay in one place.
    """
    turn = turn_number(state["messages"])
    number = len(steps_done(state)) + 1
    done = PastStep(
        step=state["plan"][0],
        result=last_ai_message(result["messages"]).text.strip(),
        outcome=result.get("outcome") or {"status": "answered"},
        turn=turn,
    )
    events = [{**event, "turn": turn, "plan_step": number} for event in result["trajectory"]]
    return {"plan": state["plan"][1:], "past_steps": [done], "trajectory": events}
