"""Loop guards: signs, read from the messages, that tool rounds go nowhere.

A round is one message of tool calls (a model's turn, or a plan's wave) with
the observations that answer it. Four guards read the rounds of the current
question; their thresholds are run options (:class:`~reasoning_graphs.context.Limits`):

- :func:`repeated_failure` (``repeat_failure_limit``): the same call, same
  arguments, failed in the rounds just before — ``approve`` stops the run
  instead of running it again, for stateful tools too.
- :func:`empty_streak` (``empty_result_streak``): the latest results in a row
  were empty or "not found" — the model's next prompt advises it to change
  strategy (:mod:`~reasoning_graphs.nodes.guards.advice`); the observations stay the tool's.
- :func:`stale_rounds` (``stale_round_limit``): the latest rounds in a row
  brought no observation that differs from every earlier one — ``observe``
  ends the loop and ``finish`` asks the model once to summarise and answer.
- :func:`repeat_stop` (``repeat_round_limit``): the latest rounds in a row were
  made only of calls of pure tools answered from an earlier identical call —
  nothing ran, and nothing could change — so the model asks for what it already
  has; its next call is made with tools off, for its answer
  (:mod:`~reasoning_graphs.nodes.steps.answer_turn`). One such round alone
  changes nothing.

Every other call the model makes runs, repeats included, so the guards judge
progress by what calls return, not by what they ask: a status polled until it
changes brings something new each time it changes; one that comes back the same
again and again is a stale round, and ends the loop after ``stale_round_limit``
(or a budget ends it first). A call that returns what its identical earlier
call returned is also pointed out to the model in its next prompt
(:func:`same_results`, as advice).

A transient failure (a tool's own timeout or connection error) is retried once
where the call runs (:mod:`reasoning_graphs.tools.execute`), and a result that
still failed that way is never reused (:func:`~reasoning_graphs.metadata.failed_transiently`).

Where the guards apply:

- ``react``, ``react_text``: all of them — their loop is ``approve`` → ``act`` → ``observe``.
- ``plan_execute``, ``reflexion``: all of them, within each plan step and each
  trial, which run the ReAct loop as a subgraph. A step or trial starts from
  the request without the earlier tool traffic, so its rounds are its own.
- ``rewoo``: all of them, a wave of the plan being a round. The plan is written
  before anything runs, so a repeat is a later step that comes to the same call
  as a failed one; the hint reaches the solver, and stale waves go to ``finish``.
- ``llm_compiler``, ``lats``: the retry of a transient failure, and its mark
  against reuse, since every call runs through ``execute_call``; and the
  advice, in the joiner's prompt and in each expansion's prompt (read along the
  branch). The round guards that end a loop do not, because neither runs this
  loop — LLM Compiler's rounds are planning rounds its joiner ends (bounded by
  its round limit), and LATS explores separate branches (bounded by its
  expansions), so "the round before" has no single meaning there.
- ``cot``: none; it calls no tools.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from reasoning_graphs.history import Fold, folded
from reasoning_graphs.metadata import (
    acted,
    decision_of,
    failed_transiently,
)
from reasoning_graphs.question import call_signature, describe_call
from reasoning_graphs.state import EXECUTED, Outcome
from reasoning_graphs.tools.output import content_text

REPEATED_FAILURE = (
    "{call} was proposed again after it failed in {rounds} (last error: {error}); "
    "stopped instead of running it again"
)
ROUND_BEFORE = "the round before"
ROUNDS_BEFORE = "the {count} rounds before"
STOPPED_CALL = "Not run: the run stopped because {reason}."
STALE_ROUNDS = "{rounds} rounds in a row brought no new information; asked to summarise and answer"
REPEATED_ONLY = (
    "the model repeated {calls} in {rounds} rounds in a row, each answered from the identical "
    "earlier call of a pure tool, instead of answering"
)
ERROR_CHARS = 160
EMPTY_TEXTS = frozenset({"", "[]", "{}", "()", "null", "none", "nil", '""', "''", "n/a"})
NOTHING_FOUND = re.compile(
    r"\b(not found|no results?|no matches|no match|nothing found|found nothing|0 results)\b"
    r"|未找到|找不到|没有结果|无结果|没有找到",
    re.IGNORECASE,
)
SHORT_REPLY_CHARS = 200
"""Only a short reply saying "not found" is empty: a long one says more than that."""

OBSERVED = EXECUTED | {"reused", "responded"}
"""Decisions under which an observation carries a result (the tool's, reused, or a person's)."""
FAILED_AS_PROPOSED = OBSERVED | {"invalid"}
"""Decisions under which an error is the call's own: it failed, or its arguments cannot run,
and proposing it again as it is fails again."""


class Round(NamedTuple):
    """One message of tool calls and the observations answering it, in message order."""

    message: AIMessage
    answers: list[ToolMessage]


class _Rounds:
    """The question's rounds so far, and how many of them in a row, before the latest,
    brought nothing new (the latest may still be answered)."""

    def __init__(self) -> None:
        self.rounds: list[Round] = []
        self.round_of: dict[str, int] = {}
        self.seen: set[str] = set()
        self.stale_before_latest = 0
        self.late_answer = False  # an answer to a closed round: count staleness afresh
        self.results: dict[str, str] = {}  # signature → what it last returned, closed rounds


def _next_round(rounds: _Rounds, message: AnyMessage) -> _Rounds:
    if isinstance(message, HumanMessage):
        return _Rounds()
    if isinstance(message, AIMessage) and message.tool_calls:
        if rounds.rounds:  # the latest round is closed: its texts join those seen
            rounds.stale_before_latest = _after_round(rounds.rounds[-1], rounds)
            rounds.results.update((sig, text) for sig, _, text in _ran(rounds.rounds[-1]))
        rounds.rounds.append(Round(message, []))
        rounds.round_of.update({c["id"] or "": len(rounds.rounds) - 1 for c in message.tool_calls})
    elif isinstance(message, ToolMessage) and message.tool_call_id in rounds.round_of:
        number = rounds.round_of[message.tool_call_id]
        rounds.late_answer |= number != len(rounds.rounds) - 1
        rounds.rounds[number].answers.append(message)
    return rounds


ROUNDS = Fold("rounds", _Rounds, _next_round)


def tool_rounds(messages: Sequence[AnyMessage]) -> list[Round]:
    """The rounds of the current question, in order (read only)."""
    return folded(messages, ROUNDS).rounds


def _ran(round_: Round) -> list[tuple[str, ToolCall, str]]:
    """Each call of ``round_`` that ran, with its signature and what it returned."""
    calls = {call["id"]: call for call in round_.message.tool_calls}
    return [
        (call_signature(call["name"], call["args"]), call, content_text(answer.content))
        for answer in round_.answers
        if decision_of(answer) in EXECUTED and (call := calls.get(answer.tool_call_id))
    ]


def same_results(messages: Sequence[AnyMessage]) -> list[ToolCall]:
    """The calls of the latest round that ran and returned exactly what the identical call
    returned when it last ran, earlier in the question (a status that has not changed)."""
    rounds = folded(messages, ROUNDS)
    if not rounds.rounds or not rounds.results:
        return []
    return [
        call
        for signature, call, text in _ran(rounds.rounds[-1])
        if rounds.results.get(signature) == text
    ]


def repeated_failure(rounds: Sequence[Round], call: ToolCall, limit: int) -> str | None:
    """Why the run stops rather than make ``call`` again, if it failed in the latest rounds.

    ``rounds`` are the rounds before the one proposing ``call``. With a limit of
    two, one failure in the round just before is enough: the second identical
    round would be the repeat. A transient failure does not count — it may
    pass, so it runs again (a service that stays down brings no new
    information, and :func:`stale_rounds` ends that loop).
    """
    signature = call_signature(call["name"], call["args"])
    needed = max(limit - 1, 1)
    failures: list[ToolMessage] = []
    for earlier in reversed(rounds):
        failure = _failure_of(earlier, signature)
        if failure is None:
            break
        failures.append(failure)
    if len(failures) < needed:
        return None
    error = " ".join(content_text(failures[0].content).split())
    error = error if len(error) <= ERROR_CHARS else error[: ERROR_CHARS - 1] + "…"
    shown = describe_call(call["name"], call["args"])
    when = ROUND_BEFORE if len(failures) == 1 else ROUNDS_BEFORE.format(count=len(failures))
    return REPEATED_FAILURE.format(call=shown, rounds=when, error=error)


def _failure_of(round_: Round, signature: str) -> ToolMessage | None:
    """The observation of ``round_`` in which the call ``signature`` failed, if any."""
    calls = {call["id"]: call for call in round_.message.tool_calls}
    for answer in round_.answers:
        call = calls.get(answer.tool_call_id)
        if (
            call is not None
            and answer.status == "error"
            and decision_of(answer) in FAILED_AS_PROPOSED
            and not failed_transiently(answer)  # it may pass: running it again is the point
            and call_signature(call["name"], call["args"]) == signature
        ):
            return answer
    return None


def is_empty_result(message: ToolMessage) -> bool:
    """Whether a successful observation holds nothing: blank, empty data, or "not found"."""
    if message.status != "success":
        return False
    text = content_text(message.content).strip()
    if text.lower() in EMPTY_TEXTS:
        return True
    return len(text) <= SHORT_REPLY_CHARS and NOTHING_FOUND.search(text) is not None


def empty_streak(rounds: Sequence[Round]) -> int:
    """How many of the latest results in a row were empty (calls that did not run are passed)."""
    streak = 0
    for round_ in reversed(rounds):
        for answer in reversed(round_.answers):
            if decision_of(answer) not in OBSERVED:
                continue
            if not is_empty_result(answer):
                return streak
            streak += 1
    return streak


def _new_texts(round_: Round) -> list[str]:
    """What each result of ``round_`` brings: its text, or for a stateful call that ran and
    succeeded a key of its own (it acted, whatever it said)."""
    return [
        f"\0acted {a.tool_call_id}" if acted(a) else content_text(a.content)
        for a in round_.answers
        if decision_of(a) in OBSERVED - {"reused"}
    ]


def _after_round(round_: Round, rounds: _Rounds) -> int:
    """The stale streak once ``round_`` is counted; its texts join those seen."""
    texts = _new_texts(round_)
    stale = 0 if any(text not in rounds.seen for text in texts) else rounds.stale_before_latest + 1
    rounds.seen.update(texts)
    return stale


def stale_rounds(rounds: Sequence[Round]) -> int:
    """How many of the latest rounds in a row brought no new information.

    A round brings some when one of its results (the tool's or a person's) differs
    from every earlier result of the question, or when a stateful call of it ran and
    succeeded (it changed something, whatever it said); a reused, rejected, blocked
    or skipped call brings none.
    """
    seen: set[str] = set()
    stale = 0
    for round_ in rounds:
        texts = _new_texts(round_)
        stale = 0 if any(text not in seen for text in texts) else stale + 1
        seen.update(texts)
    return stale


def _stale_now(messages: Sequence[AnyMessage]) -> int:
    """:func:`stale_rounds` of the question, reading only the latest round again."""
    rounds = folded(messages, ROUNDS)
    if rounds.late_answer:
        return stale_rounds(rounds.rounds)
    if not rounds.rounds:
        return 0
    texts = _new_texts(rounds.rounds[-1])
    return 0 if any(text not in rounds.seen for text in texts) else rounds.stale_before_latest + 1


def stale_stop(state: Mapping[str, Any], limit: int) -> Outcome | None:
    """An incomplete outcome once ``limit`` rounds in a row brought nothing new."""
    stale = _stale_now(state["messages"])
    if stale < limit:
        return None
    return {"status": "incomplete", "reason": STALE_ROUNDS.format(rounds=stale)}


def repeat_stop(state: Mapping[str, Any], limit: int) -> Outcome | None:
    """An incomplete outcome once the latest ``limit`` rounds in a row were made only of
    calls of pure tools answered from an earlier identical call: nothing ran and nothing
    could change. Its reason is the answer turn's, should that turn give no words
    (:mod:`~reasoning_graphs.nodes.steps.answer_turn`)."""
    rounds = tool_rounds(state["messages"])
    streak = 0
    for round_ in reversed(rounds):
        calls = round_.message.tool_calls
        answers = round_.answers
        if len(answers) < len(calls) or not all(decision_of(a) == "reused" for a in answers):
            break
        streak += 1
    if streak < limit:
        return None
    latest = rounds[-1].message.tool_calls
    shown = ", ".join(describe_call(call["name"], call["args"]) for call in latest)
    return {"status": "incomplete", "reason": REPEATED_ONLY.format(calls=shown, rounds=streak)}
