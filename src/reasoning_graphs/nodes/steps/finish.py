"""``finish``: end a turn that ran out of budget or went in circles, honestly.

The model is asked once more, with tools switched off, to answer from what it
has. Its reply is kept as it wrote it; the outcome says the answer is
incomplete and carries a note with the reason and the evidence the run
gathered (shown after the answer), so a weak model's guess never hides a
tool's correct result. If even that call fails, or the question already made
its one call past a budget (a plan step or trial that concluded inside its
subgraph), there is no reply of the model's, and the note alone is the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal, TypeVar

from langchain_core.messages import AIMessage, HumanMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.guards.budget import may_conclude
from reasoning_graphs.nodes.guards.honest import incomplete_note
from reasoning_graphs.nodes.model.call import ModelReply, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.trajectory import thought_event
from reasoning_graphs.nodes.model.view import model_view
from reasoning_graphs.nodes.steps.answer_turn import tools_off
from reasoning_graphs.nodes.steps.prompts import ANSWER_NOW
from reasoning_graphs.question import successful_observations
from reasoning_graphs.state import AgentState, AgentUpdate, Outcome, ThoughtEvent

logger = logging.getLogger(__name__)


State = TypeVar("State", bound=AgentState)

AskFinal = Callable[[RunScope, State, str], Body[ModelReply]]
"""How a pattern asks its model for a last answer: (run, state, instruction) → reply."""


def ask_with_tools_off(run: RunScope, state: AgentState, instruction: str) -> Body[ModelReply]:
    """Native tool calling: the conversation so far, the instruction, and tool_choice "none"."""
    prompt = [
        *run.setup.system,
        *model_view(state["messages"], run.registry),
        HumanMessage(instruction),
    ]
    return (yield from call_model(run, tools_off(prompt, run.usable_tools(state)), state))


Evidence = Callable[[State], list[tuple[str, str]]]
"""What a run gathered, as (what was done, what it returned) pairs, latest last."""


def tool_evidence(state: AgentState) -> list[tuple[str, str]]:
    """The latest successful tool results of the turn."""
    return successful_observations(state["messages"])


def make_finish(
    setup: AgentSetup,
    ask: AskFinal[State] = ask_with_tools_off,
    evidence: Evidence[State] = tool_evidence,
) -> Callable[[State], Body[AgentUpdate]]:
    """Build the ``finish`` node: ``ask`` gets the model's last answer, ``evidence`` the facts."""

    def finish(state: State) -> Body[AgentUpdate]:
        run = setup.for_run()
        common: AgentState = state  # what every pattern's state has
        outcome: Outcome = common.get("outcome") or {"status": "incomplete", "reason": "stopped"}
        reason = outcome.get("reason", "stopped")
        logger.info("concluding the question: %s", reason)
        instruction = ANSWER_NOW.format(reason=reason)
        reply: ModelReply | None = None
        asked = may_conclude(state, run.limits)
        if asked:
            try:
                reply = yield from ask(run, state, instruction)
            except Exception:  # the evidence below still makes an honest answer
                reply = None
        note = incomplete_note(reason, evidence(state))
        outcome = {**outcome, "note": note}
        final = AIMessage(
            content=reply.message.content if reply else note,
            usage_metadata=reply.message.usage_metadata if reply else None,
            response_metadata=answered(outcome),
        )
        if not asked:  # no model call: nothing to count against the budgets
            return {"messages": [final], "outcome": outcome}
        event: ThoughtEvent
        if reply is None:  # the call failed, and still counts
            prompt = [*state["messages"], HumanMessage(instruction)]
            event = thought_event(state, reply=final, prompt=prompt, latency_ms=0.0)
        else:
            event = {**reply.event, "text": final.text}
        return {"messages": [final], "trajectory": [event], "outcome": outcome}

    return finish


def after_outcome(outcome: Outcome) -> Literal["finish", "__end__"]:
    """Where a turn with an outcome goes: an answer, or an incomplete answer already
    written (``concluded``), ends it; anything else is concluded honestly by ``finish``."""
    return "__end__" if outcome["status"] == "answered" or outcome.get("concluded") else "finish"
