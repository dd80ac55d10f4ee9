"""The public scripted chat model behaves like a real one for graphs and benchmarks."""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from reasoning_graphs.testing import ScriptedChatModel, ScriptExhaustedError, tool_call


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


class Plan(BaseModel):
    steps: list[str]


def test_replays_tool_calls_and_text_and_records_prompts() -> None:
    model = ScriptedChatModel(script=[tool_call("lookup", query="x", id="c1"), "done"])
    bound = model.bind_tools([lookup])

    first = bound.invoke([HumanMessage("find x")])
    second = bound.invoke([HumanMessage("and now?")])

    assert first.tool_calls[0]["id"] == "c1"
    assert second.content == "done"
    assert [m[0].content for m in model.prompts] == ["find x", "and now?"]
    assert model.calls[0].tools == ["lookup"]
    assert first.usage_metadata["input_tokens"] > 0


def test_structured_output() -> None:
    model = ScriptedChatModel(script=[Plan(steps=["a", "b"]), {"steps": ["c"]}])
    planner = model.with_structured_output(Plan)

    assert planner.invoke("plan").steps == ["a", "b"]
    assert planner.invoke("plan").steps == ["c"]


def test_errors_and_functions_in_the_script() -> None:
    model = ScriptedChatModel(script=[ValueError("boom"), lambda messages: messages[-1].content])

    with pytest.raises(ValueError, match="boom"):
        model.invoke("x")
    assert model.invoke("echo me").content == "echo me"


def test_running_out_is_a_clear_error_unless_cycling() -> None:
    with pytest.raises(ScriptExhaustedError, match="ran out"):
        ScriptedChatModel(script=[]).invoke("x")
    cycling = ScriptedChatModel(script=["a", "b"], cycle=True)
    assert [cycling.invoke("x").content for _ in range(3)] == ["a", "b", "a"]


async def test_latency_per_call_and_per_output_token() -> None:
    model = ScriptedChatModel(script=["x" * 40], delay=0.05, token_delay=0.01, cycle=True)

    started = time.perf_counter()
    reply = await model.ainvoke("go")
    elapsed = time.perf_counter() - started

    tokens = reply.usage_metadata["output_tokens"]
    assert tokens == 10
    assert elapsed >= 0.05 + 0.01 * tokens


def test_bound_tool_schemas_count_as_prompt_tokens_when_asked() -> None:
    def lookup(key: str) -> str:
        """Look a key up in the long-named registry of everything."""
        return key

    plain = ScriptedChatModel(script=["ok"])
    counting = ScriptedChatModel(script=["ok"], count_tool_schemas=True)
    bare = plain.bind_tools([lookup]).invoke("hi").usage_metadata
    counted = counting.bind_tools([lookup]).invoke("hi").usage_metadata
    assert bare is not None
    assert counted is not None
    assert counted["input_tokens"] > bare["input_tokens"]
    assert counted["total_tokens"] - bare["total_tokens"] == (
        counted["input_tokens"] - bare["input_tokens"]
    )
    assert counting.calls[0].usage == counted
    # nothing bound, nothing added
    assert ScriptedChatModel(script=["ok"], count_tool_schemas=True).invoke(
        "hi"
    ).usage_metadata == (ScriptedChatModel(script=["ok"]).invoke("hi").usage_metadata)
