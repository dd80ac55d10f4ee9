"""The state of an LLM Compiler run: the agent state plus the round's task graph."""

from __future__ import annotations

from reasoning_graphs.graphs.llm_compiler.dag import CompilerTask
from reasoning_graphs.state import AgentState, AgentUpdate


class LlmCompilerState(AgentState):
    """The agent state plus the plan of the current round.

    Attributes:
        plan: The tasks of the latest plan, in topological order when valid (kept when
            invalid, to show what was wrong).
        plan_problem: Why the latest plan cannot run; ``None`` when it can.
    """

    plan: list[CompilerTask] | None
    plan_problem: str | None


class PlanUpdate(AgentUpdate, total=False):
    """What ``plan`` writes: the round's tasks, and why they cannot run (if they cannot)."""

    plan: list[CompilerTask] | None
    plan_problem: str | None
