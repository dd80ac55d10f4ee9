"""A scripted chat model for tests, examples and benchmarks.

LangChain's fake chat models cannot ``bind_tools``; this one can. It replays a
script of replies — text, tool calls, structured outputs or errors — records
every prompt it receives, and can sleep per call and per output token so that
benchmarks see realistic latency without a real model.

Examples:
    >>> from reasoning_graphs.testing import ScriptedChatModel, tool_call
    >>> model = ScriptedChatModel(script=[tool_call("calculator", expression="2+2"), "4"])
    >>> model.invoke("What is 2+2?").tool_calls[0]["name"]
    'calculator'
    >>> model.invoke("...").content
    '4'
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import json
import re
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

__all__ = [
    "CallSpan",
    "LoopBoundChatModel",
    "LoopBoundError",
    "RecordedCall",
    "ScriptExhaustedError",
    "ScriptItem",
    "ScriptedChatModel",
    "tool_call",
    "tool_calls",
]

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
    usage: UsageMetadata | None = None


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
        count_tool_schemas: Count the bound tools' JSON schemas as prompt tokens, as
            providers do (they put the definitions into the prompt), so that native
            tool calling and a tool list written into the prompt text cost alike.
        stream_tool_calls: Stream each tool call's arguments word by word, as
            providers that stream calls do (OpenAI's API, the embedded model), so a
            typed reply streams too; by default a call comes whole in the last chunk.
        repeat_call_names: With ``stream_tool_calls``, send a call's name and id in
            every chunk of it, as llama.cpp's server does (OpenAI sends them once).
        calls: Every call received, in order.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Sequence[Any] = Field(default_factory=list)
    cycle: bool = False
    delay: float = 0.0
    token_delay: float = 0.0
    count_tool_schemas: bool = False
    stream_tool_calls: bool = False
    repeat_call_names: bool = False
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
        schemas = [convert_to_openai_tool(tool) for tool in tools]
        names = [schema["function"]["name"] for schema in schemas]
        if self.count_tool_schemas:
            kwargs["schema_tokens"] = _text_tokens(json.dumps(schemas))
        return self.bind(tool_names=names, tool_choice=tool_choice, **kwargs)

    def _next_reply(self, record: RecordedCall) -> Any:
        with self._lock:
            self.calls.append(record)
            return self._choose_reply(record)

    def _choose_reply(self, record: RecordedCall) -> Any:
        """The reply to the call ``record`` describes: the script's next item.

        Called under the model's lock, after ``record`` joined :attr:`calls`; a
        subclass that decides from the prompt instead overrides this and keeps the
        recording, usage, latency, streaming and structured delivery.
        """
        if self._position is None:
            items = itertools.cycle(self.script) if self.cycle else iter(self.script)
            self._position = items
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

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The reply's text word by word, then a last chunk with the rest of the reply.

        The chunks add up to the reply :meth:`_generate` gives, and take as long.
        """
        message = self._reply(messages, stop, kwargs)
        pieces = _stream_pieces(message, calls=self.stream_tool_calls, names=self.repeat_call_names)
        per_piece = (self._latency(message) - self.delay) / len(pieces)
        time.sleep(self.delay)
        for chunk in pieces:
            time.sleep(per_piece)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """As :meth:`_stream`, sleeping without blocking the event loop."""
        message = self._reply(messages, stop, kwargs)
        pieces = _stream_pieces(message, calls=self.stream_tool_calls, names=self.repeat_call_names)
        per_piece = (self._latency(message) - self.delay) / len(pieces)
        await asyncio.sleep(self.delay)
        for chunk in pieces:
            await asyncio.sleep(per_piece)
            yield chunk

    def _reply(
        self, messages: list[BaseMessage], stop: list[str] | None, bound: dict[str, Any]
    ) -> AIMessage:
        tools = bound.get("tool_names", [])
        record = RecordedCall(list(messages), tools, bound.get("tool_choice"), stop)
        message = self._reply_message(self._next_reply(record), messages, tools)
        schema_tokens = bound.get("schema_tokens", 0)
        if schema_tokens and message.usage_metadata:
            usage = message.usage_metadata
            message.usage_metadata = {
                **usage,
                "input_tokens": usage["input_tokens"] + schema_tokens,
                "total_tokens": usage["total_tokens"] + schema_tokens,
            }
        record.usage = message.usage_metadata
        return message

    def _latency(self, message: AIMessage) -> float:
        output_tokens = message.usage_metadata["output_tokens"] if message.usage_metadata else 0
        return self.delay + self.token_delay * output_tokens


WORD = re.compile(r"\s*\S+\s*$|\s*\S+")
"""A word with the spaces before it (the last word keeps the spaces after it too)."""


def _stream_pieces(
    message: AIMessage, *, calls: bool = False, names: bool = False
) -> list[ChatGenerationChunk]:
    """A reply as stream chunks: each word of its text, then (with ``calls``) each word of each
    tool call's arguments — its name and id in the first chunk, or in each with ``names`` —
    then a last chunk with the calls not streamed, usage and metadata."""
    words = WORD.findall(message.content) if isinstance(message.content, str) else []
    if "".join(words) != message.content:
        words = []  # content blocks go out whole
    rest = "" if words else message.content
    chunks = [AIMessageChunk(content=word, id=message.id) for word in words]
    whole = message.tool_calls
    if calls:
        whole = []
        for index, call in enumerate(message.tool_calls):
            for number, piece in enumerate(WORD.findall(json.dumps(call["args"]))):
                once = number == 0 or names
                name, call_id = (call["name"], call["id"]) if once else (None, None)
                part = tool_call_chunk(name=name, args=piece, id=call_id, index=index)
                chunks.append(AIMessageChunk(content="", id=message.id, tool_call_chunks=[part]))
    last = AIMessageChunk(
        content=rest,
        id=message.id,
        name=message.name,
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        tool_calls=whole,
        invalid_tool_calls=message.invalid_tool_calls,
        usage_metadata=message.usage_metadata,
        chunk_position="last",
    )
    return [ChatGenerationChunk(message=chunk) for chunk in [*chunks, last]]


def _structured_reply(value: BaseModel | dict, tools: list[str]) -> AIMessage:
    """A structured output, delivered the way ``with_structured_output`` expects it: a tool call."""
    args = value.model_dump() if isinstance(value, BaseModel) else dict(value)
    name = tools[0] if len(tools) == 1 else type(value).__name__
    return AIMessage(
        content="",
        tool_calls=[{"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}"}],
    )


def _text_tokens(text: str) -> int:
    """Tokens of a text at about four characters each, the estimate LangChain's counter uses."""
    return max(1, round(len(text) / 4)) if text else 0


def _usage(prompt: list[BaseMessage], reply: AIMessage) -> UsageMetadata:
    text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
    if reply.tool_calls:
        text += json.dumps([{"name": c["name"], "args": c["args"]} for c in reply.tool_calls])
    output_tokens = _text_tokens(text)
    input_tokens = count_tokens_approximately(prompt)
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }


LOOP_CLOSED = (
    "Event loop is closed: this model's async connection pool was opened on an event loop that "
    "has since closed (the first async call ran on a loop that no longer exists, e.g. a fresh "
    "asyncio.run per node). Sync code must call the model's sync methods."
)
OTHER_LOOP = (
    "Async call on event loop {current:#x}, but this model's async connection pool is bound to "
    "the still-running loop {bound:#x} of its first async call: an async client must not be "
    "shared across event loops (a real one fails with 'attached to a different loop' or hangs)."
)

_IN_ASYNC_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "loop_bound_async_call", default=False
)


class LoopBoundError(RuntimeError):
    """An async call reached a model whose async resources belong to another event loop."""


@dataclass(frozen=True)
class CallSpan:
    """When one call of a :class:`LoopBoundChatModel` ran, and through which face."""

    face: Literal["sync", "async"]
    started: float
    ended: float


class LoopBoundChatModel(ScriptedChatModel):
    """A scripted model whose async methods hold a loop-bound resource, like a pooled HTTP client.

    Scripted exactly like :class:`ScriptedChatModel`. Real clients (langchain-openai's
    ``ChatOpenAI``, any httpx or aiohttp pool) open their async connections on the
    event loop of their first async call and keep them for the process; on another
    loop they fail. This double behaves the same way, so code that runs a model's
    async methods on a fresh loop per call — the classic ``asyncio.run`` inside a
    sync node — fails here as it does against a real server, without one:

    * Sync calls (``invoke``, ``stream``, ``batch``) touch no event loop and work
      from any thread, whether or not that thread runs a loop.
    * The first async call binds the model's pool to the running loop. Later async
      calls on that loop work, concurrently too. An async call on any other loop
      raises :class:`LoopBoundError` (a ``RuntimeError``): ``Event loop is closed``
      when the bound loop has closed, and a "bound to another loop" error while it
      still runs (a pool shared across loops is a bug too). The binding is never
      released, as a client cached for the process is never re-created; use one
      double per event loop under test. A real pool is a little more forgiving: it
      drops the dead connection after the error, so a fresh loop per call fails
      every other call, which a retry could hide. This double fails every time.

    So legitimate use passes: a graph's sync face makes only sync calls, its async
    face makes async calls on the caller's one loop, and one graph with one model
    may mix both faces in any order as long as its async runs share one loop.
    A sync face that routes model calls through async methods is caught twice:
    its calls show up in :attr:`async_calls`, and a loop per call fails on the
    second call (a private loop kept for the sync face fails the async face
    instead). Every rejected call is also kept in :attr:`loop_errors`, so a test
    sees it even when the code under test turned the error into an answer.

    Attributes:
        faces: ``"sync"`` or ``"async"`` for each call received, in order.
        spans: The face, start and end time (``time.perf_counter``) of each
            finished or failed call, in the order they ended.
        loop_errors: Every :class:`LoopBoundError` raised.

    Examples:
        >>> import asyncio
        >>> from reasoning_graphs.testing import LoopBoundChatModel
        >>> model = LoopBoundChatModel(script=["one", "two", "three"])
        >>> model.invoke("hi").content  # sync: no event loop involved
        'one'
        >>> async def ask() -> str:
        ...     return (await model.ainvoke("hi")).content
        >>> asyncio.run(ask())  # binds the pool to this loop, closed on return
        'two'
        >>> asyncio.run(ask())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        reasoning_graphs.testing.LoopBoundError: Event loop is closed: ...
        >>> (model.sync_calls, model.async_calls, len(model.loop_errors))
        (1, 2, 1)
    """

    faces: list[str] = Field(default_factory=list)
    spans: list[CallSpan] = Field(default_factory=list)
    loop_errors: list[LoopBoundError] = Field(default_factory=list)

    _books: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _bound: Any = PrivateAttr(default=None)  # weakref to the loop of the first async call

    @property
    def sync_calls(self) -> int:
        """Calls received through the sync methods."""
        return self.faces.count("sync")

    @property
    def async_calls(self) -> int:
        """Calls received through the async methods (including rejected ones)."""
        return self.faces.count("async")

    @property
    def bound_loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop the async pool is bound to (``None`` before the first async call or once
        that loop is gone)."""
        return self._bound() if self._bound is not None else None

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._sync_call():
            return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._async_call():
            return await super()._agenerate(messages, stop, run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        with self._sync_call():
            yield from super()._stream(messages, stop, run_manager, **kwargs)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        with self._async_call():
            async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
                yield chunk

    @contextlib.contextmanager
    def _sync_call(self) -> Iterator[None]:
        if _IN_ASYNC_CALL.get():  # the sync body of an async call (LangChain's fallbacks)
            yield
            return
        started = time.perf_counter()
        with self._books:
            self.faces.append("sync")
        try:
            yield
        finally:
            self._ended("sync", started)

    @contextlib.contextmanager
    def _async_call(self) -> Iterator[None]:
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        with self._books:
            self.faces.append("async")
            error = self._check_binding(loop)
            if error is not None:
                self.loop_errors.append(error)
        if error is not None:
            self._ended("async", started)
            raise error
        token = _IN_ASYNC_CALL.set(True)
        try:
            yield
        finally:
            _IN_ASYNC_CALL.reset(token)
            self._ended("async", started)

    def _check_binding(self, loop: asyncio.AbstractEventLoop) -> LoopBoundError | None:
        if self._bound is None:
            self._bound = weakref.ref(loop)
            return None
        bound = self._bound()
        if bound is loop:
            return None
        if bound is None or bound.is_closed():
            return LoopBoundError(LOOP_CLOSED)
        return LoopBoundError(OTHER_LOOP.format(current=id(loop), bound=id(bound)))

    def _ended(self, face: Literal["sync", "async"], started: float) -> None:
        with self._books:
            self.spans.append(CallSpan(face, started, time.perf_counter()))
