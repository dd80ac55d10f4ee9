"""``reflect``: the model's short look back at a tool round, kept for the steps after it.

In the ReAct loop, ``reflect_every=N`` asks the model after every N-th tool round
of a question, and ``reflect_on_failure`` after any round with a failed call (a
tool error, a refused or invalid call, a timeout): did the latest observations
answer what the thought asked for, and what should change? Two options, not one,
because they answer different needs: a cadence for long runs, and a second look
where something went wrong, whatever the cadence. A run may make reflection more
frequent or turn it on, never rarer or off.

The reflection is a model call like any other: it goes through the model-call
seam, counts against ``max_model_calls`` and ``token_budget``, is stopped by the
timeouts, and leaves a thought event marked ``reflection``. Its text never joins
the conversation: the question's latest reflection is added at the end of every
later prompt of ``think``, labelled as the model's own note (:func:`with_reflection`),
so a tool result stays the tool's. A reflection is skipped when the model-call
budget leaves no call after it: the step it would inform comes first.

A round off the cadence with nothing failed goes straight back to ``think``, as
without the option: a plain round still costs two steps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import Body
from reasoning_graphs.history import Fold, folded
from reasoning_graphs.metadata import decision_of
from reasoning_graphs.nodes.guards.advice import with_note
from reasoning_graphs.nodes.guards.budget import budget_stop_after, question_spending
from reasoning_graphs.nodes.guards.loops import tool_rounds
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE, as_data
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.option_bounds import LowerOnly
from reasoning_graphs.question import (
    describe_call,
    last_ai_message,
    latest_request,
    question_answers,
    question_number,
)
from reasoning_graphs.state import EXECUTED, AgentState, AgentUpdate, ThoughtEvent
from reasoning_graphs.tools.output import content_text

REFLECT = "reflect"
"""The loop's node."""
REFLECTION = "reflection"
"""The key that marks a reflection's thought event."""

REFLECT_SYSTEM = (
    "You review the latest step of an agent that answers a question with tools. "
    "Reply in at most two sentences of plain text; call no tool and do not answer the "
    "question yourself. " + DATA_RULE
)
REFLECT_REQUEST = """\
Question: {question}

The step's thought: {thought}

What it called, and what came back:
{calls}

Did these observations answer what the thought asked for? Say what they settled, and \
what the next step should change (or that nothing needs to)."""
CALL_LINE = "{number}. {call}: {how}\n{observation}"
NO_THOUGHT = "(none written)"
NOTE = "(Your own reflection on the latest tool results, not from a tool or the user: {text})"
OBSERVATION_CHARS = 600
"""How much of each observation the reflection sees."""
NOTE_CHARS = 800
"""How much of a reflection later prompts show: asked for two sentences, a model that
writes on to its length limit would otherwise fill every later prompt with it (its
thought event keeps it whole)."""


@dataclass(frozen=True)
class Reflection:
    """When a run reflects: every ``every`` tool rounds (``None``: not by count), and
    after a round with a failed call (``on_failure``)."""

    every: int | None = None
    on_failure: bool = False

    @classmethod
    def for_run(cls, run: RunScope) -> Reflection:
        """The graph's choice, made more frequent or turned on by the run's options."""
        every = run.option("reflect_every", run.setup.reflect_every)
        on_failure = run.option("reflect_on_failure", run.setup.reflect_on_failure)
        return cls(every=every, on_failure=bool(on_failure))

    def due(self, state: Mapping[str, Any], limits: Limits) -> bool:
        """Whether the round just finished calls for a reflection, and the budget of model
        calls leaves one after it."""
        if self.every is None and not self.on_failure:
            return False
        rounds = len(tool_rounds(state["messages"]))
        by_count = self.every is not None and rounds > 0 and rounds % self.every == 0
        if not (by_count or (self.on_failure and latest_round_failed(state))):
            return False
        calls = limits.max_model_calls
        return calls is None or question_spending(state).calls + 1 < calls


def latest_round_failed(state: Mapping[str, Any]) -> bool:
    """Whether a call of the latest model turn has an error for its observation (it
    failed, timed out, or was refused, blocked or invalid)."""
    return any(answer.status == "error" for answer in _latest_answers(state["messages"]))


def make_reflect(setup: AgentSetup) -> Callable[[AgentState], Body[AgentUpdate]]:
    """Build the ``reflect`` node: one model call, no tools, its text kept in its event;
    a budget it spends ends the question as any spent budget does."""
    if setup.reflect_every is not None:  # as a run's value is checked
        LowerOnly(least=1).check("reflect_every", setup.reflect_every)

    def reflect(state: AgentState) -> Body[AgentUpdate]:
        run = setup.for_run()
        prompt = reflection_prompt(state["messages"])
        reply = yield from call_model(run, ModelRequest(prompt=prompt), state)
        event = ThoughtEvent(**reply.event, reflection=True)
        spent = budget_stop_after(state, run.limits, [event])
        if spent:
            return {"trajectory": [event], "outcome": spent, "to_run": []}
        return {"trajectory": [event]}

    return reflect


def reflection_prompt(messages: Sequence[AnyMessage]) -> list[BaseMessage]:
    """The question, the latest thought, and its calls with what came back (as data)."""
    turn = last_ai_message(messages)
    answers = _latest_answers(messages)
    calls = {call["id"]: call for call in turn.tool_calls}
    lines = []
    for number, answer in enumerate(answers, start=1):
        call = calls.get(answer.tool_call_id)
        shown = describe_call(call["name"], call["args"]) if call else answer.name or "a call"
        text = _clip(content_text(answer.content))
        lines.append(
            CALL_LINE.format(
                number=number, call=shown, how=_how(answer), observation=as_data(text, source=shown)
            )
        )
    request = REFLECT_REQUEST.format(
        question=latest_request(messages),
        thought=turn.text.strip() or NO_THOUGHT,
        calls="\n".join(lines),
    )
    return [SystemMessage(REFLECT_SYSTEM), HumanMessage(request)]


def _note_reflection(latest: dict[int, str], event: Mapping[str, Any]) -> dict[int, str]:
    if event.get(REFLECTION) and str(event.get("text") or "").strip():
        latest[event["turn"]] = str(event["text"]).strip()
    return latest


LATEST_REFLECTIONS = Fold("latest reflections", dict, _note_reflection)
"""The text of each question's latest reflection, by question (``turn``)."""


def latest_reflection(state: Mapping[str, Any]) -> str | None:
    """The text of the question's latest reflection, if it made one (a running fold: every
    model step asks, and a long question's trajectory is long)."""
    latest = folded(state.get("trajectory"), LATEST_REFLECTIONS)
    return latest.get(question_number(state["messages"]))


def with_reflection(prompt: Sequence[BaseMessage], state: Mapping[str, Any]) -> list[BaseMessage]:
    """``prompt`` with the question's latest reflection at its end, labelled as the model's
    own note; as it is when there is none."""
    text = latest_reflection(state)
    if text is None:
        return list(prompt)
    return with_note(prompt, NOTE.format(text=_clip(text, NOTE_CHARS)))


def _latest_answers(messages: Sequence[AnyMessage]) -> list[ToolMessage]:
    """The observations of the latest model turn's calls (well-formed or not), in call order."""
    turn = last_ai_message(messages)
    answers = question_answers(messages)
    ids = [call["id"] for call in turn.tool_calls] + [
        call["id"] for call in turn.invalid_tool_calls
    ]
    return [answers[i] for i in ids if i is not None and i in answers]


def _how(answer: ToolMessage) -> str:
    decision = decision_of(answer)
    if decision is not None and decision not in EXECUTED:
        return f"not run ({decision})"
    return "failed" if answer.status == "error" else "succeeded"


def _clip(text: str, limit: int = OBSERVATION_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + " …"
