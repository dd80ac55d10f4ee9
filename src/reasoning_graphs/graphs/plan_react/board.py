"""The plan as the thread holds it: read from the messages of the current question.

``plan`` and ``replan`` write each plan as a message of their own (marked as this
pattern's, with its items); ``update_plan`` calls that ran mark items done or ask
for a rewrite. Nothing else holds the plan, so a resumed thread reads the same
plan, and the rewrites counted are the plan messages the question holds: a write
to other state keys cannot reset the bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from reasoning_graphs.graphs.plan_react.prompts import (
    ITEM_DONE,
    ITEM_OPEN,
    UPDATE_PLAN,
)
from reasoning_graphs.metadata import Mark, mark, written_by
from reasoning_graphs.question import question_messages

RUNTIME = "plan_react"
PLAN_KIND = "plan"
ITEMS = "items"


@dataclass(frozen=True)
class PlanBoard:
    """The current plan of a question.

    Attributes:
        items: The plan's items, in order (numbered from 1).
        done: The numbers of the items marked done.
        replans: How often the question's plan was rewritten.
        replan_reason: Why the latest ``update_plan`` asked for a rewrite not yet made.
    """

    items: tuple[str, ...]
    done: frozenset[int] = frozenset()
    replans: int = 0
    replan_reason: str | None = None

    def outside(self, numbers: Iterable[int]) -> list[int]:
        """Those of ``numbers`` that name no item of the plan."""
        return sorted({n for n in numbers if not 1 <= n <= len(self.items)})

    def marked(self, done: Iterable[int], needs_replan: bool, reason: str) -> PlanBoard:
        """The board after an ``update_plan`` call with these arguments; a number outside
        the plan changes nothing. The latest call says whether a rewrite is wanted."""
        known = set(done) - set(self.outside(done))
        wanted = (reason.strip() or "no reason given") if needs_replan else None
        return replace(self, done=self.done | known, replan_reason=wanted)

    def open_items(self) -> list[int]:
        return [n for n in range(1, len(self.items) + 1) if n not in self.done]

    def render(self) -> str:
        """The plan as numbered lines with their done marks."""
        return "\n".join(
            (ITEM_DONE if number in self.done else ITEM_OPEN).format(number=number, item=item)
            for number, item in enumerate(self.items, 1)
        )


def plan_mark(items: Sequence[str]) -> Mark:
    """The metadata of a plan message: this pattern's, holding its items."""
    return mark(RUNTIME, PLAN_KIND, **{ITEMS: list(items)})


def is_plan(message: AnyMessage) -> bool:
    return written_by(message, RUNTIME, PLAN_KIND)


def plan_board(messages: Sequence[AnyMessage]) -> PlanBoard | None:
    """The current question's plan with its marks; ``None`` before the plan is written."""
    board: PlanBoard | None = None
    plans = 0
    calls: dict[str, Mapping[str, Any]] = {}
    for message in question_messages(messages):
        if is_plan(message):
            board = PlanBoard(tuple(message.response_metadata[ITEMS]), replans=plans)
            plans += 1
        elif isinstance(message, AIMessage):
            ours = [call for call in message.tool_calls if call["name"] == UPDATE_PLAN]
            calls.update({call["id"] or "": call["args"] for call in ours})
        elif isinstance(message, ToolMessage) and board is not None:
            args = calls.get(message.tool_call_id)
            if args is not None and message.status == "success":
                board = marked_by(board, args)
    return board


def marked_by(board: PlanBoard, args: Mapping[str, Any]) -> PlanBoard:
    """``board`` after an ``update_plan`` call that ran with ``args`` (checked by its schema)."""
    return board.marked(
        args.get("done") or [], bool(args.get("needs_replan")), str(args.get("reason") or "")
    )
