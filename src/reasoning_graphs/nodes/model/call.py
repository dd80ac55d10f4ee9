"""The one place every node calls a model: one chain of links around one call.

A node hands :func:`call_model` a :class:`~.request.ModelRequest`; the call then passes
every guard as a link of one chain (:data:`LINKS`), the way ``create_agent`` runs its
``wrap_model_call`` middleware, first outermost, and the last step asks the model
(:func:`ask`): it binds the tools or the structured-output schema, applies stop
sequences and the llama.cpp grammar, and times and records the call. A guard that must
see each model call is a link added here once; a user's ``wrap_model_call`` middleware
is a link too, so every call it makes is budgeted, watched and retried like ours.

Examples:
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

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from langchain.agents.middleware import ModelRequest as LangChainRequest
from langchain.agents.middleware import ModelResponse
from langchain.agents.structured_output import AutoStrategy
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.runtime import get_runtime

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import Body, chained
from reasoning_graphs.middleware import (
    ModelChain,
    bindable_tools,
    message_of,
    prompt_of,
    split_system,
    state_writes,
)
from reasoning_graphs.models.context_size import context_window_of
from reasoning_graphs.nodes.guards.budget import (
    Spending,
    budget_stop_after,
    call_limit_stop,
    exhausted,
    question_spending,
)
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.stop import QuestionStopped
from reasoning_graphs.nodes.model.answer_strategy import offered, provider_bound, read_answer
from reasoning_graphs.nodes.model.continuation import made_whole, was_cut
from reasoning_graphs.nodes.model.prompt_hooks import around_call
from reasoning_graphs.nodes.model.request import (
    Link,
    ModelCall,
    ModelReply,
    ModelRequest,
    Next,
    Stopped,
    preceded,
    stop_record,
    with_runtime_ids,
)
from reasoning_graphs.nodes.model.retry import retried
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.nodes.model.streamed import named_calls, schema_name, typed_reply
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.nodes.model.trajectory import thought_event
from reasoning_graphs.nodes.model.watch import (
    KEPT_REPLIES,
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
from reasoning_graphs.question import latest_request
from reasoning_graphs.response_format import AnswerSchema
from reasoning_graphs.state import ThoughtEvent

__all__ = ["ModelReply", "ModelRequest", "call_model", "summariser"]

logger = logging.getLogger(__name__)


NO_STATE: Mapping[str, Any] = {"messages": []}
NO_TYPED_CALL = "the reply carried no call of the schema, or its arguments were not JSON"
CUT_REPLY = "the reply was cut by the length limit before it was complete"
DROPPED_REPLY = (
    "the reply ended before it said anything, with no finish reason (the server dropped it: "
    "llama.cpp's Python server does when another request comes in, unless started with "
    "--interrupt_requests False)"
)
UNREAD_LIMIT = 300
"""Characters of a parsing error an event keeps."""
own_texts(CUT_REPLY)  # a reply of it is no answer
CLOSING_TOKENS = 4000
"""Tokens the closing call past a token budget may stream: enough for an answer, not a flood."""
CLOSING_SECONDS = 60.0
"""Seconds the closing call past a time budget may take."""
HALTS = frozenset({"timeout", "idle"})
"""Stops after which the model is not asked again: it would only wait as long once more."""


def call_model(
    run: RunScope, request: ModelRequest, state: Mapping[str, Any] | None = None
) -> Body[ModelReply]:
    """Ask the run's model once; yields the call as an effect, returns the :class:`ModelReply`.

    ``state`` places the thought event in its turn and step; ``run`` gives the model and
    the options its guards read. The call passes these links, first outermost:

    1. :func:`~.prompt_hooks.around_call`: the middleware's ``before_model`` and
       ``after_model`` hooks, when the graph has any and the call is no turn that ran them;
    2. :func:`told`: a stopped call stops the question, saying which budget ran out;
    3. :func:`fitted`: the prompt fitted to the context window, with an emergency summary
       and one more try when a provider still refuses it as too large;
    4. :func:`~.continuation.made_whole`: a reply cut by the length limit continued, or
       asked again when it was calling tools;
    5. :func:`wrapped`: the middleware's ``wrap_model_call`` hooks, first outermost, when
       the graph has any: each call they make passes the links below;
    6. :func:`budgeted`: what the call may spend while it runs (budgets and timeouts);
    7. :func:`~.retry.retried`: a failure that may pass tried again;
    8. :func:`ask`: the model asked, watched while it runs.

    Once the question's budget is spent, the one closing call gets no summary or
    continuation: what would be summarised is left out.

    A middleware's model-call limit that is reached (:mod:`~reasoning_graphs.nodes.guards.
    call_limits`) lets no call start, whichever node asks.

    Raises:
        QuestionStopped: A call was stopped part-way — the question's token or
            time budget ran out while it streamed, or it passed the per-call or
            idle timeout — or it still failed after its retries; or a model-call
            limit allows no call.
    """
    state = state or NO_STATE
    if (limited := call_limit_stop(state, run.limits)) is not None:
        raise QuestionStopped(limited, [])  # no call past a middleware's model-call limit
    spending = question_spending(state)  # summed once for every call made here
    call = ModelCall(
        run=run,
        request=request,
        prompt=request.prompt,  # the node's own list: the folds over it stay cached
        state=state,
        spending=spending,
        closing=exhausted(run.limits, spending) is not None,
        model=run.model,
    )
    setup = run.setup
    hooks = bool(setup.before_model_hooks or setup.after_model_hooks)
    return (yield from _CHAINS[hooks, bool(setup.model_hooks)](call))


def told(call: ModelCall, then: Next) -> Body[ModelReply]:
    """The link that turns a stopped call into the question's stop, with the calls made
    before it and, for a budget, the budget that ran out."""
    try:
        return (yield from then(call))
    except Stopped as stopped:
        events = preceded(call.made, stopped.reply).events
        outcome = stopped.outcome
        if "halt" not in stopped.reply.event:  # a budget: say which, as every budget stop does
            outcome = budget_stop_after(call.state, call.run.limits, events) or outcome
        raise QuestionStopped(outcome, events) from None


def fitted(call: ModelCall, then: Next) -> Body[ModelReply]:
    """The link that fits the prompt to the context window by the run's strategy (the
    window the run sets, else the one the model declares: :func:`fitting_limits`).

    A provider that still refuses the prompt as too large gets an emergency summary and
    one more try. A summary is a model call of the run's ``summary_model`` that costs
    tokens and time but is no step: the reply's event carries its cost and the summary
    itself (for later prompts to reuse), and its own event is in
    :attr:`~.request.ModelReply.events`.
    """
    state = call.state
    summarise = None if call.closing else summariser(call.run, state, call.spending)
    question = latest_request(state["messages"]) or None
    limits = yield from fitting_limits(call.run)
    earlier = summary_in_force(state.get("trajectory"))
    fit = yield from fit_prompt(
        call.prompt, limits, summarise, question, state.get("messages"), earlier
    )
    call.made.extend(fit.events)
    try:
        reply = yield from then(call.asking(fit.prompt))
    except Exception as error:
        if not is_context_overflow(error):
            raise
        logger.warning("the provider refused the prompt as too long; summarising and retrying")
        # the summary request must fit where the refused prompt did not
        limit = prompt_limit(limits) or estimate_tokens(fit.prompt) // 2
        emergency = yield from emergency_fit(
            call.prompt, summarise, limit, question, fit.summary or earlier
        )
        call.made.extend(emergency.events)
        summary = emergency.summary or fit.summary
        fit = Fitted(emergency.prompt, [*fit.events, *emergency.events], summary)
        reply = yield from then(call.asking(fit.prompt))
    return preceded(fit.events, reply, fit.summary)


def fitting_limits(run: RunScope) -> Body[Limits]:
    """The run's limits, with the model's context window where the run sets none and the
    strategy needs one: what the model declares, or what its server reports (asked
    once per server and model, off the event loop)."""
    limits = run.limits
    if limits.context_window is not None or limits.context_strategy in ("none", "window"):
        return limits
    window = yield from context_window_of(run.model)
    return limits if window is None else replace(limits, context_window=window)


def wrapped(call: ModelCall, then: Next) -> Body[ModelReply]:
    """The link of the graph's ``wrap_model_call`` middleware, first outermost.

    A hook gets LangChain's ``ModelRequest`` (model, system message, messages, tools,
    tool choice, response format, state, runtime) and may change it or call the handler
    more than once (a retry, a fallback model); each handler call passes the links below
    (budgeted, watched, retried): the reply's events carry every call the hooks made. A
    hook that answers without calling the handler, or changes the reply, gives the
    turn's message.
    """
    request, state = call.request, call.state
    replies: list[ModelReply] = []

    stops: dict[int, Stopped] = {}  # the provider's error a hook saw, by id: its stop

    def inner(asked: LangChainRequest) -> Body[ModelResponse]:
        check_brought(asked, call.run)
        changed = replace(request, tools=bindable_tools(asked), tool_choice=asked.tool_choice)
        handed = replace(call, request=changed, prompt=prompt_of(asked), model=asked.model)
        try:
            reply = yield from then(handed)
        except Stopped as stop:  # a hook sees the provider's error, as under create_agent
            if stop.error is None:
                raise
            stops[id(stop.error)] = stop
            raise stop.error from None
        replies.append(reply)
        return ModelResponse(result=[reply.message], structured_response=reply.parsed)

    system, messages = split_system(call.prompt)
    shown = list(messages)  # what a hook that appends to the request's list added shows
    asked = LangChainRequest(
        model=call.model,
        messages=messages,
        system_message=system,
        tools=list(request.tools),
        tool_choice=request.tool_choice,
        response_format=_format_of(request),
        state=cast(Any, state),
        runtime=get_runtime(),
    )
    try:
        answer = yield ModelChain(call.run.setup.model_hooks, asked, inner)
    except Exception as error:  # what no hook handled stops the question, as it would have
        stop = stops.get(id(error))
        if stop is None:
            raise
        raise stop from None
    typed = answer.response.structured_response
    own = typed is not None and not (replies and typed is replies[-1].parsed)
    # a hook's own structured response is written as create_agent writes it
    writes = (
        *(() if own else _own_writes(answer.response, replies)),
        *([{"structured_response": typed}] if own else []),
        *state_writes(answer.commands, call.run.setup.hook_writable),
    )
    turn = _turn_of(answer.response, replies, state, call.prompt)
    return replace(turn, writes=writes, added=appended(shown, messages))


def appended(before: Sequence[BaseMessage], after: Sequence[BaseMessage]) -> tuple[Any, ...]:
    """The messages a hook appended in place to the request's conversation: under
    ``create_agent`` that list is the state's, so they are written, before the reply."""
    grown = len(after) > len(before) and all(a is b for a, b in zip(before, after, strict=False))
    return tuple(after[len(before) :]) if grown else ()


def _format_of(request: ModelRequest) -> Any:
    """The response format a hook sees: the strategy given, as ``create_agent`` hands it on,
    or the typed reply's schema as its ``AutoStrategy``."""
    answer = in_loop_answer(request)
    if answer is not None:
        return answer.given
    return None if request.schema is None else AutoStrategy(request.schema)


def _own_writes(response: Any, replies: list[ModelReply]) -> tuple[dict[str, Any], ...]:
    """What the last call's reply writes beside itself (a strategy's answer and its
    ``ToolMessage``), while the hooks hand that reply on."""
    if not replies or message_of(response) is not replies[-1].message:
        return ()
    return replies[-1].writes


UNRUNNABLE_TOOLS = (
    "Middleware added tools to the model's request that nothing can run: no wrap_tool_call "
    "hook brings them to their calls. Unknown tools: {names}. The graph's tools: {known}. "
    "Pass them to build_graph(tools=...) (or a middleware's `tools`), or add a "
    "wrap_tool_call hook that hands each call its tool (request.override(tool=...))."
)


def check_brought(asked: LangChainRequest, run: RunScope) -> None:
    """Refuse a request whose tools (a ``wrap_model_call`` hook added them) the graph cannot
    run: they are not its own and no ``wrap_tool_call`` hook may bring them.

    Raises:
        ValueError: The names of those tools, as ``create_agent`` raises it.
    """
    if run.setup.tool_hooks:
        return
    unknown = [tool.name for tool in bindable_tools(asked) if tool.name not in run.registry]
    if unknown:
        known = run.registry.names()
        raise ValueError(UNRUNNABLE_TOOLS.format(names=unknown, known=known))


def _turn_of(
    answer: Any,
    replies: list[ModelReply],
    state: Mapping[str, Any],
    prompt: Sequence[BaseMessage],
) -> ModelReply:
    """The turn the hooks gave: the last call's reply after the earlier calls, or the
    message a hook wrote or changed in its place."""
    message = message_of(answer)
    earlier = [event for reply in replies[:-1] for event in reply.events]
    if replies and message is replies[-1].message:
        return preceded(earlier, replies[-1])
    message = with_runtime_ids(message, state["messages"])
    event = thought_event(state, reply=message, prompt=prompt, latency_ms=0.0)
    if not replies:  # answered without a model call: a turn all the same
        return ModelReply(message, None, None, 0.0, event)
    last = replies[-1]
    event = ThoughtEvent(**{**last.event, "text": event["text"], "tool_calls": event["tool_calls"]})
    return preceded(earlier, replace(last, message=message, event=event))


def budgeted(call: ModelCall, then: Next) -> Body[ModelReply]:
    """The link that sets what the call may spend while it runs (:func:`call_allowance`)."""
    request = call.request
    allowance = call_allowance(
        call.run.limits,
        call.spending,
        call.prompt,
        closing=call.closing,
        shared=request.shared_tokens,
        reply_tokens=request.reply_tokens,
    )
    return (yield from then(call.allowed(allowance)))


def call_allowance(
    limits: Limits,
    spending: Spending,
    prompt: Sequence[BaseMessage],
    *,
    closing: bool,
    shared: SharedTokens | None = None,
    reply_tokens: int | None = None,
) -> CallAllowance:
    """What the next call may spend while it runs: what the question's token and time
    budgets have left after ``spending`` (a closing call past them gets
    :data:`CLOSING_TOKENS` and :data:`CLOSING_SECONDS`), the per-call timeout and the
    idle timeout. A call of a batch streams its reply from the tokens it ``shared``
    (its batch paid its prompt there before it started). ``reply_tokens`` caps the reply
    itself, what it said by then kept (the closing answer's cap)."""
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
        reply_tokens=reply_tokens,
    )


def ask(call: ModelCall) -> Body[ModelReply]:
    """The chain's last step: the model asked once on the call's prompt, watched while it
    runs (:mod:`~reasoning_graphs.nodes.model.watch`), with its thought event."""
    request, state, prompt = call.request, call.state, call.prompt
    answer = in_loop_answer(request)
    tools, tool_choice = offered(answer, request.tools, request.tool_choice)
    if answer is not None and answer.strategy == "provider":
        runnable = provider_bound(call.model, tools, tool_choice, answer)
    else:
        runnable = call.run.setup.bindings.bound(
            call.model,
            tools=tools,
            tool_choice=tool_choice,
            schema=request.schema,
            native=request.native,
            stop=request.stop,
            grammar=request.grammar,
        )
    started = time.perf_counter()
    watch = watch_for(call.allowance)
    try:
        result = yield Watched(runnable, prompt, watch)
    except CallStopped as stop:
        logger.info("model call stopped: %s", stop.reason)
        if stop.kind not in KEPT_REPLIES:
            halt = stop.kind in HALTS
            raise stop_record(
                call, stop.reason, stop.elapsed_ms, text=stop.text, tokens=stop.tokens, halt=halt
            ) from None
        result = _kept_reply(stop, request)
    latency_ms = (time.perf_counter() - started) * 1000
    parsed, unparsed = None, None
    if request.schema is not None:
        message, parsed, unparsed = typed_reply(result, request.schema)
    else:
        message = named_calls(result, [tool.name for tool in tools])
    cut = was_cut(message) or watch.unfinished_call()
    message = with_runtime_ids(message, state["messages"])  # the ids its answer names too
    writes: tuple[dict[str, Any], ...] = ()
    if answer is not None and not cut:  # never a typed object read from half a reply
        parsed, writes = read_answer(answer, message)
    if cut and request.schema is not None:  # never a typed object read from half a reply
        parsed, unparsed = None, ValueError(CUT_REPLY)
    event = thought_event(state, reply=message, prompt=prompt, latency_ms=latency_ms)
    if request.schema is not None:  # a typed reply comes as a call, but calls no tool
        event["tool_calls"] = []
        event["typed"] = schema_name(request.schema)
        if parsed is None:
            event["unread"] = _why_unread(message, unparsed)
    return ModelReply(message, parsed, unparsed, latency_ms, event, cut=cut, writes=writes)


def in_loop_answer(request: ModelRequest) -> AnswerSchema | None:
    """The response format ``request``'s reply gives itself: a strategy's, in a loop's call
    that asks for no typed reply of its own."""
    answer = request.answer
    return answer if answer is not None and answer.in_loop and request.schema is None else None


def _why_unread(message: AIMessage, unparsed: Exception | None) -> str:
    """Why a typed reply could not be read, in a line: the parser's error, a reply that
    ended before it said anything (a server that dropped it), or no call of the schema."""
    if unparsed is not None:
        return str(unparsed)[:UNREAD_LIMIT]
    said = message.content or message.tool_calls or message.invalid_tool_calls
    if not said and not message.response_metadata.get("finish_reason"):
        return DROPPED_REPLY
    return NO_TYPED_CALL


def _kept_reply(stop: CallStopped, request: ModelRequest) -> Any:
    """What a reply ended by its watch (a repetition, its cap) said, as the call's result:
    text for a text request; for a typed one, no object (its arguments are unfinished)."""
    message = AIMessage(stop.text, response_metadata={"finish_reason": stop.kind})
    if request.schema is None:
        return message
    return {"raw": message, "parsed": None, "parsing_error": ValueError(stop.reason)}


def summariser(
    run: RunScope, state: Mapping[str, Any] | None, spending: Spending | None = None
) -> Summarise:
    """A summary call of the run's summary model, budgeted, retried and watched as every
    call is, as the fitting strategies ask for one, its event marked ``summary``;
    ``spending`` is the question's so far, when the caller has already summed it."""
    state = state or NO_STATE
    before = spending or question_spending(state)

    def summarise(prompt: list[BaseMessage]) -> Body[tuple[str, ThoughtEvent]]:
        call = ModelCall(
            run=run,
            request=ModelRequest(prompt=prompt),
            prompt=prompt,
            state=state,
            spending=before,
            closing=False,
            model=run.summary_model,
        )
        reply = yield from _SUMMARY(call)
        return reply.message.text, ThoughtEvent(**reply.event, summary=True)

    return summarise


def _chain(prompt_hooks: bool, model_hooks: bool) -> Next:
    """The links of :func:`call_model` in front of :func:`ask`, with the middleware's links
    where the graph has hooks of that kind (the four chains are made once)."""
    links: tuple[Link, ...] = (
        *((around_call,) if prompt_hooks else ()),
        told,
        fitted,
        made_whole,
        *((wrapped,) if model_hooks else ()),
        budgeted,
        retried,
    )
    return chained(links, ask)


_CHAINS = {(p, m): _chain(p, m) for p in (False, True) for m in (False, True)}
_SUMMARY = chained((budgeted, retried), ask)
"""A summary's call: no hooks, no fitting (it is what fits), no continuation."""
