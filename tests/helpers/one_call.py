"""Each tool-using pattern's script for a question that one tool call answers.

``one_call(pattern, tool, args, answer)`` gives the scripted model's replies and the
build options under which ``pattern`` makes exactly the call ``tool(**args)`` and then
answers ``answer``; the patterns that call no tools have no entry.
"""

from __future__ import annotations

import json
from typing import Any

from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import tool_call

GRADE = Judgement(feedback="Right.", score=0.9)


def one_call(
    pattern: str, tool: str, args: dict[str, Any], answer: str
) -> tuple[list[Any], dict[str, Any]]:
    """The replies and build options for ``pattern`` (see the module docstring)."""
    call = tool_call(tool, **args)
    text_call = f"Thought: use {tool}\nAction: {tool}\nAction Input: {json.dumps(args)}"
    scripts: dict[str, tuple[list[Any], dict[str, Any]]] = {
        "react": ([call, answer], {}),
        "react_text": ([text_call, f"Thought: done\nFinal Answer: {answer}"], {}),
        "plan_execute": (
            [Plan(steps=[f"Use {tool}."]), call, "done", Replan(response=answer)],
            {},
        ),
        "plan_react": ([PlanItems(items=[f"Use {tool}."]), call, answer], {}),
        "rewoo": (
            [{"steps": [{"var": "E1", "tool": tool, "args": args, "reason": "needed"}]}, answer],
            {},
        ),
        "llm_compiler": (
            [
                {"tasks": [{"id": 1, "tool": tool, "args": args, "deps": []}]},
                {"answer": answer, "replan": False, "reason": ""},
            ],
            {},
        ),
        "reflexion": ([call, answer, GRADE], {"max_trials": 1}),
        "lats": ([call, GRADE, answer, GRADE], {"candidates": 1}),
    }
    return scripts[pattern]
