"""LATS on a scripted model: UCT search over sampled actions, judged, backed up, resumable.

Concurrent calls (the samples of one expansion, the judges of its children)
may reach the scripted model in any order, so the expansion's samples are a
set (the tree orders children by their action) and the judge is a function of
the trajectory it reads, never a fixed sequence of scores.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from reasoning_graphs.graphs.lats import build_graph
from reasoning_graphs.graphs.lats.tree import SearchSettings, new_tree, select_leaf
from reasoning_graphs.metadata import outcome_of
from reasoning_graphs.nodes.grounding import report as grounding
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.tool_log import ToolLog, sleeping_tool


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def judge(*rules: tuple[str, float]) -> Callable[[list[BaseMessage]], dict[str, Any]]:
    """A judge reply: the score of the first rule whose text the judged trajectory contains."""

    def reply(messages: list[BaseMessage]) -> dict[str, Any]:
        text = messages[-1].text
        score = next((score for needle, score in rules if needle in text), 0.0)
        return {"feedback": f"scored {score}", "score": score}

    return reply


def stats(state: dict[str, Any]) -> list[tuple[int, int, float]]:
    """Visits and value sum per node: what the search has learned."""
    return [(n["id"], n["visits"], round(n["value_sum"], 6)) for n in state["tree"]["nodes"]]


@pytest.fixture
def tools(log: ToolLog) -> list:
    return [
        sleeping_tool(log, "lookup", safe=True),
        sleeping_tool(log, "deploy", safe=False, dangerous=True),
    ]


CAPITAL = judge(
    ("Final answer: Paris", 0.95),
    ("Final answer: Rome", 0.1),
    ("done with paris", 0.7),
    ("done with rome", 0.2),
)


def capital_script() -> list[Any]:
    return [
        tool_call("lookup", item="paris"),
        tool_call("lookup", item="rome"),
        tool_call("lookup", item="paris"),  # a duplicate: one child
        CAPITAL,
        CAPITAL,
        "Paris",
        "Rome",
        "Paris",
        CAPITAL,
        CAPITAL,
    ]


def check_capital_search(state: dict[str, Any], model: ScriptedChatModel, log: ToolLog) -> None:
    assert state["messages"][-1].content == "Paris"
    assert state["outcome"] == {"status": "answered"}
    assert state["grounding"] == grounding.report(state)["grounding"]  # finish stored it
    assert [c["text"] for c in state["grounding"]["claims"]] == ["Paris"]
    assert state["messages"][-1].response_metadata["lats"] == {"node": 3, "score": 0.95}
    nodes = state["tree"]["nodes"]
    assert [(n["parent"], n["call"] and n["call"]["args"], n["answer"]) for n in nodes] == [
        (None, None, None),
        (0, {"item": "paris"}, None),
        (0, {"item": "rome"}, None),
        (1, None, "Paris"),
        (1, None, "Rome"),
    ]
    assert stats(state) == [(0, 4, 1.95), (1, 3, 1.75), (2, 1, 0.2), (3, 1, 0.95), (4, 1, 0.1)]
    assert not nodes[2]["expanded"]  # the low-valued branch was never followed
    assert sorted(run["args"]["item"] for run in log.runs) == ["paris", "rome"]
    second_expansion = model.prompts[5]
    assert "lookup done with paris" in _texts(second_expansion)
    assert model.calls[5].tools == ["lookup", "deploy"]
    evaluations = [e for e in state["trajectory"] if e["kind"] == "evaluation"]
    assert [(e["node"], e["score"]) for e in evaluations] == [
        (1, 0.7),
        (2, 0.2),
        (3, 0.95),
        (4, 0.1),
    ]


def test_the_search_follows_the_rewarded_branch_to_an_answer(tools, log) -> None:
    model = ScriptedChatModel(script=capital_script())

    state = build_graph(model, tools=tools).invoke(ask("Capital of France?"))

    check_capital_search(state, model, log)
    assert len(model.calls) == 10


async def test_async_invoke(tools, log) -> None:
    model = ScriptedChatModel(script=capital_script())

    state = await build_graph(model, tools=tools).ainvoke(ask("Capital of France?"))

    check_capital_search(state, model, log)


def test_spent_expansions_give_the_best_answer_with_its_score(tools) -> None:
    grade = judge(("done with paris", 0.6), ("Final answer: Rome", 0.3))
    model = ScriptedChatModel(script=[tool_call("lookup", item="paris"), "Rome", grade, grade])

    state = build_graph(model, tools=tools, candidates=2, max_expansions=1).invoke(ask("Capital?"))

    reason = "spent the budget of 1 expansions"
    assert state["outcome"] == {"status": "incomplete", "reason": reason}
    answer = state["messages"][-1]
    assert answer.content == "Rome"
    note = answer.response_metadata["outcome"]["note"]
    assert "0.30" in note  # its score
    assert "0.80" in note  # the threshold it did not reach
    assert answer.response_metadata["lats"] == {"node": 1, "score": 0.3}
    assert len(model.calls) == 4


def test_when_no_branch_answered_the_best_branch_is_asked_with_tools_off(tools) -> None:
    grade = judge(("done with paris", 0.6), ("done with rome", 0.2))
    script = [
        tool_call("lookup", item="paris"),
        tool_call("lookup", item="rome"),
        grade,
        grade,
        "Probably Paris.",
    ]
    model = ScriptedChatModel(script=script)

    state = build_graph(model, tools=tools, candidates=2, max_depth=1).invoke(ask("Capital?"))

    assert state["outcome"]["status"] == "incomplete"
    assert "depth limit of 1" in state["outcome"]["reason"]
    assert "the best branch scored 0.60" in state["outcome"]["reason"]
    final = state["messages"][-1]
    assert final.content == "Probably Paris."  # the model's own words
    assert "lookup(item='paris') returned lookup done with paris" in outcome_of(final)["note"]
    last = model.calls[-1]
    assert last.tool_choice == "none"
    assert "lookup done with paris" in _texts(last.messages)
    assert "lookup done with rome" not in _texts(last.messages)


def test_the_token_budget_stops_the_search(tools) -> None:
    grade = judge(("done with paris", 0.6))
    model = ScriptedChatModel(script=[tool_call("lookup", item="paris"), grade, "Paris?"])

    state = build_graph(model, tools=tools, candidates=1, token_budget=10).invoke(ask("Capital?"))

    assert state["outcome"]["status"] == "incomplete"
    assert "tokens" in state["outcome"]["reason"]
    assert len(model.calls) == 2  # the judge's call is the one call past the budget


def test_uct_tries_every_child_once_then_prefers_value() -> None:
    settings = SearchSettings(
        candidates=3, max_expansions=8, max_depth=3, threshold=0.8, exploration=1.0
    )
    tree = new_tree(1)
    assert select_leaf(tree, settings) == 0
    nodes = tree["nodes"]
    nodes[0].update(expanded=True, visits=2, value_sum=0.9)
    for node_id, visits, value in [(1, 1, 0.8), (2, 1, 0.1)]:
        nodes.append({**nodes[0], "id": node_id, "parent": 0, "depth": 1, "visits": visits})
        nodes[-1].update(value_sum=value, expanded=False)
    assert select_leaf(tree, settings) == 1
    nodes.append({**nodes[1], "id": 3, "visits": 0, "value_sum": 0.0})
    assert select_leaf(tree, settings) == 3  # unvisited first
    assert (
        select_leaf(
            tree,
            SearchSettings(
                candidates=3, max_expansions=8, max_depth=1, threshold=0.8, exploration=1.0
            ),
        )
        is None
    )


DEPLOY = judge(
    ("Final answer: Deployed A.", 0.95),
    ("Final answer: Answer A", 0.5),
    ("deploy done with a", 0.9),
    ("done with a", 0.6),
)
DEPLOY_SCRIPT: list[Any] = [
    tool_call("lookup", item="a"),
    tool_call("lookup", item="b"),
    DEPLOY,
    DEPLOY,
    tool_call("deploy", item="a"),
    "Answer A",
    # the approval interrupt comes here, before any call of this expansion runs
    DEPLOY,
    DEPLOY,
    "Deployed A.",
    "Answer A",
    DEPLOY,
    DEPLOY,
]
PAUSE = 6  # model calls made before the interrupt


def test_a_search_resumes_from_sqlite_in_a_new_graph_as_if_never_paused(
    tools, log, thread, tmp_path: Path
) -> None:
    reference = build_graph(
        ScriptedChatModel(script=DEPLOY_SCRIPT),
        tools=tools,
        candidates=2,
        max_model_calls=20,  # the search needs more model calls than the default budget
        checkpointer=InMemorySaver(),
    )
    reference.invoke(ask("Deploy a"), thread)
    paused_reference = reference.get_state(thread).values
    expected = reference.invoke(Command(resume=[{"type": "approve"}]), thread)
    assert expected["messages"][-1].content == "Deployed A."
    log.runs.clear()

    db = tmp_path / "runs.sqlite"
    first = build_graph(
        ScriptedChatModel(script=DEPLOY_SCRIPT),
        tools=tools,
        candidates=2,
        max_model_calls=20,
        checkpointer=SqliteSaver(sqlite3.connect(db, check_same_thread=False)),
    )
    paused = first.invoke(ask("Deploy a"), thread)
    (interrupt,) = paused["__interrupt__"]
    assert interrupt.value["kind"] == APPROVAL_KIND
    assert [(c["id"], c["name"]) for c in interrupt.value["calls"]] == [("lats-1-4", "deploy")]
    before = first.get_state(thread).values
    assert stats(before) == [(0, 2, 0.6), (1, 1, 0.6), (2, 1, 0.0), (3, 0, 0.0), (4, 0, 0.0)]
    assert before["tree"] == paused_reference["tree"]
    assert log.names() == ["lookup", "lookup"]
    log.runs.clear()

    rest = ScriptedChatModel(script=DEPLOY_SCRIPT[PAUSE:])
    second = build_graph(
        rest,
        tools=tools,
        candidates=2,
        max_model_calls=20,
        checkpointer=SqliteSaver(sqlite3.connect(db, check_same_thread=False)),
    )
    assert second.get_state(thread).values["tree"] == before["tree"]
    state = second.invoke(Command(resume=[{"type": "approve"}]), thread)

    assert log.names() == ["deploy"]  # nothing before the pause ran again
    assert unsealed(state["tree"]) == unsealed(expected["tree"])  # each approval has its own seal
    assert state["messages"][-1].content == "Deployed A."
    assert state["outcome"] == {"status": "answered"}
    assert len(rest.calls) == len(DEPLOY_SCRIPT) - PAUSE


def unsealed(tree: dict) -> dict:
    """The tree without the seals of approvals (each decision seals with a fresh nonce)."""
    nodes = [
        {k: v for k, v in node.items() if k not in ("nonce", "seal")} for node in tree["nodes"]
    ]
    return {**tree, "nodes": nodes}


def deploying_twice(tools: list, grade: Callable, answer: str) -> Any:
    """A search whose first expansion tries deploy(x) and lookup(a), and whose second
    proposes deploy(x) again beside an answer: the same call in another branch."""
    script = [
        tool_call("deploy", item="x"),
        tool_call("lookup", item="a"),
        grade,
        grade,
        tool_call("deploy", item="x"),
        answer,
        grade,
        grade,
    ]
    model = ScriptedChatModel(script=script)
    return build_graph(
        model, tools=tools, candidates=2, max_expansions=2, checkpointer=InMemorySaver()
    )


def test_a_rejected_action_is_not_asked_about_again(tools, log, thread) -> None:
    grade = judge(
        ("already rejected", 0.0),
        ("Final answer: Done A", 0.6),
        ("rejected", 0.0),
        ("done with a", 0.5),
    )
    graph = deploying_twice(tools, grade, answer="Done A")

    paused = graph.invoke(ask("Deploy x"), thread)
    assert len(paused["__interrupt__"]) == 1
    state = graph.invoke(Command(resume=[{"type": "reject", "reason": "change freeze"}]), thread)

    assert "__interrupt__" not in state
    assert log.names() == ["lookup"]
    nodes = state["tree"]["nodes"]
    assert (nodes[1]["decision"], nodes[4]["decision"]) == ("rejected", "rejected")
    assert "change freeze" in nodes[1]["observation"]
    assert "already rejected this exact call (change freeze)" in nodes[4]["observation"]
    assert state["rejected"]
    assert state["outcome"]["status"] == "incomplete"
    assert state["messages"][-1].content == "Done A"


@pytest.mark.parametrize("reply", ["not a grade", {"score": "high"}])
def test_an_unreadable_grade_scores_zero(tools, reply: Any) -> None:
    model = ScriptedChatModel(script=["Paris", reply])

    state = build_graph(model, tools=tools, candidates=1, max_expansions=1).invoke(ask("Capital?"))

    (_, answer) = state["tree"]["nodes"]
    assert answer["score"] == 0.0
    assert state["outcome"]["status"] == "incomplete"


def test_a_new_question_starts_a_new_tree(tools, thread) -> None:
    grade = judge(("Final answer", 0.9))
    model = ScriptedChatModel(script=["Paris", grade, "Rome", grade])
    graph = build_graph(model, tools=tools, candidates=1, checkpointer=InMemorySaver())

    graph.invoke(ask("Capital of France?"), thread)
    state = graph.invoke(ask("Capital of Italy?"), thread)

    assert [m.content for m in state["messages"]][-1] == "Rome"
    assert state["tree"]["turn"] == 2
    assert len(state["tree"]["nodes"]) == 2
    assert "Capital of Italy?" in model.prompts[-1][-1].text


def _texts(messages: Sequence[BaseMessage]) -> str:
    return " ".join(m.text for m in messages)


@pytest.mark.parametrize("dangerous", [False, True], ids=["stateful", "dangerous"])
def test_a_side_effect_repeated_in_another_branch_runs_again(dangerous, log, thread) -> None:
    tools = [
        sleeping_tool(log, "lookup", safe=True),
        sleeping_tool(log, "deploy", safe=False, dangerous=dangerous),
    ]
    grade = judge(("Final answer", 0.1), ("done with x", 0.6), ("done with a", 0.5))
    graph = deploying_twice(tools, grade, answer="Deployed.")

    asked = 0
    state = graph.invoke(ask("Deploy x"), thread)
    while state.get("__interrupt__"):  # as --approve-all answers
        asked += 1
        (pending,) = state["__interrupt__"]
        state = graph.invoke(
            Command(resume=[{"type": "approve"}] * len(pending.value["calls"])), thread
        )

    # a new effect: it runs again, and a dangerous one is put to the person again
    assert [run["args"]["item"] for run in log.runs if run["name"] == "deploy"] == ["x", "x"]
    assert asked == (2 if dangerous else 0)
    repeats = [n for n in state["tree"]["nodes"] if n["call"] and n["call"]["name"] == "deploy"]
    assert [n["decision"] for n in repeats] == (["approved"] * 2 if dangerous else ["auto"] * 2)
