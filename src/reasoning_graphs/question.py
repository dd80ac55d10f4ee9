"""Facts about the current question, derived from the state rather than stored twice.

A question is everything since the latest human message: the budgets count the
model calls and tokens of the question, and repetition is judged within it. The
facts every step asks for are running folds of the conversation
(:mod:`reasoning_graphs.history`), so a step reads only the messages added
since the step before.
"""

from __future__ import annotations

import json
from collections import ChainMap
from collections.abc import Mapping, Sequence, Set
from types import MappingProxyType
from typing import Any, NamedTuple, TypeGuard, TypeVar

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)

from reasoning_graphs.history import Fold, folded
from reasoning_graphs.metadata import HOOK_NOTE, RUNTIME, decision_of
from reasoning_graphs.state import EXECUTED, ActionEvent, EffectDone
from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.registry import ToolRegistry


def was_executed(message: AnyMessage) -> TypeGuard[ToolMessage]:
    """Whether ``message`` is the observation of a tool that really ran."""
    return isinstance(message, ToolMessage) and decision_of(message) in EXECUTED


class Requests(NamedTuple):
    """The conversation's questions so far: how many, and where the latest one is."""

    messages: int = 0
    questions: int = 0
    latest: int | None = None


def _next_message(requests: Requests, message: AnyMessage) -> Requests:
    if isinstance(message, HumanMessage) and not message.response_metadata.get(HOOK_NOTE):
        return Requests(requests.messages + 1, requests.questions + 1, requests.messages)
    return requests._replace(messages=requests.messages + 1)


REQUESTS = Fold("requests", Requests, _next_message)


def question_number(messages: Sequence[AnyMessage]) -> int:
    """How many human messages the conversation has (the current question's number)."""
    return folded(messages, REQUESTS).questions


def request_index(messages: Sequence[AnyMessage]) -> int | None:
    """Where the latest human message is (``None`` before the first)."""
    return folded(messages, REQUESTS).latest


def latest_request(messages: Sequence[AnyMessage]) -> str:
    """The text of the latest human message: the question being worked on."""
    index = request_index(messages)
    return "" if index is None else messages[index].text


def question_messages(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The messages after the latest human message."""
    index = request_index(messages)
    return list(messages if index is None else messages[index + 1 :])


def _answer_of_question(
    answers: dict[str, ToolMessage], message: AnyMessage
) -> dict[str, ToolMessage]:
    if isinstance(message, HumanMessage):
        return {}
    if isinstance(message, ToolMessage):
        answers[message.tool_call_id] = message
    return answers


QUESTION_ANSWERS = Fold("question answers", dict, _answer_of_question)


def question_answers(messages: Sequence[AnyMessage]) -> Mapping[str, ToolMessage]:
    """The observations of the current question, by the id of the call each answers (read only)."""
    answers: dict[str, ToolMessage] = folded(messages, QUESTION_ANSWERS)
    return MappingProxyType(answers)


def _answered_id(answered: set[str], message: AnyMessage) -> set[str]:
    if isinstance(message, ToolMessage):
        answered.add(message.tool_call_id)
    return answered


ANSWERED_IDS = Fold("answered ids", set, _answered_id)


def answered_ids(messages: Sequence[AnyMessage]) -> Set[str]:
    """The id of every call the conversation has an observation for (read only)."""
    return folded(messages, ANSWERED_IDS)


def _add_call_ids(ids: set[str], message: AnyMessage) -> set[str]:
    if isinstance(message, AIMessage):
        calls = [*message.tool_calls, *message.invalid_tool_calls]
        ids.update(call_id for call in calls if (call_id := call.get("id")))
    elif isinstance(message, ToolMessage):
        ids.add(message.tool_call_id)
    return ids


CALL_IDS = Fold("call ids", set, _add_call_ids)


def call_ids(messages: Sequence[BaseMessage]) -> Set[str]:
    """Every tool-call id the conversation uses, asked or answered (read only)."""
    return folded(messages, CALL_IDS)


def _bookkeeping_of_question(
    found: dict[tuple[str, str], list[AnyMessage]], message: AnyMessage
) -> dict[tuple[str, str], list[AnyMessage]]:
    if isinstance(message, HumanMessage):
        return {}
    metadata = message.response_metadata
    if metadata.get(RUNTIME):
        found.setdefault((metadata[RUNTIME], metadata.get("kind", "")), []).append(message)
    return found


QUESTION_BOOKKEEPING = Fold("question bookkeeping", dict, _bookkeeping_of_question)


def question_bookkeeping(
    messages: Sequence[AnyMessage], runtime: str, kind: str
) -> tuple[AnyMessage, ...]:
    """The messages the ``runtime`` pattern wrote this question as its ``kind`` step, in order
    (plans, waves of calls): a running fold, so a wave does not rescan the question."""
    return tuple(folded(messages, QUESTION_BOOKKEEPING).get((runtime, kind), ()))


def last_ai_message(messages: Sequence[AnyMessage]) -> AIMessage:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    raise ValueError("The conversation has no model message yet.")


Record = TypeVar("Record", bound=Mapping[str, Any])


def this_question(records: Sequence[Record] | None, messages: Sequence[AnyMessage]) -> list[Record]:
    """The records of the question ``messages`` are at, in order.

    What a pattern keeps across a thread's questions (trajectory events, plan
    steps, trials) is tagged with its question's ``turn``, so a follow-up
    question starts clean while the earlier record stays in the checkpoint.

    Examples:
        >>> from langchain_core.messages import HumanMessage
        >>> messages = [HumanMessage("first"), HumanMessage("second")]
        >>> this_question([{"turn": 1, "step": "a"}, {"turn": 2, "step": "b"}], messages)
        [{'turn': 2, 'step': 'b'}]
    """
    return list(folded(records, RECORDS_BY_QUESTION).get(question_number(messages), ()))


def _by_question(
    by_question: dict[int, list[Any]], record: Mapping[str, Any]
) -> dict[int, list[Any]]:
    by_question.setdefault(record["turn"], []).append(record)
    return by_question


RECORDS_BY_QUESTION = Fold("records by question", dict, _by_question)


def _count_thought(by_question: dict[int, int], event: Mapping[str, Any]) -> dict[int, int]:
    if event["kind"] == "thought" and not event.get("summary"):  # a summary is no step
        by_question[event["turn"]] = by_question.get(event["turn"], 0) + 1
    return by_question


THOUGHTS = Fold("thoughts", dict, _count_thought)


def model_calls_used(state: Mapping[str, Any]) -> int:
    """Model calls this graph has made for the current question.

    Counted from the trajectory, not from the messages: a provider that reuses a
    message id makes the message merge replace an earlier reply, but every call
    still leaves its event.
    """
    by_question = folded(state.get("trajectory"), THOUGHTS)
    return by_question.get(question_number(state["messages"]), 0)


class _Current:
    """The results of a question's pure calls (see :func:`current_results`)."""

    def __init__(self) -> None:
        self.results: dict[str, EffectDone] = {}

    def after(self, event: Mapping[str, Any], pure: frozenset[str]) -> None:
        """Take in one action event: a pure call that ran and succeeded is kept."""
        if (
            event["kind"] == "action"
            and event["tool"] in pure
            and event["decision"] in EXECUTED
            and event["status"] == "success"
        ):
            signature = call_signature(event["tool"], event["args"])
            self.results[signature] = EffectDone(result=event["observation"], call_id=event["id"])


def _current_fold(pure: frozenset[str]) -> Fold[dict[int, _Current]]:
    def step(by_question: dict[int, _Current], event: Mapping[str, Any]) -> dict[int, _Current]:
        by_question.setdefault(event["turn"], _Current()).after(event, pure)
        return by_question

    return Fold(f"pure results ({', '.join(sorted(pure))})", dict, step)


def current_results(state: Mapping[str, Any], registry: ToolRegistry) -> Mapping[str, EffectDone]:
    """The results of this question's calls that an identical call may be answered from,
    by call signature (read only).

    Every call the model makes runs: a tool's world changes without us (a build
    finishes, a clock moves, an inbox fills), so even a read-only call may return
    something new. The one exception is a tool its author declared pure
    (:attr:`~reasoning_graphs.tools.spec.ToolSpec.pure`): its result depends on its
    arguments alone, so a successful call's result answers every identical call of
    the question. Failures are not kept. A new question starts afresh.

    The calls of the question before this run that the pattern running it passed
    in (``earlier_calls``: earlier plan steps, trials) count as if made here first.
    """
    pure = frozenset(name for name in registry.names() if registry.is_pure(name))
    if not pure:
        return MappingProxyType({})
    by_question = folded(state.get("trajectory"), _current_fold(pure))
    own = by_question.get(question_number(state["messages"])) or _Current()
    earlier_calls = state.get("earlier_calls") or []
    if not earlier_calls:
        return MappingProxyType(own.results)
    earlier = _Current()
    for event in earlier_calls:
        earlier.after(event, pure)
    return ChainMap(own.results, earlier.results)


def executed_calls(state: Mapping[str, Any]) -> list[ActionEvent]:
    """The action events of this question's calls that ran, in order, across graphs
    (what a plan step or trial hands the next as ``earlier_calls``)."""
    events = this_question(state.get("trajectory"), state["messages"])
    own = [e for e in events if e["kind"] == "action" and e["decision"] in EXECUTED]
    return [*(state.get("earlier_calls") or []), *own]


def call_signature(name: str, args: Mapping[str, Any]) -> str:
    """A stable key for "the same call": tool name plus canonical arguments."""
    return f"{name}:{json.dumps(args, sort_keys=True, default=str)}"


def describe_call(name: str, args: Mapping[str, Any]) -> str:
    """A call as people read it: ``calculator(expression='23*17+4')``."""
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return f"{name}({shown})"


def successful_observations(
    messages: Sequence[AnyMessage], limit: int = 3
) -> list[tuple[str, str]]:
    """The latest successful tool results of this question as (call, observation) pairs."""
    calls: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    for message in question_messages(messages):
        if isinstance(message, AIMessage):
            calls.update(
                {
                    c["id"]: describe_call(c["name"], c["args"])
                    for c in message.tool_calls
                    if c["id"]
                }
            )
        elif was_executed(message) and message.status == "success":
            call = calls.get(message.tool_call_id)
            text = content_text(message.content)
            if call and (call, text) not in found:
                found.append((call, text))
    return found[-limit:]


NO_CALL_ID = "the tool call {name!r} has no id: it did not come from the model seam"


def runtime_id(call: ToolCall) -> str:
    """The id of a call the model seam returned (it gave each call one: see
    :func:`~reasoning_graphs.nodes.model.request.with_runtime_ids`)."""
    call_id = call["id"]
    if call_id is None:
        raise ValueError(NO_CALL_ID.format(name=call["name"]))
    return call_id
