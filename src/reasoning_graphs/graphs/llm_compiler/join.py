"""``join``: one model call that answers from the rounds' results, or asks for another round.

The joiner sees the conversation and every task of the question with its
result. It answers, or — when something the answer needs is missing — asks
to replan with the reason, which the next plan call reads. Rounds are
bounded: when the bound or a budget is reached, the node sets an incomplete
outcome and ``finish`` gives an honest answer from the evidence. It also
serves ``finish`` as the way to ask for that last answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from pydantic import BaseModel, Field

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.llm_compiler.dag import (
    JOIN_KIND,
    RUNTIME,
    render_plan,
    rounds_report,
    rounds_run,
)
from reasoning_graphs.graphs.llm_compiler.prompts import (
    JOIN_REPLAN_NOTE,
    JOIN_TEXT_FORMAT,
    JOINER_INSTRUCTIONS,
    NO_RESULTS,
    RESULTS_REPORT,
)
from reasoning_graphs.graphs.llm_compiler.state import LlmCompilerState
from reasoning_graphs.metadata import mark
from reasoning_graphs.nodes.guards.advice import advice_for, advised
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.plan import closing_prompt
from reasoning_graphs.state import AgentUpdate, Outcome
from reasoning_graphs.tools.registry import ToolRegistry

REPLAN_LINE = re.compile(r"^\s*replan\s*[:(]\s*(.*?)\)?\s*$", re.IGNORECASE | re.MULTILINE)
ROUNDS_SPENT = "the joiner still wanted another round after {rounds} round(s) ({reason})"


class JoinDecision(BaseModel):
    """The joiner's verdict on a round."""

    replan: bool = Field(
        default=False,
        description="True only when the answer needs something missing that more tool calls "
        "could get.",
    )
    answer: str = Field(default="", description="The final answer; empty when replanning.")
    reason: str = Field(default="", description="When replanning: what is missing and why.")


def joiner_prompt(
    setup: AgentSetup, state: LlmCompilerState, instruction: str | None = None
) -> list[BaseMessage]:
    """Instructions, the conversation, then the results (or why no plan could run)."""
    return closing_prompt(
        setup,
        JOINER_INSTRUCTIONS,
        state,
        lambda: results_report(state, setup.registry),
        render_plan,
        instruction,
    )


def results_report(state: LlmCompilerState, registry: ToolRegistry) -> str:
    """Every task run this question with its result, or that none was needed."""
    results = rounds_report(state["messages"], registry)
    return RESULTS_REPORT.format(results=results) if results else NO_RESULTS


def ask_joiner(run: RunScope, state: LlmCompilerState, instruction: str) -> Body[ModelReply]:
    """``finish``'s way to ask for a last answer: the joiner prompt plus the instruction."""
    request = ModelRequest(prompt=joiner_prompt(run.setup, state, instruction))
    return (yield from call_model(run, request, state))


def make_join(
    setup: AgentSetup, max_rounds: int
) -> Callable[[LlmCompilerState], Body[AgentUpdate]]:
    """Build the ``join`` node for ``setup``; at most ``max_rounds`` plan-and-run rounds."""

    def join(state: LlmCompilerState) -> Body[AgentUpdate]:
        run = setup.for_run()
        typed = run.setup.bindings.supports_schema(run.model, JoinDecision)
        # the guards' advice on the latest round (a task that returned what it returned before)
        prompt = advised(joiner_prompt(setup, state), advice_for(state["messages"], run.limits))
        if not typed:
            prompt[0] = SystemMessage(f"{prompt[0].text}\n\n{JOIN_TEXT_FORMAT}")
        request = ModelRequest(prompt=prompt, schema=JoinDecision if typed else None)
        joiner = yield from call_model(run, request, state)
        raw, decision = joiner.message, _decision(joiner)
        if not decision.replan:
            reply = AIMessage(content=decision.answer, usage_metadata=raw.usage_metadata)
            event = {**joiner.event, "text": reply.text}
            outcome: Outcome | None = {"status": "answered"}
            return {"messages": [reply], "trajectory": [event], "outcome": outcome}
        note = AIMessage(
            content=JOIN_REPLAN_NOTE.format(reason=decision.reason),
            usage_metadata=raw.usage_metadata,
            response_metadata=mark(RUNTIME, JOIN_KIND, reason=decision.reason),
        )
        event = {**joiner.event, "text": note.text}
        after = {
            **state,
            "messages": [*state["messages"], note],
            "trajectory": [*state.get("trajectory", []), event],
        }
        rounds = rounds_run(state["messages"])
        outcome = budget_stop(after, run.limits)
        if outcome is None and rounds >= run.option("max_rounds", max_rounds):
            reason = ROUNDS_SPENT.format(rounds=rounds, reason=decision.reason.rstrip("."))
            outcome = {"status": "incomplete", "reason": reason}
        return {"messages": [note], "trajectory": [event], "outcome": outcome}

    return join


def _decision(reply: ModelReply) -> JoinDecision:
    """The joiner's decision; a reply that is not structured is read as text."""
    if isinstance(reply.parsed, JoinDecision):
        return reply.parsed
    match = REPLAN_LINE.search(reply.message.text)
    if match:
        return JoinDecision(replan=True, reason=match.group(1))
    return JoinDecision(answer=reply.message.text.strip())
