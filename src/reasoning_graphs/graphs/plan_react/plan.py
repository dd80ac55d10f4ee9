"""``plan`` and ``replan``: the typed model calls that write the plan and rewrite it in place.

Both ask for numbered items (:class:`PlanItems`; as numbered lines from a model
without typed replies) and write the plan as a message of their own
(:mod:`.board`). A reply that cannot be read is no error the run dies of: a
first plan falls back to the request itself as its one item, a rewrite keeps
the plan it was to replace, and the message says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, Field

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.plan_react.board import PlanBoard, plan_board, plan_mark
from reasoning_graphs.graphs.plan_react.prompts import (
    EMPTY_PLAN,
    FALLBACK_NOTE,
    KEPT_NOTE,
    NO_OBSERVATIONS,
    PLANNER_INSTRUCTIONS,
    REPLAN_REQUEST,
    TEXT_FORMAT,
    UPDATE_PLAN,
)
from reasoning_graphs.nodes.guards.untrusted import as_data
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.plan import PlanDraft, PlanForm, draft_plan, plan_node
from reasoning_graphs.question import latest_request, question_messages
from reasoning_graphs.state import AgentState, AgentUpdate, ThoughtEvent
from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.spec import ToolSpec

NUMBERED = re.compile(r"^\s*\d+[.)]\s+(?P<item>\S.*?)\s*$")
SHOWN_OBSERVATIONS = 6
"""The latest tool results a rewrite is shown."""
OBSERVATION_CHARS = 600


class PlanItems(BaseModel):
    """A short plan for the user's request: numbered items, in order."""

    items: list[str] = Field(
        description="The plan's items in order; each one concrete step the tools can carry out."
    )


def parse_items(text: str, specs: Sequence[ToolSpec]) -> tuple[list[str], list[str]]:
    """The items of a plan written as numbered lines, and what could not be read."""
    items = [match["item"] for line in text.splitlines() if (match := NUMBERED.match(line))]
    return items, [] if items else [EMPTY_PLAN]


PLAN_FORM = PlanForm(
    instructions=PLANNER_INSTRUCTIONS,
    text_format=TEXT_FORMAT,
    schema=PlanItems,
    from_schema=lambda reply: [item.strip() for item in reply.items if item.strip()],
    parse_text=parse_items,
)


def make_plan(
    setup: AgentSetup, *, max_items: int
) -> Callable[[AgentState], Body[Mapping[str, Any]]]:
    """Build the ``plan`` node: the question's first plan, at most ``max_items`` items."""

    def write_plan(run: RunScope, state: AgentState, specs: list[ToolSpec]) -> Body[AgentUpdate]:
        draft = yield from _draft(run, state, specs, follow_up=[])
        fallback = [latest_request(state["messages"])]
        return _written(draft, max_items, fallback, FALLBACK_NOTE)

    return plan_node(setup, write_plan)


def make_replan(
    setup: AgentSetup, *, max_items: int
) -> Callable[[AgentState], Body[Mapping[str, Any]]]:
    """Build the ``replan`` node: the plan rewritten for the reason ``update_plan`` gave, from
    what the tools returned. The loop comes here only while rewrites are left."""

    def write_replan(run: RunScope, state: AgentState, specs: list[ToolSpec]) -> Body[AgentUpdate]:
        board = plan_board(state["messages"]) or PlanBoard(())
        request = REPLAN_REQUEST.format(
            reason=board.replan_reason,
            plan=board.render(),
            observations=_observations(state["messages"]),
        )
        draft = yield from _draft(run, state, specs, follow_up=[HumanMessage(request)])
        return _written(draft, max_items, list(board.items), KEPT_NOTE)

    return plan_node(setup, write_replan)


def _draft(
    run: RunScope, state: AgentState, specs: list[ToolSpec], *, follow_up: list[HumanMessage]
) -> Body[PlanDraft[str]]:
    """One planning call; the planner is not shown ``update_plan``, which is the loop's."""
    tools = [spec for spec in specs if spec.name != UPDATE_PLAN]
    return (
        yield from draft_plan(
            run, PLAN_FORM, state, tools, follow_up=follow_up, check=lambda items: []
        )
    )


def _written(draft: PlanDraft[str], max_items: int, fallback: list[str], note: str) -> AgentUpdate:
    """The plan message (items in its metadata), or ``fallback`` with ``note`` when the reply
    gave no items."""
    items = draft.steps[:max_items]
    shown_note = ""
    if not items:
        items = fallback
        shown_note = note.format(reason=(draft.problem or EMPTY_PLAN).rstrip("."))
    content = PlanBoard(tuple(items)).render() + shown_note
    reply = draft.reply
    message = AIMessage(
        content, usage_metadata=reply.message.usage_metadata, response_metadata=plan_mark(items)
    )
    event = ThoughtEvent(**{**reply.event, "text": content})
    return {"messages": [message], "trajectory": [event], "outcome": None, "to_run": []}


def _observations(messages: Sequence[AnyMessage]) -> str:
    """The question's latest tool results, but ``update_plan``'s, as data blocks."""
    results = [
        message
        for message in question_messages(messages)
        if isinstance(message, ToolMessage) and message.name != UPDATE_PLAN
    ][-SHOWN_OBSERVATIONS:]
    blocks = [
        as_data(content_text(m.content)[:OBSERVATION_CHARS], source=m.name or "a tool")
        for m in results
    ]
    return "\n".join(blocks) or NO_OBSERVATIONS
