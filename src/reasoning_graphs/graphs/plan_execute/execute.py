"""``execute``: carry out the plan's current step with the ReAct graph as a subgraph.

The step runs with a conversation of its own — one human message naming the
request, the earlier results and the step — so the executor's tool calls and
observations stay out of the user's conversation, and the step's model sees
only what the step needs. Running it, resuming it and carrying the question's
rejections and spending across are :func:`~reasoning_graphs.nodes.wiring.subgraph.subgraph_node`'s
work; what is Plan-and-Execute's own is here.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.pregel import Pregel

from reasoning_graphs.graphs.plan_execute.progress import describe_steps_done, steps_done
from reasoning_graphs.graphs.plan_execute.prompts import STEP_TASK
from reasoning_graphs.graphs.plan_execute.state import ExecuteUpdate, PastStep, PlanExecuteState
from reasoning_graphs.nodes.wiring.subgraph import SubgraphRun, subgraph_node
from reasoning_graphs.question import latest_request, question_number


def make_execute(step_graph: Pregel) -> RunnableLambda[PlanExecuteState, dict[str, Any]]:
    """Build the ``execute`` node: each plan step runs through ``step_graph``."""
    return subgraph_node("execute", step_graph, step_conversation, record_step)


def step_conversation(state: PlanExecuteState) -> list[AnyMessage]:
    """The step's own conversation: a self-contained description of the current step."""
    task = STEP_TASK.format(
        task=latest_request(state["messages"]),
        done=describe_steps_done(steps_done(state)),
        step=state["plan"][0],
    )
    return [HumanMessage(task)]


def record_step(state: PlanExecuteState, run: SubgraphRun) -> ExecuteUpdate:
    """Record the finished step and move the plan on.

    The step's result is its final answer; its trajectory joins the run's,
    tagged with the question's turn and the step's number, so token counts and
    tool calls of the whole run stay in one place.
    """
    turn = question_number(state["messages"])
    done = PastStep(step=state["plan"][0], result=run.answer, outcome=run.outcome, turn=turn)
    events = run.events(turn=turn, plan_step=len(steps_done(state)) + 1)
    return {"plan": state["plan"][1:], "past_steps": [done], "trajectory": events}
