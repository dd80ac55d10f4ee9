"""The middleware's ``before_model`` and ``after_model`` hooks on a model call that is no
turn of a conversation: a plan, a join, a judgement, a closing answer.

Such a call's prompt is built for it from the conversation, so the hooks read the state
as it is, and a text they change in the conversation is changed wherever the prompt
quotes it; nothing is saved: a PII filter keeps an address out of a planner's prompt
as it keeps it out of a turn's. ``after_model`` hooks read the prompt and the reply,
and may change the reply. A jump to ``"end"`` stops the question before the
call, incomplete. A turn of the ReAct-family loops runs the hooks around its node
instead (:mod:`~reasoning_graphs.nodes.steps.model_turn`) and marks the state it hands
its call (:data:`IN_TURN`), so no hook runs twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_messages
from langgraph.errors import InvalidUpdateError
from langgraph.graph.message import add_messages

from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import HOOK_NOTE
from reasoning_graphs.middleware import AFTER_MODEL, BEFORE_MODEL, Hooks, StateHook, name_of
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.stop import QuestionStopped
from reasoning_graphs.nodes.model.request import ModelCall, ModelReply, Next
from reasoning_graphs.nodes.model.setup import AgentSetup

IN_TURN = "__model_turn__"
"""The key on the state a turn's hooks hand its model call: the texts they changed, as
(old, new) pairs, for the call to change wherever its prompt quotes them."""
ENDED = "the middleware {name} ended the question"


APPENDED = frozenset({"messages", "trajectory"})
"""Fields whose writes add up (the rest: the last write stands)."""


def ended_reason(middleware: Any, words: AIMessage | None) -> str:
    """Why a question that ``middleware`` ended stopped, with its last words when it had any."""
    said = f": {words.text}" if words is not None else ""
    return ENDED.format(name=name_of(middleware)) + said


def last_words(written: Mapping[str, Any]) -> AIMessage | None:
    """The last model message with text among the hooks' writes, if any."""
    said = [m for m in written.get("messages") or () if isinstance(m, AIMessage) and m.text]
    return said[-1] if said else None


def run_hook(
    middleware: Any, hooks: Hooks, seen: dict[str, Any], written: dict[str, Any]
) -> Body[bool]:
    """Run one hook on ``seen`` and write its update; whether it jumps to the end."""
    update = dict((yield StateHook(middleware, hooks, seen)) or {})
    jump = update.pop("jump_to", None)
    write_update(seen, written, update)
    return jump == "end"


def write_update(seen: dict[str, Any], written: dict[str, Any], update: Mapping[str, Any]) -> None:
    """``update`` applied to the state the next hook reads (messages by id), and added to
    ``written``, the writes so far."""
    for field, value in update.items():
        if field == "messages":
            seen[field] = add_messages(seen.get(field) or [], list(value))
        elif field in APPENDED:
            seen[field] = [*(seen.get(field) or []), *value]
        else:
            seen[field] = value
        if field in APPENDED:
            written[field] = [*(written.get(field) or []), *value]
        else:
            written[field] = value


TWO_WRITES = (
    "At key {field!r}: a wrap_model_call hook's command writes a key the step (or another "
    "hook's command) writes too; a key without a reducer takes one value per step."
)


def with_writes(update: Mapping[str, Any], writes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A step's ``update`` followed by the state ``writes`` its model call's hooks returned
    (:attr:`~.request.ModelReply.writes`), as ``create_agent`` applies their commands after
    the reply: messages and the trajectory appended, another key written once.

    Raises:
        InvalidUpdateError: Two writes of one key that has no reducer, as LangGraph raises.
    """
    merged = dict(update)
    for write in writes:
        for field, value in write.items():
            if field in APPENDED:
                added = value if isinstance(value, list) else [value]
                if field == "messages":
                    added = [_noted(message) for message in convert_to_messages(added)]
                merged[field] = [*(merged.get(field) or []), *added]
            elif field in merged and merged[field] is not None:
                raise InvalidUpdateError(TWO_WRITES.format(field=field))
            else:
                merged[field] = value
    return merged


def with_added(reply: ModelReply) -> list[BaseMessage]:
    """The reply's message after what its hooks appended to the request's conversation
    (:attr:`~.request.ModelReply.added`), each human one marked as the hook's."""
    return [*(_noted(message) for message in reply.added), reply.message]


def _noted(message: BaseMessage) -> BaseMessage:
    """A human message a hook wrote, marked as the hook's (it asks no new question)."""
    if not isinstance(message, HumanMessage):
        return message
    metadata = {**message.response_metadata, HOOK_NOTE: True}
    return message.model_copy(update={"response_metadata": metadata})


def around_call(call: ModelCall, then: Next) -> Body[ModelReply]:
    """The link of the model-call chain that runs the ``before_model`` hooks on the call's
    prompt (:func:`before_call`) and the ``after_model`` hooks on its reply
    (:func:`after_call`)."""
    setup, state = call.run.setup, call.state
    prompt = yield from before_call(setup, call.prompt, state)
    reply = yield from then(call.asking(prompt))
    message = yield from after_call(setup, prompt, reply.message, state)
    return reply if message is reply.message else replace(reply, message=message)


def before_call(
    setup: AgentSetup, prompt: Sequence[BaseMessage], state: Mapping[str, Any]
) -> Body[list[BaseMessage]]:
    """``prompt`` with what the ``before_model`` hooks change in the conversation changed
    wherever the prompt quotes it (a plan's prompt quotes the question inside its own
    words); in a turn, the changes its hooks made (:data:`IN_TURN`), without running them
    again.

    Raises:
        QuestionStopped: A hook jumped to the end.
    """
    if IN_TURN in state:
        return quoting(prompt, state[IN_TURN])
    before = [_identified(m) for m in state.get("messages") or ()]
    seen: dict[str, Any] = {**state, "messages": before}
    written: dict[str, Any] = {}
    for m in setup.before_model_hooks:
        if (yield from run_hook(m, BEFORE_MODEL, seen, written)):
            reason = ended_reason(m, last_words(written))
            raise QuestionStopped({"status": "incomplete", "reason": reason}, [])
    return quoting(prompt, text_changes(before, seen["messages"]))


def text_changes(
    before: Sequence[BaseMessage], after: Sequence[BaseMessage]
) -> list[tuple[str, str]]:
    """The texts of ``before`` that ``after`` changes (same message id), as (old, new)."""
    was = {m.id: m.text for m in before if m.id}
    changed = [(was.get(m.id or ""), m.text) for m in after]
    return [(old, new) for old, new in changed if old and new != old]


def quoting(prompt: Sequence[BaseMessage], changes: Sequence[tuple[str, str]]) -> list[BaseMessage]:
    """``prompt`` with each old text replaced by the new one wherever a message quotes it."""
    return [_changed(m, changes) for m in prompt] if changes else list(prompt)


def after_call(
    setup: AgentSetup,
    prompt: Sequence[BaseMessage],
    reply: AIMessage,
    state: Mapping[str, Any],
) -> Body[AIMessage]:
    """``reply`` as the ``after_model`` hooks (last middleware first) leave it; a jump to the
    end is left to the question's next step (the reply stands)."""
    if IN_TURN in state:  # the turn runs them around its node
        return reply
    reply = _identified(reply)
    seen: dict[str, Any] = {**state, "messages": [*prompt, reply]}
    for m in setup.after_model_hooks:
        yield from run_hook(m, AFTER_MODEL, seen, {})
    found = [x for x in seen["messages"] if isinstance(x, AIMessage) and x.id == reply.id]
    return found[-1] if found else reply


M = TypeVar("M", bound=BaseMessage)


def _changed(message: M, changes: Sequence[tuple[str, str]]) -> M:
    """``message`` with each old text in it replaced by the new one."""
    content = message.content
    if isinstance(content, str):
        new: Any = _replaced(content, changes)
    else:
        new = [
            {**block, "text": _replaced(block["text"], changes)}
            if isinstance(block, dict) and isinstance(block.get("text"), str)
            else _replaced(block, changes)
            if isinstance(block, str)
            else block
            for block in content
        ]
    return message if new == content else message.model_copy(update={"content": new})


def _replaced(text: str, changes: Sequence[tuple[str, str]]) -> str:
    for old, new in changes:
        text = text.replace(old, new)
    return text


def _identified(message: M) -> M:
    """``message`` with an id, so a hook's rewrite of it replaces it."""
    return message if message.id else message.model_copy(update={"id": f"hook-{uuid.uuid4()}"})


own_texts(ENDED)
