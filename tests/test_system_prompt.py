"""``system_prompt=`` in every pattern: the first model call reads the caller's instructions.

A pattern brings its own instructions by default; a caller's ``system_prompt``
replaces them. What a step needs to be read follows them in the same system
message: a planner's stage instructions, ``react_text``'s format (the tools and the
Thought/Action/Observation form).
"""

from __future__ import annotations

import contextlib

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.faces import FACES, run

ADA = "You are Ada, a careful engineer who answers in one line."


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_the_callers_system_prompt_reaches_the_model(pattern: str, face: str) -> None:
    model = ScriptedChatModel(script=[ValueError("recorded the prompt")], cycle=True)
    graph = graph_builder(pattern)(model, tools=[], system_prompt=ADA)

    with contextlib.suppress(Exception):  # the model fails once it has read the prompt
        run(graph, {"messages": [HumanMessage("What is 2+2?")]}, face)

    system = model.prompts[0][0]
    assert isinstance(system, SystemMessage)
    assert system.text.startswith(ADA)
    if pattern == "react_text":
        assert "Action" in system.text  # the format's instructions stay
