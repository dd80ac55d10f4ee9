"""ReWOO: the whole gold trajectory as one plan with ``#E{n}`` evidence, then the answer.

The planner is asked once and writes every gold call, each reference to an
earlier step's result as that step's evidence variable; a re-plan after a
problem gets the same plan, so a plan ReWOO cannot run shows as what it is.
The solver, and the closing call, answer (see :mod:`.answers`).
"""

from __future__ import annotations

from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.prompt import Prompt
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs.rewoo.steps import PlanSchema, StepSchema

EVIDENCE = "#E{n}"
VARIABLE = "E{n}"
REASON = "Gold step {n} of {total}."


def plan(task: Task) -> PlanSchema:
    """Every gold call, in order, wired by evidence variables."""
    total = len(task.trajectory)
    return PlanSchema(
        steps=[
            StepSchema(
                reason=REASON.format(n=number, total=total),
                var=VARIABLE.format(n=number),
                tool=step.tool,
                args=step.written_as(EVIDENCE),
            )
            for number, step in enumerate(task.trajectory, 1)
        ]
    )


def reply(task: Task, prompt: Prompt) -> PlanSchema | str:
    """The plan when one is asked for, else the answer."""
    return plan(task) if prompt.binds(PlanSchema) else final_answer(task)
