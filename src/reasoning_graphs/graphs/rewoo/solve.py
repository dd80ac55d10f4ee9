"""``solve``: one model call that answers from the question, the plan and its evidence.

The solver never calls tools; it reads every step with the call as it ran and
its result (or why it did not run). Each call as run (its
arguments may hold earlier results) and its result form one labelled data
block (:func:`~reasoning_graphs.nodes.guards.untrusted.as_data`), so a tool's output
never reads as the person's words in the solver's prompt. When no usable plan could be made it gets
that account instead, and the run ends with an honest, incomplete answer.
It also serves ``finish`` as the way to ask for a last answer when a budget
stops the plan part-way.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.rewoo.prompts import (
    EVIDENCE_BODY,
    EVIDENCE_REPORT,
    EVIDENCE_STEP,
    NO_EVIDENCE,
    SOLVER_INSTRUCTIONS,
)
from reasoning_graphs.graphs.rewoo.state import RewooState
from reasoning_graphs.graphs.rewoo.steps import render_plan
from reasoning_graphs.graphs.rewoo.work import issued_calls, step_results
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.guards.advice import advice_for, advised
from reasoning_graphs.nodes.guards.honest import incomplete_note
from reasoning_graphs.nodes.guards.untrusted import as_data
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.plan import closing_prompt, no_valid_plan
from reasoning_graphs.question import describe_call
from reasoning_graphs.state import AgentUpdate, Outcome
from reasoning_graphs.tools.registry import ToolRegistry

NOT_RUN = "Not run: the run stopped before this step."


def evidence_report(state: RewooState, registry: ToolRegistry) -> str:
    """Every step of the plan with the call as it ran and what it returned (a long result
    cut as for every prompt)."""
    plan = state.get("plan") or []
    if not plan:
        return NO_EVIDENCE
    results = step_results(state, registry)
    issued = issued_calls(state["messages"])
    entries = []
    for step in plan:
        call = issued.get(step["var"])
        name, args = (call["name"], call["args"]) if call else (step["tool"], step["args"])
        result = results.get(step["var"])
        body = EVIDENCE_BODY.format(
            call=describe_call(name, args), result=result.text if result else NOT_RUN
        )
        entries.append(
            EVIDENCE_STEP.format(
                var=step["var"],
                reason=step["reason"],
                evidence=as_data(body, source=f"#{step['var']}"),
            )
        )
    return EVIDENCE_REPORT.format(steps="\n\n".join(entries))


def solver_prompt(
    setup: AgentSetup, state: RewooState, instruction: str | None = None
) -> list[BaseMessage]:
    """Instructions, the conversation, then the evidence (or why there is none)."""
    return closing_prompt(
        setup,
        SOLVER_INSTRUCTIONS,
        state,
        lambda: evidence_report(state, setup.registry),
        render_plan,
        instruction,
    )


def ask_solver(run: RunScope, state: RewooState, instruction: str) -> Body[ModelReply]:
    """``finish``'s way to ask for a last answer: the solver prompt plus the instruction."""
    request = ModelRequest(prompt=solver_prompt(run.setup, state, instruction))
    return (yield from call_model(run, request, state))


def make_solve(setup: AgentSetup) -> Callable[[RewooState], Body[AgentUpdate]]:
    """Build the ``solve`` node for ``setup``."""

    def solve(state: RewooState) -> Body[AgentUpdate]:
        run = setup.for_run()
        advice = advice_for(state["messages"], run.limits)
        prompt = advised(solver_prompt(setup, state), advice)
        solver = yield from call_model(run, ModelRequest(prompt=prompt), state)
        raw = solver.message  # text only: the solver has no tools, whatever it replied
        reply = AIMessage(content=raw.text, usage_metadata=raw.usage_metadata)
        problem = state.get("plan_problem")
        outcome: Outcome = {"status": "answered"}
        if problem:
            outcome = no_valid_plan(state.get("replans", 0) + 1, problem)
            outcome = {**outcome, "note": incomplete_note(outcome["reason"], [])}
            reply = reply.model_copy(update={"response_metadata": answered(outcome)})
        event = {**solver.event, "text": reply.text}
        return {"messages": [reply], "trajectory": [event], "outcome": outcome}

    return solve
