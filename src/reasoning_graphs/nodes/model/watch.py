"""Watch a model call while it runs: tokens as they stream, time, and silence.

A budget checked only between rounds lets one reply run far past it, and a
provider that stops answering holds a run forever. So every model call that a
budget or a timeout limits runs under a :class:`CallWatch`: a callback handler
that sees each streamed chunk (under a token or time budget it asks LangChain
to stream, as LangGraph's own message handler does) and a watchdog on the
calling side that gives up on a call past its deadline or silent for too long.
A call stopped either way raises :class:`CallStopped` with what it streamed so
far; the model-call seam decides what that means for the question. A call that
nothing limits runs unwatched.

Calls started together (a batch: samples, candidate steps, judges) share one
:class:`SharedTokens`: each watch draws its chunks from it, so once the batch
has spent the tokens left, every call of the batch stops at its next chunk.

The sync face runs the call on a daemon thread and waits for it, so a call
that hangs inside a blocking read can be left behind; the next chunk it
produces raises, so a local model stops generating at once. The async face
runs it as a task and cancels it: LangChain's async generate cannot take an
exception raised from a callback.

Examples:
    >>> from langchain_core.messages import HumanMessage
    >>> from reasoning_graphs.testing import ScriptedChatModel
    >>> model = ScriptedChatModel(script=["one two three four five six seven eight"])
    >>> watch = watch_for(CallAllowance(output_tokens=3))
    >>> try:
    ...     Watched(model, [HumanMessage("Count")], watch).run()
    ... except CallStopped as stopped:
    ...     print(stopped.kind, stopped.text.strip())
    budget one two three
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import Runnable, RunnableBinding
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers.context import register_configure_hook

from reasoning_graphs.effects import Effect, Handoff
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.model.tokens import RunningEstimate
from reasoning_graphs.private_names import StreamingCallbackHandler

StopKind = Literal["budget", "deadline", "timeout", "idle", "repetition", "cap"]
"""Why a call was stopped: a token allowance spent while it streamed, the question's time
budget reached, the per-call timeout, no chunk for the idle timeout, the reply saying the
same thing over and over, or the reply reaching its own length cap."""
KEPT_REPLIES: frozenset[StopKind] = frozenset({"repetition", "cap"})
"""Stops that end the reply, not the question: what it said so far is its reply."""
REPEATS = 4
"""A reply is cut once the same passage ends it this many times in a row."""
SHORTEST_REPEAT = 16
"""Characters a repeated passage has at least: shorter runs (``no, no, no``) are speech."""
SHORT_RUN_CHARS = 200
"""Characters over which a shorter passage repeating itself is no longer speech but a
stuck answer (``I'm sorry, I'm sorry, …``, ``144.0000…``). Looked for only in an answer
asked with tools off (a reply with a cap): any other reply may hold data that runs so
(a row of zeros, a wide table's rule). Looked for as the reply grows, it is found in any
run :data:`REPEAT_CHECK_CHARS` longer."""
LONGEST_REPEAT = 400
"""Characters a repeated passage has at most (a longer loop is left to the caps)."""
REPEAT_CHECK_CHARS = 32
"""Characters a reply grows by between two looks for a repetition."""
_SENTENCE_END = re.compile(r"[.!?…。！？\n]")

CALL_TIMED_OUT = "the model did not finish its reply within {seconds:g} s"
CALL_IDLE = "the model sent nothing for {seconds:g} s"
TIME_SPENT = "the question's time budget ran out while the model was replying"
TOKENS_SPENT = "the question's token budget ran out while the model was replying"
REPEATED = "the model said the same passage {times} times in a row; its reply ends after the first"
CAPPED = "the reply reached its cap of {tokens} tokens"


class SharedTokens:
    """Tokens several concurrent calls may spend between them, prompts and replies.

    Each call of a batch would otherwise take the question's whole remaining
    budget as its own, and ten of them spend it ten times. A call starts only
    if the counter pays its prompt with room to spare (:meth:`pay_prompt`);
    its watch then spends its chunks here as they stream. The chunk that
    empties the counter stops its call, and every other call stops at its next
    chunk. So the calls end within the tokens given, plus the chunk each was
    writing. Safe to use from threads and tasks at once.
    """

    def __init__(self, tokens: int):
        self._left = tokens
        self._lock = threading.Lock()

    def pay_prompt(self, tokens: int) -> bool:
        """Spend a prompt's ``tokens`` if more than that is left; whether it was paid."""
        with self._lock:
            if self._left <= tokens:
                return False
            self._left -= tokens
            return True

    def spend(self, tokens: int) -> bool:
        """Count ``tokens`` as spent; whether the allowance is used up."""
        with self._lock:
            self._left -= tokens
            return self._left <= 0


@dataclass(frozen=True)
class CallAllowance:
    """What one model call may use before it is stopped (``None``: no limit).

    Attributes:
        output_tokens: Tokens the reply may stream (estimated from the chunks).
        deadline_s: Seconds the call may take because the question's time budget
            allows no more.
        timeout_s: Seconds the call may take (the per-call timeout).
        idle_s: Seconds the call may go without sending anything.
        shared_tokens: Tokens the reply shares with the other calls of its batch.
        reply_tokens: Tokens the reply may stream before it ends there, kept as the reply
            (the closing answer's cap, for a model with no length limit of its own).
    """

    output_tokens: int | None = None
    deadline_s: float | None = None
    timeout_s: float | None = None
    idle_s: float | None = None
    shared_tokens: SharedTokens | None = None
    reply_tokens: int | None = None

    def after(self, elapsed: float) -> CallAllowance:
        """This allowance for a try that starts ``elapsed`` seconds into the call."""
        if self.deadline_s is None or not elapsed:
            return self
        return replace(self, deadline_s=max(0.0, self.deadline_s - elapsed))

    @property
    def timed(self) -> bool:
        """Whether the call has a clock to watch (else it runs where it is called)."""
        return not (self.deadline_s is None and self.timeout_s is None and self.idle_s is None)

    @property
    def limited(self) -> bool:
        """Whether anything can stop the call (else it runs unwatched)."""
        return self.timed or self.counts_tokens

    @property
    def counts_tokens(self) -> bool:
        """Whether the reply's tokens are limited (it is then streamed and counted)."""
        return (
            self.output_tokens is not None
            or self.shared_tokens is not None
            or self.reply_tokens is not None
        )


class CallStopped(Exception):
    """A model call stopped before it finished; ``text`` is what it had streamed."""

    def __init__(self, kind: StopKind, reason: str, text: str, tokens: int, elapsed_ms: float):
        super().__init__(reason)
        self.kind, self.reason, self.text = kind, reason, text
        self.tokens, self.elapsed_ms = tokens, elapsed_ms


class _StopStreaming(BaseException):
    """Raised inside the model's stream to end it. Not an ``Exception``: the callback
    manager would log it as a failed handler, and a provider's code may catch those."""

    def __init__(self, stop: CallStopped):
        super().__init__(stop.reason)
        self.stop = stop


class CallWatch(BaseCallbackHandler):
    """Counts what a call streams and stops it once its allowance is spent.

    Each streamed chunk arrives in :meth:`on_llm_new_token`, which ends the stream
    by raising once the allowance is spent. A call is streamed when something
    asks for it (LangGraph's ``messages`` stream mode does); :class:`StreamingWatch`
    asks for it, for a call with a budget to check as it streams. Unstreamed, a
    call's silence is the whole call: the idle timeout then bounds it entire.
    """

    run_inline = True

    def __init__(self, allowance: CallAllowance):
        self.allowance = allowance
        self.started = self.last_seen = time.monotonic()
        self.text, self._count = "", RunningEstimate()
        self.said = ""
        """The reply's own text (no call arguments), where a repetition is looked for."""
        self._looked_at = 0
        self.arguments: dict[Any, str] = {}
        """The argument text of each streamed call, by its index, as it arrived."""
        self.stop: CallStopped | None = None
        self.raises = True
        """Stop the stream by raising from the callback (the sync face); the async face
        cancels the call's task instead, as LangChain's async generate expects."""
        self.wake: Callable[[], None] | None = None
        """Called once the allowance is spent: the async face's watchdog wakes."""
        self._lock = threading.Lock()

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        """Nothing to note. Without it LangChain writes the whole prompt out as text for
        ``on_llm_start``, a cost that grows with the conversation."""

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, **kwargs: Any) -> None:
        with self._lock:
            self.last_seen = time.monotonic()
            if self.stop is None:
                self._note_arguments(chunk)
                said = _said(token, chunk)
                piece = said + _arguments(chunk)
                self.text += piece
                self.said += said
                added = self._count.add(piece)
                if self._tokens_spent(added):
                    self.stop = self._stopped("budget", TOKENS_SPENT)
                else:
                    self.stop = self._reply_ended()
                if self.stop is not None and self.wake is not None:
                    self.wake()
            stop = self.stop
        if stop is not None and self.raises:
            raise _StopStreaming(stop)

    def _reply_ended(self) -> CallStopped | None:
        """The stop that keeps the reply as it stands: at its cap, or once it repeats."""
        cap = self.allowance.reply_tokens
        if cap is not None and self.streamed_tokens >= cap:
            return self._stopped("cap", CAPPED.format(tokens=cap), self.said)
        if len(self.said) - self._looked_at < REPEAT_CHECK_CHARS:
            return None
        self._looked_at = len(self.said)
        first = first_saying(self.said, short_runs=cap is not None)
        if first is None:
            return None
        return self._stopped("repetition", REPEATED.format(times=REPEATS), first)

    def _note_arguments(self, chunk: Any) -> None:
        message = getattr(chunk, "message", None)
        for part in getattr(message, "tool_call_chunks", ()):
            index = part.get("index")  # without one, a chunk is a call of its own
            key = ("whole", len(self.arguments)) if index is None else index
            self.arguments[key] = self.arguments.get(key, "") + (part.get("args") or "")

    def unfinished_call(self) -> bool:
        """Whether a streamed call's arguments stopped before their JSON was complete.

        LangChain reads streamed arguments leniently, closing what was left open, so
        a call cut short would arrive with plausible, truncated arguments; and some
        servers (llama.cpp's) report a cut call as finished rather than cut by the
        length limit.
        """
        return any(not _complete_json(text) for text in self.arguments.values())

    @property
    def streamed_tokens(self) -> int:
        """The estimated tokens of the reply so far."""
        return self._count.tokens

    def _tokens_spent(self, added: int) -> bool:
        """Whether the call's own allowance, or its batch's, is spent once a chunk ``added``
        tokens."""
        allowance = self.allowance
        shared = allowance.shared_tokens is not None and allowance.shared_tokens.spend(added)
        limit = allowance.output_tokens
        return shared or (limit is not None and self.streamed_tokens >= limit)

    def overdue(self) -> CallStopped | None:
        """The stop for a call that ran past its time or went silent, else ``None``."""
        allowance, now = self.allowance, time.monotonic()
        with self._lock:
            if self.stop is not None:
                return self.stop
            if allowance.deadline_s is not None and now - self.started >= allowance.deadline_s:
                self.stop = self._stopped("deadline", TIME_SPENT)
            elif allowance.timeout_s is not None and now - self.started >= allowance.timeout_s:
                self.stop = self._stopped(
                    "timeout", CALL_TIMED_OUT.format(seconds=allowance.timeout_s)
                )
            elif allowance.idle_s is not None and now - self.last_seen >= allowance.idle_s:
                self.stop = self._stopped("idle", CALL_IDLE.format(seconds=allowance.idle_s))
            return self.stop

    def abandon(self) -> None:
        """Give up on the call: a chunk it still sends ends its stream."""
        with self._lock:
            if self.stop is None:
                self.stop = self._stopped("idle", "the call was abandoned")

    def seconds_to_check(self) -> float | None:
        """How long the watchdog may wait before :meth:`overdue` could change its mind."""
        allowance, now = self.allowance, time.monotonic()
        waits = [
            start + limit - now
            for start, limit in (
                (self.started, allowance.deadline_s),
                (self.started, allowance.timeout_s),
                (self.last_seen, allowance.idle_s),
            )
            if limit is not None
        ]
        return max(0.0, min(waits)) + 0.001 if waits else None

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000

    def _stopped(self, kind: StopKind, reason: str, text: str | None = None) -> CallStopped:
        """The stop, with ``text`` as what the call said (all it streamed by default)."""
        said = self.text if text is None else text
        return CallStopped(kind, reason, said, self.streamed_tokens, self.elapsed_ms())


class StreamingWatch(CallWatch):
    """A :class:`CallWatch` that makes LangChain stream the call, so that a token or time
    budget is checked chunk by chunk (``tap_output_iter`` is the mark
    ``BaseChatModel._should_stream`` looks for, as on LangGraph's own handler)."""

    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        return output

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
        return output


def watch_for(allowance: CallAllowance) -> CallWatch:
    """The watch for a call with ``allowance``: streamed when a budget or a timeout limits it,
    so that a call stopped or left behind ends at its next chunk instead of running on."""
    streamed = allowance.counts_tokens or any(
        limit is not None for limit in (allowance.deadline_s, allowance.timeout_s)
    )
    return StreamingWatch(allowance) if streamed else CallWatch(allowance)


_watching: ContextVar[CallWatch | None] = ContextVar("reasoning_graphs_call_watch", default=None)
"""The watch of the call running in this context. LangChain adds it to the handlers of
every run it configures while the variable is set (a configure hook), as it adds its
own tracer: cheaper than merging it into a copy of the caller's config at every call."""
register_configure_hook(_watching, inheritable=True)

T = TypeVar("T")


def _under(watch: CallWatch, call: Callable[[], T]) -> T:
    """``call()`` with ``watch`` among the handlers of the runs it makes."""
    token = _watching.set(watch)
    try:
        return call()
    finally:
        _watching.reset(token)


async def _aunder(watch: CallWatch, call: Coroutine[Any, Any, T]) -> T:
    """``await call`` with ``watch`` among the handlers of the runs it makes (a task
    runs in a copy of the context, so the variable stays the task's own)."""
    _watching.set(watch)
    return await call


class Watched(Effect):
    """``runnable.invoke(value)`` under ``watch``: streamed, counted, and left behind when
    it overruns (see the module docstring for how each face does that). The caller's
    callbacks (streaming, tracing) see the call as they would without the watch."""

    def __init__(self, runnable: Runnable, value: Any, watch: CallWatch):
        self.runnable, self.value, self.watch = runnable, value, watch

    def _invoke(self) -> Any:
        if not _may_stream(self.runnable, self.watch):  # the handler would see nothing
            return self.runnable.invoke(self.value)
        return _under(self.watch, lambda: self.runnable.invoke(self.value))

    def run(self) -> Any:
        try:
            result = self._run()
        except _StopStreaming as streaming:
            raise streaming.stop from None
        return self._unless_stopped(result)

    async def arun(self) -> Any:
        try:
            result = await self._arun()
        except _StopStreaming as streaming:
            raise streaming.stop from None
        return self._unless_stopped(result)

    def _unless_stopped(self, result: Any) -> Any:
        """``result``, unless the watch stopped the stream: a provider's client that catches
        the stop inside its stream hands back what it had (an empty reply, no finish
        reason), which is a stopped call, not a reply."""
        if self.watch.stop is not None:
            raise self.watch.stop
        return result

    def _run(self) -> Any:
        if not self.watch.allowance.limited:  # nothing to count or stop: no handler to call
            return self.runnable.invoke(self.value)
        if not self.watch.allowance.timed:
            return self._invoke()
        call = Handoff(self._invoke)
        try:
            while not call.wait(self.watch.seconds_to_check()):
                stop = self.watch.overdue()
                if stop is not None:
                    raise stop
            return call.result()
        except KeyboardInterrupt:  # Ctrl-C: the call left behind stops at its next chunk
            self.watch.abandon()
            raise

    async def _arun(self) -> Any:
        if not self.watch.allowance.limited:
            return await self.runnable.ainvoke(self.value)
        loop = asyncio.get_running_loop()
        spent: asyncio.Future[None] = loop.create_future()  # set once the allowance is spent
        self.watch.raises = False

        def wake() -> None:
            loop.call_soon_threadsafe(_settle, spent)

        self.watch.wake = wake
        call = self.runnable.ainvoke(self.value)
        if _may_stream(self.runnable, self.watch):
            call = _aunder(self.watch, call)
        task = asyncio.ensure_future(call)
        try:
            while True:
                await asyncio.wait(
                    {task, spent},
                    timeout=self.watch.seconds_to_check(),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if task.done():
                    return task.result()
                stop = self.watch.overdue()
                if stop is not None:
                    task.cancel()
                    raise stop
        finally:
            spent.cancel()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _may_stream(runnable: Runnable, watch: CallWatch) -> bool:
    """Whether the call may stream, so that its watch's handler has chunks to see: the watch
    asks for it, a handler of the caller's does (LangGraph's ``messages`` mode), or the model
    streams of its own accord (``streaming=True``, or a bound ``stream`` argument). A call
    that streams not is watched from the calling side alone, at no cost to LangChain's
    callbacks; a runnable whose model cannot be found is taken to stream."""
    if isinstance(watch, StreamingWatch) or StreamingCallbackHandler is None:
        return True
    config = var_child_runnable_config.get() or {}
    callbacks = config.get("callbacks")
    handlers = callbacks if isinstance(callbacks, list) else getattr(callbacks, "handlers", ())
    if any(isinstance(handler, StreamingCallbackHandler) for handler in handlers):
        return True
    while isinstance(runnable, RunnableBinding):
        if runnable.kwargs.get("stream"):
            return True
        runnable = runnable.bound
    if not isinstance(runnable, BaseChatModel):
        return True
    return getattr(runnable, "streaming", False) is True


def _said(token: Any, chunk: Any) -> str:
    """A streamed chunk's own text, without any call's arguments."""
    message = getattr(chunk, "message", None)
    if isinstance(message, AIMessageChunk):
        return token if isinstance(token, str) and token else message.text
    return token if isinstance(token, str) else ""


def _arguments(chunk: Any) -> str:
    """The argument text a streamed chunk adds to its tool calls."""
    message = getattr(chunk, "message", None)
    if not isinstance(message, AIMessageChunk):
        return ""
    return "".join(part.get("args") or "" for part in message.tool_call_chunks)


def first_saying(text: str, *, short_runs: bool = False) -> str | None:
    """``text`` up to the end of the first saying of a passage that it then repeats to its
    end (:data:`REPEATS` times or more in a row), or ``None`` when it does not end so.

    The passage is the text's shortest period at its end, so a last copy cut off in the
    middle, or copies that start mid-sentence, are found alike. A period shorter than
    :data:`SHORTEST_REPEAT` (a rule of dashes, ``ha ha ha``) is no passage, unless
    ``short_runs`` and its copies fill the last :data:`SHORT_RUN_CHARS` characters.

    Examples:
        >>> first_saying("Paris is the capital of France. " * 4)
        'Paris is the capital of France.'
        >>> first_saying("It is Paris. " + "Paris is the capital of France. " * 5 + "Paris")
        'It is Paris. Paris is the capital of France.'
        >>> first_saying("Paris is the capital of France. " * 3) is None
        True
        >>> first_saying("-" * 120) is None
        True
        >>> first_saying("No, " + "I'm sorry, " * 30, short_runs=True)
        "No, I'm sorry"
        >>> first_saying("144." + "0" * 300, short_runs=True)
        '144.0'
        >>> first_saying("144." + "0" * 300) is None
        True
    """
    size = len(text)
    for period in range(1, min(LONGEST_REPEAT, size // REPEATS) + 1):
        span = max(period * REPEATS, SHORTEST_REPEAT * REPEATS)
        if span > size:
            return None
        tail = text[size - span :]
        if tail[period:] != tail[:-period]:
            continue
        if period < SHORTEST_REPEAT and not (short_runs and _runs_on(text, period)):
            return None
        start = size - span
        while start > 0 and text[start - 1] == text[start - 1 + period]:
            start -= 1
        end = start + period  # a copy may begin mid-sentence: cut at the nearest sentence end
        near = range(max(start, end - period // 2), min(size, end + period // 2))
        ends = [i + 1 for i in near if _SENTENCE_END.match(text, i)]
        cut = min(ends, key=lambda i: abs(i - end), default=end)
        return text[:cut].rstrip()
    return None


def _runs_on(text: str, period: int) -> bool:
    """Whether ``text``'s last :data:`SHORT_RUN_CHARS` characters repeat with ``period``."""
    if len(text) < SHORT_RUN_CHARS:
        return False
    tail = text[-SHORT_RUN_CHARS:]
    return tail[period:] == tail[:-period]


def _complete_json(text: str) -> bool:
    """Whether ``text`` is empty (a call without arguments) or one whole JSON value."""
    if not text.strip():
        return True
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


own_texts(CALL_TIMED_OUT, CALL_IDLE, TIME_SPENT, TOKENS_SPENT, REPEATED, CAPPED)
