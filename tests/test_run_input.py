"""A run that cannot work is refused before it starts, in every pattern, on both faces.

Malformed input used to fail inside LangGraph's run loop after its write had
reached the thread, so every later read of the thread failed too; an unknown
input key left the model an empty conversation; an unknown run option was
dropped, and a misspelt name in ``approve`` approved nothing. Now each is a
:class:`RunInputError` with the reason, and the thread is as it was.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from reasoning_graphs.context import AgentContext
from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.run_input import RunInputError
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator, write_file

QUESTION = {"messages": [("user", "What is 6*7?")]}
BAD_INPUTS = {
    "messages not a list": {"messages": 5},
    "unknown input field": {"question": "What is 6*7?"},
    "input not an object": "What is 6*7?",
    "unknown message role": {"messages": [{"role": "alien", "content": "hi"}]},
    "no message": {"messages": []},
    "no messages field": {},
}
BAD_OPTIONS = {
    "unknown option": {"bogus": 1},
    "ill-typed option": {"max_model_calls": "ten"},
    "tool the graph lacks": {"tools": ["no_such_tool"]},
    "misspelt approval": {"approve": ["write-file"]},
    "misspelt denial": {"deny": ["writefile"]},
    "not an object": ["max_model_calls"],
}


def build(pattern: str, model: ScriptedChatModel, tmp_path: Any) -> Any:
    module = importlib.import_module(f"reasoning_graphs.graphs.{pattern}")
    tools = [calculator(), write_file(tmp_path)] if PATTERNS[pattern].uses_tools else []
    return module.build_graph(model, tools=tools, checkpointer="memory")


@pytest.fixture(params=sorted(PATTERNS))
def pattern(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.parametrize("run_input", BAD_INPUTS.values(), ids=BAD_INPUTS)
async def test_malformed_input_is_refused_and_the_thread_keeps_nothing(
    pattern: str, run_input: Any, tmp_path: Any
) -> None:
    model = ScriptedChatModel(script=["unused"])
    graph = build(pattern, model, tmp_path)
    config = {"configurable": {"thread_id": "t"}}

    with pytest.raises(RunInputError):
        graph.invoke(run_input, config)
    with pytest.raises(RunInputError):
        await graph.ainvoke(run_input, config)
    with pytest.raises(RunInputError):
        list(graph.stream(run_input, config))

    assert model.calls == []
    assert graph.get_state(config).values == {}
    assert (await graph.aget_state(config)).values == {}


@pytest.mark.parametrize("options", BAD_OPTIONS.values(), ids=BAD_OPTIONS)
async def test_bad_run_options_are_refused_before_the_run_starts(
    pattern: str, options: Any, tmp_path: Any
) -> None:
    if not PATTERNS[pattern].uses_tools and any(k in options for k in ("tools", "approve", "deny")):
        pytest.skip("this pattern has no tools to name")
    model = ScriptedChatModel(script=["unused"])
    graph = build(pattern, model, tmp_path)
    config = {"configurable": {"thread_id": "t"}}

    with pytest.raises(RunInputError):
        graph.invoke(QUESTION, config, context=options)
    with pytest.raises(RunInputError):
        await graph.ainvoke(QUESTION, config, context=options)

    assert model.calls == []
    assert graph.get_state(config).values == {}


def test_an_unknown_option_is_named_with_every_known_one(tmp_path: Any) -> None:
    graph = build("lats", ScriptedChatModel(script=[]), tmp_path)

    with pytest.raises(RunInputError) as refused:
        graph.invoke(QUESTION, context={"max_step": 3})

    known = graph.get_context_jsonschema()["properties"]
    assert "max_step" in str(refused.value)
    assert all(name in str(refused.value) for name in known)
    assert "max_expansions" in known  # the pattern's own options are among them


OWN_TOOLS = {"plan_react": {"update_plan"}}
"""The tools a pattern adds to the user's (a run may name them too)."""


def test_the_options_schema_lists_the_tools_a_run_may_name(pattern: str, tmp_path: Any) -> None:
    graph = build(pattern, ScriptedChatModel(script=[]), tmp_path)
    properties = graph.get_context_jsonschema()["properties"]

    def choices(option: str) -> set[str] | None:
        [array] = [b for b in properties[option]["anyOf"] if b.get("type") == "array"]
        return set(array["items"].get("enum") or ()) or None

    if not PATTERNS[pattern].uses_tools:
        assert choices("tools") is None
        return
    tools = {"calculator", "write_file", "read_observation", *OWN_TOOLS.get(pattern, ())}
    assert choices("tools") == tools
    assert choices("deny") == tools
    assert choices("approve") == {*tools, "all"}
    copy = graph.with_config(recursion_limit=50)  # LangGraph's copies keep the list
    assert copy.get_context_jsonschema()["properties"] == properties


def test_well_formed_runs_still_run(tmp_path: Any) -> None:
    model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"], cycle=True)
    graph = build("react", model, tmp_path)
    config = {"configurable": {"thread_id": "t"}}

    message = graph.invoke({"messages": "What is 6*7?"}, config)["messages"][-1]
    single = graph.invoke({"messages": HumanMessage("And 6*7?")}, config)["messages"][-1]
    options = AgentContext(max_model_calls=3, approve=["calculator"], tools=["calculator"])
    paused = graph.invoke(QUESTION, config, context=options)

    assert (message.content, single.content) == ("42", "42")
    assert paused["__interrupt__"]  # the run's approval list applies
    assert graph.invoke(None, config, context={"deny": ["write_file"]})  # carries on
