"""A reply cut by the length limit, made whole: a link of the model-call chain.

Text is continued by a "continue" turn and joined, at most :data:`MAX_CONTINUATIONS`
times, and not when it already reads complete; a cut tool call (or typed reply) is asked
again rather than run, and one still cut at the end is marked invalid, so no call runs
on arguments that were never finished. A grammar-constrained reply is left as it is (a
continuation would restart the grammar), and so is the closing call past a spent budget.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace

from langchain_core.messages import AIMessage, HumanMessage, InvalidToolCall
from langchain_core.utils.json import parse_partial_json

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.model.request import ModelCall, ModelReply, Next, preceded
from reasoning_graphs.state import ThoughtEvent

logger = logging.getLogger(__name__)

MAX_CONTINUATIONS = 2
"""Model calls that may follow a reply cut by the length limit."""
LENGTH_REASONS = frozenset({"length", "max_tokens"})
FINAL_MARKS = (".", "!", "?", "。", "！", "？", "…", '"', "”", ")", "）", "」", "```")
CONTINUE_PROMPT = (
    "Your reply was cut off by the length limit. Continue exactly where it stopped, "
    "without repeating anything."
)
CUT_CALL = "The call's arguments were cut off by the length limit; it was not run."
own_texts(CONTINUE_PROMPT, CUT_CALL)  # a reply of them is no answer


def made_whole(call: ModelCall, then: Next) -> Body[ModelReply]:
    """The link: ``call``'s reply, continued or asked again while the length limit cut it,
    with the events of the cut parts before its own."""
    reply = yield from then(call)
    if call.closing or call.request.grammar is not None:
        return reply
    before, parts = "", []
    for _ in range(MAX_CONTINUATIONS):
        message = reply.message
        if not reply.cut:
            break
        if proposes_calls(message) or call.request.schema is not None:
            before, again = "", call.prompt
        else:
            so_far = before + message.text
            if reads_complete(so_far):
                break
            before = so_far
            again = [*call.prompt, AIMessage(before), HumanMessage(CONTINUE_PROMPT)]
        parts.extend(reply.events)
        call.made.extend(reply.events)
        logger.info("the reply was cut by the length limit; asking for the rest")
        reply = yield from then(call.asking(again))
    if before:
        reply = _joined(before, reply)
    if reply.cut and proposes_calls(reply.message):
        reply = replace(reply, message=_calls_invalidated(reply.message))
    return preceded(parts, reply)


def was_cut(message: AIMessage) -> bool:
    """Whether the provider stopped the reply at its length limit.

    OpenAI and llama.cpp say ``finish_reason: "length"``; Anthropic
    ``stop_reason: "max_tokens"``; Gemini ``finish_reason: "MAX_TOKENS"``. llama.cpp's
    server says ``tool_calls`` of a call whose arguments the limit cut, so a call whose
    arguments are the start of a JSON value but not a whole one counts as cut too.
    """
    metadata = message.response_metadata
    reason = metadata.get("finish_reason") or metadata.get("stop_reason")
    if isinstance(reason, str) and reason.lower() in LENGTH_REASONS:
        return True
    return any(_unfinished_json(call.get("args")) for call in message.invalid_tool_calls)


def _unfinished_json(text: object) -> bool:
    """Whether ``text`` is the start of a JSON object or array that already holds something
    and stops before its end. A malformed one (``{oops``: nothing readable before the
    fault) is the model's error, not the limit's."""
    if not isinstance(text, str) or not text.strip():
        return False
    try:
        json.loads(text)
    except ValueError:
        try:
            begun = parse_partial_json(text)
        except ValueError:
            return False
        return isinstance(begun, (dict, list)) and bool(begun)
    return False


def proposes_calls(message: AIMessage) -> bool:
    return bool(message.tool_calls or message.invalid_tool_calls)


def reads_complete(text: str) -> bool:
    """Whether ``text`` ends as a finished answer would: a closing mark, no open code block."""
    stripped = text.rstrip()
    return stripped.endswith(FINAL_MARKS) and stripped.count("```") % 2 == 0


def _joined(before: str, reply: ModelReply) -> ModelReply:
    """The last part of a continued reply, carrying the text of all of them."""
    text = before + reply.message.text
    message = reply.message.model_copy(update={"content": text})
    return replace(reply, message=message, event=ThoughtEvent(**{**reply.event, "text": text}))


def _calls_invalidated(message: AIMessage) -> AIMessage:
    """``message`` with its calls marked invalid: their arguments were cut off."""
    cut = [
        InvalidToolCall(
            type="invalid_tool_call",
            name=call["name"],
            args=json.dumps(call["args"]),
            id=call["id"],
            error=CUT_CALL,
        )
        for call in message.tool_calls
    ]
    invalid = [*message.invalid_tool_calls, *cut]
    return message.model_copy(update={"tool_calls": [], "invalid_tool_calls": invalid})
