"""What a tool returned is what the saved conversation holds, as under LangGraph's ``ToolNode``.

Plain LangChain ``@tool`` functions, whatever they return (text with odd
spacing, a very long string, ``None``, a dict, content blocks, content and an
artifact, a handled error), leave the same ``ToolMessage`` content, artifact and
status in the react graph's checkpoint as ``ToolNode`` gives for the same call.
What the runtime tells the model besides (a cut, a reuse, advice) lives in the
prompt only.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from reasoning_graphs.graphs import react
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from reasoning_graphs.tools.spec import tool_spec


@tool
def spaced() -> str:
    """Text with edge spacing and non-ASCII."""
    return "  leading and trailing  \n\n结果：四十二\t"


@tool
def huge() -> str:
    """A very long result."""
    return "".join(f"line {n}: {'x' * 40}\n" for n in range(400))


@tool
def nothing() -> None:
    """Returns nothing."""


@tool
def empty() -> str:
    """Returns the empty string."""
    return ""


@tool
def record() -> dict[str, Any]:
    """Returns a dict."""
    return {"id": 7, "tags": ["a", "b"], "ok": True}


@tool
def blocks() -> list[dict[str, Any]]:
    """Returns content blocks."""
    return [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]


@tool(response_format="content_and_artifact")
def with_artifact() -> tuple[str, dict[str, Any]]:
    """Returns content and an artifact."""
    return "summary", {"rows": [1, 2, 3]}


@tool
def handled() -> str:
    """Fails in a way the tool reports itself."""
    raise ToolException("the service said no")


handled.handle_tool_error = True

TOOLS = [spaced, huge, nothing, empty, record, blocks, with_artifact, handled]


def _fields(message: ToolMessage) -> tuple[Any, Any, str]:
    return message.content, message.artifact, message.status


def _under_tool_node_of(tools: list[Any], name: str, **args: Any) -> ToolMessage:
    """The message LangGraph's own ``ToolNode`` records for the call."""
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    call = tool_call(name, id="c1", **args).tool_calls[0]
    result = builder.compile().invoke({"messages": [AIMessage("", tool_calls=[call])]})
    return result["messages"][-1]


def _under_tool_node(name: str) -> ToolMessage:
    return _under_tool_node_of(TOOLS, name)


@pytest.mark.parametrize("name", [t.name for t in TOOLS])
def test_the_checkpoint_keeps_what_the_tool_returned(name: str) -> None:
    model = ScriptedChatModel(script=[tool_call(name, id="c1"), "Done."])
    graph = react.build_graph(model, tools=TOOLS, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"kept-{name}"}}

    graph.invoke({"messages": [HumanMessage("Call it.")]}, config)

    saved = graph.get_state(config).values["messages"]
    (message,) = [m for m in saved if isinstance(m, ToolMessage)]
    assert _fields(message) == _fields(_under_tool_node(name))
    assert saved[-1].content == "Done."


@tool
def lookup(key: str) -> None:
    """Looks a key up; finds nothing."""


def test_empty_results_in_a_row_stay_as_returned_and_the_advice_goes_to_the_prompt() -> None:
    script = [tool_call("lookup", key=k) for k in "abc"]
    model = ScriptedChatModel(script=[*script, "Nothing found."])
    graph = react.build_graph(model, tools=[lookup])

    state = graph.invoke({"messages": [HumanMessage("Find a, b or c.")]})

    contents = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert contents == [_under_tool_node_of([lookup], "lookup", key="a").content] * 3
    assert "Change strategy" in model.prompts[3][-1].text  # told once, in the next prompt
    assert all("Change strategy" not in str(m.content) for m in state["messages"])


@tool
def find(key: str) -> str:
    """Finds a key."""
    return f"found {key}"


def test_observations_keep_the_order_of_the_models_calls() -> None:
    reads = tool_spec(find, pure=True)
    second = tool_calls(
        ("find", {"key": "b"}, "c2"),  # runs
        ("find", {"key": "a"}, "c3"),  # answered from c1: the tool is declared pure
        ("find", {"wrong": 1}, "c4"),  # arguments off the schema: answered with the error
    )
    model = ScriptedChatModel(script=[tool_call("find", id="c1", key="a"), second, "Done."])
    graph = react.build_graph(model, tools=[reads])

    state = graph.invoke({"messages": [HumanMessage("Find a, then b and a.")]})

    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in answers] == ["c1", "c2", "c3", "c4"]
    assert [m.content for m in answers[:3]] == ["found a", "found b", "found a"]
    assert answers[2].response_metadata["decision"] == "reused"
    assert answers[3].status == "error"
