"""Plain LangChain tools behave in our graphs as they do under LangGraph's ``ToolNode``.

Each tool is an ordinary ``@tool`` plugged into ``build_graph(tools=[...])``:
handled errors, artifacts, injected call ids, state and runtime, commands,
content blocks and ``return_direct``. Every test runs on the sync face
(``invoke``, on a worker thread) and the async one (``ainvoke``).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, StructuredTool, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import InjectedState, ToolRuntime
from langgraph.types import Command, interrupt
from pydantic.v1 import BaseModel as PydanticV1Model

from reasoning_graphs.graphs import lats, llm_compiler, react, react_text, rewoo
from reasoning_graphs.state import AgentState
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls

FACES = ["invoke", "ainvoke"]
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg"
)


@pytest.fixture(params=FACES)
def face(request: pytest.FixtureRequest) -> str:
    return request.param


async def run(graph: Any, inputs: Any, face: str, **kwargs: Any) -> dict[str, Any]:
    """Run on the chosen face: the sync one on a worker thread, as a sync caller would."""
    if face == "invoke":
        return await asyncio.to_thread(graph.invoke, inputs, **kwargs)
    return await graph.ainvoke(inputs, **kwargs)


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def observation(state: dict[str, Any], call_id: str | None = None) -> ToolMessage:
    found = [
        m
        for m in state["messages"]
        if isinstance(m, ToolMessage) and (call_id is None or m.tool_call_id == call_id)
    ]
    assert len(found) == 1, found
    return found[0]


def action(state: dict[str, Any]) -> dict[str, Any]:
    (event,) = [e for e in state["trajectory"] if e["kind"] == "action"]
    return event


def compiler_plan(tool: str, **args: Any) -> dict[str, Any]:
    return {"tasks": [{"id": 1, "tool": tool, "args": args, "deps": []}]}


COMPILER_ANSWER = {"answer": "done", "replan": False, "reason": ""}


# handled tool errors


@tool
def find_invoice(number: str) -> str:
    """Find an invoice by number."""
    raise ToolException(f"no invoice {number}")


find_invoice.handle_tool_error = True


@tool
def find_order(number: str) -> str:
    """Find an order by number."""
    raise ToolException(f"no order {number}")


find_order.handle_tool_error = lambda error: f"Order lookup failed ({error}); ask for the number."


async def test_a_tool_exception_the_tool_handles_is_an_error_observation(face: str) -> None:
    script = [
        tool_calls(("find_invoice", {"number": "7"}, "c1"), ("find_order", {"number": "9"}, "c2")),
        "Neither exists.",
    ]
    graph = react.build_graph(ScriptedChatModel(script=script), tools=[find_invoice, find_order])

    state = await run(graph, ask("Invoice 7 and order 9?"), face)

    invoice, order = observation(state, "c1"), observation(state, "c2")
    assert (invoice.status, invoice.content) == ("error", "no invoice 7")
    assert (order.status, order.content) == (
        "error",
        "Order lookup failed (no order 9); ask for the number.",
    )
    assert [e["status"] for e in state["trajectory"] if e["kind"] == "action"] == ["error", "error"]
    assert state["messages"][-1].content == "Neither exists."


async def test_a_handled_error_in_a_compiler_task_skips_the_tasks_that_need_it(face: str) -> None:
    plan = {
        "tasks": [
            {"id": 1, "tool": "find_invoice", "args": {"number": "7"}, "deps": []},
            {"id": 2, "tool": "find_order", "args": {"number": "$1"}, "deps": [1]},
        ]
    }
    model = ScriptedChatModel(script=[plan, COMPILER_ANSWER])
    graph = llm_compiler.build_graph(model, tools=[find_invoice, find_order])

    state = await run(graph, ask("Invoice 7?"), face)

    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [(m.name, m.status) for m in results] == [
        ("find_invoice", "error"),
        ("find_order", "error"),
    ]
    assert results[0].content == "no invoice 7"
    assert results[1].content.startswith("Not run: it needs the result of $1")


# artifacts


@tool(response_format="content_and_artifact")
def fetch_rows(table: str) -> tuple[str, list[dict[str, int]]]:
    """Fetch the rows of a table."""
    rows = [{"id": 1}, {"id": 2}]
    return f"{len(rows)} rows from {table}", rows


async def test_an_artifact_stays_on_the_tool_message(face: str) -> None:
    script = [tool_call("fetch_rows", id="c1", table="users"), "Two users."]
    graph = react.build_graph(ScriptedChatModel(script=script), tools=[fetch_rows])

    state = await run(graph, ask("How many users?"), face)

    message = observation(state, "c1")
    assert message.content == "2 rows from users"
    assert message.artifact == [{"id": 1}, {"id": 2}]
    assert message.response_metadata["decision"] == "auto"
    assert action(state)["observation"] == "2 rows from users"


async def test_an_artifact_stays_on_a_compiler_task_result(face: str) -> None:
    model = ScriptedChatModel(script=[compiler_plan("fetch_rows", table="users"), COMPILER_ANSWER])
    graph = llm_compiler.build_graph(model, tools=[fetch_rows])

    state = await run(graph, ask("How many users?"), face)

    message = observation(state)
    assert (message.content, message.artifact) == ("2 rows from users", [{"id": 1}, {"id": 2}])
    assert message.response_metadata["decision"] == "auto"


# injected call id, state and runtime


@tool
def stamp(note: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Stamp a note with the id of this call."""
    return f"{note} [{tool_call_id}]"


@tool
def recall(topic: str, messages: Annotated[list, InjectedState("messages")]) -> str:
    """Recall what the user first said about a topic."""
    return f"{topic}: the user first said {messages[0].content!r}"


@tool
def state_keys(what: str, state: Annotated[dict, InjectedState]) -> str:
    """List the keys of the graph state."""
    return f"{what}: {', '.join(sorted(state))}"


@tool
def inspect_run(what: str, runtime: ToolRuntime) -> str:
    """Describe the run this call belongs to."""
    tools = ", ".join(sorted(t.name for t in runtime.tools))
    count = len(runtime.state["messages"])
    return f"{what}: call {runtime.tool_call_id}, {count} messages, tools {tools}"


async def test_injected_call_id_state_and_runtime_reach_the_tool(face: str) -> None:
    calls = tool_calls(
        ("stamp", {"note": "seen"}, "c1"),
        ("recall", {"topic": "pets"}, "c2"),
        ("state_keys", {"what": "keys"}, "c3"),
        ("inspect_run", {"what": "run"}, "c4"),
    )
    model = ScriptedChatModel(script=[calls, "ok"])
    graph = react.build_graph(model, tools=[stamp, recall, state_keys, inspect_run])

    state = await run(graph, ask("I have a cat."), face)

    assert observation(state, "c1").content == "seen [c1]"
    assert observation(state, "c2").content == "pets: the user first said 'I have a cat.'"
    assert observation(state, "c3").content == (
        "keys: messages, observations, outcome, rejected, to_run, trajectory"
    )
    # stateful calls run in order, so the fourth sees the three results before it
    assert observation(state, "c4").content == (
        "run: call c4, 5 messages, tools inspect_run, read_observation, recall, stamp, state_keys"
    )
    assert all(observation(state, c).status == "success" for c in ("c1", "c2", "c3", "c4"))


async def test_injected_state_reaches_a_compiler_task(face: str) -> None:
    model = ScriptedChatModel(script=[compiler_plan("recall", topic="pets"), COMPILER_ANSWER])
    graph = llm_compiler.build_graph(model, tools=[recall, stamp])

    state = await run(graph, ask("I have a cat."), face)

    assert observation(state).content == "pets: the user first said 'I have a cat.'"


# interrupts


@tool
def refund(amount: int) -> str:
    """Refund an amount after a person confirms it."""
    answer = interrupt({"question": f"Refund {amount}?"})
    return f"refunded {amount}" if answer == "yes" else "refund cancelled"


async def test_an_interrupt_inside_a_tool_pauses_the_run_until_resumed(face: str) -> None:
    model = ScriptedChatModel(script=[tool_call("refund", id="c1", amount=5), "Refunded."])
    graph = react.build_graph(model, tools=[refund], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"refund-{face}"}}

    paused = await run(graph, ask("Refund 5."), face, config=config)
    assert paused["__interrupt__"][0].value == {"question": "Refund 5?"}

    state = await run(graph, Command(resume="yes"), face, config=config)
    assert observation(state, "c1").content == "refunded 5"
    assert state["messages"][-1].content == "Refunded."


# commands


@tool
def remember(person: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Remember the user's name for later."""
    return Command(
        update={
            "messages": [ToolMessage(f"Saved {person}.", tool_call_id=tool_call_id)],
            "observations": {"profile": f"name={person}"},
            "user_name": person,
        }
    )


def prompt_text(prompt: list[Any]) -> str:
    return "\n".join(str(message.content) for message in prompt)


async def test_react_applies_a_commands_update_and_names_what_it_cannot(face: str) -> None:
    script = [tool_call("remember", id="c1", person="Ada"), "Hello Ada."]
    model = ScriptedChatModel(script=script)
    graph = react.build_graph(model, tools=[remember])

    state = await run(graph, ask("I am Ada."), face)

    message = observation(state, "c1")
    assert message.content == "Saved Ada."  # the tool's own; the model is told the rest
    told = prompt_text(model.prompts[1])
    assert "update the graph state ('user_name')" in told
    assert "this graph's state has no such key" in told
    assert message.status == "success"
    assert message.response_metadata["decision"] == "auto"
    assert state["observations"] == {"profile": "name=Ada"}  # a key the state has: applied
    assert "user_name" not in state
    assert state["messages"][-1].content == "Hello Ada."
    # something is stored now, so the model is offered the tool that reads it
    assert model.calls[1].tools == ["remember", "read_observation"]


async def test_react_text_applies_a_commands_update(face: str) -> None:
    script = [
        'Thought: save it\nAction: remember\nAction Input: {"person": "Ada"}',
        "Thought: saved\nFinal Answer: Hello Ada.",
    ]
    graph = react_text.build_graph(ScriptedChatModel(script=script), tools=[remember])

    state = await run(graph, ask("I am Ada."), face)

    assert observation(state).content.startswith("Saved Ada.")
    assert state["observations"] == {"profile": "name=Ada"}
    assert state["messages"][-1].content == "Hello Ada."


@tool
def book_table(time: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Book a table; the booking confirmation is the final answer."""
    return Command(
        update={"messages": [ToolMessage(f"Booked for {time}.", tool_call_id=tool_call_id)]},
        goto=END,
    )


@tool
def transfer(to: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Transfer the conversation to another node."""
    return Command(
        update={"messages": [ToolMessage(f"Transferring to {to}.", tool_call_id=tool_call_id)]},
        goto=to,
    )


async def test_a_command_that_goes_to_end_ends_the_turn_with_its_result(face: str) -> None:
    model = ScriptedChatModel(script=[tool_call("book_table", time="8pm")])
    graph = react.build_graph(model, tools=[book_table])

    state = await run(graph, ask("Book for 8pm."), face)

    assert len(model.calls) == 1
    assert state["messages"][-1] == AIMessage(
        "Booked for 8pm.",
        response_metadata={"outcome": {"status": "answered"}, "return_direct": ["book_table"]},
        id=state["messages"][-1].id,
    )
    assert state["outcome"] == {"status": "answered"}


async def test_a_goto_inside_the_graph_is_named_not_followed(face: str) -> None:
    model = ScriptedChatModel(script=[tool_call("transfer", id="c1", to="billing"), "Done."])
    graph = react.build_graph(model, tools=[transfer])

    state = await run(graph, ask("Billing, please."), face)

    message = observation(state, "c1")
    assert message.content == "Transferring to billing."
    told = prompt_text(model.prompts[1])
    assert "go to 'billing'" in told
    assert "this graph's loop chooses its next step itself" in told
    assert state["messages"][-1].content == "Done."


@tool
def forgetful(person: str) -> Command:
    """Return a command without the call's ToolMessage."""
    return Command(update={"user_name": person})


async def test_a_command_without_the_calls_message_is_an_error_observation(face: str) -> None:
    model = ScriptedChatModel(script=[tool_call("forgetful", id="c1", person="Ada"), "Sorry."])
    graph = react.build_graph(model, tools=[forgetful])

    state = await run(graph, ask("I am Ada."), face)

    message = observation(state, "c1")
    assert message.status == "error"
    assert "returned a Command whose update has no ToolMessage for this call" in message.content
    assert state["messages"][-1].content == "Sorry."


@tool
def hand_off(reason: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Hand the conversation to a person."""
    message = ToolMessage(f"Handing off: {reason}", tool_call_id=tool_call_id)
    return Command(graph=Command.PARENT, goto="person", update={"messages": [message]})


async def test_a_command_for_the_parent_graph_is_passed_up(face: str) -> None:
    model = ScriptedChatModel(script=[tool_call("hand_off", reason="refund")])
    agent = react.build_graph(model, tools=[hand_off])

    def person(state: AgentState) -> dict[str, Any]:
        return {"messages": [AIMessage("A person will call you.")]}

    parent = StateGraph(AgentState)
    parent.add_node("agent", agent)
    parent.add_node("person", person)
    parent.add_edge(START, "agent")
    parent.add_edge("person", END)
    state = await run(parent.compile(), ask("Refund, please."), face)

    assert state["messages"][-2].content == "Handing off: refund"
    assert state["messages"][-1].content == "A person will call you."


async def test_an_llm_compiler_task_turns_a_command_into_an_observation(face: str) -> None:
    model = ScriptedChatModel(script=[compiler_plan("remember", person="Ada"), COMPILER_ANSWER])
    graph = llm_compiler.build_graph(model, tools=[remember])

    state = await run(graph, ask("I am Ada."), face)

    message = observation(state)
    assert message.content == "Saved Ada."
    told = prompt_text(model.prompts[-1])
    assert "update the graph state ('observations', 'user_name')" in told
    assert "LLM Compiler tasks pass on only their results" in told
    assert message.status == "success"
    assert not state.get("observations")


async def test_lats_turns_a_command_into_an_observation(face: str) -> None:
    grade = {"feedback": "fine", "score": 0.5}
    script = [tool_call("remember", person="Ada"), grade, "Hello Ada."]
    graph = lats.build_graph(
        ScriptedChatModel(script=script), tools=[remember], candidates=1, max_expansions=1
    )

    state = await run(graph, ask("I am Ada."), face)

    (child,) = [n for n in state["tree"]["nodes"] if n["call"] is not None]
    assert child["observation"].startswith("Saved Ada.")
    assert "LATS keeps tool results only as observations" in child["observation"]
    assert not state.get("observations")


# content blocks


@tool
def chart(metric: str) -> list[dict[str, str]]:
    """Draw a chart of a metric."""
    return [
        {"type": "text", "text": f"Chart of {metric}."},
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
    ]


@tool
def report(metric: str) -> list[dict[str, str]]:
    """A long report with a chart."""
    return [
        {"type": "text", "text": "".join(f"{metric} line {i:04d}\n" for i in range(300))},
        {"type": "image", "base64": PNG, "mime_type": "image/png"},
    ]


async def test_content_blocks_stay_blocks(face: str) -> None:
    script = [tool_call("chart", id="c1", metric="sales"), "Sales are up."]
    model = ScriptedChatModel(script=script)
    graph = react.build_graph(model, tools=[chart])

    state = await run(graph, ask("Chart sales."), face)

    message = observation(state, "c1")
    assert message.content == chart.invoke({"metric": "sales"})
    assert action(state)["observation"] == "Chart of sales.\n[image]"
    assert message in model.prompts[1]


async def test_long_content_blocks_are_cut_as_text_and_keep_their_media(face: str) -> None:
    script = [tool_call("report", id="c1", metric="sales"), "Read it."]
    model = ScriptedChatModel(script=script)
    graph = react.build_graph(model, tools=[report], max_observation_chars=500)

    state = await run(graph, ask("Report sales."), face)

    kept = observation(state, "c1")  # the tool's own content blocks, whole
    assert (
        kept.content
        == report.invoke(tool_call("report", id="c1", metric="sales").tool_calls[0]).content
    )
    (message,) = [m for m in model.prompts[1] if isinstance(m, ToolMessage)]  # as read
    text, image = message.content
    assert text["type"] == "text"
    assert len(text["text"]) <= 500
    assert "read_observation(ref='obs-c1')" in text["text"]
    assert image["type"] == "image"
    assert state["observations"]["obs-c1"].startswith("sales line 0000\n")
    assert state["observations"]["obs-c1"].endswith("sales line 0299\n\n[image]")


# return_direct


@tool(return_direct=True)
def order_status(order_id: str) -> str:
    """Look up the status of an order; the status is the answer."""
    return f"Order {order_id} has shipped."


@tool
def lookup(item: str) -> str:
    """Look something up."""
    return f"{item} found"


@tool(return_direct=True)
def broken_status(order_id: str) -> str:
    """Look up an order's status (currently broken)."""
    raise RuntimeError("status service down")


def direct_answer(state: dict[str, Any], text: str) -> None:
    final = state["messages"][-1]
    assert isinstance(final, AIMessage)
    assert final.content == text
    assert final.response_metadata["outcome"] == {"status": "answered"}
    assert state["outcome"] == {"status": "answered"}


async def test_return_direct_ends_the_react_turn_with_the_result(face: str) -> None:
    model = ScriptedChatModel(script=[tool_call("order_status", order_id="42")])
    graph = react.build_graph(model, tools=[order_status, lookup])

    state = await run(graph, ask("Where is order 42?"), face)

    direct_answer(state, "Order 42 has shipped.")
    assert len(model.calls) == 1


async def test_return_direct_ends_the_react_text_turn_with_the_result(face: str) -> None:
    script = ['Thought: check\nAction: order_status\nAction Input: {"order_id": "42"}']
    model = ScriptedChatModel(script=script)
    graph = react_text.build_graph(model, tools=[order_status, lookup])

    state = await run(graph, ask("Where is order 42?"), face)

    direct_answer(state, "Order 42 has shipped.")
    assert len(model.calls) == 1


async def test_return_direct_ends_a_rewoo_plan_without_the_solver(face: str) -> None:
    plan = {
        "steps": [
            {"var": "E1", "tool": "order_status", "reason": "check", "args": {"order_id": "42"}}
        ]
    }
    model = ScriptedChatModel(script=[plan])
    graph = rewoo.build_graph(model, tools=[order_status, lookup])

    state = await run(graph, ask("Where is order 42?"), face)

    direct_answer(state, "Order 42 has shipped.")
    assert len(model.calls) == 1


async def test_the_model_goes_on_when_not_every_call_returns_directly(face: str) -> None:
    script = [
        tool_calls(("order_status", {"order_id": "42"}, "c1"), ("lookup", {"item": "x"}, "c2")),
        tool_call("broken_status", id="c3", order_id="42"),
        "Order 42 has shipped; x found.",
    ]
    model = ScriptedChatModel(script=script)
    graph = react.build_graph(model, tools=[order_status, lookup, broken_status])

    state = await run(graph, ask("Order 42 and x?"), face)

    assert len(model.calls) == 3  # a mixed round and a failed direct call both go back
    assert observation(state, "c3").status == "error"
    assert state["messages"][-1].content == "Order 42 has shipped; x found."


class _ShelfArguments(PydanticV1Model):
    shelf: int


def _count_books(shelf: int) -> str:
    return f"Shelf {shelf} holds 12 books."


async def test_a_tool_with_a_pydantic_v1_schema_runs(face: str) -> None:
    count_books = StructuredTool.from_function(
        _count_books, name="count_books", description="Count a shelf.", args_schema=_ShelfArguments
    )
    model = ScriptedChatModel(script=[tool_call("count_books", id="c1", shelf=3), "12 books."])
    graph = react.build_graph(model, tools=[count_books])

    state = await run(graph, ask("How many books on shelf 3?"), face)

    assert observation(state, "c1").content == "Shelf 3 holds 12 books."
    assert state["messages"][-1].content == "12 books."
