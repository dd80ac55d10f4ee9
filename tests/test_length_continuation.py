"""A reply cut by the length limit is continued and joined; a cut tool call is never run."""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import wrap_model_call
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import drive
from reasoning_graphs.graphs.react import build_graph as build_react
from reasoning_graphs.nodes.guards.budget import question_spending
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import RunScope, agent_setup
from reasoning_graphs.testing import ScriptedChatModel, tool_call

LENGTH = {"finish_reason": "length"}


def cut(text: str) -> AIMessage:
    """A text reply the provider stopped at its length limit."""
    return AIMessage(text, response_metadata=LENGTH)


def cut_call(**args: Any) -> AIMessage:
    """A tool call the provider stopped at its length limit."""
    message = tool_call("calculator", **args)
    message.response_metadata = dict(LENGTH)
    return message


def ask(model: ScriptedChatModel, limits: Limits | None = None) -> ModelReply:
    run = RunScope(agent_setup(model, []), limits or Limits())
    return drive(call_model(run, ModelRequest(prompt=[HumanMessage("What is 23*17+4?")])))


runs: list[str] = []


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    runs.append(expression)
    return "395"


def test_a_cut_answer_is_continued_and_joined() -> None:
    model = ScriptedChatModel(script=[cut("The answer is 39"), "5, from 23*17+4."])

    reply = ask(model)

    assert reply.message.text == "The answer is 395, from 23*17+4."
    assert len(model.calls) == 2
    continued = model.prompts[1]
    assert continued[-2].text == "The answer is 39"  # the model sees what it wrote
    assert isinstance(continued[-1], HumanMessage)
    assert len(reply.events) == 2
    assert reply.events[0]["step"] < reply.events[1]["step"]


def test_a_reply_is_continued_at_most_twice() -> None:
    model = ScriptedChatModel(script=[cut("one, "), cut("two, "), cut("three, "), "four."])

    reply = ask(model)

    assert len(model.calls) == 3
    assert reply.message.text == "one, two, three, "
    assert len(reply.events) == 3


def test_a_complete_text_is_not_continued() -> None:
    model = ScriptedChatModel(script=[cut("It is 395."), "never asked"])

    reply = ask(model)

    assert len(model.calls) == 1
    assert reply.message.text == "It is 395."


def test_a_reply_not_cut_is_taken_as_it_is() -> None:
    model = ScriptedChatModel(script=["The answer is 39", "never asked"])

    assert ask(model).message.text == "The answer is 39"
    assert len(model.calls) == 1


def test_no_continuation_once_the_budget_is_spent() -> None:
    model = ScriptedChatModel(script=[cut("The answer is 39"), "never asked"])
    limits = Limits(max_model_calls=1)
    run = RunScope(agent_setup(model, []), limits)
    spent = {
        "messages": [HumanMessage("q")],
        "trajectory": [
            {
                "kind": "thought",
                "turn": 1,
                "step": 1,
                "text": "",
                "tool_calls": [],
                "input_tokens": 1,
                "output_tokens": 1,
                "latency_ms": 0.0,
            }
        ],
    }

    drive(call_model(run, ModelRequest(prompt=[HumanMessage("q")]), spent))

    assert len(model.calls) == 1


def test_a_cut_tool_call_is_asked_again_not_run() -> None:
    runs.clear()
    model = ScriptedChatModel(
        script=[cut_call(expression="23*17"), tool_call("calculator", expression="23*17+4"), "395"]
    )
    graph = build_react(model, tools=[calculator])

    state = graph.invoke({"messages": [HumanMessage("What is 23*17+4?")]})

    assert runs == ["23*17+4"]
    assert state["messages"][-1].text == "395"


def test_a_tool_call_still_cut_is_never_run() -> None:
    runs.clear()
    script = [cut_call(expression="2"), cut_call(expression="23"), cut_call(expression="23*"), "?"]
    model = ScriptedChatModel(script=script)
    graph = build_react(model, tools=[calculator])

    state = graph.invoke({"messages": [HumanMessage("What is 23*17+4?")]})

    assert runs == []
    assert any(isinstance(m, ToolMessage) and m.status == "error" for m in state["messages"])
    assert state["messages"][-1].text.startswith("?")  # the model's last reply, kept


def test_react_continues_a_cut_final_answer() -> None:
    model = ScriptedChatModel(script=[cut("23*17+4 is 3"), "95."])
    graph = build_react(model, tools=[calculator])

    state = graph.invoke({"messages": [HumanMessage("What is 23*17+4?")]})

    assert state["messages"][-1].text == "23*17+4 is 395."
    assert state["outcome"] == {"status": "answered"}


def test_the_budgets_count_every_part_of_a_continued_reply() -> None:
    """A continuation is a model call: with a model-call budget of two, a tool round whose
    proposal needed a second part leaves no room for another thought."""
    model = ScriptedChatModel(
        script=[cut("Let me compute"), tool_call("calculator", expression="23*17+4"), "395"]
    )
    graph = build_react(model, [calculator], max_model_calls=2)

    state = graph.invoke({"messages": [HumanMessage("What is 23*17+4?")]})

    assert question_spending(state).calls == 3
    assert state["outcome"]["status"] == "incomplete"  # the budget was spent by the third call


def test_every_call_a_hook_makes_while_a_reply_is_continued_is_counted() -> None:
    @wrap_model_call
    def twice(request: Any, handler: Any) -> Any:
        handler(request)  # a hook that asks twice and keeps the second reply
        return handler(request)

    model = ScriptedChatModel(script=[cut("The answer is 39"), cut("The answer is 39"), "5.", "5."])
    graph = build_react(model, tools=[], middleware=[twice])

    state = graph.invoke({"messages": [HumanMessage("What is 23*17+4?")]})

    assert state["messages"][-1].text == "The answer is 395."
    assert len(model.calls) == 4
    assert question_spending(state).calls == 4  # each call the hook made is spent


def test_a_call_whose_arguments_stop_mid_value_is_cut_even_when_the_server_says_finished() -> None:
    """llama.cpp's server reports ``finish_reason: tool_calls`` for a call its length limit
    cut; the arguments, begun and unfinished, say so. Malformed ones are the model's."""
    from langchain_core.messages import AIMessage

    from reasoning_graphs.nodes.model.continuation import was_cut

    def reply(args: str) -> AIMessage:
        call = {"name": "AnswerCheck", "args": args, "id": "c", "error": "not JSON"}
        return AIMessage(
            "", invalid_tool_calls=[call], response_metadata={"finish_reason": "tool_calls"}
        )

    assert was_cut(reply('{"claims": [{"claim": "23*17+4", "quote": "&lt;&lt'))
    assert was_cut(reply("[1, 2"))
    assert not was_cut(reply("{oops"))
    assert not was_cut(reply('{"a": 1,, }'))
