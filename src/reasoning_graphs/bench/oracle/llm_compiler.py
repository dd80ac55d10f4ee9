"""LLM Compiler: the gold trajectory as one task graph with ``${n}`` references, then the join.

Each gold step is a task; its references become both ``${n}`` in its
arguments and its ``deps``, so independent lookups run at once. The joiner
answers (see :mod:`.answers`) and never asks for another round, and the
closing call answers the same.
"""

from __future__ import annotations

from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.prompt import Prompt
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs.llm_compiler.dag import TaskPlan, TaskSchema
from reasoning_graphs.graphs.llm_compiler.join import JoinDecision

REFERENCE = "${n}"


def plan(task: Task) -> TaskPlan:
    """Every gold call as a task, with the tasks it needs."""
    return TaskPlan(
        tasks=[
            TaskSchema(
                id=number, tool=step.tool, args=step.written_as(REFERENCE), deps=step.references()
            )
            for number, step in enumerate(task.trajectory, 1)
        ]
    )


def reply(task: Task, prompt: Prompt) -> TaskPlan | JoinDecision | str:
    """The task graph, the join's answer, or (closing) the answer."""
    if prompt.binds(TaskPlan):
        return plan(task)
    if prompt.binds(JoinDecision):
        return JoinDecision(answer=final_answer(task))
    return final_answer(task)
