"""Context management: the prompt is fitted to the window, the state keeps everything,
and a provider's "too large" refusal is survived with one retry."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import drive
from reasoning_graphs.graphs.plan_execute import build_graph as build_plan_execute
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.react import build_graph as build_react
from reasoning_graphs.graphs.reflexion import build_graph as build_reflexion
from reasoning_graphs.graphs.rewoo import build_graph as build_rewoo
from reasoning_graphs.metadata import settled
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import RunScope, agent_setup
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.nodes.model.window import (
    SUMMARY_INSTRUCTIONS,
    emergency_fit,
    fit_prompt,
    is_context_overflow,
    prompt_limit,
    protected,
    sliding_window,
    steps,
)
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.state import ThoughtEvent
from reasoning_graphs.testing import ScriptedChatModel, tool_call

SYSTEM = "You are a careful research agent. Use tools; cite what they return."
QUESTION = "Which of the twenty reports mentions the Lisbon office, and when?"
SUMMARY = "Goal: find the report on Lisbon. Reports 1-17 read; none mention Lisbon."


class RequestTooLarge(Exception):
    """What an HTTP client raises for a 413 response."""

    status_code = 413


def trajectory(count: int, *, result_chars: int = 1500) -> list[BaseMessage]:
    """A system prompt, the question, and ``count`` steps of one call and its long result."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM), HumanMessage(QUESTION)]
    for number in range(1, count + 1):
        call_id = f"call-{number}"
        thought = f"Report {number} may hold it; I read it next."
        messages.append(
            AIMessage(thought, tool_calls=[tool_call("read_report", number=number).tool_calls[0]])
        )
        messages[-1].tool_calls[0]["id"] = call_id
        body = f"Report {number}: quarterly figures, staff and offices. " * 40
        messages.append(ToolMessage(body[:result_chars], tool_call_id=call_id, name="read_report"))
    return messages


def fixed_summary_event(step: int) -> ThoughtEvent:
    return ThoughtEvent(
        kind="thought",
        turn=1,
        step=step,
        text=SUMMARY,
        tool_calls=[],
        input_tokens=100,
        output_tokens=20,
        latency_ms=0.0,
    )


def fixed_summary(prompt: list[BaseMessage]) -> Iterator[Any]:
    """A summariser that answers without a model (a body that yields nothing)."""
    yield from ()
    return SUMMARY, fixed_summary_event(1)


def is_summary_request(messages: list[BaseMessage]) -> bool:
    return bool(messages) and messages[0].text == SUMMARY_INSTRUCTIONS


def routed(replies: list[Any]) -> Callable[[list[BaseMessage]], Any]:
    """A script item that answers summary requests with :data:`SUMMARY` and the rest in order."""
    queue = iter(replies)

    def reply(messages: list[BaseMessage]) -> Any:
        return SUMMARY if is_summary_request(messages) else next(queue)

    return reply


def asks_the_question(prompt: list[BaseMessage]) -> bool:
    return any(isinstance(m, HumanMessage) and m.text == QUESTION for m in prompt)


def no_split(prompt: list[BaseMessage]) -> bool:
    """Every tool result follows the message that made its call, and every call has its result."""
    for index, message in enumerate(prompt):
        if isinstance(message, ToolMessage):
            callers = [m for m in prompt[:index] if isinstance(m, AIMessage)]
            if not callers or message.tool_call_id not in {c["id"] for c in callers[-1].tool_calls}:
                return False
        if isinstance(message, AIMessage) and message.tool_calls:
            answered = {m.tool_call_id for m in prompt[index + 1 :] if isinstance(m, ToolMessage)}
            if not {c["id"] for c in message.tool_calls} <= answered:
                return False
    return True


def test_protective_keeps_system_and_question_verbatim_and_cuts_80_percent() -> None:
    messages = trajectory(20)

    fitted = drive(protected(messages, fixed_summary))

    assert fitted.prompt[0] == messages[0]
    assert fitted.prompt[1] == messages[1]
    assert estimate_tokens(fitted.prompt) <= 0.2 * estimate_tokens(messages)
    assert messages[-6:] == fitted.prompt[-6:]  # the last 3 steps, verbatim
    assert any(SUMMARY in m.text for m in fitted.prompt)
    assert len(fitted.events) == 1


def test_protective_leaves_a_short_middle_alone() -> None:
    messages = trajectory(6)  # 3 kept steps, a middle of 6 messages

    fitted = drive(protected(messages, fixed_summary))

    assert fitted.prompt == messages
    assert fitted.events == []


def test_the_middle_is_clipped_before_it_is_summarised() -> None:
    asked: list[list[BaseMessage]] = []

    def recording(prompt: list[BaseMessage]) -> Iterator[Any]:
        asked.append(prompt)
        return (yield from fixed_summary(prompt))

    messages = trajectory(20)
    drive(protected(messages, recording))

    middle = sum(len(m.text) for m in messages[2:-6])
    assert len(asked) == 1
    assert len(asked[0][-1].text) < middle / 3


@pytest.mark.parametrize("keep", [1, 2, 3, 4, 5, 7, 20])
def test_the_window_never_splits_a_call_from_its_result(keep: int) -> None:
    messages = trajectory(10)
    messages[4:6] = [  # a step of two calls and two results
        AIMessage(
            "",
            tool_calls=[
                {"name": "read_report", "args": {"number": 2}, "id": "a"},
                {"name": "read_report", "args": {"number": 3}, "id": "b"},
            ],
        ),
        ToolMessage("two", tool_call_id="a"),
        ToolMessage("three", tool_call_id="b"),
    ]

    window = sliding_window(messages, keep)

    assert no_split(window)
    assert window[:2] == messages[:2]
    assert window[-1] == messages[-1]
    assert len(window) <= 2 + max(keep, 2)


def test_an_approval_decision_survives_every_strategy() -> None:
    messages = trajectory(20)
    decided = messages[5].model_copy(update={"response_metadata": settled("rejected")})
    messages[5] = decided  # the person rejected the call of step 2
    limits = Limits(context_window=2000, keep_messages=4)

    for strategy in ("window", "summary", "protective", "hybrid"):
        fitted = drive(
            fit_prompt(
                messages, Limits(**{**vars(limits), "context_strategy": strategy}), fixed_summary
            )
        )
        assert decided in fitted.prompt, strategy
        assert messages[4] in fitted.prompt, strategy  # with the call it decides
        assert no_split(fitted.prompt), strategy
    assert decided in drive(emergency_fit(messages, fixed_summary)).prompt


def test_the_question_is_the_latest_human_message_and_survives() -> None:
    earlier = [HumanMessage("An earlier question"), AIMessage("Its answer")]
    messages = trajectory(12)
    messages[1:1] = earlier

    for fitted in (
        sliding_window(messages, 2),
        drive(protected(messages, fixed_summary)).prompt,
        drive(emergency_fit(messages, fixed_summary)).prompt,
    ):
        assert asks_the_question(fitted)
        assert no_split(fitted)


def test_hybrid_leaves_a_prompt_under_the_threshold_alone() -> None:
    messages = trajectory(3)
    limits = Limits(context_strategy="hybrid", context_window=100_000)

    fitted = drive(fit_prompt(messages, limits, fixed_summary))

    assert fitted.prompt == messages
    assert fitted.events == []


def test_a_summary_is_a_model_call_with_its_thought_event() -> None:
    model = ScriptedChatModel(script=[SUMMARY, "Report 18, in March."])
    limits = Limits(context_strategy="protective")
    run = RunScope(agent_setup(model, []), limits)
    state = {"messages": trajectory(20)[1:]}

    reply = drive(call_model(run, ModelRequest(prompt=trajectory(20)), state))

    assert len(model.calls) == 2
    assert is_summary_request(model.prompts[0])
    assert reply.message.text == "Report 18, in March."
    assert [e["kind"] for e in reply.events] == ["thought", "thought"]
    assert reply.events[0]["text"] == SUMMARY
    assert reply.events[0].get("summary")
    assert not reply.event.get("summary")
    assert reply.event["step"] == 1, "a summary is no step"
    assert reply.event["context_summary"]["text"] == SUMMARY
    assert all(e["input_tokens"] > 0 for e in reply.events)


def test_the_closing_call_past_the_budget_makes_no_summary_call() -> None:
    model = ScriptedChatModel(script=["Report 18, as far as I got."])
    limits = Limits(context_strategy="protective", max_model_calls=3)
    run = RunScope(agent_setup(model, []), limits)
    messages = trajectory(20)
    spent = [fixed_summary_event(step) for step in (1, 2, 3)]
    state = {"messages": messages[1:], "trajectory": spent}

    reply = drive(call_model(run, ModelRequest(prompt=messages), state))

    assert len(model.calls) == 1
    assert reply.preceding == ()
    assert model.prompts[0][:2] == messages[:2]
    assert model.prompts[0][-6:] == messages[-6:]
    assert estimate_tokens(model.prompts[0]) < estimate_tokens(messages) / 2


@pytest.mark.parametrize(
    "error",
    [
        RequestTooLarge("Payload Too Large"),
        ContextOverflowError("This model's maximum context length is 8192 tokens."),
        ValueError("Requested tokens (9000) exceed context window of 8192"),
        RuntimeError("the request exceeds the available context size, try increasing it"),
    ],
)
def test_provider_refusals_for_size_are_recognised(error: Exception) -> None:
    assert is_context_overflow(error)


@pytest.mark.parametrize(
    "error", [ValueError("bad argument"), RuntimeError("Connection reset"), TimeoutError()]
)
def test_other_errors_are_not_taken_for_an_overflow(error: Exception) -> None:
    assert not is_context_overflow(error)


def test_an_overflow_on_the_first_call_is_summarised_and_retried_once() -> None:
    model = ScriptedChatModel(script=[RequestTooLarge("413"), SUMMARY, "Report 18."])
    run = RunScope(agent_setup(model, []), Limits())
    messages = trajectory(20)

    reply = drive(call_model(run, ModelRequest(prompt=messages), {"messages": messages[1:]}))

    assert reply.message.text == "Report 18."
    retried = model.prompts[2]
    assert retried[:2] == messages[:2]
    assert retried[-4:] == messages[-4:]  # the last 2 steps, verbatim
    assert estimate_tokens(retried) < estimate_tokens(messages) / 2
    assert [e["text"] for e in reply.preceding] == [SUMMARY]


def test_a_second_overflow_propagates() -> None:
    model = ScriptedChatModel(script=[RequestTooLarge("413"), SUMMARY, RequestTooLarge("413")])
    run = RunScope(agent_setup(model, []), Limits())
    messages = trajectory(20)

    with pytest.raises(RequestTooLarge):
        drive(call_model(run, ModelRequest(prompt=messages), {"messages": messages[1:]}))


def test_another_error_is_not_retried() -> None:
    model = ScriptedChatModel(script=[PermissionError("bad key"), "never"])
    run = RunScope(agent_setup(model, []), Limits())

    with pytest.raises(PermissionError):
        drive(call_model(run, ModelRequest(prompt=[HumanMessage("Hi")])))
    assert len(model.calls) == 1


@tool
def read_report(number: int) -> str:
    """Read one report by its number."""
    return f"Report {number}: quarterly figures, staff and offices. " * 8


def test_react_recovers_from_a_413_on_its_first_call() -> None:
    model = ScriptedChatModel(
        script=[RequestTooLarge("413"), tool_call("read_report", number=18), "Report 18."]
    )
    graph = build_react(model, tools=[read_report])

    state = graph.invoke({"messages": [HumanMessage(QUESTION)]})

    assert state["messages"][-1].text == "Report 18."
    assert state["outcome"] == {"status": "answered"}


def test_rewoo_recovers_from_a_413_on_its_first_call() -> None:
    plan = {"steps": [{"var": "E1", "tool": "read_report", "args": {"number": 18}, "reason": "r"}]}
    model = ScriptedChatModel(script=[RequestTooLarge("413"), plan, "Report 18."])
    graph = build_rewoo(model, tools=[read_report])

    state = graph.invoke({"messages": [HumanMessage(QUESTION)]})

    assert state["messages"][-1].text == "Report 18."
    assert state["outcome"] == {"status": "answered"}


def test_plan_execute_recovers_from_a_413_on_its_first_call() -> None:
    model = ScriptedChatModel(
        script=[
            RequestTooLarge("413"),
            Plan(steps=["Read report 18."]),
            tool_call("read_report", number=18),
            "Report 18.",
            Replan(response="Report 18."),
        ]
    )
    graph = build_plan_execute(model, tools=[read_report])

    state = graph.invoke({"messages": [HumanMessage(QUESTION)]})

    assert state["messages"][-1].text == "Report 18."
    assert state["outcome"] == {"status": "answered"}


def test_reflexion_recovers_from_a_413_on_its_first_call() -> None:
    model = ScriptedChatModel(
        script=[
            RequestTooLarge("413"),
            tool_call("read_report", number=18),
            "Report 18.",
            Judgement(feedback="Right.", score=1.0),
        ]
    )
    graph = build_reflexion(model, tools=[read_report])

    state = graph.invoke({"messages": [HumanMessage(QUESTION)]})

    assert state["messages"][-1].text == "Report 18."
    assert state["outcome"]["status"] == "answered"


def test_a_60_round_hybrid_run_never_sends_a_prompt_past_the_threshold() -> None:
    rounds = [tool_call("read_report", number=n) for n in range(1, 61)]
    model = ScriptedChatModel(script=[routed([*rounds, "Report 60."])], cycle=True)
    options: dict[str, Any] = {
        "context_strategy": "hybrid",
        "context_window": 3000,
        "keep_messages": 8,
        "max_model_calls": None,
        "max_tool_calls": None,
    }
    graph = build_react(model, tools=[read_report], system_prompt=SYSTEM, **options)

    state = graph.invoke({"messages": [HumanMessage(QUESTION)]}, {"recursion_limit": 1000})

    limit = prompt_limit(Limits(context_window=3000))
    assert limit is not None
    assert state["messages"][-1].text == "Report 60."
    assert sum(isinstance(m, ToolMessage) for m in state["messages"]) == 60  # state keeps all
    sent = model.prompts
    assert max(estimate_tokens(prompt) for prompt in sent) <= limit
    assert any(is_summary_request(prompt) for prompt in sent)  # it did have to compress
    for prompt in sent:
        assert no_split(prompt)
        if not is_summary_request(prompt):
            assert prompt[0].text == SYSTEM
            assert asks_the_question(prompt)
    assert len(steps(sent[-1])) < 60


def test_the_question_is_kept_when_later_human_messages_carry_observations() -> None:
    """Text-format prompts send observations, and closing instructions, as human messages."""
    prompt: list[BaseMessage] = [SystemMessage(SYSTEM), HumanMessage(QUESTION)]
    for number in range(1, 21):
        prompt.append(AIMessage(f'Action: read_report\nAction Input: {{"number": {number}}}'))
        prompt.append(HumanMessage(f"Observation: Report {number}. " + "Figures. " * 150))
    prompt.append(HumanMessage("Answer now with what you have."))
    model = ScriptedChatModel(script=[routed(["Report 18."])], cycle=True)
    run = RunScope(agent_setup(model, []), Limits(context_strategy="protective"))
    state = {"messages": [HumanMessage(QUESTION), AIMessage("…")]}

    reply = drive(call_model(run, ModelRequest(prompt=prompt), state))

    sent = model.prompts[-1]
    assert reply.message.text == "Report 18."
    assert sent[:2] == prompt[:2]
    assert sent[-1] == prompt[-1]
    assert estimate_tokens(sent) < estimate_tokens(prompt) / 4
