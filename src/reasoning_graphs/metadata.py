"""What the runtime writes on messages, named once, with the functions that read and write it.

Bookkeeping that must travel with a message through every checkpoint goes in
its ``response_metadata``: how a tool call was settled, which pattern wrote a
message and as which step, the text a text-format reply was parsed from, how a
final answer came about. Every reader and writer uses these functions, so a key
is spelled in one place and a value is never recovered by parsing message text.

Examples:
    >>> from langchain_core.messages import AIMessage, ToolMessage
    >>> note = ToolMessage("42", tool_call_id="b", response_metadata=settled("reused", reused="a"))
    >>> decision_of(note), reused_from(note)
    ('reused', 'a')
    >>> plan = AIMessage("", response_metadata=mark("rewoo", "plan"))
    >>> written_by(plan, "rewoo", "plan"), written_by(plan, "llm_compiler"), is_bookkeeping(plan)
    (True, False, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from langchain_core.messages import BaseMessage, ToolMessage
from typing_extensions import TypedDict

from reasoning_graphs.state import CallDecision, Outcome

DECISION = "decision"
"""On an observation: how its call was settled (a :data:`~reasoning_graphs.state.CallDecision`)."""
REUSED_FROM = "reused_from"
"""On a ``reused`` observation: the id of the earlier call whose result it repeats."""
EARLIER_REJECTION = "rejected_before"
"""On a ``rejected`` observation: answered from a person's earlier rejection of the same
call in this question, without asking again."""
RETURN_DIRECT = "return_direct"
"""On an observation: the tool's result is the answer (the tool is marked ``return_direct``)."""
ACTED = "acted"
"""On an observation: the call ran a tool not marked read-only, and succeeded — it may
have changed the world, which is progress even when its text repeats an earlier one."""
TRANSIENT = "transient_failure"
"""On an observation: the call failed in a way that may pass (a timeout, a lost
connection) even after a retry, so its error is no result to reuse."""
ADVICE = "advice"
"""On an observation: what the runtime tells the model about it besides the tool's
result (a request of the tool's that was not done), given in the next prompt only."""
OUTCOME = "outcome"
"""On a final answer: how the question ended (:class:`~reasoning_graphs.state.Outcome`)."""
RUNTIME = "runtime"
"""On a message a pattern wrote itself (a plan, a batch of planned calls): the pattern's name."""
EDITED_CALL = "edited_call"
"""On the observation of a call a person edited: the call that ran (``name``, ``args``); the
model's message keeps the call it proposed."""
HOOK_NOTE = "hook_note"
"""On a human message a middleware hook wrote beside a model reply: the hook's, not a new
question (a question's budgets and records start at a person's message only)."""
FORMAT_ERROR = "format_error"
"""On a text-format reply that could not be read: the corrective observation the model sees."""
RAW = "raw"
"""On a text-format reply: the model's text as parsed."""


class Mark(TypedDict, total=False):
    """What a pattern writes on a message it makes itself rather than the model.

    Attributes:
        runtime: The pattern (``"rewoo"``, ``"llm_compiler"``).
        kind: Which of its steps wrote it (``"plan"``, ``"work"``, ``"join"`` …).
        round: LLM Compiler: the planning round the message belongs to.
        tasks: LLM Compiler: call id → task number, for the round's calls.
        vars: ReWOO: call id → evidence variable (``E1`` …), for the plan's calls.
        reason: LLM Compiler's joiner: why it asked for another round.
        wall_ms: LLM Compiler: how long a pass of the schedule took.
        critical_path_ms: LLM Compiler: the longest chain of dependent tasks in the pass.
    """

    runtime: str
    kind: str
    round: int
    tasks: dict[str, int]
    vars: dict[str, str]
    reason: str
    wall_ms: float
    critical_path_ms: float


def settled(decision: CallDecision, *, reused: str | None = None) -> dict[str, Any]:
    """The metadata of an observation settled as ``decision``.

    ``reused`` is the id of the earlier call whose result the observation repeats.
    """
    metadata: dict[str, Any] = {DECISION: decision}
    if reused is not None:
        metadata[REUSED_FROM] = reused
    return metadata


def with_decision(
    message: ToolMessage, decision: CallDecision, *, direct: bool = False, acted: bool = False
) -> ToolMessage:
    """``message`` marked as settled by ``decision``, keeping what else it carries.

    ``direct``: the tool asked that its result be the answer (``return_direct``).
    ``acted``: a tool not marked read-only ran (see :data:`ACTED`).
    """
    metadata = {**message.response_metadata, DECISION: decision}
    if direct:
        metadata[RETURN_DIRECT] = True
    if acted and message.status != "error":
        metadata[ACTED] = True
    update: dict[str, Any] = {"response_metadata": metadata}
    if decision in PERSONS_ANSWERS:  # as LangChain marks it, for clients that show it
        kind = {"lc_data": {"decision": PERSONS_ANSWERS[decision]}}
        update["additional_kwargs"] = {**message.additional_kwargs, **LC_MARK, **kind}
    return message.model_copy(update=update)


LC_MARK = {"lc_source": "hitl_interrupt_decision"}
PERSONS_ANSWERS = {"rejected": "reject", "responded": "respond"}
"""The decisions that answer a call in its tool's place, as LangChain's approval marks them
on the observation (``additional_kwargs``)."""


def acted(message: ToolMessage) -> bool:
    """Whether the observation is a stateful call's success (see :data:`ACTED`)."""
    return bool(message.response_metadata.get(ACTED))


def decision_of(message: ToolMessage) -> CallDecision:
    """How the call this observation answers was settled (``auto`` when unmarked)."""
    return cast(CallDecision, message.response_metadata.get(DECISION, "auto"))


def rejected_before(message: ToolMessage) -> bool:
    """Whether a ``rejected`` observation repeats an earlier rejection (see
    :data:`EARLIER_REJECTION`)."""
    return bool(message.response_metadata.get(EARLIER_REJECTION))


def reused_from(message: ToolMessage) -> str | None:
    """The id of the earlier call whose result a ``reused`` observation repeats."""
    return message.response_metadata.get(REUSED_FROM)


def is_direct_result(message: ToolMessage) -> bool:
    """Whether the observation is a ``return_direct`` tool's successful answer."""
    return bool(message.response_metadata.get(RETURN_DIRECT)) and message.status == "success"


def failed_transiently(message: ToolMessage) -> bool:
    """Whether the observation is a failure that may pass (see :data:`TRANSIENT`)."""
    return bool(message.response_metadata.get(TRANSIENT))


def with_advice(message: ToolMessage, note: str) -> ToolMessage:
    """``message`` as the tool gave it, carrying ``note`` for the model's next prompt."""
    metadata = {**message.response_metadata, ADVICE: [*advice_of(message), note]}
    return message.model_copy(update={"response_metadata": metadata})


def advice_of(message: ToolMessage) -> list[str]:
    """The runtime's notes on an observation (see :data:`ADVICE`)."""
    return list(message.response_metadata.get(ADVICE) or [])


def answered(outcome: Outcome, **extra: Any) -> dict[str, Any]:
    """The metadata of a final answer that ended the question with ``outcome``."""
    return {**extra, OUTCOME: dict(outcome)}


def outcome_of(message: BaseMessage) -> Outcome | None:
    """How the question ended, when ``message`` is a final answer that says so."""
    return message.response_metadata.get(OUTCOME)


def mark(runtime: str, kind: str, **fields: Any) -> Mark:
    """The metadata of a message the ``runtime`` pattern writes as its ``kind`` step."""
    return cast(Mark, {RUNTIME: runtime, "kind": kind, **fields})


def mark_of(message: BaseMessage) -> Mark:
    """What a pattern wrote on ``message`` (empty when the model wrote it)."""
    metadata: Mapping[str, Any] = message.response_metadata
    return cast(Mark, {key: metadata[key] for key in Mark.__annotations__ if key in metadata})


def is_bookkeeping(message: BaseMessage) -> bool:
    """Whether a pattern, not the model, wrote ``message`` (a plan, a batch of calls)."""
    return bool(message.response_metadata.get(RUNTIME))


def written_by(message: BaseMessage, runtime: str, kind: str | None = None) -> bool:
    """Whether the ``runtime`` pattern wrote ``message`` (as its ``kind`` step, when given)."""
    metadata = message.response_metadata
    return metadata.get(RUNTIME) == runtime and (kind is None or metadata.get("kind") == kind)


def format_error_of(message: BaseMessage) -> str | None:
    """The corrective observation of a text-format reply that could not be read."""
    return message.response_metadata.get(FORMAT_ERROR) or None


def raw_reply_of(message: BaseMessage) -> str | None:
    """The text a text-format reply was parsed from."""
    return message.response_metadata.get(RAW) or None
