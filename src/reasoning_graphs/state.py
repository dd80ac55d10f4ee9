"""Graph state shared by the agent patterns.

Everything a run needs to resume lives here as plain, serialisable data, so any
checkpointer can save it and a new process can pick the run up.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence, Set
from typing import Annotated, Any, Literal, Protocol, TypeVar

from langchain_core.messages import AnyMessage, BaseMessage, RemoveMessage, ToolMessage
from langgraph.channels.delta import DeltaChannel
from typing_extensions import NotRequired, TypedDict

from reasoning_graphs.history import Fold, Indexed, folded
from reasoning_graphs.message_merge import merge_message_writes


def merge_dicts(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer: later keys win, earlier keys stay."""
    return {**(left or {}), **(right or {})}


def _add_message_id(ids: set[str], message: AnyMessage) -> set[str]:
    if message.id:
        ids.add(message.id)
    return ids


MESSAGE_IDS = Fold("message ids", set, _add_message_id)


def message_ids(messages: Sequence[BaseMessage]) -> Set[str]:
    """The id of every message of the conversation (read only)."""
    return folded(messages, MESSAGE_IDS)


def add_messages_batches(state: list[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
    """Batch reducer of the conversation: LangGraph's message merging (a message with a
    known id replaces it), as an :class:`~reasoning_graphs.history.Indexed` list.

    A step that only adds messages with new ids, or none (the usual step), appends
    them; LangGraph's reducer, which indexes the whole list, merges the rest.
    """
    added = [item for write in writes for item in (write if isinstance(write, list) else [write])]
    name_messages(added)
    if isinstance(state, Indexed) and _only_new(added, message_ids(state)):
        return Indexed.extending(state, added)
    return Indexed(merge_message_writes(state, writes), extends=state)


def name_messages(added: Sequence[Any]) -> None:
    """Give each message of ``added`` that has no id a new one, in place, as LangGraph's
    reducer names a message, so a later step (a middleware's hook rewriting a tool's
    result) can name it."""
    for item in added:
        if isinstance(item, BaseMessage) and item.id is None:
            item.id = str(uuid.uuid4())


def _only_new(added: list[Any], taken: Set[str]) -> bool:
    """Whether every item is a message (not a removal) with no id or an id not yet used:
    LangGraph's reducer appends those as they are."""
    ids = [item.id for item in added if isinstance(item, BaseMessage) and item.id is not None]
    return (
        all(isinstance(item, BaseMessage) and not isinstance(item, RemoveMessage) for item in added)
        and len(set(ids)) == len(ids)
        and taken.isdisjoint(ids)
    )


def append_batches(state: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    """Batch reducer of a growing record: every write's items, in order, as an
    :class:`~reasoning_graphs.history.Indexed` list."""
    return Indexed.extending(state, (item for write in writes for item in write))


def extend_record(existing: list[Any], new: list[Any]) -> list[Any]:
    """``operator.add`` for a per-question record that only grows (plan steps, trials), as
    an :class:`~reasoning_graphs.history.Indexed` list, so that reading the current
    question's part (:func:`~reasoning_graphs.question.this_question`) stays incremental."""
    return append_batches(existing, [new])


def merge_batches(state: dict[str, Any], writes: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    """Batch reducer of a :class:`DeltaChannel` dict: later keys win, earlier keys stay."""
    merged = dict(state)
    for write in writes:
        merged.update(write or {})
    return merged


# The growing channels are delta channels: a checkpoint stores what a step added,
# with a full snapshot every ``SNAPSHOT_EVERY`` updates, instead of the whole
# value at every step (which makes a long run's checkpoints grow with the square
# of its length). LangGraph replays the writes since the last snapshot on load.
SNAPSHOT_EVERY = 100
"""Updates of a growing channel between two full snapshots of it in the checkpoints."""

Messages = Annotated[
    list[AnyMessage], DeltaChannel(add_messages_batches, snapshot_frequency=SNAPSHOT_EVERY)
]
"""The conversation: LangGraph's message merging (by id), saved as deltas."""


CallDecision = Literal[
    "auto", "approved", "edited", "rejected", "responded", "reused", "skipped", "blocked", "invalid"
]
"""How the runtime settled one tool call.

- ``auto``: ran; no approval was needed.
- ``approved`` / ``edited``: ran after a person approved it (``edited``: with their arguments).
- ``rejected``: never ran; a person rejected it now or earlier in the question.
- ``responded``: never ran; a person wrote its observation.
- ``reused``: never ran; its tool is declared pure (a function of its arguments alone) and
  an identical earlier call of the question answered it.
- ``skipped``: never ran; over the per-turn call limit, or it needed a result that failed.
- ``blocked``: never ran; a block rule of the policy forbids it.
- ``invalid``: never ran; the model's arguments could not be read.
"""

EXECUTED: frozenset[CallDecision] = frozenset({"auto", "approved", "edited"})
"""Decisions under which a tool really ran (its observation is the tool's own output)."""


class ClearedCall(TypedDict):
    """A tool call cleared to run this turn (after policy and approval).

    Attributes:
        nonce, seal: For a call a person cleared, the proof that they did, for
            exactly this call on this thread (see :mod:`reasoning_graphs.nodes.steps.seal`).
        answer: For a call settled without running that comes after a call that
            runs, its observation: ``act`` records it in its place, so the
            observations keep the order of the model's calls.
        notice: For a call a person edited (``name`` and ``args`` are what they decided;
            the model's message keeps what it proposed): what its observation begins
            with, telling the model what ran in place of its call.
    """

    id: str
    name: str
    args: dict[str, Any]
    decision: CallDecision
    nonce: NotRequired[str]
    seal: NotRequired[str]
    answer: NotRequired[ToolMessage]
    notice: NotRequired[str]


class ContextSummary(TypedDict):
    """A summary of messages a prompt left out, kept so that later prompts reuse it.

    Attributes:
        text: The summary.
        covers: How many of the left-out messages it covers, from the first of them.
        first, last: Fingerprints of the first and the last message it covers: a later
            prompt reuses it only where its left-out messages begin with the same ones.
    """

    text: str
    covers: int
    first: str
    last: str


class ThoughtEvent(TypedDict):
    """One model call, as the trajectory records it.

    Attributes:
        turn: The question it belongs to (its number among the human messages).
        step: Its number among the question's model calls in this graph.
        text: What the model wrote.
        tool_calls: Names of the tools it called.
        input_tokens, output_tokens: From the provider's usage, else estimated.
        latency_ms: Wall time of the call.
        seam_calls: Model calls the seam made for this step before this one (a
            summary that fitted the prompt, the parts of a reply cut by the length
            limit), as the budgets count them: every node that records the event
            records them too.
        stopped: Why the call was stopped before it finished (a budget spent or a
            timeout while it ran); ``text`` is what it had written by then.
        halt: Set when the question must end without asking the model again (it
            timed out, went silent or kept failing): the reason.
        summary: Set on a call that summarised messages to fit a prompt to the
            context window: it costs tokens and time, but is not a model step.
        context_summary: The summary made for this call's prompt, which later
            prompts reuse (the latest in the trajectory is the one in force).
        typed: The schema a typed request asked for (its name).
        unread: Why a typed reply did not fit its schema, when it did not.
        confidence, needs_more_info: What a typed ReAct step said of itself
            (:mod:`~reasoning_graphs.nodes.steps.typed_step`): how sure it was, 0 to 1, and
            whether only the user could give what was missing.
        reflection: Set on the ReAct loop's look back at a tool round
            (:mod:`~reasoning_graphs.nodes.steps.reflect`): a model step, whose text
            later prompts show as the model's own note.
    """

    kind: Literal["thought"]
    turn: int
    step: int
    text: str
    tool_calls: list[str]
    input_tokens: int
    output_tokens: int
    latency_ms: float
    seam_calls: NotRequired[list[Work]]
    stopped: NotRequired[str]
    halt: NotRequired[str]
    summary: NotRequired[bool]
    context_summary: NotRequired[ContextSummary]
    typed: NotRequired[str]
    unread: NotRequired[str]
    confidence: NotRequired[float]
    needs_more_info: NotRequired[bool]
    reflection: NotRequired[bool]


class ActionEvent(TypedDict):
    """What became of one tool call, as the trajectory records it.

    Attributes:
        turn, step: The question and the model step that proposed the call.
        id, tool, args: The call.
        observation: What the model was shown (cut when long).
        status: ``success`` or ``error``.
        decision: How the call was settled.
        duration_ms: How long the tool ran (0 when it did not run).
        started, ended: When it ran (epoch seconds), where a pattern runs calls
            concurrently and shows their overlap (LLM Compiler).
        seal: The person's approval it ran under, now spent
            (:mod:`reasoning_graphs.nodes.steps.seal`).
        upkeep: The call kept the run's own records (``ToolSpec.upkeep``): the tool
            budgets do not count it.
    """

    kind: Literal["action"]
    turn: int
    step: int
    id: str
    tool: str
    args: dict[str, Any]
    observation: str
    status: Literal["success", "error"]
    decision: CallDecision
    duration_ms: float
    started: NotRequired[float | None]
    ended: NotRequired[float | None]
    seal: NotRequired[str]
    upkeep: NotRequired[bool]


TrajectoryEvent = ThoughtEvent | ActionEvent


class Outcome(TypedDict):
    """How the latest turn ended, or why it must end now.

    Attributes:
        status: ``answered`` or ``incomplete``.
        reason: Why an incomplete turn stopped.
        call_stopped: The node's model call was stopped part-way (a budget spent
            or a timeout while it ran), so the node wrote nothing else and the
            question goes to its honest stop.
        concluded: The node already wrote the question's incomplete answer (the
            model's reply was no answer: see :mod:`reasoning_graphs.nodes.guards.honest`),
            so the question ends there, with no closing call.
        no_answer: The model's last reply was no answer (empty, or our own words given
            back: see :mod:`reasoning_graphs.nodes.guards.honest`); the message keeps it,
            and no reader shows it as the answer.
        ended: A middleware ended the question (its hook jumped to the end): a pattern
            that runs the question in parts (trials, steps) asks nothing more of the model.
        note: On an incomplete answer's outcome (the state's, and the final message's
            ``response_metadata``): what a reader is told besides the model's own words,
            why it stopped and the evidence the tools gave. Shown after the answer, never
            written into the model's message.
        verification: With ``verify`` on, the model's check of the answer's claims
            against the question's observations (:mod:`~reasoning_graphs.nodes.steps.verify`).
        typed_error: With a response format, why the answer has no typed form (a reply
            that did not fit the schema twice, a budget spent, a failed call): see
            :mod:`~reasoning_graphs.nodes.steps.typed_answer`.
    """

    status: Literal["answered", "incomplete"]
    reason: NotRequired[str]
    call_stopped: NotRequired[bool]
    concluded: NotRequired[bool]
    no_answer: NotRequired[bool]
    ended: NotRequired[bool]
    note: NotRequired[str]
    verification: NotRequired[Verification]
    typed_error: NotRequired[str]


ClaimBacking = Literal["backed", "inferred"]
"""Whether an observation's quoted words back a claim (``backed``) or none does (``inferred``)."""


class CheckedClaim(TypedDict):
    """One claim of an answer, as the model's check lists it and the runtime accepts it.

    Attributes:
        text: The claim, in the model's words.
        status: ``backed`` only when the quote was found in an observation of the question.
        quote: The observation's words that back it, as the model quoted them ("" when inferred).
        call_id, tool: The call whose observation holds the quote (``None`` when inferred).
        note: Why a claim the model called backed is inferred (its quote is in no observation).
    """

    text: str
    status: ClaimBacking
    quote: str
    call_id: str | None
    tool: str | None
    note: NotRequired[str]


class Verification(TypedDict):
    """The model's check of an answer: its claims, or why there are none.

    Attributes:
        status: ``checked``; ``skipped`` (no call made: a budget spent, nothing to check
            against, no answer); ``failed`` (the call was made, its reply could not be read
            or the call was stopped). The answer stands either way.
        claims: The answer's claims (empty unless ``checked``).
        reason: Why it was skipped or failed.
    """

    status: Literal["checked", "skipped", "failed"]
    claims: list[CheckedClaim]
    reason: NotRequired[str]


ClaimKind = Literal["name", "number", "date"]
"""What an answer's claim is: a proper name, a quantity, or a date."""

ClaimSource = Literal["observation", "question", "thought", "answer"]
"""Where an answer's claim was found (see :class:`Claim`)."""


class ClaimSupport(TypedDict):
    """The tool observation an answer's claim was found in.

    Attributes:
        call_id: The tool call whose observation holds the claim.
        tool: That call's tool.
        excerpt: The observation's text around the claim.
    """

    call_id: str
    tool: str
    excerpt: str


class Claim(TypedDict):
    """One checkable claim of a final answer, and whether a tool backs it.

    Attributes:
        text: The claim as the answer wrote it.
        kind: Name, number or date.
        supported: Whether a tool observation of the question holds it.
        found_in: Where it was found: ``observation`` (supported), else
            ``question`` (the person's own words, restated), ``thought`` (the
            model wrote it before its answer) or ``answer`` (only there).
        support: The observation that holds it, when supported.
    """

    text: str
    kind: ClaimKind
    supported: bool
    found_in: ClaimSource
    support: ClaimSupport | None


class GroundingReport(TypedDict):
    """Which claims of a question's final answer a tool observation backs.

    Attributes:
        turn: The question (its number among the human messages).
        claims: The answer's claims, in the order the answer makes them.
        supported: How many of them a tool observation backs.
        unsupported: How many rest on the model's word alone (found only in
            its thoughts or its answer; a restated part of the question is neither).
    """

    turn: int
    claims: list[Claim]
    supported: int
    unsupported: int


class AgentInput(TypedDict):
    """What a caller sends: LangGraph's usual chat input."""

    messages: Messages


class Work(TypedDict):
    """One model call or tool run of a question, as the budgets count it.

    Attributes:
        kind: ``thought`` for a model call, ``action`` for a tool that really ran.
        tokens: The call's prompt plus completion tokens (0 for a tool).
        ms: The call's latency, or how long the tool ran.
        halt: Set when the question must end here without another model call: why.
        summary: A summary call: its tokens and time count, but it is no model step.
        tool_round: A model call that proposed tool calls: it began a round of them.
        tool: The tool that ran, for a tool run.
    """

    kind: Literal["thought", "action"]
    tokens: int
    ms: float
    halt: NotRequired[str]
    summary: NotRequired[bool]
    tool_round: NotRequired[bool]
    tool: NotRequired[str]


class EffectDone(TypedDict):
    """A call of a pure tool that ran and succeeded: what it returned and its call id."""

    result: str
    call_id: str


class StepInput(AgentInput):
    """What a pattern hands the ReAct graph it runs for one plan step or trial.

    Besides the step's conversation, what binds the whole question: both only
    tighten the run.

    Attributes:
        rejected: Calls a person already rejected, by signature, with the reason.
        earlier_work: Every model call and tool run the question made before this
            run, so the budgets count them.
        earlier_calls: The action events of the calls that ran in the question
            before this run, in order, so that a repeat of a pure tool's call is
            answered from it (see :func:`~reasoning_graphs.question.current_results`).
        thread_counts: The calls the thread's earlier questions made, by what the call
            limits count (:mod:`~reasoning_graphs.nodes.guards.call_limits`); absent on
            a thread's first question.
    """

    rejected: NotRequired[Annotated[dict[str, str], merge_dicts]]
    earlier_work: NotRequired[list[Work]]
    earlier_calls: NotRequired[list[ActionEvent]]
    thread_counts: NotRequired[dict[str, int]]


class AgentState(AgentInput):
    """The full state of a tool-using agent.

    Attributes:
        messages: The conversation, including tool calls and observations.
        trajectory: One event per thought and per action, for inspection and
            telemetry (text, tool, arguments, observation, tokens, latency).
        observations: Full texts of observations that were cut, by reference id.
        rejected: Calls a person rejected, by signature, with the reason.
        to_run: Calls of the current turn that are cleared to run (approved, or
            needing no approval), in the model's order.
        outcome: Set when the turn has ended or must end.
        grounding: For the question just answered, which claims of its final
            answer a tool observation backs.
        structured_response: With a response format, the latest question's answer in
            that form (a model instance, or a ``dict``); ``None`` when it has none.
    """

    rejected: NotRequired[Annotated[dict[str, str], merge_dicts]]
    trajectory: Annotated[
        list[TrajectoryEvent], DeltaChannel(append_batches, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    observations: Annotated[
        dict[str, str], DeltaChannel(merge_batches, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    to_run: list[ClearedCall]
    outcome: Outcome | None
    grounding: NotRequired[GroundingReport | None]
    structured_response: NotRequired[Any]


class StepState(AgentState, StepInput):
    """The state of the ReAct graph a pattern runs for one plan step or trial: the agent's,
    with what binds the whole question (:class:`StepInput`). A graph that is no step has
    no channels for the question's earlier work."""


StateT = TypeVar("StateT", contravariant=True)


TrajectoryRecord = Mapping[str, Any]
"""An entry a node adds to the trajectory: a :data:`TrajectoryEvent`, or an event of a kind
a pattern or a guard adds (a judge's verdict, a batch cut short)."""


class AgentUpdate(TypedDict, total=False):
    """What a node may write to :class:`AgentState`: each key as its reducer takes it
    (messages to merge by id, entries to append to the trajectory, observations to add).

    A pattern's nodes write the keys of its own state besides these: their updates
    extend this one (see each pattern's ``state.py``), so a type checker refuses a
    node that writes a key its state lacks.
    """

    messages: Sequence[BaseMessage]
    trajectory: Sequence[TrajectoryRecord]
    observations: Mapping[str, str]
    rejected: Mapping[str, str]
    to_run: list[ClearedCall]
    outcome: Outcome | None
    grounding: GroundingReport | None
    structured_response: Any


class Node(Protocol[StateT]):
    """A node that does no outside work: LangGraph calls it with the state, by name."""

    def __call__(self, state: StateT) -> Mapping[str, Any]: ...
