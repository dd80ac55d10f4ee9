"""A node that runs the ReAct graph on a conversation of its own: one plan step, or one trial.

Plan-and-Execute runs the ReAct graph once per plan step and Reflexion once per
trial; the two differ only in the conversation the run gets and in what they
keep of its result. This node does the rest, once.

The subgraph is called directly from the node's sync and async bodies, so
LangGraph links it to the parent: its nodes show in Studio and in
``get_state(subgraphs=True)``, its approvals interrupt the parent run, and on
resume it continues from its own checkpoint inside the parent's (finished tool
calls are not run again) while the node's cheap, pure preparation is simply
repeated.

It also runs with the parent's durability: LangGraph reads the mode from the
run config (see :mod:`reasoning_graphs.nodes.wiring.durability`), and this node
hands the subgraph its own config. Under the parent's ``durability="sync"``
each step of the subgraph is saved before its next step starts, so a tool
call it finished is not run again after a hard kill
(tests/test_crash_windows.py kills a Plan-and-Execute step between two calls).

Whatever binds the whole question crosses the boundary here, for every such
node: the subgraph gets the question's rejections and the model calls spent so
far (:func:`~reasoning_graphs.nodes.guards.budget.question_bounds`; the graph's input
is :class:`~reasoning_graphs.state.StepInput`), and its new rejections come
back. So a rejected call stays rejected in later steps and trials, and the
budgets cover them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeVar

from langchain_core.messages import AnyMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.pregel import Pregel

from reasoning_graphs.nodes.guards.budget import question_bounds
from reasoning_graphs.question import last_ai_message
from reasoning_graphs.state import AgentState, Outcome, TrajectoryEvent

State = TypeVar("State", bound=AgentState)

STEP_RECURSION_LIMIT = 10_000
"""Super-steps a step or trial may take: LangGraph's own default for a run, far beyond
what the question's budgets allow."""


class SubgraphRun(NamedTuple):
    """What a finished run of the subgraph hands back to the pattern that ran it.

    Attributes:
        answer: The run's final answer (its last model message).
        outcome: How the run ended: answered, or incomplete with a reason.
        trajectory: The run's own events.
    """

    answer: str
    outcome: Outcome
    trajectory: list[TrajectoryEvent]

    def events(self, **tags: Any) -> list[dict[str, Any]]:
        """The run's events, each tagged (a plan step's number, a trial's), to join the parent's."""
        return [{**event, **tags} for event in self.trajectory]


Conversation = Callable[[State], list[AnyMessage]]
"""The messages the run starts from, made from the parent's state."""

Record = Callable[[State, SubgraphRun], Mapping[str, Any]]
"""The parent's update from the finished run."""


def subgraph_node(
    name: str, graph: Pregel, conversation: Conversation[State], record: Record[State]
) -> RunnableLambda[State, dict[str, Any]]:
    """A node that runs ``graph`` on ``conversation(state)`` and returns ``record(state, run)``.

    ``graph`` must be compiled without a checkpointer: it uses the parent's.
    """

    def run(state: State, config: RunnableConfig) -> dict[str, Any]:
        return _update(state, graph.invoke(_input(state), _step_config(config)))

    async def arun(state: State, config: RunnableConfig) -> dict[str, Any]:
        return _update(state, await graph.ainvoke(_input(state), _step_config(config)))

    def _input(state: State) -> dict[str, Any]:  # the subgraph's StepInput
        return {"messages": conversation(state), **question_bounds(state)}

    def _update(state: State, result: Mapping[str, Any]) -> dict[str, Any]:
        return {**record(state, finished_run(result)), "rejected": result.get("rejected") or {}}

    return RunnableLambda(run, afunc=arun, name=name)


def _step_config(config: RunnableConfig) -> RunnableConfig:
    """The node's config with room for a long step: a node's config carries LangChain's
    default of 25 super-steps, which a step of a dozen tool rounds would hit; the
    step's own budgets bound it instead (as a top-level run's do)."""
    limit = max(config.get("recursion_limit") or 0, STEP_RECURSION_LIMIT)
    return {**config, "recursion_limit": limit}


def finished_run(result: Mapping[str, Any]) -> SubgraphRun:
    """Read the subgraph's final state: an unset outcome means the run answered."""
    outcome: Outcome | None = result.get("outcome")
    return SubgraphRun(
        answer=last_ai_message(result["messages"]).text.strip(),
        outcome=outcome or {"status": "answered"},
        trajectory=list(result["trajectory"]),
    )
