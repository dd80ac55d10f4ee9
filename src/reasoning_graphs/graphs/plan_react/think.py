"""``think`` with the plan in its system prompt: ReAct's ``think``, shown the plan each round.

The plan messages stay in the thread (they are the plan, :mod:`.board`) but not in
the conversation the model reads: it reads the plan, with its done marks, in the
system prompt of every round instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

from langgraph.runtime import get_runtime

from reasoning_graphs.context import pattern_option
from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.plan_react.board import PlanBoard, is_plan, plan_board
from reasoning_graphs.graphs.plan_react.prompts import NO_MORE_REPLANS, PLAN_SECTION
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.steps.think import make_think
from reasoning_graphs.nodes.steps.typed_think import StepFormatting, with_step_format
from reasoning_graphs.state import AgentState, AgentUpdate

MAX_REPLANS = "max_replans"


def replans_allowed(built: int) -> int:
    """The run's bound on rewrites: the graph's ``built``, or lower where the run says so."""
    runtime = get_runtime()
    limit: int = pattern_option(runtime.context if runtime else None, MAX_REPLANS, built)
    return limit


def may_replan(board: PlanBoard | None, max_replans: int) -> bool:
    """Whether the plan is to be rewritten now: a rewrite was asked for, and one is left."""
    asked = board is not None and board.replan_reason is not None
    return asked and board is not None and board.replans < replans_allowed(max_replans)


def plan_section(board: PlanBoard, max_replans: int) -> str:
    """The plan as the system prompt shows it, saying so when a rewrite was refused."""
    section = PLAN_SECTION.format(items=board.render())
    if board.replan_reason is not None and not may_replan(board, max_replans):
        section += NO_MORE_REPLANS.format(limit=replans_allowed(max_replans))
    return section


ThinkBody = Callable[[AgentState], Body[AgentUpdate]]


def plan_think(max_replans: int, formatting: StepFormatting) -> Callable[[AgentSetup], ThinkBody]:
    """The ``think`` node's maker for a loop whose rewrites are bounded by ``max_replans``,
    its steps written as ``formatting`` says (tool calls, or typed steps)."""

    def make(setup: AgentSetup) -> ThinkBody:
        def think(state: AgentState) -> Body[AgentUpdate]:
            messages = state["messages"]
            board = plan_board(messages)
            shown = setup
            if board is not None:
                prompt = f"{setup.system_prompt}\n\n{plan_section(board, max_replans)}"
                shown = replace(setup, system_prompt=prompt)
            conversation = [message for message in messages if not is_plan(message)]
            seen = cast(AgentState, {**state, "messages": conversation})
            return (yield from with_step_format(shown, formatting, make_think(shown))(seen))

        return think

    return make
