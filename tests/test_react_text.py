"""The text-format ReAct graph: recovery from messy output, no invented observations,
format drift, and the same approvals and resume as the native graph."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.graphs.react_text import build_graph
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.text_format import format_reminder
from reasoning_graphs.text_format.grammar import react_text_gbnf
from reasoning_graphs.text_format.labels import CHINESE, labels_for
from reasoning_graphs.text_format.prompt import tool_choice_rule
from reasoning_graphs.text_format.transcript import observation_line
from reasoning_graphs.tools.builtins import calculator
from tests.helpers.tool_log import ToolLog, sleeping_tool


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def prompt_text(model: ScriptedChatModel, call: int) -> str:
    return "\n".join(str(m.content) for m in model.prompts[call])


def test_a_run_full_of_malformed_outputs_recovers_and_answers() -> None:
    script = [
        # no format at all, and not an answer
        "Hmm, let me think about which tool I should use for this.",
        # Thought and Action on one line, unquoted keys, trailing comma
        "Thought: I will multiply first. Action: calculator Action Input: {expression: '23*17',}",
        # tool[args] style, with an invented observation and a made-up final answer after it
        "Thought: now add four\nAction: calculator[391+4]\nObservation: 999\nFinal Answer: 999",
        # missing colon, markdown bold, answer
        "**Thought** the calculator said 395\n**Final Answer:** 395",
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[calculator()])

    state = graph.invoke(ask("What is 23*17+4?"))

    observations = [m.content for m in tool_messages(state)]
    assert observations == ["391", "395"]  # the invented "999" never became an observation
    assert state["messages"][-1].content == "395"
    assert state["outcome"] == {"status": "answered"}
    # the first reply got a corrective observation naming the format and the tools
    second_prompt = prompt_text(model, 1)
    assert "calculator" in second_prompt
    assert "Action Input" in second_prompt
    # the model saw the runtime's observation, never the one it invented
    fourth_prompt = prompt_text(model, 3)
    assert observation_line("395", "calculator") in fourth_prompt
    assert "999" not in fourth_prompt


def test_generation_stops_at_the_observation_label() -> None:
    model = ScriptedChatModel(script=["Final Answer: ok"])
    build_graph(model, tools=[calculator()]).invoke(ask("hi"))

    (call,) = model.calls
    assert call.stop
    assert any(stop.strip().startswith("Observation") for stop in call.stop)


def test_consecutive_format_errors_stop_the_run_with_an_explanation() -> None:
    junk = "I am not sure what to do here, maybe I should look around first."
    model = ScriptedChatModel(script=[junk, junk, junk, "closing words"])
    graph = build_graph(model, tools=[calculator()], max_format_errors=3)

    state = graph.invoke(ask("What is 2+2?"))

    assert state["outcome"]["status"] == "incomplete"
    assert "format drift" in state["outcome"]["reason"]
    assert "3" in state["outcome"]["reason"]
    assert len(model.calls) == 4  # three attempts, then one last answer request
    assert state["messages"][-1].content.startswith("closing words")


def test_a_good_step_resets_the_format_error_count() -> None:
    junk = "I wonder what to do next, I will decide later."
    action = 'Thought: add\nAction: calculator\nAction Input: {"expression": "2+2"}'
    model = ScriptedChatModel(script=[junk, junk, action, junk, junk, "Final Answer: 4"])
    graph = build_graph(model, tools=[calculator()], max_format_errors=3)

    state = graph.invoke(ask("What is 2+2?"))

    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].content == "4"


def test_chinese_labels() -> None:
    script = [
        '思考：我需要计算。\n行动：calculator\n行动输入：{"expression": "6*7"}',
        "思考：得到结果。\n最终答案：42",
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[calculator()], language="zh")

    state = graph.invoke(ask("6乘以7是多少？"))

    assert [m.content for m in tool_messages(state)] == ["42"]
    assert state["messages"][-1].content == "42"
    assert f"{CHINESE.observation}: 42" in prompt_text(model, 1) or "观察" in prompt_text(model, 1)


def test_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="zh"):
        build_graph(ScriptedChatModel(script=[]), tools=[calculator()], language="xx")


def test_approvals_and_resume_behave_as_in_react(log: ToolLog, thread: dict) -> None:
    tools = [sleeping_tool(log, "deploy", safe=False, dangerous=True)]
    script = [
        'Thought: ship it\nAction: deploy\nAction Input: {"item": "prod"}',
        'Thought: try again\nAction: deploy\nAction Input: {"item": "prod"}',
        "Final Answer: not deployed",
    ]
    graph = build_graph(ScriptedChatModel(script=script), tools=tools, checkpointer=InMemorySaver())

    state = graph.invoke(ask("deploy"), thread)
    (interrupt,) = state["__interrupt__"]
    assert interrupt.value["calls"][0]["name"] == "deploy"
    assert log.runs == []

    state = graph.invoke(Command(resume=[{"type": "reject", "reason": "freeze"}]), thread)

    assert log.runs == []
    assert "__interrupt__" not in state  # the repeated call is not asked about again
    assert state["outcome"]["status"] == "answered"  # a repeat alone ends nothing
    assert state["messages"][-1].content == "not deployed"


def test_edit_in_text_mode_runs_the_new_arguments(log: ToolLog, thread: dict) -> None:
    tools = [sleeping_tool(log, "deploy", safe=False, dangerous=True)]
    script = [
        'Thought: ship\nAction: deploy\nAction Input: {"item": "prod"}',
        "Final Answer: deployed to staging",
    ]
    graph = build_graph(ScriptedChatModel(script=script), tools=tools, checkpointer=InMemorySaver())

    graph.invoke(ask("deploy"), thread)
    state = graph.invoke(Command(resume=[{"type": "edit", "args": {"item": "staging"}}]), thread)

    assert log.runs[0]["args"] == {"item": "staging"}
    proposal = next(m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert proposal.tool_calls[0]["args"] == {"item": "prod"}  # the model's own call stays


def test_after_an_edit_the_model_reads_what_ran_in_its_calls_place(
    log: ToolLog, thread: dict
) -> None:
    tools = [sleeping_tool(log, "deploy", safe=False, dangerous=True)]
    script = [
        'Thought: ship it\nAction: deploy\nAction Input: {"item": "prod"}',
        "Final Answer: deployed to staging",
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=tools, checkpointer=InMemorySaver())

    graph.invoke(ask("deploy"), thread)
    graph.invoke(Command(resume=[{"type": "edit", "args": {"item": "staging"}}]), thread)

    shown = prompt_text(model, 1)
    assert 'Executed instead: deploy with arguments {"item": "staging"}' in shown
    assert '"prod"' in shown  # its own call, as it wrote it
    assert "ship it" in shown  # its reasoning is still there


def test_listed_as_a_pattern() -> None:
    assert graph_builder("react_text") is build_graph


def test_grammar_text_compiles_for_llama_cpp() -> None:
    llama_cpp = pytest.importorskip("llama_cpp", reason="the local extra is not installed")
    for labels in (None, CHINESE):
        text = react_text_gbnf(["calculator", "search_docs"], *((labels and [labels]) or []))
        assert llama_cpp.LlamaGrammar.from_string(text, verbose=False) is not None


def test_grammar_mode_needs_the_llama_cpp_model() -> None:
    graph = build_graph(ScriptedChatModel(script=["Final Answer: x"]), grammar=True)

    with pytest.raises(ValueError, match=r"llama\.cpp"):
        graph.invoke(ask("hi"))


def test_cli_runs_the_text_pattern(tmp_path, monkeypatch, capsys) -> None:
    from reasoning_graphs.cli import main as cli
    from reasoning_graphs.cli import runs

    model = ScriptedChatModel(
        script=[
            'Thought: multiply\nAction: calculator\nAction Input: {"expression": "6*7"}',
            "Final Answer: 42",
        ]
    )
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "t.sqlite"))

    code = cli.main(["run", "6*7?", "--pattern", "react_text"])

    out = capsys.readouterr().out
    assert code == 0
    assert "Thought: multiply" in out
    assert "Action: calculator(expression='6*7')" in out
    assert "Observation: 42" in out
    assert "Answer: 42" in out


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_system_prompt_asks_why_this_tool(language: str) -> None:
    model = ScriptedChatModel(script=["Final Answer: ok"])
    build_graph(model, tools=[calculator()], language=language).invoke(ask("hi"))

    system = model.prompts[0][0].text
    assert tool_choice_rule(labels_for(language)) in system


def test_remind_format_restates_the_format_in_every_prompt() -> None:
    action = 'Thought: add\nAction: calculator\nAction Input: {"expression": "2+2"}'
    script = [action, action.replace("2+2", "4*2"), "Final Answer: 8"]
    reminder = format_reminder()

    plain = ScriptedChatModel(script=script)
    build_graph(plain, tools=[calculator()]).invoke(ask("What is (2+2)*2?"))
    reminded = ScriptedChatModel(script=script)
    build_graph(reminded, tools=[calculator()], remind_format=True).invoke(ask("What is (2+2)*2?"))

    assert not any(reminder in prompt_text(plain, call) for call in range(3))
    assert all(reminder in reminded.prompts[call][-1].text for call in range(3))


def test_a_run_may_turn_the_format_reminder_on_but_not_off() -> None:
    script = ["Final Answer: ok"]
    reminder = format_reminder()

    model = ScriptedChatModel(script=script)
    build_graph(model, tools=[calculator()]).invoke(ask("hi"), context={"remind_format": True})
    assert reminder in model.prompts[0][-1].text

    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[calculator()], remind_format=True)
    graph.invoke(ask("hi"), context={"remind_format": False})
    assert reminder in model.prompts[0][-1].text
    with pytest.raises(ValueError, match="remind_format"):
        graph.invoke(ask("hi"), context={"remind_format": "yes"})
