"""LATS: call ids the runtime's own and unique in the thread; tool output shown as data.

A cut observation's full text is kept under a reference made from the call id,
so two calls sharing an id would overwrite each other's text. The judge reads
observations as text, so they must be delimited, labelled data.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs.lats import build_graph
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers.data_blocks import INJECTION, blocks_with
from tests.helpers.tool_log import ToolLog, sleeping_tool

LIMIT = 200
REF = re.compile(r"ref='([^']+)'")


def report(topic: str) -> str:
    """A long report on a topic."""
    return f"report on {topic}: " + " ".join(f"{topic}-{n}" for n in range(300))


def grade(messages: list[BaseMessage]) -> dict[str, Any]:
    """Answers solve the question; steps are promising."""
    finished = "Final answer:" in messages[-1].text
    return {"feedback": "ok", "score": 0.9 if finished else 0.5}


def graph_for(script: list[Any], candidates: int = 1) -> Any:
    model = ScriptedChatModel(script=script)
    return build_graph(
        model,
        tools=[tool_spec(report, concurrency_safe=True)],
        candidates=candidates,
        max_observation_chars=LIMIT,
        checkpointer=InMemorySaver(),
    )


def acted(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [node for node in state["tree"]["nodes"] if node["call"] is not None]


def stored_text(state: dict[str, Any], observation: str) -> str:
    """The full text the cut observation points to."""
    (ref,) = REF.findall(observation)
    return state["observations"][ref]


def test_cut_observations_of_two_questions_on_one_thread_both_stay_retrievable(
    thread: dict[str, Any],
) -> None:
    graph = graph_for(
        [
            tool_call("report", topic="alpha"),
            grade,
            "Alpha reported.",
            grade,
            tool_call("report", topic="beta"),
            grade,
            "Beta reported.",
            grade,
        ]
    )
    graph.invoke({"messages": [HumanMessage("Report on alpha.")]}, thread)
    (first,) = acted(graph.get_state(thread).values)
    graph.invoke({"messages": [HumanMessage("Report on beta.")]}, thread)
    state = graph.get_state(thread).values
    (second,) = acted(state)

    assert first["call"]["id"] != second["call"]["id"]
    assert stored_text(state, first["observation"]) == report("alpha")
    assert stored_text(state, second["observation"]) == report("beta")


def test_candidates_the_model_gave_one_id_get_their_own_ids_and_observations(
    thread: dict[str, Any],
) -> None:
    graph = graph_for(
        [
            tool_call("report", id="same", topic="alpha"),
            tool_call("report", id="same", topic="beta"),
            grade,
            grade,
            "Done.",
            "Done.",
            grade,
        ],
        candidates=2,
    )
    graph.invoke({"messages": [HumanMessage("Report on alpha and beta.")]}, thread)
    state = graph.get_state(thread).values
    nodes = acted(state)

    assert len({node["call"]["id"] for node in nodes}) == 2
    texts = {
        node["call"]["args"]["topic"]: stored_text(state, node["observation"]) for node in nodes
    }
    assert texts == {"alpha": report("alpha"), "beta": report("beta")}


def fetch(url: str) -> str:
    """Fetch a page."""
    return INJECTION


def test_the_judge_sees_a_hostile_observation_inside_one_data_block(
    thread: dict[str, Any],
) -> None:
    model = ScriptedChatModel(
        script=[tool_call("fetch", url="http://example.test"), grade, "Nothing to do.", grade]
    )
    graph = build_graph(model, tools=[fetch], candidates=1, checkpointer=InMemorySaver())
    graph.invoke({"messages": [HumanMessage("What does the page say?")]}, thread)

    shown_as_text = [prompt for prompt in model.prompts if blocks_with(prompt, "PWNED")]
    assert len(shown_as_text) == 2  # the judge of the call, then of the answer after it
    for prompt in shown_as_text:
        assert DATA_RULE in prompt[0].text
        assert blocks_with(prompt, "PWNED") == 1


def test_dangerous_calls_of_one_expansion_are_asked_once_and_run_as_decided(
    thread: dict[str, Any], log: ToolLog
) -> None:
    model = ScriptedChatModel(
        script=[
            tool_call("deploy", item="a"),
            tool_call("deploy", item="b"),
            grade,
            grade,
            "Deployed.",
            "Deployed.",
            grade,
        ]
    )
    deploy = sleeping_tool(log, "deploy", safe=False, dangerous=True)
    graph = build_graph(model, tools=[deploy], candidates=2, checkpointer=InMemorySaver())
    paused = graph.invoke({"messages": [HumanMessage("Deploy.")]}, thread)
    (interrupt,) = paused["__interrupt__"]
    assert [call["args"] for call in interrupt.value["calls"]] == [{"item": "a"}, {"item": "b"}]

    decisions = [{"type": "edit", "args": {"item": "staging"}}, {"type": "approve"}]
    state = graph.invoke(Command(resume=decisions), thread)

    assert "__interrupt__" not in state
    assert [run["args"] for run in log.runs] == [{"item": "staging"}, {"item": "b"}]
    decided = [(node["call"]["args"], node["decision"]) for node in acted(state)]
    assert decided == [({"item": "staging"}, "edited"), ({"item": "b"}, "approved")]
