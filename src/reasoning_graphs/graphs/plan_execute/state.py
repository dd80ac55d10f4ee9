"""The state of a Plan-and-Execute run: the agent state plus the plan and the steps done."""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

from reasoning_graphs.state import AgentState, AgentUpdate, Outcome, extend_record


class PastStep(TypedDict):
    """One executed plan step.

    Attributes:
        step: The step as the plan worded it.
        result: The executor's final reply for the step.
        outcome: How the step's ReAct run ended (answered, or incomplete with a reason).
        turn: The conversation turn the step belongs to, so a thread's later
            questions start from a clean plan.
    """

    step: str
    result: str
    outcome: Outcome
    turn: int


class PlanExecuteState(AgentState):
    """The agent state plus the plan.

    Attributes:
        plan: Steps still to do, in order; ``execute`` takes the first.
        past_steps: Every executed step with its result and outcome (each tagged
            with its question's turn).
        replans: Revisions of the current question's plan so far.
    """

    plan: list[str]
    past_steps: Annotated[list[PastStep], extend_record]
    replans: int


class PlanUpdate(AgentUpdate, total=False):
    """What ``plan`` and ``replan`` write: a new or revised plan, or the answer (which
    empties the plan)."""

    plan: list[str]
    replans: int


class ExecuteUpdate(AgentUpdate, total=False):
    """What ``execute`` writes: the step it ran, with its result, and the plan moved on."""

    plan: list[str]
    past_steps: list[PastStep]
