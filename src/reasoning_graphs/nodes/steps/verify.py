"""``verify``: the model checks its answer's claims against what the tools returned.

Opt-in (``verify=True``; CLI ``--verify``): once a question is answered, one
more model call lists the answer's claims, each ``backed`` — with the words of
a tool observation that say it, quoted — or ``inferred`` (no observation says
it). The runtime then looks each quote up in the question's observations
(spacing, case and surrounding quote marks aside): a quote that no observation
holds is not accepted, and its claim is marked inferred with a note saying so.

The check never touches the answer. Its result goes into the question's
outcome (``outcome["verification"]``) and the trajectory (a ``verify`` record
besides the call's thought event). Where it cannot be made it says why:
*skipped* without a call (a budget already spent, no observation to check
against — Chain-of-Thought's questions have none, so no call is spent on
claims that could only be inferred — no answer, or an answer that is a tool's
own result), or *failed* after one (a reply that cannot be read, a call stopped
by a budget or a timeout, a provider error).

The free, offline check is the grounding report
(:mod:`~reasoning_graphs.nodes.grounding.report`); this one costs a model call
and reads claims a regular expression cannot (a name in other words, a
relation between facts). A backed quote proves that the words are in an
observation, not that they say what the claim says.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, TypeVar

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from reasoning_graphs.effects import Body
from reasoning_graphs.errors import error_summary
from reasoning_graphs.metadata import RETURN_DIRECT
from reasoning_graphs.nodes.grounding.report import (
    Observation,
    final_answer,
    gives_answer,
    models_words,
    question_observations,
    report,
    reported,
    state_after,
)
from reasoning_graphs.nodes.guards.budget import exhausted, question_spending
from reasoning_graphs.nodes.guards.honest import no_answer_reason, own_texts
from reasoning_graphs.nodes.guards.stop import QuestionStopped
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE, as_data
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.nodes.steps.typed_answer import with_typed_answer
from reasoning_graphs.question import latest_request, question_number
from reasoning_graphs.state import (
    AgentState,
    CheckedClaim,
    Outcome,
    TrajectoryRecord,
    Verification,
)

State = TypeVar("State", bound=AgentState)

VERIFY_SYSTEM = f"""\
You check an answer against what tools returned. List each claim the answer makes \
(a fact, a number, a name, a date), in a few words. Mark a claim "backed" when one \
of the observations says it, and give as its quote the observation's exact words \
that say it, copied character for character. Mark it "inferred" when no observation \
says it (it was worked out, assumed or taken from the question), with an empty quote. \
Do not judge whether a claim is true; only whether an observation says it. {DATA_RULE}"""

VERIFY_REQUEST = """\
Question: {question}

Observations:
{observations}

Answer to check:
{answer}"""
own_texts(VERIFY_SYSTEM, VERIFY_REQUEST)  # a reply made of them is no answer

MAX_CLAIMS = 12
CLAIM_CHARS = 160
QUOTE_CHARS = 300
"""Bounds the typed reply's schema declares: a claim is a few words, a quote a sentence or two."""
OBSERVATION_CHARS = 4000
"""Characters of each observation the check's prompt shows (quotes are looked up in all)."""
QUOTE_MARKS = "\"'“”‘’«»「」『』…. \t\n"
"""What a model puts around a quote that the observation need not hold."""

NO_ANSWER = "the question ended without an answer to check"
DIRECT_ANSWER = "the answer is a tool's own result, word for word"
BUDGET_SPENT = "the question's budget is spent ({reason}); the check would exceed it"
NO_ROOM = "the check's prompt (~{prompt} tokens) does not fit in the {left} tokens left"
NO_OBSERVATIONS = "no tool observation in this question to check the claims against"
UNREADABLE = "the check's reply could not be read ({why})"
STOPPED = "the check was stopped: {reason}"
CALL_FAILED = "the check's model call failed: {error}"
ANSWERED: Outcome = {"status": "answered"}
"""The outcome of a question whose step wrote none: answered, as the command line reads it."""
NOT_IN_OBSERVATIONS = "its quote is in no observation of this question"
NO_QUOTE = "marked backed without a quote"


# The schema bounds the lengths, so that a small model held to it by a grammar closes its
# strings instead of writing on to its length cap; a longer reply is still read. The class
# docstrings are the descriptions the model reads.
class ClaimCheck(BaseModel):
    """One claim of the answer and what backs it."""

    claim: str = Field(
        description="One claim the answer makes, in a few words.",
        json_schema_extra={"maxLength": CLAIM_CHARS},
    )
    status: Literal["backed", "inferred"] = Field(
        description="backed: an observation says it; inferred: no observation says it."
    )
    quote: str = Field(
        default="",
        description="For a backed claim, the observation's exact words that say it; else empty.",
        json_schema_extra={"maxLength": QUOTE_CHARS},
    )


class AnswerCheck(BaseModel):
    """The answer's claims, each backed by an observation's words or inferred."""

    claims: list[ClaimCheck] = Field(
        description="Every claim of the answer, in order.",
        json_schema_extra={"maxItems": MAX_CLAIMS},
    )


def verified(
    setup: AgentSetup,
    make_body: Callable[[State], Body[Mapping[str, Any]]],
    ends: Callable[[Mapping[str, Any]], bool] = gives_answer,
) -> Callable[[State], Body[Mapping[str, Any]]]:
    """``make_body`` whose update, when it ``ends`` the question, carries the grounding report
    (:func:`~reasoning_graphs.nodes.grounding.report.reported`), with ``verify`` on the
    model's check of the answer, and with a response format the typed answer
    (:mod:`~reasoning_graphs.nodes.steps.typed_answer`)."""
    make_reported = reported(make_body, ends)

    def body(state: State) -> Body[Mapping[str, Any]]:
        update = yield from make_reported(state)
        if not ends(update):
            return update
        return (yield from _closed(setup, state, update))

    return body


def make_report(setup: AgentSetup) -> Callable[[AgentState], Body[Mapping[str, Any]]]:
    """The ``report`` step, after a question's answer: its grounding report, with ``verify``
    on the model's check of the answer, and with a response format the typed answer."""

    def body(state: AgentState) -> Body[Mapping[str, Any]]:
        return (yield from _closed(setup, state, report(state)))

    return body


def _closed(
    setup: AgentSetup, state: AgentState, update: Mapping[str, Any]
) -> Body[Mapping[str, Any]]:
    """``update``, which ends the question, with what follows an answer: its check, then
    its typed form."""
    checked = yield from with_verification(setup, state, update)
    return (yield from with_typed_answer(setup, state, checked))


def with_verification(
    setup: AgentSetup, state: AgentState, update: Mapping[str, Any]
) -> Body[Mapping[str, Any]]:
    """``update``, which ends the question, with the check of its answer when the run's
    ``verify`` is on (else as it is, at no cost)."""
    run = setup.for_run()
    if not run.limits.verify:
        return update
    after = state_after(state, update)
    verification, records = yield from check_answer(run, after)
    return _with_check(update, after, verification, records)


def with_direct_answer(
    setup: AgentSetup, state: AgentState, update: Mapping[str, Any]
) -> Body[Mapping[str, Any]]:
    """``update``, which answers the question with a tool's own result, saying (when the
    run's ``verify`` is on) that there was nothing to check: the answer is an observation;
    with a response format, it is typed like any answer."""
    if setup.for_run().limits.verify:
        skipped = Verification(status="skipped", claims=[], reason=DIRECT_ANSWER)
        after = state_after(state, update)
        record = _record(question_number(after["messages"]), skipped)
        update = _with_check(update, after, skipped, [record])
    return (yield from with_typed_answer(setup, state, update))


def _with_check(
    update: Mapping[str, Any],
    after: AgentState,
    verification: Verification,
    records: Sequence[TrajectoryRecord],
) -> Mapping[str, Any]:
    """``update`` with the check in its outcome and its records in the trajectory."""
    outcome: Outcome = {**(after.get("outcome") or ANSWERED), "verification": verification}
    trajectory = [*(update.get("trajectory") or []), *records]
    return {**update, "outcome": outcome, "trajectory": trajectory}


def check_answer(
    run: RunScope, state: AgentState
) -> Body[tuple[Verification, list[TrajectoryRecord]]]:
    """The check of the answer ``state`` has just given, and the trajectory records it costs
    (the call's thought events, then the ``verify`` record)."""
    turn = question_number(state["messages"])
    observations = question_observations(
        state["messages"], state.get("trajectory") or [], state.get("observations") or {}
    )
    prompt = _prompt(state, _answer_text(state), observations)
    skip = _reason_to_skip(run, state, observations, prompt)
    if skip is not None:
        skipped = Verification(status="skipped", claims=[], reason=skip)
        return skipped, [_record(turn, skipped)]
    request = ModelRequest(prompt=prompt, schema=AnswerCheck)
    try:
        reply = yield from call_model(run, request, state)
    except QuestionStopped as stop:
        reason = STOPPED.format(reason=stop.outcome.get("reason", "stopped"))
        failed = Verification(status="failed", claims=[], reason=reason)
        return failed, [*stop.events, *stop.records, _record(turn, failed)]
    except Exception as error:  # a provider's refusal must not cost the answer
        reason = CALL_FAILED.format(error=error_summary(error))
        failed = Verification(status="failed", claims=[], reason=reason)
        return failed, [_record(turn, failed)]
    if not isinstance(reply.parsed, AnswerCheck):
        why = reply.event.get("unread") or "no typed reply"
        failed = Verification(status="failed", claims=[], reason=UNREADABLE.format(why=why))
        return failed, [*reply.events, _record(turn, failed)]
    claims = [checked_claim(item, observations) for item in reply.parsed.claims]
    verification = Verification(status="checked", claims=claims)
    return verification, [*reply.events, _record(turn, verification)]


def checked_claim(item: ClaimCheck, observations: Sequence[Observation]) -> CheckedClaim:
    """``item`` as the runtime accepts it: backed only where an observation holds its quote."""
    text = " ".join(item.claim.split())
    if item.status == "inferred":
        return CheckedClaim(text=text, status="inferred", quote="", call_id=None, tool=None)
    quote = _plain(item.quote)
    if not any(ch.isalnum() for ch in quote):
        return _not_backed(text, item.quote, NO_QUOTE)
    for observation in observations:
        if quote in _plain(observation.text):
            return CheckedClaim(
                text=text,
                status="backed",
                quote=item.quote.strip(QUOTE_MARKS),
                call_id=observation.call_id,
                tool=observation.tool,
            )
    return _not_backed(text, item.quote, NOT_IN_OBSERVATIONS)


def _not_backed(text: str, quote: str, why: str) -> CheckedClaim:
    return CheckedClaim(
        text=text, status="inferred", quote="", call_id=None, tool=None, note=f"{why}: {quote!r}"
    )


def _plain(text: str) -> str:
    """Text as quotes are compared: HTML entities decoded (some servers escape ``<``),
    spacing made single, case folded, quote marks trimmed."""
    return " ".join(html.unescape(text).split()).casefold().strip(QUOTE_MARKS)


def _reason_to_skip(
    run: RunScope,
    state: AgentState,
    observations: Sequence[Observation],
    prompt: Sequence[BaseMessage],
) -> str | None:
    """Why no check call is made for this answer, if none is. The budgets the call would
    spend are asked (model calls, tokens, time; tool calls are none of its business), and
    a prompt that alone would use up the tokens left is not sent."""
    outcome = state.get("outcome") or ANSWERED
    message = final_answer(state["messages"])
    answer = _answer_text(state)
    if outcome["status"] != "answered" or message is None or no_answer_reason(answer):
        return NO_ANSWER
    if message.response_metadata.get(RETURN_DIRECT):
        return DIRECT_ANSWER
    if not observations:
        return NO_OBSERVATIONS
    spending = question_spending(state)
    spent = exhausted(replace(run.limits, max_tool_calls=None), spending)
    if spent is not None:
        return BUDGET_SPENT.format(reason=spent.get("reason", "spent"))
    budget = run.limits.token_budget
    if budget is None:
        return None
    cost = estimate_tokens(prompt)
    if spending.tokens + cost >= budget:
        return NO_ROOM.format(prompt=cost, left=budget - spending.tokens)
    return None


def _answer_text(state: AgentState) -> str:
    message = final_answer(state["messages"])
    return models_words(message) if message is not None else ""


def _prompt(
    state: AgentState, answer: str, observations: Sequence[Observation]
) -> list[BaseMessage]:
    shown = "\n\n".join(
        as_data(item.text[:OBSERVATION_CHARS], source=f"{item.tool} [{item.call_id}]")
        for item in observations
    )
    request = VERIFY_REQUEST.format(
        question=latest_request(state["messages"]), observations=shown, answer=answer
    )
    return [SystemMessage(VERIFY_SYSTEM), HumanMessage(request)]


def _record(turn: int, verification: Verification) -> TrajectoryRecord:
    """The trajectory's ``verify`` record: the check's status, counts and reason."""
    claims = verification["claims"]
    record: dict[str, Any] = {
        "kind": "verify",
        "turn": turn,
        "status": verification["status"],
        "backed": sum(claim["status"] == "backed" for claim in claims),
        "inferred": sum(claim["status"] == "inferred" for claim in claims),
    }
    if "reason" in verification:
        record["reason"] = verification["reason"]
    return record
