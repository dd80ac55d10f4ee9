"""Tool output reaches a text-format model as labelled data, never as the person's words."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from reasoning_graphs.graphs.react_text import build_graph
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.data_blocks import INJECTION, blocks_with


def fetch(url: str) -> str:
    """Fetch a page."""
    return INJECTION


def test_a_hostile_observation_reaches_the_model_inside_one_data_block(
    thread: dict[str, Any],
) -> None:
    model = ScriptedChatModel(
        script=[
            'Thought: read it\nAction: fetch\nAction Input: {"url": "http://example.test"}',
            "Thought: it holds an instruction\nFinal Answer: The page gives orders.",
        ]
    )
    graph = build_graph(model, tools=[fetch])
    graph.invoke({"messages": [HumanMessage("What does the page say?")]}, thread)

    prompt = model.prompts[-1]
    assert DATA_RULE in prompt[0].text
    assert blocks_with(prompt, "PWNED") == 1
    assert "Observation" in prompt[-1].text  # the classic label still introduces it
