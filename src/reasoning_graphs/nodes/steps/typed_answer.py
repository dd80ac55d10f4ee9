"""The typed answer: the question's final answer, written once more in the run's response format.

With ``response_format`` (a build option: a Pydantic model, a TypedDict or a JSON
schema; or a run's JSON schema when the graph was built without one), the step that
ends a question makes one more model call once its answer is settled: the model is
given the question and the answer and asked for the answer in the schema
(:mod:`~reasoning_graphs.response_format`) — through the model seam, so a provider whose
model profile says it writes structured output itself is asked for it natively (as
LangChain's ``ProviderStrategy`` does), other providers get the schema as a function
(``ToolStrategy``) and the embedded model a JSON grammar. The reply is checked against
the schema; one that does not fit, or a native request the provider refused, is asked
once more, as a function call, with what was wrong. The
value goes to ``state["structured_response"]``: a model instance for a Pydantic schema,
else a ``dict``.

- An answer the model wrote is typed, an incomplete one too (the closing answer after
  a budget or a loop): its outcome stays incomplete, and says so.
- A question with no answer of the model's (the runtime's note alone, a reply that is
  no answer) is not typed: ``structured_response`` is ``None`` and nothing is said.
- A typed answer that cannot be had — two replies that do not fit, a budget already
  spent, a call stopped or failed — leaves ``structured_response`` ``None`` and makes
  the outcome incomplete, with the reason in ``typed_error``; the text answer stays.

The step runs inside the step that ends the question (with the grounding report and
the ``verify`` check), so a pattern's graph has no node more for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.errors import error_summary
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.grounding.report import final_answer, models_words, state_after
from reasoning_graphs.nodes.guards.budget import exhausted, question_spending
from reasoning_graphs.nodes.guards.honest import no_answer_reason, own_texts
from reasoning_graphs.nodes.guards.stop import QuestionStopped
from reasoning_graphs.nodes.model.bindings import has_native_output
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.question import latest_request, question_number
from reasoning_graphs.response_format import AnswerInvalid, AnswerSchema, written
from reasoning_graphs.state import AgentState, Outcome, TrajectoryRecord

TYPED_SYSTEM = """\
You write a given answer in a given shape. Reply with one call of {name}: its arguments \
hold the answer's content, in the fields its schema names. Take every value from the \
answer (or the question); add no fact of your own."""
TYPED_REQUEST = """\
Question: {question}

Answer:
{answer}"""
MEND_REQUEST = """\
Your reply did not fit {name}'s schema: {problems}. You wrote: {wrote}
Call {name} once more, with arguments that fit its schema."""
own_texts(TYPED_SYSTEM, TYPED_REQUEST, MEND_REQUEST)  # a reply made of them is no answer

WROTE_CHARS = 1000
"""Characters of a reply that did not fit shown back to the model."""
NO_TYPED_CALL = "the reply was no call of {name}"
NOT_TYPED = "the answer has no typed form: {why}"
TYPED_NOTE = "[The answer is not in the requested form ({name}): {why}.]"
BUDGET_SPENT = "the question's budget is spent ({reason})"
STOPPED = "the call was stopped: {reason}"
CALL_FAILED = "the call failed: {error}"
NOT_MENDED = "{why}; not mended: {then}"
ANSWERED: Outcome = {"status": "answered"}


def with_typed_answer(
    setup: AgentSetup, state: AgentState, update: Mapping[str, Any]
) -> Body[Mapping[str, Any]]:
    """``update``, which ends the question, with its typed answer when the run has a
    response format (see the module docstring); without one, as it is (an earlier
    question's typed answer is cleared, so it is never read as this one's)."""
    return (yield from typed_for_run(setup.for_run(), state, update))


def typed_for_run(
    run: RunScope, state: AgentState, update: Mapping[str, Any]
) -> Body[Mapping[str, Any]]:
    """:func:`with_typed_answer` for ``run``, a run's scope already read."""
    schema = run.response_format
    after = state_after(state, update)
    if schema is None:
        kept = after.get("structured_response") is None or "structured_response" in update
        return update if kept else _typed(update, None)  # a hook's own value is this answer's
    if schema.in_loop and update.get("structured_response") is not None:
        return update  # the loop's own call gave it, as its strategy asks
    message = final_answer(after["messages"])
    answer = models_words(message) if message is not None else ""
    if message is None or no_answer_reason(answer):
        return _typed(update, None)
    value, records, why = yield from _typed_value(run, schema, after, answer)
    if why is None:
        return {**_typed(update, value), "trajectory": [*_trajectory(update), *records]}
    return _untyped(update, after, message, schema, why, records)


def _typed_value(
    run: RunScope, schema: AnswerSchema, state: AgentState, answer: str
) -> Body[tuple[Any, list[TrajectoryRecord], str | None]]:
    """The typed answer, the trajectory records it cost, and why there is none (``None``
    when there is one): a first call, and a second with what was wrong with the first."""
    turn = question_number(state["messages"])
    prompt: list[BaseMessage] = [
        SystemMessage(TYPED_SYSTEM.format(name=schema.name)),
        HumanMessage(
            TYPED_REQUEST.format(question=latest_request(state["messages"]), answer=answer)
        ),
    ]
    records: list[TrajectoryRecord] = []
    why = ""
    native = has_native_output(run.model)  # the first call only: the second is a tool call
    for attempt in range(2):
        spent = exhausted(
            replace(run.limits, max_tool_calls=None),
            question_spending({**state, "trajectory": [*state["trajectory"], *records]}),
        )
        if spent is not None:
            why = _also(why, BUDGET_SPENT.format(reason=spent.get("reason", "spent")))
            break
        try:
            request = ModelRequest(prompt=prompt, schema=schema.reply_model, native=native)
            reply = yield from call_model(run, request, state)
        except QuestionStopped as stop:
            why = _also(why, STOPPED.format(reason=stop.outcome.get("reason", "stopped")))
            records += [*stop.events, *stop.records]
            break
        except Exception as error:  # a provider's refusal must not cost the answer
            why = _also(why, CALL_FAILED.format(error=error_summary(error)))
            if native and attempt == 0:  # its own structured output refused: a tool call next
                native = False
                continue
            break
        native = False
        records += reply.events
        try:
            value = schema.validate(_arguments(reply, schema))
        except AnswerInvalid as invalid:
            why = str(invalid)
            prompt = [*prompt, HumanMessage(_mend(schema, why, reply))]
            continue
        return value, [*records, _record(turn, schema, "typed")], None
    return None, [*records, _record(turn, schema, "failed", why)], why


def _also(why: str, then: str) -> str:
    """Why there is no typed answer: what was wrong with the first reply, if there was one,
    and why it could not be mended."""
    return NOT_MENDED.format(why=why, then=then) if why else then


def _arguments(reply: ModelReply, schema: AnswerSchema) -> Any:
    """What the reply gave as the schema's arguments; :class:`AnswerInvalid` when it gave none."""
    if reply.parsed is not None:
        return written(reply.parsed)
    why = reply.event.get("unread") or NO_TYPED_CALL.format(name=schema.name)
    raise AnswerInvalid(str(why))


def _mend(schema: AnswerSchema, problems: str, reply: ModelReply) -> str:
    """The request that sends a reply which did not fit back, with what was wrong."""
    message = reply.message
    raw: Any = message.tool_calls[0]["args"] if message.tool_calls else message.text
    wrote = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    wrote = wrote if len(wrote) <= WROTE_CHARS else wrote[: WROTE_CHARS - 1] + "…"
    return MEND_REQUEST.format(name=schema.name, problems=problems, wrote=wrote or "(nothing)")


def _typed(update: Mapping[str, Any], value: Any) -> dict[str, Any]:
    return {**update, "structured_response": value}


def _trajectory(update: Mapping[str, Any]) -> Sequence[TrajectoryRecord]:
    return list(update.get("trajectory") or [])


def _untyped(
    update: Mapping[str, Any],
    after: AgentState,
    message: AIMessage,
    schema: AnswerSchema,
    why: str,
    records: Sequence[TrajectoryRecord],
) -> dict[str, Any]:
    """``update`` with no typed answer: the outcome incomplete (an incomplete one keeps its
    reason), ``why`` in its ``typed_error``, and the text answer as it was, its metadata
    saying the same outcome."""
    outcome: Outcome = {**(after.get("outcome") or ANSWERED)}
    if outcome["status"] == "answered":
        reason = NOT_TYPED.format(why=why)
        note = TYPED_NOTE.format(name=schema.name, why=why)
        outcome = {
            **outcome,
            "status": "incomplete",
            "reason": reason,
            "concluded": True,
            "note": note,
        }
    outcome = {**outcome, "typed_error": why}
    messages = list(update.get("messages") or [])
    own = bool(messages) and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls
    if own:  # the update's own answer
        messages[-1] = _marked(messages[-1], outcome)
    else:  # the answer is already in the state: written again, under its id
        messages.append(_marked(message, outcome))
    return {
        **_typed(update, None),
        "messages": messages,
        "outcome": outcome,
        "trajectory": [*_trajectory(update), *records],
    }


def _marked(message: BaseMessage, outcome: Outcome) -> BaseMessage:
    """``message`` with its metadata saying ``outcome``."""
    metadata = {**message.response_metadata, **answered(outcome)}
    return message.model_copy(update={"response_metadata": metadata})


def _record(
    turn: int, schema: AnswerSchema, status: str, why: str | None = None
) -> TrajectoryRecord:
    """The trajectory's ``typed_answer`` record: whether the answer was typed, and why not."""
    record: dict[str, Any] = {
        "kind": "typed_answer",
        "turn": turn,
        "schema": schema.name,
        "status": status,
    }
    if why is not None:
        record["reason"] = why
    return record
