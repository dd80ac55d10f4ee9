"""``reflect`` of Reflexion: turn a graded failure into a lesson for the next attempt.

The reflection reads how the attempt worked — each tool call with what it
returned, clipped and shown as data — not only its answer, because the
lesson is often in the work ("searched for the wrong name", "ignored the
calculator's result"). The lesson is a typed reply — why the attempt fell short, and what to do
instead — so it reads the same from every model, the embedded one included.
It is appended to the state, where it outlives pauses and restarts, and saved
in the store, if there is one, for later questions (:mod:`.lessons`); an
unreadable reply still yields a lesson: the grader's own feedback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.reflexion.lessons import save_lesson
from reasoning_graphs.graphs.reflexion.memory import (
    describe_lessons,
    lessons_so_far,
    trial_actions,
    trials_so_far,
)
from reasoning_graphs.graphs.reflexion.prompts import (
    ATTEMPT_WORK,
    CALL_LINE,
    CLIPPED,
    EARLIER_CALLS,
    EARLIER_REFLECTIONS,
    NO_TOOL_CALLS,
    REFLECT_REQUEST,
    REFLECT_SYSTEM,
)
from reasoning_graphs.graphs.reflexion.state import Lesson, ReflectUpdate, ReflexionState
from reasoning_graphs.nodes.guards.untrusted import as_data
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.question import describe_call, latest_request
from reasoning_graphs.state import EXECUTED, ActionEvent

ADDRESS_FEEDBACK = "Fix exactly what the feedback names."
SHOWN_CALLS = 12
"""The latest calls of an attempt its reflection sees; earlier ones are counted."""
OBSERVATION_CHARS = 400
"""How much of each observation the reflection sees."""


class Reflection(BaseModel):
    """A self-reflection on an attempt that fell short."""

    diagnosis: str = Field(description="Why the attempt fell short; one or two sentences.")
    advice: str = Field(description="What the next attempt must do differently; concrete.")


def make_reflect(setup: AgentSetup) -> Callable[[ReflexionState], Body[ReflectUpdate]]:
    """Build the ``reflect`` node: one structured model call per failed trial."""

    def reflect(state: ReflexionState) -> Body[ReflectUpdate]:
        last = trials_so_far(state)[-1]
        earlier = lessons_so_far(state)
        task = latest_request(state["messages"])
        request = REFLECT_REQUEST.format(
            task=task,
            work=describe_work(last["trial"], trial_actions(state, last["trial"])),
            trial=last["trial"],
            answer=last["answer"],
            score=last["score"],
            feedback=last["feedback"],
            earlier=EARLIER_REFLECTIONS.format(reflections=describe_lessons(earlier))
            if earlier
            else "",
        )
        prompt = [SystemMessage(REFLECT_SYSTEM), HumanMessage(request)]
        run = setup.for_run()
        reply = yield from call_model(run, ModelRequest(prompt=prompt, schema=Reflection), state)
        parsed, event = reply.parsed, reply.event
        if isinstance(parsed, Reflection):
            diagnosis, advice = parsed.diagnosis.strip(), parsed.advice.strip()
        else:
            diagnosis, advice = last["feedback"], ADDRESS_FEEDBACK
        lesson = Lesson(
            turn=last["turn"],
            trial=last["trial"],
            score=last["score"],
            diagnosis=diagnosis,
            advice=advice,
        )
        yield from save_lesson(run, lesson, task)
        return {"reflections": [lesson], "trajectory": [{**event, "trial": last["trial"]}]}

    return reflect


def describe_work(trial: int, actions: Sequence[ActionEvent]) -> str:
    """An attempt's tool calls, compact: each call, how it went, its result clipped, as data."""
    if not actions:
        return NO_TOOL_CALLS.format(trial=trial)
    shown = actions[-SHOWN_CALLS:]
    lines = (
        [EARLIER_CALLS.format(count=len(actions) - len(shown))] if len(shown) < len(actions) else []
    )
    first = len(actions) - len(shown) + 1
    for number, action in enumerate(shown, start=first):
        call = describe_call(action["tool"], action["args"])
        observation = as_data(_clip(action["observation"]), source=call)
        lines.append(
            CALL_LINE.format(number=number, call=call, how=_how(action), observation=observation)
        )
    return ATTEMPT_WORK.format(trial=trial, steps="\n".join(lines))


def _how(action: ActionEvent) -> str:
    """``success`` or ``error`` for a call that ran; why not, for one that did not."""
    decision = action["decision"]
    return action["status"] if decision in EXECUTED else f"not run: {decision}"


def _clip(text: str) -> str:
    if len(text) <= OBSERVATION_CHARS:
        return text
    return text[:OBSERVATION_CHARS] + CLIPPED.format(total=len(text))
