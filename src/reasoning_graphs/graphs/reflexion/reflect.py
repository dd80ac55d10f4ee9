"""``reflect`` of Reflexion: turn a graded failure into a lesson for the next attempt.

The lesson is a typed reply — why the attempt fell short, and what to do
instead — so it reads the same from every model, the embedded one included.
It is appended to the state, where it outlives pauses and restarts; an
unreadable reply still yields a lesson: the grader's own feedback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.reflexion.memory import describe_lessons, lessons_so_far, trials_so_far
from reasoning_graphs.graphs.reflexion.prompts import (
    EARLIER_REFLECTIONS,
    REFLECT_REQUEST,
    REFLECT_SYSTEM,
)
from reasoning_graphs.graphs.reflexion.state import Lesson, ReflexionState
from reasoning_graphs.nodes.model_call import ModelRequest, call_model
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.turn import latest_request

ADDRESS_FEEDBACK = "Fix exactly what the feedback names."


class Reflection(BaseModel):
    """A self-reflection on an attempt that fell short."""

    diagnosis: str = Field(description="Why the attempt fell short; one or two sentences.")
    advice: str = Field(description="What the next attempt must do differently; concrete.")


def make_reflect(setup: AgentSetup) -> Callable[[ReflexionState], Body[dict[str, Any]]]:
    """Build the ``reflect`` node: one structured model call per failed trial."""

    def reflect(state: ReflexionState) -> Body[dict[str, Any]]:
        last = trials_so_far(state)[-1]
        earlier = lessons_so_far(state)
        request = REFLECT_REQUEST.format(
            task=latest_request(state["messages"]),
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
        return {"reflections": [lesson], "trajectory": [{**event, "trial": last["trial"]}]}

    return reflect
