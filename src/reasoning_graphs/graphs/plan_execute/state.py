"""The state of a Plan-and-Execute run: the agent state plus the plan and the steps done."""

from __future__ import annotations

import operator
from typing import Annotated

from reasoning_graphs.graphs.plan_execute.progress import PastStep
from reasoning_graphs.state import AgentState


class PlanExecuteState(AgentState):
    """The agent state plus the plan.

    Attributes:
        plan: Steps still to do, in order; ``execute`` takes the first.
        past_steps: Every executed step with its result and outcome (each tagged
            with its question's turn).
        replans: Revisions of the current question's plan so far.
    """

    plan: list[str]
    past_steps: Annotated[list[PastStep], operator.add]
    replans: int
