"""The one place every node calls a model.

It binds the tools or the structured-output schema, applies stop sequences and
the llama.cpp grammar, times the call and records its thought event; a node
gets back the reply and, for a typed request, the parsed object. Because every
call passes here, a guard that must see each model call (a token budget while
streaming, continuing a reply cut by the length limit, an idle timeout) is added
once, in :func:`call_model` — as are fitting the prompt to the context window
and recovering when a provider refuses it as too large
(:mod:`~reasoning_graphs.nodes.model.window`).

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from reasoning_graphs.context import Limits
    >>> from reasoning_graphs.effects import drive
    >>> from reasoning_graphs.nodes.model.setup import RunScope, agent_setup
    >>> from reasoning_graphs.testing import ScriptedChatModel
    >>> run = RunScope(agent_setup(ScriptedChatModel(script=["Hello"]), []), Limits())
    >>> request = ModelRequest(prompt=[HumanMessage("Hi")])
    >>> reply = drive(call_model(run, request))
    >>> reply.message.text, reply.event["kind"]
    ('Hello', 'thought')
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from langchain.agents.middleware import ModelRequest as LangChainRequest
from langchain.agents.middleware import ModelResponse
from langchain.agents.structured_output import AutoStrategy
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    ToolCall,
)
from langchain_core.tools import BaseTool
from langgraph.runtime import get_runtime
from pydantic import BaseModel

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import Body, Pause
from reasoning_graphs.errors import error_summary
from reasoning_graphs.middleware import (
    MODEL_HOOKS,
    Chain,
    bindable_tools,
    message_of,
    prompt_of,
    split_system,
)
from reasoning_graphs.models.context_size import context_window_of
from reasoning_graphs.nodes.guards.budget import (
    Spending,
    budget_stop_after,
    exhausted,
    question_spending,
    thought_work,
)
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.stop import QuestionStopped
from reasoning_graphs.nodes.model.prompt_hooks import after_call, before_call
from reasoning_graphs.nodes.model.retry import announce_retry, retries_on, retry_delay
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.nodes.model.streamed import named_calls, schema_name, typed_reply
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.nodes.model.trajectory import thought_event
from reasoning_graphs.nodes.model.watch import (
    CallAllowance,
    CallStopped,
    SharedTokens,
    Watched,
    watch_for,
)
from reasoning_graphs.nodes.model.window import (
    Fitted,
    Summarise,
    emergency_fit,
    fit_prompt,
    is_context_overflow,
    prompt_limit,
    summary_in_force,
)
from reasoning_graphs.question import call_ids, latest_request
from reasoning_graphs.state import ContextSummary, Outcome, ThoughtEvent, message_ids

logger = logging.getLogger(__name__)


NO_STATE: Mapping[str, Any] = {"messages": []}
MAX_CONTINUATIONS = 2
"""Model calls that may follow a reply cut by the length limit."""
LENGTH_REASONS = frozenset({"length", "max_tokens"})
FINAL_MARKS = (".", "!", "?", "。", "！", "？", "…", '"', "”", ")", "）", "」", "```")
CONTINUE_PROMPT = (
    "Your reply was cut off by the length limit. Continue exactly where it stopped, "
    "without repeating anything."
)
CUT_CALL = "The call's arguments were cut off by the length limit; it was not run."
NO_CALL_ID = "the tool call {name!r} has no id: it did not come from the model seam"
KEPT_FAILING = "the model call failed {attempts} times ({error})"
NO_TYPED_CALL = "the reply carried no call of the schema, or its arguments were not JSON"
CUT_REPLY = "the reply was cut by the length limit before it was complete"
UNREAD_LIMIT = 300
"""Characters of a parsing error an event keeps."""
own_texts(CONTINUE_PROMPT, CUT_CALL, KEPT_FAILING, CUT_REPLY)  # a reply of them is no answer
CLOSING_TOKENS = 4000
"""Tokens the closing call past a token budget may stream: enough for an answer, not a flood."""
CLOSING_SECONDS = 60.0
"""Seconds the closing call past a time budget may take."""
HALTS = frozenset({"timeout", "idle"})
"""Stops after which the model is not asked again: it would only wait as long once more."""


@dataclass(frozen=True)
class ModelRequest:
    """What to ask and how.

    Attributes:
        prompt: The messages sent.
        tools: Tools to bind; the reply may call them.
        tool_choice: ``"none"`` to forbid calls while tools stay described,
            ``"any"`` or a tool name to force one (provider support varies).
        schema: A pydantic model for a typed reply (``with_structured_output``).
        native: Ask for ``schema`` in the provider's own structured output where the
            model's profile says it has one (LangChain's ``ProviderStrategy``); tool
            calling otherwise, and always without it.
        stop: Stop sequences (not with ``schema``).
        grammar: A GBNF grammar for free text (llama.cpp models only; not with ``schema``).
        shared_tokens: The tokens this call shares with the other calls of its batch
            (:mod:`~reasoning_graphs.nodes.model.batch`), instead of the question's budget
            left all to itself.
    """

    prompt: Sequence[BaseMessage]
    tools: Sequence[BaseTool] = ()
    tool_choice: str | None = None
    schema: type[BaseModel] | None = None
    native: bool = False
    stop: Sequence[str] | None = None
    grammar: str | None = None
    shared_tokens: SharedTokens | None = None


@dataclass(frozen=True)
class ModelReply:
    """A model's reply as a node uses it.

    Attributes:
        message: The reply as the model gave it (for a typed request, the raw reply).
        parsed: The typed object, or ``None`` when there was no schema or the
            reply did not fit it.
        parsing_error: Why a typed reply did not fit, when it did not.
        latency_ms: Wall time of the call.
        event: The call's trajectory event (tokens from the provider when reported);
            it carries the cost of the calls made before it (``seam_calls``), so a
            node that records it has every call counted.
        preceding: The thought events of the calls made before the last one: summaries
            that fitted the prompt, and the parts of a reply cut by the length limit.
        cut: Whether the reply stopped at the length limit (:func:`was_cut`) or its
            streamed call arguments stopped before their JSON was complete.
    """

    message: AIMessage
    parsed: Any
    parsing_error: BaseException | None
    latency_ms: float
    event: ThoughtEvent
    preceding: tuple[ThoughtEvent, ...] = ()
    cut: bool = False

    @property
    def events(self) -> list[ThoughtEvent]:
        """Every model call this reply cost, in order, the reply's own last."""
        return [*self.preceding, self.event]


def call_model(
    run: RunScope, request: ModelRequest, state: Mapping[str, Any] | None = None
) -> Body[ModelReply]:
    """Ask the run's model once; yields the call as an effect, returns the :class:`ModelReply`.

    ``state`` places the thought event in its turn and step; ``run`` gives the
    model and the options its guards read. The prompt is first fitted to the
    context window by the run's strategy (the window the run sets, else the one
    the model declares: :func:`fitting_limits`); a provider that still refuses it
    as too large gets an emergency summary and one more try. A summary is a model
    call of the run's ``summary_model`` that costs tokens and time but is no step:
    the reply's event carries its cost and the summary itself (for later prompts
    to reuse), and its own event is in :attr:`ModelReply.events`. A reply
    cut by the length limit is continued, or retried when it was calling tools
    (see :func:`_completed`). Once the question's budget is spent, the one
    closing call gets no summary or continuation: what would be summarised is
    left out.

    Every call is watched while it runs (:mod:`~reasoning_graphs.nodes.model.watch`)
    and tried again after a failure that may pass (:mod:`~reasoning_graphs.nodes.model.retry`).

    Raises:
        QuestionStopped: A call was stopped part-way — the question's token or
            time budget ran out while it streamed, or it passed the per-call or
            idle timeout — or it still failed after its retries.
    """
    state = state or NO_STATE
    made: list[ThoughtEvent] = []  # the calls made so far, for a stop's record
    hooks = bool(run.setup.before_model_hooks or run.setup.after_model_hooks)
    if hooks:
        prompt = yield from before_call(run.setup, request.prompt, state)
        request = replace(request, prompt=prompt)
    try:
        reply = yield from _call(run, request, state, made)
    except _Stopped as stopped:
        events = _after(made, stopped.reply).events
        outcome = stopped.outcome
        if "halt" not in stopped.reply.event:  # a budget: say which, as every budget stop does
            outcome = budget_stop_after(state, run.limits, events) or outcome
        raise QuestionStopped(outcome, events) from None
    if hooks:
        message = yield from after_call(run.setup, request.prompt, reply.message, state)
        reply = replace(reply, message=message)
    return reply


def _call(
    run: RunScope, request: ModelRequest, state: Mapping[str, Any], made: list[ThoughtEvent]
) -> Body[ModelReply]:
    """:func:`call_model`'s work; ``made`` collects the events of the calls before the last."""
    spending = question_spending(state)  # summed once for every call made here
    closing = exhausted(run.limits, spending) is not None
    summarise = None if closing else summariser(run, state, spending)
    question = latest_request(state["messages"]) or None
    limits = yield from fitting_limits(run)
    earlier = summary_in_force(state.get("trajectory"))
    conversation = state.get("messages")
    fitted = yield from fit_prompt(
        request.prompt, limits, summarise, question, conversation, earlier
    )
    made.extend(fitted.events)
    try:
        reply = yield from _ask(run, request, fitted.prompt, state, spending, closing=closing)
    except Exception as error:
        if not is_context_overflow(error):
            raise
        logger.warning("the provider refused the prompt as too long; summarising and retrying")
        # the summary request must fit where the refused prompt did not
        limit = prompt_limit(limits) or estimate_tokens(fitted.prompt) // 2
        emergency = yield from emergency_fit(
            request.prompt, summarise, limit, question, fitted.summary or earlier
        )
        made.extend(emergency.events)
        summary = emergency.summary or fitted.summary
        fitted = Fitted(emergency.prompt, [*fitted.events, *emergency.events], summary)
        reply = yield from _ask(run, request, fitted.prompt, state, spending, closing=closing)
    if closing:
        return _after(fitted.events, reply, fitted.summary)
    reply, parts = yield from _completed(run, request, fitted.prompt, state, spending, reply, made)
    return _after([*fitted.events, *parts], reply, fitted.summary)


def fitting_limits(run: RunScope) -> Body[Limits]:
    """The run's limits, with the model's context window where the run sets none and the
    strategy needs one: what the model declares, or what its server reports (asked
    once per server and model, off the event loop)."""
    limits = run.limits
    if limits.context_window is not None or limits.context_strategy in ("none", "window"):
        return limits
    window = yield from context_window_of(run.model)
    return limits if window is None else replace(limits, context_window=window)


def _completed(
    run: RunScope,
    request: ModelRequest,
    prompt: list[BaseMessage],
    state: Mapping[str, Any],
    spending: Spending,
    reply: ModelReply,
    made: list[ThoughtEvent],
) -> Body[tuple[ModelReply, list[ThoughtEvent]]]:
    """``reply`` made whole when the length limit cut it, with the events of the cut parts.

    Text is continued by a "continue" turn and joined, at most twice, and not when
    it already reads complete; a cut tool call (or typed reply) is asked again
    rather than run, and one still cut at the end is marked invalid, so no call
    runs on arguments that were never finished. A grammar-constrained reply is
    left as it is: a continuation would restart the grammar.
    """
    if request.grammar is not None:
        return reply, []
    before, parts = "", []
    for _ in range(MAX_CONTINUATIONS):
        message = reply.message
        if not reply.cut:
            break
        if proposes_calls(message) or request.schema is not None:
            before, again = "", prompt
        else:
            so_far = before + message.text
            if reads_complete(so_far):
                break
            before = so_far
            again = [*prompt, AIMessage(before), HumanMessage(CONTINUE_PROMPT)]
        parts.append(reply.event)
        made.append(reply.event)
        logger.info("the reply was cut by the length limit; asking for the rest")
        reply = yield from _ask(run, request, again, state, spending)
    if before:
        reply = _joined(before, reply)
    if reply.cut and proposes_calls(reply.message):
        reply = replace(reply, message=_calls_invalidated(reply.message))
    return reply, parts


def was_cut(message: AIMessage) -> bool:
    """Whether the provider stopped the reply at its length limit.

    OpenAI and llama.cpp say ``finish_reason: "length"``; Anthropic
    ``stop_reason: "max_tokens"``; Gemini ``finish_reason: "MAX_TOKENS"``.
    """
    metadata = message.response_metadata
    reason = metadata.get("finish_reason") or metadata.get("stop_reason")
    return isinstance(reason, str) and reason.lower() in LENGTH_REASONS


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


def _ask(
    run: RunScope,
    request: ModelRequest,
    prompt: list[BaseMessage],
    state: Mapping[str, Any],
    spending: Spending,
    *,
    closing: bool = False,
) -> Body[ModelReply]:
    """One model turn on ``prompt``: one guarded call (:func:`_ask_once`), or, when the graph
    has middleware that wraps model calls, as many as its hooks make of it.

    A hook gets LangChain's ``ModelRequest`` (model, system message, messages, tools,
    tool choice, response format, state, runtime) and may change it or call the handler
    more than once (a retry, a fallback model); each handler call is one guarded call,
    watched and counted: the reply's events carry every call the hooks made. A hook that
    answers without calling the handler, or changes the reply, gives the turn's message.
    """
    hooks = run.setup.model_hooks
    if not hooks:
        return (yield from _ask_once(run, request, prompt, state, spending, closing=closing))
    replies: list[ModelReply] = []

    def inner(asked: LangChainRequest) -> Body[ModelResponse]:
        changed = replace(request, tools=bindable_tools(asked), tool_choice=asked.tool_choice)
        reply = yield from _ask_once(
            run, changed, prompt_of(asked), state, spending, closing=closing, model=asked.model
        )
        replies.append(reply)
        return ModelResponse(result=[reply.message], structured_response=reply.parsed)

    system, messages = split_system(prompt)
    asked = LangChainRequest(
        model=run.model,
        messages=messages,
        system_message=system,
        tools=list(request.tools),
        tool_choice=request.tool_choice,
        response_format=None if request.schema is None else AutoStrategy(request.schema),
        state=cast(Any, state),
        runtime=get_runtime(),
    )
    answer = yield Chain(hooks, MODEL_HOOKS, asked, inner)
    return _turn_of(answer, replies, state, prompt)


def _turn_of(
    answer: Any, replies: list[ModelReply], state: Mapping[str, Any], prompt: list[BaseMessage]
) -> ModelReply:
    """The turn the hooks gave: the last call's reply with the earlier calls' events before it,
    or the message a hook wrote or changed in its place."""
    message = message_of(answer)
    earlier = tuple(event for reply in replies[:-1] for event in reply.events)
    if replies and message is replies[-1].message:
        last = replies[-1]
        return replace(last, preceding=(*earlier, *last.preceding))
    message = with_runtime_ids(message, state["messages"])
    event = thought_event(state, reply=message, prompt=prompt, latency_ms=0.0)
    if not replies:  # answered without a model call: a turn all the same
        return ModelReply(message, None, None, 0.0, event)
    last = replies[-1]
    event = ThoughtEvent(**{**last.event, "text": event["text"], "tool_calls": event["tool_calls"]})
    return replace(last, message=message, event=event, preceding=(*earlier, *last.preceding))


def _ask_once(
    run: RunScope,
    request: ModelRequest,
    prompt: list[BaseMessage],
    state: Mapping[str, Any],
    spending: Spending,
    *,
    closing: bool = False,
    model: BaseChatModel | None = None,
) -> Body[ModelReply]:
    """One call of the model (the run's, unless ``model`` is given) on ``prompt`` as given,
    with its thought event: watched while it runs, and tried again after a failure that
    may pass, with the user told. ``spending`` is the question's before this call
    (:func:`call_allowance`)."""
    runnable = run.setup.bindings.bound(
        model or run.model,
        tools=request.tools,
        tool_choice=request.tool_choice,
        schema=request.schema,
        native=request.native,
        stop=request.stop,
        grammar=request.grammar,
    )
    allowance = call_allowance(
        run.limits, spending, prompt, closing=closing, shared=request.shared_tokens
    )
    policy = run.setup.retry_policy
    started = time.perf_counter()
    attempt = 1
    while True:
        elapsed = time.perf_counter() - started
        watch = watch_for(_less_time(allowance, elapsed))
        try:
            result = yield Watched(runnable, prompt, watch)
            break
        except CallStopped as stop:
            raise _stopped_call(state, prompt, stop) from None
        except Exception as error:
            if not retries_on(policy, error):
                raise
            if attempt >= policy.max_attempts:
                raise _failed_call(state, prompt, error, attempt, started) from None
            delay = retry_delay(policy, attempt)
            announce_retry(delay, attempt, error)
            yield Pause(delay)
            attempt += 1
    latency_ms = (time.perf_counter() - started) * 1000
    parsed, unparsed = None, None
    if request.schema is not None:
        message, parsed, unparsed = typed_reply(result, request.schema)
    else:
        message = named_calls(result, [tool.name for tool in request.tools])
    cut = was_cut(message) or watch.unfinished_call()
    if cut and request.schema is not None:  # never a typed object read from half a reply
        parsed, unparsed = None, ValueError(CUT_REPLY)
    message = with_runtime_ids(message, state["messages"])
    event = thought_event(state, reply=message, prompt=prompt, latency_ms=latency_ms)
    if request.schema is not None:  # a typed reply comes as a call, but calls no tool
        event["tool_calls"] = []
        event["typed"] = schema_name(request.schema)
        if parsed is None:
            event["unread"] = str(unparsed)[:UNREAD_LIMIT] if unparsed else NO_TYPED_CALL
    return ModelReply(message, parsed, unparsed, latency_ms, event, cut=cut)


def call_allowance(
    limits: Limits,
    spending: Spending,
    prompt: Sequence[BaseMessage],
    *,
    closing: bool,
    shared: SharedTokens | None = None,
) -> CallAllowance:
    """What the next call may spend while it runs: what the question's token and time
    budgets have left after ``spending`` (a closing call past them gets
    :data:`CLOSING_TOKENS` and :data:`CLOSING_SECONDS`), the per-call timeout and the
    idle timeout. A call of a batch streams its reply from the tokens it ``shared``
    (its batch paid its prompt there before it started)."""
    tokens = seconds = None
    if closing:
        tokens = None if limits.token_budget is None else CLOSING_TOKENS
        seconds = None if limits.time_budget is None else CLOSING_SECONDS
    else:
        if limits.token_budget is not None:
            left = limits.token_budget - spending.tokens - estimate_tokens(prompt)
            tokens = max(0, left)
        if limits.time_budget is not None:
            seconds = max(0.0, limits.time_budget - spending.ms / 1000)
    if shared is not None:  # the batch's tokens bound the reply, not the question's left
        tokens = None
    return CallAllowance(
        output_tokens=tokens,
        deadline_s=seconds,
        timeout_s=limits.model_timeout,
        idle_s=limits.idle_timeout,
        shared_tokens=shared,
    )


def _less_time(allowance: CallAllowance, elapsed: float) -> CallAllowance:
    """``allowance`` for a try that starts ``elapsed`` seconds into the call."""
    if allowance.deadline_s is None or not elapsed:
        return allowance
    return replace(allowance, deadline_s=max(0.0, allowance.deadline_s - elapsed))


class _Stopped(Exception):
    """A call of :func:`_ask` ended early; carries its reply as recorded and the outcome."""

    def __init__(self, reply: ModelReply, outcome: Outcome):
        super().__init__(outcome.get("reason", "stopped"))
        self.reply, self.outcome = reply, outcome


def _stopped_call(
    state: Mapping[str, Any], prompt: list[BaseMessage], stop: CallStopped
) -> _Stopped:
    """The record of a call the watch stopped: what it wrote, and whether it halts the question."""
    logger.info("model call stopped: %s", stop.reason)
    halt = stop.kind in HALTS
    return _record_stop(
        state, prompt, stop.reason, stop.elapsed_ms, text=stop.text, tokens=stop.tokens, halt=halt
    )


def _failed_call(
    state: Mapping[str, Any],
    prompt: list[BaseMessage],
    error: Exception,
    attempts: int,
    started: float,
) -> _Stopped:
    """The record of a call that still failed, for a reason that may pass, after its retries."""
    reason = KEPT_FAILING.format(attempts=attempts, error=error_summary(error))
    logger.info("%s; the question stops", reason)
    latency_ms = (time.perf_counter() - started) * 1000
    return _record_stop(state, prompt, reason, latency_ms, halt=True)


def _record_stop(
    state: Mapping[str, Any],
    prompt: list[BaseMessage],
    reason: str,
    latency_ms: float,
    *,
    text: str = "",
    tokens: int = 0,
    halt: bool,
) -> _Stopped:
    """A stopped call as the trajectory keeps it (``stopped``, and ``halt`` when the
    question must end without another call) and the outcome it gives."""
    message = AIMessage(text)
    event = thought_event(state, reply=message, prompt=prompt, latency_ms=latency_ms)
    event["output_tokens"] = max(event["output_tokens"], tokens)  # as the watch counted
    event["stopped"] = reason
    if halt:
        event["halt"] = reason
    outcome: Outcome = {"status": "incomplete", "reason": reason}
    return _Stopped(ModelReply(message, None, None, latency_ms, event), outcome)


def summariser(
    run: RunScope, state: Mapping[str, Any] | None, spending: Spending | None = None
) -> Summarise:
    """A summary call of the run's summary model through this seam, as the fitting
    strategies ask for one, its event marked ``summary``; ``spending`` is the
    question's so far, when the caller has already summed it."""
    state = state or NO_STATE
    before = spending or question_spending(state)

    def summarise(prompt: list[BaseMessage]) -> Body[tuple[str, ThoughtEvent]]:
        request = ModelRequest(prompt=prompt)
        reply = yield from _ask_once(run, request, prompt, state, before, model=run.summary_model)
        return reply.message.text, ThoughtEvent(**reply.event, summary=True)

    return summarise


def _after(
    preceding: list[ThoughtEvent], reply: ModelReply, summary: ContextSummary | None = None
) -> ModelReply:
    """``reply`` numbered after the steps made before it (a summary is none), carrying their
    cost and the ``summary`` made for its prompt."""
    if not preceding and summary is None:
        return reply
    numbered, steps_before = [], 0
    for earlier in preceding:
        numbered.append(ThoughtEvent(**{**earlier, "step": earlier["step"] + steps_before}))
        steps_before += not earlier.get("summary")
    event: ThoughtEvent = {**reply.event, "step": reply.event["step"] + steps_before}
    if numbered:
        event["seam_calls"] = [thought_work(step) for step in numbered]
    if summary is not None:
        event["context_summary"] = summary
    return replace(reply, event=event, preceding=tuple(numbered))


def with_runtime_ids(message: AIMessage, conversation: Sequence[BaseMessage]) -> AIMessage:
    """The reply with ids that are unique in the conversation, which the runtime checks.

    Providers repeat ids — one id for every call of a reply, ids restarting each
    turn, one message id for every reply — and then ``add_messages`` would
    replace an earlier reply (and the step count with it), an approval or an edit
    would land on the wrong call, and a call could go without its observation. A
    missing or repeated id is replaced by a fresh one; a provider's own id that is
    new stays, so traces, streamed tokens and the final message keep matching.
    """
    taken_messages, taken_calls = message_ids(conversation), call_ids(conversation)
    given: set[str] = set()  # ids of this reply's calls so far
    update: dict[str, Any] = {}
    if message.id is None or message.id in taken_messages:
        update["id"] = f"msg-{uuid.uuid4().hex}"
    for key in ("tool_calls", "invalid_tool_calls"):
        calls = getattr(message, key)
        fresh = []
        for call in calls:
            call_id = call.get("id")
            if not call_id or call_id in taken_calls or call_id in given:
                call = {**call, "id": f"call_{uuid.uuid4().hex[:24]}"}
            given.add(call["id"])
            fresh.append(call)
        if fresh != calls:
            update[key] = fresh
    return message.model_copy(update=update) if update else message


def runtime_id(call: ToolCall) -> str:
    """The id of a call the model seam returned (:func:`with_runtime_ids` gave it one)."""
    call_id = call["id"]
    if call_id is None:
        raise ValueError(NO_CALL_ID.format(name=call["name"]))
    return call_id
