"""A pattern's v3 stream runs the transformers ``create_agent`` would: the built-in ones,
its middleware's, then the caller's, each once; so a middleware that redacts or hides
streamed events works in our patterns as in LangChain's agent."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, PIIMiddleware
from langchain_core.messages import HumanMessage
from langgraph.prebuilt import ToolCallTransformer
from langgraph.stream import StreamTransformer

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import tool_spec


class Marker(StreamTransformer):
    """Sees every event and changes nothing."""

    required_stream_modes = ()

    def init(self) -> dict[str, Any]:
        return {}

    def process(self, event: Any) -> bool:
        return True


class UserMarker(Marker):
    """The caller's own."""


class Marked(AgentMiddleware):
    transformers = (Marker,)


class AlsoMarked(AgentMiddleware):
    transformers = (Marker,)


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_every_pattern_registers_builtins_then_middleware_then_callers(pattern: str) -> None:
    graph = graph_builder(pattern)(
        ScriptedChatModel(script=["Done."]),
        tools=[],
        middleware=[Marked(), AlsoMarked()],
        transformers=[UserMarker, Marker],
    )
    factories = list(graph.stream_transformers)
    assert factories[0] is ToolCallTransformer
    assert factories.count(Marker) == 1  # two middleware and the caller name it: once
    assert factories.index(Marker) < factories.index(UserMarker)


def test_streamed_reply_is_redacted_by_the_middleware() -> None:
    model = ScriptedChatModel(script=["Write to alice@example.com today."])
    graph = graph_builder("react")(
        model, tools=[], middleware=[PIIMiddleware("email", apply_to_output=True)]
    )
    run = graph.stream_events({"messages": [HumanMessage("hi")]}, version="v3")
    text = "".join(chunk for message in run.messages for chunk in message.text)
    assert "alice@example.com" not in text
    assert "[REDACTED_EMAIL]" in text


def test_tool_calls_are_projected() -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    model = ScriptedChatModel(script=[tool_call("add", a=2, b=3), "5."])
    graph = graph_builder("react")(model, tools=[tool_spec(add)])
    run = graph.stream_events({"messages": [HumanMessage("2+3?")]}, version="v3")
    calls = list(run.tool_calls)  # a projection the graph registers when built
    assert [call.tool_name for call in calls] == ["add"]
    assert calls[0].output == "5"
