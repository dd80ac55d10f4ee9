"""The state of a ReWOO run: the agent state plus the plan."""

from __future__ import annotations

from reasoning_graphs.graphs.rewoo.steps import PlanStep
from reasoning_graphs.state import AgentState, AgentUpdate


class RewooState(AgentState):
    """The agent state plus the plan of the current question.

    Attributes:
        plan: The steps of the latest plan (kept when invalid, to show what was wrong).
        plan_problem: Why the latest plan cannot run; ``None`` when it can.
        replans: How many plans this question had before the latest one.
    """

    plan: list[PlanStep] | None
    plan_problem: str | None
    replans: int


class PlanUpdate(AgentUpdate, total=False):
    """What ``plan`` writes: the plan, why it cannot run (if it cannot), and its number."""

    plan: list[PlanStep] | None
    plan_problem: str | None
    replans: int
