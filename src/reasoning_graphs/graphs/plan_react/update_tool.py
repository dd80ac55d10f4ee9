"""``update_plan``: the tool through which the model marks plan items done or asks for a
rewrite.

It changes nothing itself: the call and its answer, kept in the thread, are the
marks (:mod:`.board`), so it is read-only, safe to run with the turn's other
calls and to run again. Numbers outside the plan are named in its answer, not
failed, so a slip costs the model no failure count.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.messages import AnyMessage
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedState

from reasoning_graphs.graphs.plan_react.board import plan_board
from reasoning_graphs.graphs.plan_react.prompts import (
    MARKED,
    NO_PLAN_YET,
    NOT_IN_PLAN,
    REWRITE_ASKED,
    STILL_OPEN,
    UPDATE_PLAN,
)
from reasoning_graphs.tools.spec import ToolSpec


@tool(UPDATE_PLAN)
def update_plan(
    messages: Annotated[list[AnyMessage], InjectedState("messages")],
    done: list[int] | None = None,
    needs_replan: bool = False,
    reason: str = "",
) -> str:
    """Mark items of your plan done by their numbers ("done"), or, when an observation
    shows the plan cannot work, ask for the plan to be rewritten ("needs_replan": true,
    with the "reason")."""
    board = plan_board(messages)
    if board is None:
        return NO_PLAN_YET
    numbers = done or []
    after = board.marked(numbers, needs_replan, reason)
    if after.replan_reason is not None:
        return REWRITE_ASKED.format(reason=after.replan_reason)
    still = after.open_items()
    answer = MARKED.format(
        done=len(after.done),
        total=len(after.items),
        open=STILL_OPEN.format(numbers=", ".join(map(str, still))) if still else "",
    )
    outside = board.outside(numbers)
    if outside:
        answer += NOT_IN_PLAN.format(total=len(board.items), numbers=", ".join(map(str, outside)))
    return answer


UPDATE_PLAN_SPEC = ToolSpec(update_plan, concurrency_safe=True, idempotent=True, upkeep=True)
"""The tool as the loop's registry holds it: never dangerous, run with the turn's other calls,
outside the tool-call budgets (a tick is no work of the task)."""
