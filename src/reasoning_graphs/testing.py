"""A scripted chat model for tests, examples and benchmarks.

LangChain's fake chat models cannot ``bind_tools``; this one can. It replays a
script of replies — text, tool calls, structured outputs or errors — records
every prompt it receives, and can sleep per call and per output token so that
benchmarks see realistic latency without a real model.

Example:
    >>> from reasoning_graphs.testing import ScriptedChatModel, tool_call
    >>> model = ScriptedChatModel(script=[tool_call("calculator", expression="2+2"), "4"])
    >>> model.invoke("What is 2+2?").tool_calls[0]["name"]
    'calculator'
    >>> model.invoke("...").content
    '4'
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

ScriptItem: TypeAlias = (
    "str | AIMessage | BaseModel | dict | BaseException | Callable[[list[BaseMessage]], Any]"
)
"""One scripted reply: text, a message, a structured output (model or dict), an
exception to raise, or a function of the prompt that returns one of those."""

SCRIPT_EXHAUSTED = (
    "ScriptedChatModel ran out of replies after {count} call(s); the last prompt ended with: "
    "{last!r}. Add replies to the script or pass cycle=True."
)


class ScriptExhaustedError(RuntimeError):
    """The model was called more often than its script allows."""


@dataclass
class RecordedCall:
    """One call the model received: the prompt, what was bound to it, and the token usage."""

    messages: list[BaseMessage]
    tools: list[str]
    tool_choice: Any
    stop: list[str] | None = None
    usage: dict[str, int] | None = None


def tool_call(name: str, id: str | None = None, **args: Any) -> AIMessage:
    """A scripted reply that calls one tool."""
    return tool_calls((name, args, id))


def tool_calls(
    *calls: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str | None], content: str = ""
) -> AIMessage:
    """A scripted reply that calls several tools in one turn, in the given order."""
    entries = []
    for call in calls:
        name, args = call[0], call[1]
        call_id = (call[2] if len(call) > 2 else None) or f"call_{uuid.uuid4().hex[:12]}"
        entries.append({"name": name, "args": args, "id": call_id, "type": "tool_call"})
    return AIMessage(content=content, tool_calls=entries)


class ScriptedChatModel(BaseChatModel):
    """A chat model that plays back a script and records what it was asked.

    Attributes:
        script: Replies in order (see :data:`ScriptItem`).
        cycle: Start the script again when it runs out instead of raising.
        delay: Seconds to sleep per call (prompt processing).
        token_delay: Seconds to sleep per output token (generation).
        calls: Every call received, in order.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Sequence[Any] = Field(default_factory=list)
    cycle: bool = False
    delay: float = 0.0
    token_delay: float = 0.0
    calls: list[RecordedCall] = Field(default_factory=list)

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _position: Any = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def prompts(self) -> list[list[BaseMessage]]:
        """The message lists of every call, in order."""
        return [call.messages for call in self.calls]

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> Runnable:
        names = [convert_to_openai_tool(tool)["function"]["name"] for tool in tools]
        return self.bind(tool_names=names, tool_choice=tool_choice, **kwargs)

    def _next_reply(self, record: RecordedCall) -> Any:
        with self._lock:
            if self._position is None:
                items = itertools.cycle(self.script) if self.cycle else iter(self.script)
                self._position = items
            self.calls.append(record)
            try:
                return next(self._position)
            except StopIteration:
                last = record.messages[-1].content if record.messages else ""
                raise ScriptExhaustedError(
                    SCRIPT_EXHAUSTED.format(count=len(self.calls), last=last)
                ) from None

    def _reply_message(self, item: Any, messages: list[BaseMessage], tools: list[str]) -> AIMessage:
        while callable(item) and not isinstance(item, (BaseModel, type)):
            item = item(messages)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, AIMessage):
            message = item.model_copy(deep=True)
        elif isinstance(item, str):
            message = AIMessage(content=item)
        elif isinstance(item, (BaseModel, dict)):
            message = _structured_reply(item, tools)
        else:
            raise TypeError(f"Unsupported script item: {type(item).__name__}")
        if message.id is None:
            message.id = f"scripted-{uuid.uuid4().hex[:12]}"
        message.usage_metadata = _usage(messages, message)
        return message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._reply(messages, stop, kwargs)
        time.sleep(self._latency(message))
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._reply(messages, stop, kwargs)
        await asyncio.sleep(self._latency(message))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _reply(
        self, messages: list[BaseMessage], stop: list[str] | None, bound: dict[str, Any]
    ) -> AIMessage:
        tools = bound.get("tool_names", [])
        record = RecordedCall(list(messages), tools, bound.get("tool_choice"), stop)
        message = self._reply_message(self._next_reply(record), messages, tools)
        record.usage = dict(message.usage_metadata or {})
        return message

    def _latency(self, message: AIMessage) -> float:
        output_tokens = message.usage_metadata["output_tokens"] if message.usage_metadata else 0
        return self.delay + self.token_delay * output_tokens


def _structured_reply(value: BaseModel | dict, tools: list[str]) -> AIMessage:
    """A structured output, delivered the way ``with_structured_output`` expects it: a tool call."""
    args = value.model_dump() if isinstance(value, BaseModel) else dict(value)
    name = tools[0] if len(tools) == 1 else type(value).__name__
    return AIMessage(
        content="",
        tool_calls=[{"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}"}],
    )


def _usage(prompt: list[BaseMessage], reply: AIMessage) -> dict[str, int]:
    text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
    if reply.tool_calls:
        text += json.dumps([{"name": c["name"], "args": c["args"]} for c in reply.tool_calls])
    output_tokens = max(1, round(len(text) / 4)) if text else 0
    input_tokens = count_tokens_approximately(prompt)
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }
