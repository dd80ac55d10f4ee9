"""Render a conversation as the text ReAct transcript a text-format model continues.

The state keeps ordinary LangChain messages (so approvals, tools and
checkpoints work as in every pattern); only the model sees the text form:
its own earlier replies verbatim, and each observation — from a tool or from
the runtime correcting the format — as an Observation line the runtime wrote.
A tool's output is untrusted data, never the person's words: after its label it
sits in a data block naming the tool (see :mod:`reasoning_graphs.nodes.guards.untrusted`).

Examples:
    >>> print(observation_line("42", "calculator", ENGLISH))
    Observation: <<<data from calculator>>>
    42
    <<<end of data>>>
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage

from reasoning_graphs.history import Fold, folded
from reasoning_graphs.metadata import format_error_of, raw_reply_of
from reasoning_graphs.nodes.guards.untrusted import as_data
from reasoning_graphs.text_format.labels import ENGLISH, Labels


def render_transcript(messages: Sequence[AnyMessage], labels: Labels) -> Sequence[BaseMessage]:
    """The conversation as alternating user/assistant turns in the text format (read only).

    A running fold of the conversation: each step renders only the messages added since.
    """
    return folded(messages, _transcript_fold(labels))


def _transcript_fold(labels: Labels) -> Fold[list[BaseMessage]]:
    def step(rendered: list[BaseMessage], message: AnyMessage) -> list[BaseMessage]:
        rendered.extend(_rendered(message, labels))
        return rendered

    return Fold(f"transcript {labels!r}", list, step)


def _rendered(message: AnyMessage, labels: Labels) -> list[BaseMessage]:
    if isinstance(message, ToolMessage):
        return [HumanMessage(observation_line(message.text, message.name or "tool", labels))]
    if isinstance(message, AIMessage):
        correction = format_error_of(message)
        reply = AIMessage(_assistant_text(message, labels))
        if correction:
            return [reply, HumanMessage(f"{labels.observation}: {correction}")]
        return [reply]
    return [message]


def observation_line(text: str, tool: str, labels: Labels = ENGLISH) -> str:
    """A tool's output after the Observation label, as a data block naming the tool."""
    return f"{labels.observation}: {as_data(text, source=tool)}"


def _assistant_text(message: AIMessage, labels: Labels) -> str:
    raw = raw_reply_of(message)
    if raw:
        return str(raw)
    if message.tool_calls:  # edited, or written by another pattern: show it in the format
        call = message.tool_calls[0]
        thought = f"{labels.thought}: {message.text}\n" if message.text.strip() else ""
        return (
            f"{thought}{labels.action}: {call['name']}\n"
            f"{labels.action_input}: {json.dumps(call['args'], ensure_ascii=False)}"
        )
    return f"{labels.final_answer}: {message.text}"
