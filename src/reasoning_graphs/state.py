"""Graph state shared by the agent patterns.

Everything a run needs to resume lives here as plain, serialisable data, so any
checkpointer can save it and a new process can pick the run up.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import NotRequired, TypedDict


def merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: later keys win, earlier keys stay."""
    return {**(left or {}), **(right or {})}


class PlannedCall(TypedDict):
    """A tool call cleared to run this turn (after policy and approval)."""

    id: str
    name: str
    args: dict[str, Any]
    decision: str


class Outcome(TypedDict):
    """How the latest turn ended, or why it must end now."""

    status: Literal["answered", "incomplete"]
    reason: NotRequired[str]


class AgentInput(TypedDict):
    """What a caller sends: LangGraph's usual chat input."""

    messages: Annotated[list[AnyMessage], add_messages]


class StepInput(AgentInput):
    """What a pattern hands the ReAct graph it runs for one plan step or trial.

    Besides the step's conversation, what binds the whole question: both only
    tighten the run.

    Attributes:
        rejected: Calls a person already rejected, by signature, with the reason.
        earlier_calls: Tokens of each model call the question made before this
            run, so the budgets count them.
    """

    rejected: NotRequired[Annotated[dict[str, str], merge_dicts]]
    earlier_calls: NotRequired[list[int]]


class AgentState(StepInput):
    """The full state of a tool-using agent.

    Attributes:
        messages: The conversation, including tool calls and observations.
        trajectory: One event per thought and per action, for inspection and
            telemetry (text, tool, arguments, observation, tokens, latency).
        observations: Full texts of observations that were cut, by reference id.
        rejected: Calls a person rejected, by signature, with the reason.
        earlier_calls: Tokens of each model call of the question made before
            this run (set for a plan step or trial).
        pending: Calls of the current turn that are cleared to run.
        outcome: Set when the turn has ended or must end.
    """

    trajectory: Annotated[list[dict[str, Any]], operator.add]
    observations: Annotated[dict[str, str], merge_dicts]
    pending: list[PlannedCall]
    outcome: Outcome | None
