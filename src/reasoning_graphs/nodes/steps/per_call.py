"""A person asked about one call at a time, as LangChain 1.5's ``interrupt_mode="per_call"``.

A ``HumanInTheLoopMiddleware`` built with ``interrupt_mode="per_call"`` asks about each gated
call with an interrupt of its own, whose value is the call (``type: "tool_approval"``,
``tool_call_id``, ``name``, ``args``, ``description``) and whose ``response_schema`` is the
decisions that tool allows, an edit's arguments typed by the tool's own schema. LangGraph
checks a resume against that schema before saving it: an answer that does not fit raises
pydantic's ``ValidationError`` to whoever sent it, and the question waits as it was.

Here the approve step asks them one after another, in the model's order, before any call of
the turn runs (a turn's calls are settled together: a stateful call never runs while a person
still decides about one before it), and each answer is sealed as a batched one is. An edit
names the same tool, and its arguments are laid over the proposed ones as a batched edit's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, Union, cast

from langchain.agents.middleware.human_in_the_loop import (
    ApproveDecision,
    RejectDecision,
    RespondDecision,
)
from langchain_core.tools import BaseTool
from langgraph.types import interrupt
from pydantic import BaseModel, Discriminator, WithJsonSchema, WrapValidator, create_model

from reasoning_graphs.review import (
    DEFAULT_REJECT_REASON,
    ApprovalError,
    PendingCall,
    ReviewDecision,
)

NO_CALL_ID = (
    "The tool call {name!r} has no id, so its result could not be matched to it; make the "
    "chat model return tool call ids."
)


def ask_per_call(
    pending: PendingCall, tool: BaseTool | None, fit: Callable[[ReviewDecision], ReviewDecision]
) -> ReviewDecision:
    """The person's decision on one call, asked with an interrupt of its own, and asked again
    (the value with an ``error``) while ``fit`` refuses it (an edit that cannot run).

    Raises:
        ValueError: The call has no id.
        pydantic.ValidationError: The resume does not fit the call's decisions (raised by
            LangGraph to the client that sent it; nothing is saved).
    """
    if pending["id"] is None:
        raise ValueError(NO_CALL_ID.format(name=pending["name"]))
    value = {
        "type": "tool_approval",
        "tool_call_id": pending["id"],
        "name": pending["name"],
        "args": pending["args"],
        "description": pending["description"],
    }
    schema = decision_schema(pending["allowed_decisions"], pending["name"], tool)
    answer = interrupt(value, response_schema=schema)
    while True:
        try:
            return fit(review_decision(answer))
        except ApprovalError as error:
            answer = interrupt({**value, "error": str(error)}, response_schema=schema)


def review_decision(answer: Any) -> ReviewDecision:
    """A LangChain decision (checked against :func:`decision_schema`) as ours."""
    kind = answer["type"]
    if kind == "edit":  # its name is the call's tool (the schema pins it): merged as ours
        return {"type": "edit", "args": dict(answer["edited_action"]["args"])}
    if kind == "reject":
        return {"type": "reject", "reason": answer.get("message") or DEFAULT_REJECT_REASON}
    if kind == "respond":
        return {"type": "respond", "content": answer["message"]}
    return {"type": "approve"}


def decision_schema(allowed: Sequence[str], name: str, tool: BaseTool | None) -> Any:
    """The type a resume must fit: one of the ``allowed`` decisions, told apart by ``type``;
    an edit's ``name`` is the call's tool and its ``args`` fit the tool's call schema (a tool
    without a Pydantic schema takes any object, its schema shown)."""
    kinds: dict[str, Any] = {
        "approve": ApproveDecision,
        "reject": RejectDecision,
        "respond": RespondDecision,
    }
    if "edit" in allowed:
        kinds["edit"] = _edit_decision(name, tool)
    members = tuple(kinds[kind] for kind in dict.fromkeys(allowed))
    if len(members) == 1:
        return members[0]
    return Annotated[Union[members], Discriminator("type")]  # noqa: UP007


def _edit_decision(name: str, tool: BaseTool | None) -> Any:
    schema = tool.tool_call_schema if tool is not None else None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        args: Any = schema
    else:
        shown = schema if isinstance(schema, dict) else {"type": "object"}
        args = Annotated[dict[str, Any], WithJsonSchema(shown)]
    action = create_model("EditedAction", name=(cast(Any, Literal[name]), ...), args=(args, ...))
    decision = create_model(
        "EditDecision", type=(cast(Any, Literal["edit"]), ...), edited_action=(action, ...)
    )
    # checked, then kept as sent: the edit's arguments are checked again, and run, as given
    return Annotated[decision, WrapValidator(lambda answer, check: (check(answer), answer)[1])]
