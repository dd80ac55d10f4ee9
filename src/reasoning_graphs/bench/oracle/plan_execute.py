"""Plan-and-Execute: one plan step per gold call, each step a ReAct run, then the answer.

The plan names each gold call, with ``#N`` for the result of step N. An
executor's prompt is the step's own conversation: it finds its step by the
plan's wording and the earlier steps' results in the data blocks the step's
task shows (``step N``), makes the call, and answers with what the call
returned, so the next step reads it as its ``#N``. The replanner answers
as soon as it is asked (see :mod:`.answers`), and so does the closing call.
"""

from __future__ import annotations

import json
import re

from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel

from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.prompt import (
    OracleError,
    Prompt,
    data_blocks,
    native_observations,
    reads_as_failure,
    template_fields,
)
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_execute.prompts import STEP_TASK
from reasoning_graphs.testing import tool_calls

STEP = "Step {number}: call {tool} with {args}."
REFERS = " (#{n} is the result of step {n}.)"
ANSWER_STEP = "Answer the request from what is known."
DONE_SOURCE = re.compile(r"step (\d+)")
"""The source of a finished step's result in the step's task (see ``describe_steps_done``)."""
CANNOT_DO = "Not done: step {number} gave no result to build on."
UNREADABLE_STEP = "the Plan-and-Execute step prompt no longer fits its STEP_TASK template"


def plan_steps(task: Task) -> list[str]:
    """The plan: one self-contained step per gold call."""
    steps = []
    for number, step in enumerate(task.trajectory, 1):
        args = json.dumps(dict(step.args), ensure_ascii=False)
        text = STEP.format(number=number, tool=step.tool, args=args)
        steps.append(text + "".join(REFERS.format(n=n) for n in step.references()))
    return steps or [ANSWER_STEP]


def step_fields(prompt: Prompt) -> dict[str, str] | None:
    """The fields of the step's task when the prompt is a step's own conversation."""
    first = next((m.text for m in prompt.messages if isinstance(m, HumanMessage)), "")
    return template_fields(STEP_TASK, first)


def execute_step(task: Task, prompt: Prompt, fields: dict[str, str]) -> AIMessage | str:
    """One step's ReAct turn: its gold call, then the call's result as the step's answer."""
    steps = plan_steps(task) if task.trajectory else []
    if fields["step"] not in steps:
        return final_answer(task)  # no gold call to make: the step is to answer
    index = steps.index(fields["step"])
    observed = native_observations(prompt.messages)
    if observed:
        return observed[-1].output
    if not prompt.may_call_tools:
        return final_answer(task)
    outputs = earlier_results(fields["done"])
    gold = task.trajectory[index]
    missing = [n for n in gold.references() if n not in outputs or reads_as_failure(outputs[n])]
    if missing:
        return CANNOT_DO.format(number=missing[0])
    return tool_calls((gold.tool, gold.resolved(outputs)))


def earlier_results(done: str) -> dict[int, str]:
    """The results of the steps done, by number, from their data blocks."""
    results: dict[int, str] = {}
    for source, body in data_blocks(done):
        match = DONE_SOURCE.fullmatch(source)
        if match:
            results[int(match.group(1))] = body
    return results


def reply(task: Task, prompt: Prompt) -> BaseModel | AIMessage | str:
    """The plan, a step's turn, or the answer (replanning and closing)."""
    if prompt.binds(Plan):
        return Plan(steps=plan_steps(task))
    if prompt.binds(Replan):
        return Replan(response=final_answer(task))
    fields = step_fields(prompt)
    if fields is not None:
        return execute_step(task, prompt, fields)
    if prompt.may_call_tools:  # tools bound, yet not a step: the step prompt changed
        raise OracleError(UNREADABLE_STEP)
    return final_answer(task)
