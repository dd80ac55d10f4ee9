"""Every pattern on a scripted model, for the Studio-face tests (tests/test_studio_face.py).

Asked anything, each tool-using graph proposes one dangerous ``write_file`` of
``<pattern>.txt`` in ``REASONING_GRAPHS_WORKSPACE`` and, once the call is decided,
answers. Each script covers exactly one question and starts again for the next
(``cycle=True``); ``cot`` and ``tot`` answer "4" every time.
"""

from __future__ import annotations

import os
from typing import Any

from reasoning_graphs.graphs import (
    cot,
    lats,
    llm_compiler,
    plan_execute,
    plan_react,
    react,
    react_text,
    reflexion,
    rewoo,
    tot,
)
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import WORKSPACE_ENV, write_file

if not os.environ.get(WORKSPACE_ENV):
    raise RuntimeError(f"Set {WORKSPACE_ENV} to the folder the test app may write to.")

TOOLS = [write_file(os.environ[WORKSPACE_ENV])]
PASS = Judgement(feedback="Written as asked.", score=0.95)


def write(pattern: str) -> dict[str, Any]:
    return {"path": f"{pattern}.txt", "content": f"hello from {pattern}"}


def scripted(*script: Any) -> ScriptedChatModel:
    return ScriptedChatModel(script=list(script), cycle=True)


react_graph = react.build_graph(
    scripted(tool_call("write_file", **write("react")), "Written."), tools=TOOLS
)
react_text_graph = react_text.build_graph(
    scripted(
        'Thought: I write it.\nAction: write_file\nAction Input: {"path": "react_text.txt", '
        '"content": "hello from react_text"}',
        "Thought: It is written.\nFinal Answer: Written.",
    ),
    tools=TOOLS,
)
plan_execute_graph = plan_execute.build_graph(
    scripted(
        Plan(steps=["Write the file."]),
        tool_call("write_file", **write("plan_execute")),
        "The file is written.",
        Replan(response="Written."),
    ),
    tools=TOOLS,
)
plan_react_graph = plan_react.build_graph(
    scripted(
        PlanItems(items=["Write the file."]),
        tool_call("write_file", **write("plan_react")),
        "Written.",
    ),
    tools=TOOLS,
)
rewoo_graph = rewoo.build_graph(
    scripted(
        {"steps": [{"var": "E1", "tool": "write_file", "args": write("rewoo"), "reason": "asked"}]},
        "Written.",
    ),
    tools=TOOLS,
)
llm_compiler_graph = llm_compiler.build_graph(
    scripted(
        {"tasks": [{"id": 1, "tool": "write_file", "args": write("llm_compiler")}]}, "Written."
    ),
    tools=TOOLS,
)
reflexion_graph = reflexion.build_graph(
    scripted(tool_call("write_file", **write("reflexion")), "Written.", PASS), tools=TOOLS
)
lats_graph = lats.build_graph(
    scripted(
        tool_call("write_file", **write("lats")),
        Judgement(feedback="On the way.", score=0.7),
        "Written.",
        PASS,
    ),
    tools=TOOLS,
    candidates=1,
)
cot_graph = cot.build_graph(scripted("2 and 2 make 4.\nAnswer: 4"), samples=3)
tot_graph = tot.build_graph(
    scripted(
        {"steps": [{"step": "2 + 2 = 4", "solves": True}]},
        {"reason": "It adds.", "verdict": "sure"},
        {"answer": "4"},
    ),
    breadth=1,
)
