"""What a node asks a model, the one call on its way through the seam's links, and the reply.

Every guard between a node and its model is a link of one chain
(:func:`~reasoning_graphs.nodes.model.call.call_model`): a link reads the
:class:`ModelCall`, may answer it itself, and otherwise hands it (or a changed copy)
to ``then``, the rest of the chain, whose last step asks the model. A link that asks
more than once (a summary, a continuation, a retry) notes each earlier call in
:attr:`ModelCall.made`, so a stop's record counts them all.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.guards.budget import Spending, thought_work
from reasoning_graphs.nodes.model.trajectory import thought_event
from reasoning_graphs.nodes.model.watch import CallAllowance, SharedTokens
from reasoning_graphs.question import call_ids
from reasoning_graphs.state import ContextSummary, Outcome, ThoughtEvent, message_ids

if TYPE_CHECKING:
    from reasoning_graphs.nodes.model.setup import RunScope
    from reasoning_graphs.response_format import AnswerSchema

NO_ALLOWANCE = CallAllowance()
"""No limit on a call, until a link sets one."""


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
        reply_tokens: Tokens the reply may stream before it ends there, what it said so
            far kept as the reply (the closing answer's cap).
        answer: The run's response format, for a loop's call that gives it itself when it
            names a strategy (:mod:`~reasoning_graphs.nodes.model.answer_strategy`).
    """

    prompt: Sequence[BaseMessage]
    tools: Sequence[BaseTool] = ()
    tool_choice: str | None = None
    schema: type[BaseModel] | None = None
    native: bool = False
    stop: Sequence[str] | None = None
    grammar: str | None = None
    shared_tokens: SharedTokens | None = None
    reply_tokens: int | None = None
    answer: AnswerSchema | None = None


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
            that fitted the prompt, the parts of a reply cut by the length limit, and the
            calls a middleware hook made before its last.
        cut: Whether the reply stopped at the length limit or its streamed call arguments
            stopped before their JSON was complete.
        writes: State updates a ``wrap_model_call`` hook returned beside the reply (the
            commands of an ``ExtendedModelResponse``), for the step to write after it.
        added: Messages a ``wrap_model_call`` hook appended to its request's conversation
            in place, for the step to write before the reply (as ``create_agent``'s
            request shares its list with the state).
    """

    message: AIMessage
    parsed: Any
    parsing_error: BaseException | None
    latency_ms: float
    event: ThoughtEvent
    preceding: tuple[ThoughtEvent, ...] = ()
    cut: bool = False
    writes: tuple[dict[str, Any], ...] = ()
    added: tuple[BaseMessage, ...] = ()

    @property
    def events(self) -> list[ThoughtEvent]:
        """Every model call this reply cost, in order, the reply's own last."""
        return [*self.preceding, self.event]


@dataclass(slots=True)
class ModelCall:
    """One model call on its way through the links. A link hands on a changed copy
    (:meth:`asking`, :meth:`allowed`, or ``dataclasses.replace``), never changes the call
    it was given; only :attr:`made` is shared, on purpose. (Not frozen: a model call makes
    several copies, and a frozen class's ``__init__`` costs several times as much.)

    Attributes:
        run: The run's model, options and limits.
        request: What the node asked.
        prompt: The messages as they will be sent (fitted, continued, or as a hook set them).
        state: The graph state the call's event is placed in.
        spending: The question's spending before the call, summed once.
        closing: Whether this is the one call past a spent budget (no summary, no
            continuation, a small allowance).
        model: The model asked: the run's, its summary model, or a hook's fallback.
        allowance: What the call may spend while it runs, once a link has set it.
        made: The calls made before the last so far, for a stop's record (shared by the
            links of one chain).
    """

    run: RunScope
    request: ModelRequest
    prompt: Sequence[BaseMessage]
    state: Mapping[str, Any]
    spending: Spending
    closing: bool
    model: BaseChatModel
    allowance: CallAllowance = NO_ALLOWANCE
    made: list[ThoughtEvent] = field(default_factory=list)

    def asking(self, prompt: Sequence[BaseMessage]) -> ModelCall:
        """The same call on another prompt."""
        return self._copy(prompt, self.allowance)

    def allowed(self, allowance: CallAllowance) -> ModelCall:
        """The same call with another allowance."""
        return self if allowance is self.allowance else self._copy(self.prompt, allowance)

    def _copy(self, prompt: Sequence[BaseMessage], allowance: CallAllowance) -> ModelCall:
        return ModelCall(
            self.run,
            self.request,
            prompt,
            self.state,
            self.spending,
            self.closing,
            self.model,
            allowance,
            self.made,
        )


Next = Callable[[ModelCall], Body[ModelReply]]
"""The rest of the chain after a link."""

Link = Callable[[ModelCall, Next], Body[ModelReply]]
"""One guard of the chain: the call, and the rest of the chain to hand it to."""


class Stopped(Exception):
    """A call ended early; carries its reply as recorded and the question's outcome."""

    def __init__(self, reply: ModelReply, outcome: Outcome):
        super().__init__(outcome.get("reason", "stopped"))
        self.reply, self.outcome = reply, outcome
        self.error: Exception | None = None
        """The provider's error, when the call stopped because it kept failing."""


def stop_record(
    call: ModelCall,
    reason: str,
    latency_ms: float,
    *,
    text: str = "",
    tokens: int = 0,
    halt: bool,
) -> Stopped:
    """A stopped call as the trajectory keeps it (``stopped``, and ``halt`` when the
    question must end without another call) and the outcome it gives."""
    message = AIMessage(text)
    event = thought_event(call.state, reply=message, prompt=call.prompt, latency_ms=latency_ms)
    event["output_tokens"] = max(event["output_tokens"], tokens)  # as the watch counted
    event["stopped"] = reason
    if halt:
        event["halt"] = reason
    outcome: Outcome = {"status": "incomplete", "reason": reason}
    return Stopped(ModelReply(message, None, None, latency_ms, event), outcome)


def preceded(
    earlier: Sequence[ThoughtEvent], reply: ModelReply, summary: ContextSummary | None = None
) -> ModelReply:
    """``reply`` numbered after the calls made before it (a summary is no step), carrying
    their cost and the ``summary`` made for its prompt; the calls it already carried
    follow ``earlier``."""
    if not earlier and summary is None:
        return reply
    numbered, steps_before = [], 0
    for event in earlier:
        numbered.append(ThoughtEvent(**{**event, "step": event["step"] + steps_before}))
        steps_before += not event.get("summary")
    carried = [
        ThoughtEvent(**{**event, "step": event["step"] + steps_before}) for event in reply.preceding
    ]
    every = [*numbered, *carried]
    last: ThoughtEvent = {**reply.event, "step": reply.event["step"] + steps_before}
    if every:
        last["seam_calls"] = [thought_work(event) for event in every]
    if summary is not None:
        last["context_summary"] = summary
    return replace(reply, event=last, preceding=tuple(every))


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
