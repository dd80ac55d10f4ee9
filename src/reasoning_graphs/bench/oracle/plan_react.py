"""Plan-in-context ReAct: one plan item per gold call, then ReAct's turns under the plan.

The plan is Plan-and-Execute's (one item per gold call, see :mod:`.plan_execute`);
the loop's turns are ReAct's (:func:`~.react.loop_reply`): the next gold call the
observations leave, then the answer. The oracle marks no item done and asks for no
rewrite, so a run costs ReAct's calls plus the plan's.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage
from pydantic import BaseModel

from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.plan_execute import plan_steps
from reasoning_graphs.bench.oracle.prompt import Prompt
from reasoning_graphs.bench.oracle.react import loop_reply
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs.plan_react.plan import PlanItems


def reply(task: Task, prompt: Prompt) -> BaseModel | AIMessage | str:
    """The plan, or the loop's next gold call, or the answer."""
    if prompt.binds(PlanItems):
        return PlanItems(items=plan_steps(task))
    return loop_reply(task, prompt, final_answer(task))
