"""The grounding report: which claims of a final answer the question's tool observations back."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.graphs.react_text import build_graph as build_text_graph
from reasoning_graphs.metadata import settled
from reasoning_graphs.nodes.grounding import report as grounding
from reasoning_graphs.nodes.grounding.report import find_claims, grounding_report
from reasoning_graphs.nodes.model.trajectory import action_event
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.state import AgentState, Claim, GroundingReport
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator
from reasoning_graphs.tools.execute import observation_ref


@tool
def population(city: str) -> str:
    """Look up a city's population."""
    return {
        "Paris": "Paris: 2,102,650 inhabitants (census of 1 January 2023).",
        "Lyon": "Lyon: 522,250 inhabitants.",
    }.get(city, f"No data for {city}.")


@tool
def failing_lookup(city: str) -> str:
    """A lookup whose backend is down."""
    raise ValueError(f"backend down while looking up {city} (2,102,650 cached rows lost)")


def conversation(question: str, *turn: AnyMessage) -> list[AnyMessage]:
    return [HumanMessage(question), *turn]


def call(call_id: str, name: str, text: str = "", **args: Any) -> AIMessage:
    return AIMessage(text, tool_calls=[{"name": name, "args": args, "id": call_id}])


def result(call_id: str, name: str, text: str, **extra: Any) -> ToolMessage:
    return ToolMessage(text, tool_call_id=call_id, name=name, **extra)


def claims_by_text(report: GroundingReport) -> dict[str, Claim]:
    return {claim["text"]: claim for claim in report["claims"]}


def kinds(text: str) -> list[tuple[str, str]]:
    return [(found.kind, found.key) for found in find_claims(text)]


# --- finding claims ----------------------------------------------------------


def test_english_claims_are_names_numbers_and_dates() -> None:
    text = (
        "The Eiffel Tower in Paris is 330 metres tall; it opened on 31 March 1889 (2,000 guests)."
    )

    assert kinds(text) == [
        ("name", "eiffel tower"),
        ("name", "paris"),
        ("number", "330"),
        ("date", "1889-03-31"),
        ("number", "2000"),
    ]


def test_chinese_claims_are_names_numbers_and_dates() -> None:
    text = (
        "北京市人口约两千一百八十九万，《红楼梦》作者曹雪芹，艾萨克·牛顿出生于1643年。"
        "2024年5月5日，清华大学有3.5万名学生。"
    )

    found = kinds(text)

    assert ("name", "北京市") in found
    assert ("number", "21890000") in found  # 两千一百八十九万
    assert ("name", "红楼梦") in found
    assert ("name", "艾萨克·牛顿") in found
    assert ("date", "2024-05-05") in found
    assert ("name", "清华大学") in found
    assert ("number", "35000") in found  # 3.5万


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("1,234,567", "1234567"),
        ("1234567", "1234567"),
        ("3.50", "3.5"),
        ("-12", "-12"),
        ("一千二百三十四", "1234"),
        ("1.2 million", "1200000"),
        ("12%", "12"),
    ],
)
def test_numbers_are_keyed_by_value(written: str, value: str) -> None:
    assert kinds(f"It is {written} now.") == [("number", value)]


def test_numbers_stuck_to_words_list_markers_and_times_are_no_claims() -> None:
    assert kinds("1. H2O and COVID-19 came 1st at 10:30.") == [("name", "covid")]


@pytest.mark.parametrize("written", ["2024-05-05", "5 May 2024", "May 5, 2024", "2024年5月5日"])
def test_one_date_in_any_spelling(written: str) -> None:
    assert kinds(f"On {written}, it rained.") == [("date", "2024-05-05")]


# --- judging claims ----------------------------------------------------------


def test_numbers_with_separators_are_backed_by_the_same_value() -> None:
    messages = conversation(
        "How many people live in Paris?",
        call("c1", "population", city="Paris"),
        result("c1", "population", "Paris: 2102650 inhabitants."),
    )

    report = grounding_report("About 2,102,650 people.", messages)

    claim = claims_by_text(report)["2,102,650"]
    assert claim["supported"]
    assert claim["support"] is not None
    assert claim["support"]["call_id"] == "c1"
    assert "2102650" in claim["support"]["excerpt"]


def test_chinese_answer_backed_by_an_english_observation() -> None:
    messages = conversation(
        "巴黎有多少人口？",
        call("c1", "population", city="Paris"),
        result("c1", "population", "Paris: 2,102,650 inhabitants (census of 1 January 2023)."),
    )

    report = grounding_report("巴黎人口为2102650人（2023年1月1日）。", messages)

    by_text = claims_by_text(report)
    assert by_text["2102650"]["supported"]
    assert by_text["2023年1月1日"]["supported"]
    assert report["supported"] == 2


def test_a_claim_found_only_in_a_thought_is_unsupported() -> None:
    messages = conversation(
        "How many people live in Lyon?",
        call("c1", "population", "I recall Lyon has 516,092 people; let me check.", city="Lyon"),
        result("c1", "population", "No data for Lyon."),
    )

    report = grounding_report("Lyon has 516,092 people.", messages)

    claim = claims_by_text(report)["516,092"]
    assert not claim["supported"]
    assert claim["found_in"] == "thought"
    assert claim["support"] is None
    assert claims_by_text(report)["Lyon"]["found_in"] == "observation"
    assert report["unsupported"] == 1


def test_a_claim_found_nowhere_else_rests_on_the_answer() -> None:
    report = grounding_report("It opened in 1889.", conversation("When did it open?"))

    assert [(c["text"], c["found_in"], c["supported"]) for c in report["claims"]] == [
        ("1889", "answer", False)
    ]
    assert report["unsupported"] == 1


def test_restating_the_question_is_not_counted_as_unsupported() -> None:
    report = grounding_report("23*17+4 is 395.", conversation("What is 23*17+4?"))

    found = {c["text"]: c["found_in"] for c in report["claims"]}
    assert found == {"23": "question", "17": "question", "4": "question", "395": "answer"}
    assert report["unsupported"] == 1


def test_the_supporting_observation_is_the_one_that_holds_the_claim() -> None:
    messages = conversation(
        "Compare Paris and Lyon.",
        AIMessage(
            "",
            tool_calls=[
                {"name": "population", "args": {"city": "Paris"}, "id": "p"},
                {"name": "population", "args": {"city": "Lyon"}, "id": "l"},
            ],
        ),
        result("p", "population", "Paris: 2,102,650 inhabitants."),
        result("l", "population", "Lyon: 522,250 inhabitants."),
    )

    report = grounding_report("Lyon has 522,250 people and Paris 2,102,650.", messages)

    by_text = claims_by_text(report)
    lyon, paris = by_text["522,250"]["support"], by_text["2,102,650"]["support"]
    assert lyon is not None
    assert paris is not None
    assert (lyon["call_id"], lyon["tool"]) == ("l", "population")
    assert "522,250" in lyon["excerpt"]
    assert (paris["call_id"], paris["tool"]) == ("p", "population")


@pytest.mark.parametrize(
    "observation",
    [
        result("c1", "population", "Paris: 2,102,650", status="error"),
        result("c1", "population", "Paris: 2,102,650", response_metadata=settled("responded")),
        result("c1", "population", "Paris: 2,102,650", response_metadata=settled("rejected")),
    ],
    ids=["error", "written-by-a-person", "rejected"],
)
def test_only_a_tool_that_ran_and_succeeded_backs_a_claim(observation: ToolMessage) -> None:
    messages = conversation("Paris?", call("c1", "population", city="Paris"), observation)

    report = grounding_report("2,102,650 people.", messages)

    assert not claims_by_text(report)["2,102,650"]["supported"]


def test_an_earlier_questions_observation_backs_nothing() -> None:
    messages = [
        *conversation(
            "Paris?",
            call("c1", "population", city="Paris"),
            result("c1", "population", "Paris: 2,102,650 inhabitants."),
            AIMessage("2,102,650."),
        ),
        HumanMessage("And again?"),
    ]

    report = grounding_report("Still 2,102,650.", messages)

    assert report["turn"] == 2
    claim = claims_by_text(report)["2,102,650"]
    assert (claim["supported"], claim["found_in"]) == (False, "answer")


def test_a_cut_observation_is_read_in_full() -> None:
    shown = "Paris: ... [cut] ..."
    messages = conversation(
        "Paris?", call("c1", "population", city="Paris"), result("c1", "population", shown)
    )
    full = {observation_ref("c1"): "Paris: " + "x " * 500 + "2,102,650 inhabitants."}

    report = grounding_report("2,102,650 people.", messages, full_texts=full)

    assert claims_by_text(report)["2,102,650"]["supported"]


def test_tool_calls_run_outside_the_conversation_count_through_the_trajectory() -> None:
    event = action_event(
        turn=1,
        step=1,
        call_id="s1",
        tool="population",
        args={"city": "Lyon"},
        observation="Lyon: 522,250 inhabitants.",
        status="success",
        decision="auto",
    )

    report = grounding_report("522,250.", conversation("Lyon?"), trajectory=[event])

    support = claims_by_text(report)["522,250"]["support"]
    assert support is not None
    assert support["call_id"] == "s1"


# --- the node ----------------------------------------------------------------


def finished_react_run(**options: Any) -> dict[str, Any]:
    model = ScriptedChatModel(
        script=[
            tool_call("population", id="c1", city="Paris"),
            AIMessage(
                "Paris had 2,102,650 inhabitants on 1 January 2023, more than Lyon's 516,092."
            ),
        ]
    )
    graph = build_graph(model, tools=[population], **options)
    return graph.invoke({"messages": [HumanMessage("How many people live in Paris?")]})


def test_report_node_on_a_finished_react_run() -> None:
    state = finished_react_run()

    update = grounding.report(state)

    report = update["grounding"]
    assert report is not None
    assert report["turn"] == 1
    by_text = claims_by_text(report)
    for backed in ("Paris", "2,102,650", "1 January 2023"):
        support = by_text[backed]["support"]
        assert support is not None
        assert (support["call_id"], support["tool"]) == ("c1", "population")
    assert by_text["516,092"]["found_in"] == "answer"
    assert by_text["Lyon"]["found_in"] == "answer"
    assert (report["supported"], report["unsupported"]) == (3, 2)


def test_report_node_reads_a_cut_observation_in_full() -> None:
    state = finished_react_run(max_observation_chars=30)
    assert "2,102,650" in state["observations"]["obs-c1"]  # cut for the model, kept in full

    report = grounding.report(state)["grounding"]

    assert claims_by_text(report)["2,102,650"]["supported"]


def test_report_node_writes_nothing_before_an_answer() -> None:
    state = {
        "messages": conversation("Paris?", call("c1", "population", city="Paris")),
        "trajectory": [],
    }

    assert grounding.report(state) == {"grounding": None}


def test_report_node_wired_before_the_end_stores_the_report_per_question() -> None:
    builder = StateGraph(AgentState)
    builder.add_node("report", grounding.report)
    builder.add_edge(START, "report")
    builder.add_edge("report", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "grounding"}}
    state = finished_react_run()

    first = graph.invoke(state, thread)
    second = graph.invoke(
        {"messages": [HumanMessage("And Lyon?"), AIMessage("Lyon has 522,250.")]}, thread
    )

    assert first["grounding"]["turn"] == 1
    assert second["grounding"]["turn"] == 2
    assert [c["found_in"] for c in second["grounding"]["claims"]] == ["question", "answer"]


def test_the_text_format_reply_that_gave_the_answer_is_not_a_thought() -> None:
    model = ScriptedChatModel(
        script=[
            'Thought: I should look it up.\nAction: population\nAction Input: {"city": "Paris"}',
            "Thought: I have it, and Lyon has 516,092.\n"
            "Final Answer: Paris has 2,102,650 people; Lyon 516,092.",
        ]
    )
    graph = build_text_graph(model, tools=[population])
    state = graph.invoke({"messages": [HumanMessage("How many people live in Paris?")]})
    assert state["messages"][-1].text == "Paris has 2,102,650 people; Lyon 516,092."

    report = grounding.report(state)["grounding"]

    found = {c["text"]: c["found_in"] for c in report["claims"]}
    assert found == {
        "Paris": "observation",
        "2,102,650": "observation",
        "Lyon": "answer",
        "516,092": "answer",
    }


# --- the step that ends the question stores the report -------------------------


def assert_reported(state: dict[str, Any]) -> GroundingReport:
    """The stored report is there, and it is the one a report step would write at the end."""
    stored = state.get("grounding")
    assert stored is not None
    assert stored == grounding.report(state)["grounding"]
    return stored


@tool(return_direct=True)
def census(city: str) -> str:
    """The census figure, given to the user as it is."""
    return "Paris: 2,102,650 inhabitants."


def ask_paris() -> dict[str, Any]:
    return {"messages": [HumanMessage("How many people live in Paris?")]}


@pytest.mark.parametrize("options", [{}, {"max_observation_chars": 30}])
def test_the_answering_think_stores_the_report(options: dict[str, Any]) -> None:
    state = finished_react_run(**options)

    report = assert_reported(state)

    assert claims_by_text(report)["2,102,650"]["supported"]


def test_a_tools_direct_answer_stores_the_report() -> None:
    model = ScriptedChatModel(script=[tool_call("census", id="c1", city="Paris")])
    state = build_graph(model, tools=[census]).invoke(ask_paris())

    assert state["messages"][-1].text == "Paris: 2,102,650 inhabitants."
    assert claims_by_text(assert_reported(state))["2,102,650"]["supported"]


def test_an_honest_stop_stores_the_report() -> None:
    model = ScriptedChatModel(
        script=[tool_call("population", id="c1", city="Paris"), "About 2,102,650."]
    )
    state = build_graph(model, tools=[population], max_model_calls=1).invoke(ask_paris())

    assert state["outcome"]["status"] == "incomplete"
    assert claims_by_text(assert_reported(state))["2,102,650"]["supported"]


def test_each_question_of_a_thread_gets_its_own_report() -> None:
    model = ScriptedChatModel(
        script=[
            tool_call("population", id="c1", city="Paris"),
            "Paris has 2,102,650.",
            tool_call("population", id="c2", city="Lyon"),
            "Lyon has 522,250.",
        ]
    )
    graph = build_graph(model, tools=[population], checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "two-questions"}}

    first = graph.invoke(ask_paris(), thread)
    second = graph.invoke({"messages": [HumanMessage("And Lyon?")]}, thread)

    assert assert_reported(first)["turn"] == 1
    report = assert_reported(second)
    assert report["turn"] == 2
    assert claims_by_text(report)["522,250"]["support"]["call_id"] == "c2"


def test_the_text_format_answer_stores_the_report() -> None:
    model = ScriptedChatModel(
        script=[
            'Thought: look it up.\nAction: population\nAction Input: {"city": "Paris"}',
            "Thought: done.\nFinal Answer: Paris has 2,102,650 people.",
        ]
    )
    state = build_text_graph(model, tools=[population]).invoke(ask_paris())

    assert claims_by_text(assert_reported(state))["2,102,650"]["supported"]


def test_the_rewoo_solver_stores_the_report() -> None:
    from reasoning_graphs.graphs.rewoo import build_graph as build_rewoo

    step = {"var": "E1", "tool": "population", "reason": "look up", "args": {"city": "Paris"}}
    model = ScriptedChatModel(script=[{"steps": [step]}, "Paris has 2,102,650 people."])
    state = build_rewoo(model, tools=[population]).invoke(ask_paris())

    assert claims_by_text(assert_reported(state))["2,102,650"]["supported"]


def test_chain_of_thought_stores_the_report_of_its_vote() -> None:
    from reasoning_graphs.graphs.cot import build_graph as build_cot

    model = ScriptedChatModel(script=["Paris is large.\nAnswer: 2,102,650"])
    state = build_cot(model).invoke(ask_paris())

    assert not claims_by_text(assert_reported(state))["2,102,650"]["supported"]  # no tool ran


# --- an incomplete answer: the model's words only ---------------------------------

TOTAL = tool_call("calculator", id="c1", expression="23*17+4")
UNSURE = Judgement(feedback="Unsure.", score=0.3)
STOPPED_SHORT: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "react": ([TOTAL, "The total is 395."], {"max_model_calls": 1}),
    "reflexion": (
        [TOTAL, "The total is 395."],
        {"max_trials": 1, "evaluator": lambda task, answer: {"score": 0.3, "feedback": "Unsure."}},
    ),
    "lats": ([TOTAL, UNSURE, "The total is 395.", UNSURE], {"candidates": 1, "max_expansions": 2}),
}
"""Runs that end incomplete with the model's answer "The total is 395.": a spent step
budget, a best attempt below the threshold, a search that found nothing better."""


def stopped_short(pattern: str, final: Any = "The total is 395.") -> dict[str, Any]:
    script, options = STOPPED_SHORT[pattern]
    model = ScriptedChatModel(script=[*script[:-1], final])
    graph = graph_builder(pattern)(model, [calculator()], **options)
    return graph.invoke({"messages": [HumanMessage("What is 23*17+4?")]})


@pytest.mark.parametrize("pattern", list(STOPPED_SHORT))
def test_an_incomplete_answer_is_grounded_on_the_models_words_only(pattern: str) -> None:
    state = stopped_short(pattern)

    answer = state["messages"][-1]
    assert state["outcome"]["status"] == "incomplete"
    assert answer.text == "The total is 395."
    assert answer.response_metadata["outcome"]["note"]  # why it stopped, beside the answer
    report = assert_reported(state)
    assert [claim["text"] for claim in report["claims"]] == ["395"]
    assert report["claims"][0]["support"]["tool"] == "calculator"


def test_a_stop_note_written_in_place_of_a_reply_makes_no_claims() -> None:
    state = stopped_short("react", final=RuntimeError("the model is down"))

    answer = state["messages"][-1]
    assert answer.text == answer.response_metadata["outcome"]["note"]  # no reply: ours
    assert "395" in answer.text  # the evidence the note quotes
    assert assert_reported(state)["claims"] == []
