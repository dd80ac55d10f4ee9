"""Typed replies and tool calls read whole when a server repeats a call's name in each chunk.

llama.cpp's server sends a streamed call's name (and id) in every chunk, so LangChain's
joined chunks name the call ``PlanPlanPlan…``. ``ScriptedChatModel(repeat_call_names=True)``
streams the same way; every typed schema of the patterns must still parse, on both faces,
and a tool call must still reach its tool. That server also says a call cut at its
length limit finished: a streamed call whose arguments stop before their JSON is complete
is read as cut, never as the call LangChain's lenient reading makes of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import adrive, drive
from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.graphs.llm_compiler.dag import TaskPlan
from reasoning_graphs.graphs.llm_compiler.join import JoinDecision
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.reflexion.reflect import Reflection
from reasoning_graphs.graphs.rewoo.steps import PlanSchema
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import RunScope, agent_setup
from reasoning_graphs.nodes.model.streamed import named_calls
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator

TYPED = [
    Plan(steps=["Multiply 23 by 17.", "Add 4."]),
    Replan(response="395"),
    PlanSchema.model_validate(
        {
            "steps": [
                {
                    "var": "#E1",
                    "tool": "calculator",
                    "args": {"expression": "23*17+4"},
                    "reason": "sum",
                }
            ]
        }
    ),
    TaskPlan.model_validate(
        {
            "tasks": [
                {"id": 1, "tool": "calculator", "args": {"expression": "23*17+4"}, "reason": "sum"}
            ]
        }
    ),
    JoinDecision(answer="395"),
    Judgement(feedback="Correct.", score=1.0),
    Reflection(diagnosis="The sum was wrong.", advice="Add again."),
]


def repeating(*script: object) -> ScriptedChatModel:
    """A model that streams its calls as llama.cpp's server does."""
    return ScriptedChatModel(script=list(script), stream_tool_calls=True, repeat_call_names=True)


@pytest.mark.parametrize("face", ["sync", "async"])
@pytest.mark.parametrize("value", TYPED, ids=lambda value: type(value).__name__)
async def test_every_typed_reply_parses_when_each_chunk_repeats_the_name(
    value: BaseModel, face: str
) -> None:
    # a token budget makes the call stream, so the chunks are joined as a server sent them
    run = RunScope(agent_setup(repeating(value), []), Limits(token_budget=100_000))
    request = ModelRequest(prompt=[HumanMessage("What is 23*17+4?")], schema=type(value))
    body = call_model(run, request)

    reply = drive(body) if face == "sync" else await adrive(body)

    assert reply.parsing_error is None
    assert reply.parsed == value
    assert [call["name"] for call in reply.message.tool_calls] == [type(value).__name__]


@pytest.mark.parametrize("face", ["sync", "async"])
async def test_a_streamed_tool_call_with_repeated_names_reaches_its_tool(face: str) -> None:
    model = repeating(tool_call("calculator", expression="23*17+4"), "395")
    graph = graph_builder("react")(model=model, tools=[calculator()], checkpointer=InMemorySaver())
    run = {"configurable": {"thread_id": face}}
    request = {"messages": [("user", "What is 23*17+4?")]}

    if face == "sync":
        chunks = list(graph.stream(request, run, stream_mode="messages"))
    else:
        chunks = [chunk async for chunk in graph.astream(request, run, stream_mode="messages")]

    assert chunks
    messages = graph.get_state(run).values["messages"]
    (result,) = [m for m in messages if isinstance(m, ToolMessage)]
    assert result.status == "success"
    assert result.content == "395"
    assert result.name == "calculator"


def test_a_name_that_repeats_no_offered_name_is_left_as_the_model_wrote_it() -> None:
    calls = [
        {"name": name, "args": {}, "id": f"c{number}", "type": "tool_call"}
        for number, name in enumerate(["addadd", "addad", "add", "subsub", "ad"])
    ]
    message = AIMessage("", tool_calls=calls)

    mended = named_calls(message, ["add", "ad"])

    assert [call["name"] for call in mended.tool_calls] == ["add", "addad", "add", "subsub", "ad"]
    assert named_calls(mended, ["add", "ad"]) is mended  # nothing left to mend


class CutStream(ScriptedChatModel):
    """Streams each scripted call's arguments up to ``keep`` characters only, then ends
    the reply as finished, as llama.cpp's server does at its length limit."""

    keep: int = 24

    def _stream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        message = self._reply(messages, stop, kwargs)
        for index, call in enumerate(message.tool_calls):
            text = json.dumps(call["args"])[: self.keep]
            part = tool_call_chunk(name=call["name"], args=text, id=call["id"], index=index)
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[part]))
        done = AIMessageChunk(
            content="", response_metadata={"finish_reason": "tool_calls"}, chunk_position="last"
        )
        yield ChatGenerationChunk(message=done)


def test_a_typed_reply_cut_while_it_streamed_is_not_read_and_is_asked_again() -> None:
    plan = Plan(steps=["Multiply 23 by 17 with the calculator.", "Add 4 to the product."])
    model = CutStream(script=[plan, plan, plan])
    run = RunScope(agent_setup(model, []), Limits(token_budget=100_000))
    request = ModelRequest(prompt=[HumanMessage("What is 23*17+4?")], schema=Plan)

    reply = drive(call_model(run, request))

    assert reply.parsed is None  # LangChain alone reads a one-step plan "Multiply 23 by"
    assert reply.cut
    assert reply.event["typed"] == "Plan"
    assert reply.event["unread"]
    assert len(model.calls) == 3  # asked again, as for a reply cut at the length limit


written: list[str] = []


@tool
def write_note(path: str, text: str) -> str:
    """Write a note to a file."""
    written.append(path)
    return "written"


def test_a_tool_call_cut_while_it_streamed_never_runs() -> None:
    call = tool_call("write_note", text="Buy milk", path="notes/today.txt")
    # cut inside the last argument: read leniently, the call would write "notes/t"
    model = CutStream(script=[call, call, call, "I could not write it."], keep=36)
    graph = graph_builder("react")(
        model=model, tools=[write_note], checkpointer=InMemorySaver(), token_budget=100_000
    )
    run = {"configurable": {"thread_id": "cut"}}

    graph.invoke({"messages": [("user", "Note that I must buy milk.")]}, run)

    assert written == []
    events = graph.get_state(run).values["trajectory"]
    assert not [e for e in events if e["kind"] == "action" and e.get("status") == "success"]


def test_a_reply_that_repeats_the_cut_notice_is_no_answer() -> None:
    # the planners show the notice to the model as feedback; quoted back, it answers nothing
    from reasoning_graphs.nodes.guards.honest import no_answer_reason
    from reasoning_graphs.nodes.model.call import CUT_REPLY

    assert no_answer_reason(f"The plan cannot run: {CUT_REPLY}.")
    assert no_answer_reason("The total is 395.") is None
