"""``finish`` for plans: close a question the plan could not settle, honestly.

This is :func:`reasoning_graphs.nodes.steps.finish.make_finish` — ask the model once
more, mark the answer incomplete, append the evidence, and fall back to the
evidence alone if the call fails — with a plan's progress as the prompt and its
finished steps as the evidence.
"""

from __future__ import annotations

from collections.abc import Callable

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.plan_execute.progress import (
    conversation_prompt,
    progress_report,
    step_evidence,
)
from reasoning_graphs.graphs.plan_execute.prompts import ANSWER_SYSTEM, FINISH_REQUEST
from reasoning_graphs.graphs.plan_execute.state import PlanExecuteState
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.finish import make_finish
from reasoning_graphs.state import AgentUpdate


def make_plan_finish(setup: AgentSetup) -> Callable[[PlanExecuteState], Body[AgentUpdate]]:
    """Build the ``finish`` node of a plan for ``setup``."""

    def ask(run: RunScope, state: PlanExecuteState, instruction: str) -> Body[ModelReply]:
        request = FINISH_REQUEST.format(progress=progress_report(state), instruction=instruction)
        prompt = conversation_prompt(ANSWER_SYSTEM, state, request)
        return (yield from call_model(run, ModelRequest(prompt=prompt), state))

    return make_finish(setup, ask, evidence=step_evidence)
