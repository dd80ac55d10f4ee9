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
import time
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, Field

from reasoning_graphs.nodes.compiler_dag import (
    JOIN_KIND,
    RUNTIME,
    SCHEDULE_KIND,
    is_compiler_message,
    render_plan,
    rounds_report,
)
from reasoning_graphs.nodes.compiler_plan import EMPTY_PLAN, OWN_RUNTIMES
from reasoning_graphs.nodes.observe import budget_stop
from reasoning_graphs.nodes.planning import answer_prompt, conversation, structured
from reasoning_graphs.nodes.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.trajectory import thought_event
from reasoning_graphs.nodes.turn import turn_messages
from reasoning_graphs.prompts import NO_ANSWER
from reasoning_graphs.prompts.llm_compiler import (
    JOIN_REPLAN_NOTE,
    JOIN_TEXT_FORMAT,
    JOINER_INSTRUCTIONS,
    NO_RESULTS,
    PLAN_FAILED_REPORT,
    RESULTS_REPORT,
)
from reasoning_graphs.state import Outcome

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
    setup: AgentSetup, state: dict[str, Any], instruction: str | None = None
) -> list[BaseMessage]:
    """Instructions, the conversation, then the results (or why no plan could run)."""
    problem = state.get("plan_problem")
    if problem:
        plan = render_plan(state.get("plan") or []) or EMPTY_PLAN
        report = PLAN_FAILED_REPORT.format(plan=plan, problem=problem)
    else:
        results = rounds_report(state["messages"])
        report = RESULTS_REPORT.format(results=results) if results else NO_RESULTS
    dialogue = conversation(state["messages"], OWN_RUNTIMES)
    return answer_prompt(setup, JOINER_INSTRUCTIONS, dialogue, report, instruction)


async def ask_joiner(run: RunScope, state: dict[str, Any], instruction: str) -> AIMessage:
    """``finish``'s way to ask for a last answer: the joiner prompt plus the instruction."""
    return await run.model.ainvoke(joiner_prompt(run.setup, state, instruction))


def make_join(
    setup: AgentSetup, max_rounds: int
) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """Build the ``join`` node for ``setup``; at most ``max_rounds`` plan-and-run rounds."""

    async def join(state: dict[str, Any]) -> dict[str, Any]:
        run = setup.for_run()
        joiner = structured(run.model, JoinDecision)
        prompt = joiner_prompt(setup, state)
        if joiner is None:
            prompt[0] = SystemMessage(f"{prompt[0].text}\n\n{JOIN_TEXT_FORMAT}")
        started = time.perf_counter()
        raw, decision = await _decide(run, joiner, prompt)
        latency_ms = (time.perf_counter() - started) * 1000
        if not decision.replan:
            reply = AIMessage(
                content=decision.answer.strip() or NO_ANSWER, usage_metadata=raw.usage_metadata
            )
            event = thought_event(state, reply=reply, prompt=prompt, latency_ms=latency_ms)
            outcome: Outcome | None = {"status": "answered"}
            return {"messages": [reply], "trajectory": [event], "outcome": outcome}
        note = AIMessage(
            content=JOIN_REPLAN_NOTE.format(reason=decision.reason),
            usage_metadata=raw.usage_metadata,
            response_metadata={"runtime": RUNTIME, "kind": JOIN_KIND, "reason": decision.reason},
        )
        event = thought_event(state, reply=note, prompt=prompt, latency_ms=latency_ms)
        after = {
            **state,
            "messages": [*state["messages"], note],
            "trajectory": [*state.get("trajectory", []), event],
        }
        rounds = sum(
            is_compiler_message(m, SCHEDULE_KIND) for m in turn_messages(state["messages"])
        )
        outcome = budget_stop(after, run.limits)
        if outcome is None and rounds >= max_rounds:
            reason = ROUNDS_SPENT.format(rounds=rounds, reason=decision.reason.rstrip("."))
            outcome = {"status": "incomplete", "reason": reason}
        return {"messages": [note], "trajectory": [event], "outcome": outcome}

    return join


async def _decide(
    run: RunScope, joiner: Runnable | None, prompt: list[BaseMessage]
) -> tuple[AIMessage, JoinDecision]:
    """The joiner's decision; a reply that is not structured is read as text."""
    if joiner is not None:
        result = await joiner.ainvoke(prompt)
        if result["parsed"] is not None:
            return result["raw"], result["parsed"]
        raw: AIMessage = result["raw"]
    else:
        raw = await run.model.ainvoke(prompt)
    match = REPLAN_LINE.search(raw.text)
    if match:
        return raw, JoinDecision(replan=True, reason=match.group(1))
    return raw, JoinDecision(answer=raw.text.strip())
