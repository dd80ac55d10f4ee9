"""Memory across threads: Reflexion's lessons and the remember/recall tools, in a real store.

A lesson drawn on one thread reaches the first attempt of a similar question on
another thread (SQLite and PostgreSQL, both faces, graphs built afresh as a new
process would), and not an unrelated one; lessons and notes stay with their
user; a hostile user name is refused; a flooding model and a failing store cost
nothing but the memory itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.store.base import BaseStore, Op, Result
from langgraph.store.memory import InMemoryStore

from reasoning_graphs import build_graph
from reasoning_graphs.graphs.reflexion.reflect import Reflection
from reasoning_graphs.memory import auth_label
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.nodes.steps.reflect import NOTE_CHARS
from reasoning_graphs.run_input import RunInputError
from reasoning_graphs.stores import StoreOpenError, open_store
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins.memory import memory_tools

MARS = "How many moons does Mars have?"
MARS_AGAIN = "How many moons does Mars have? Answer with a number."
HAMLET = "Who wrote the play Hamlet?"
ADVICE = "Look the count up instead of guessing: Mars has two moons, Phobos and Deimos."
LESSON = Reflection(diagnosis="The attempt guessed the count.", advice=ADVICE)
LESSONS = ("reasoning_graphs", "default", "lessons")
NOTES = ("reasoning_graphs", "default", "notes")


def failing_then_fixed(lesson: Reflection = LESSON) -> ScriptedChatModel:
    """A Reflexion script: a wrong first attempt, its grade, the lesson, a right second attempt."""
    return ScriptedChatModel(
        script=[
            "Mars has one moon.",
            Judgement(feedback="Wrong count.", score=0.0),
            lesson,
            "Mars has two moons.",
            Judgement(feedback="Right.", score=1.0),
        ]
    )


def answered_at_once(answer: str) -> ScriptedChatModel:
    return ScriptedChatModel(script=[answer, Judgement(feedback="Right.", score=1.0)])


def first_prompt(model: ScriptedChatModel) -> str:
    return "\n".join(str(message.content) for message in model.prompts[0])


def ask(graph: Any, question: str, thread: str, face: str, **run: Any) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}, **run.pop("config", {})}
    payload = {"messages": [HumanMessage(question)]}
    if face == "sync":
        return graph.invoke(payload, config, **run)
    return asyncio.run(graph.ainvoke(payload, config, **run))


def reflexion(model: ScriptedChatModel, spec: Any, **options: Any) -> Any:
    """A Reflexion graph as a new process would build it: its own connections to ``spec``."""
    return build_graph("reflexion", model=model, tools=[], checkpointer=spec, store=spec, **options)


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return request.getfixturevalue("postgres_url")


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_lesson_from_one_thread_reaches_a_similar_question_on_another(database, face) -> None:
    learner = failing_then_fixed()
    state = ask(reflexion(learner, database), MARS, "thread-a", face)
    assert [trial["score"] for trial in state["trials"]] == [0.0, 1.0]

    similar = answered_at_once("2")
    ask(reflexion(similar, database), MARS_AGAIN, "thread-b", face)
    unrelated = answered_at_once("Shakespeare.")
    ask(reflexion(unrelated, database), HAMLET, "thread-c", face)

    assert ADVICE in first_prompt(similar)
    assert ADVICE not in first_prompt(unrelated)
    assert len(similar.calls) == 2  # the first attempt passed: no further trial was needed


def test_lessons_and_notes_stay_with_their_user() -> None:
    store = InMemoryStore()
    learner = failing_then_fixed()
    build_graph("reflexion", model=learner, tools=[], store=store, memory_user="alice").invoke(
        {"messages": [HumanMessage(MARS)]}
    )
    for user, expected in (("alice", True), ("bob", False)):
        model = answered_at_once("2")
        graph = build_graph("reflexion", model=model, tools=[], store=store)
        graph.invoke({"messages": [HumanMessage(MARS_AGAIN)]}, context={"memory_user": user})
        assert (ADVICE in first_prompt(model)) is expected, user


def test_a_signed_in_user_keeps_memory_of_their_own_whatever_the_run_asks() -> None:
    store = InMemoryStore()
    graph = build_graph("reflexion", model=failing_then_fixed(), tools=[], store=store)
    signed_in = {"configurable": {"langgraph_auth_user_id": "alice@example.com"}}
    graph.invoke({"messages": [HumanMessage(MARS)]}, signed_in, context={"memory_user": "bob"})

    assert store.search(("reasoning_graphs", "alice@40example@2ecom", "lessons"))
    assert not store.search(("reasoning_graphs", "bob", "lessons"))


@pytest.mark.parametrize("name", ["../etc", "a.b", "", " alice", "alice\n", "a/b", "x" * 65, 7])
def test_a_hostile_user_name_is_refused_before_the_run_starts(name) -> None:
    store = InMemoryStore()
    model = answered_at_once("2")
    graph = build_graph("reflexion", model=model, tools=[], store=store)

    if name == "":  # empty means "the graph's", as for every run option
        graph.invoke({"messages": [HumanMessage(MARS)]}, context={"memory_user": name})
        return
    with pytest.raises(RunInputError, match="memory_user"):
        graph.invoke({"messages": [HumanMessage(MARS)]}, context={"memory_user": name})
    with pytest.raises(ValueError, match="memory_user"):
        build_graph("react", model=model, memory_user=name)
    assert model.calls == []
    assert store.search(()) == []


def test_signed_in_ids_map_to_labels_one_to_one() -> None:
    ids = ["a.b", "a@2eb", "a@b", "a@40b", "ä", "a b", "a_b", "a-b", "A.B"]
    labels = [auth_label(user_id) for user_id in ids]
    assert len(set(labels)) == len(ids)
    assert all("." not in label and "/" not in label for label in labels)


def test_a_flooding_lesson_is_stored_cut_and_shown_cut() -> None:
    store = InMemoryStore()
    flood = Reflection(diagnosis="d " * 20_000, advice="a " * 20_000)
    build_graph("reflexion", model=failing_then_fixed(flood), tools=[], store=store).invoke(
        {"messages": [HumanMessage(MARS)]}
    )
    (item,) = store.search(LESSONS)
    assert all(len(item.value[key]) <= 2000 for key in ("task", "diagnosis", "advice"))

    model = answered_at_once("2")
    build_graph("reflexion", model=model, tools=[], store=store).invoke(
        {"messages": [HumanMessage(MARS_AGAIN)]}
    )
    request = first_prompt(model)
    assert "d d d" in request
    assert request.count("d ") + request.count("a ") <= NOTE_CHARS


def test_a_run_may_lower_the_lessons_recalled_to_none() -> None:
    store = InMemoryStore()
    build_graph("reflexion", model=failing_then_fixed(), tools=[], store=store).invoke(
        {"messages": [HumanMessage(MARS)]}
    )
    model = answered_at_once("2")
    graph = build_graph("reflexion", model=model, tools=[], store=store)
    graph.invoke({"messages": [HumanMessage(MARS_AGAIN)]}, context={"recall_lessons": 0})
    assert ADVICE not in first_prompt(model)
    with pytest.raises(RunInputError, match="recall_lessons"):
        graph.invoke({"messages": [HumanMessage(MARS_AGAIN)]}, context={"recall_lessons": -1})


class BrokenStore(BaseStore):
    """A store whose database is gone."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise ConnectionError("the database went away")

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        raise ConnectionError("the database went away")


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_failing_store_costs_the_memory_not_the_answer(face, caplog) -> None:
    graph = build_graph(
        "reflexion",
        model=failing_then_fixed(),
        tools=[],
        checkpointer="memory",
        store=BrokenStore(),
    )
    state = ask(graph, MARS, "t", face)
    assert state["outcome"] == {"status": "answered"}
    assert state["reflections"][0]["advice"] == ADVICE
    assert "memory store failed" in caplog.text


def offered(model: ScriptedChatModel) -> list[str]:
    return model.calls[0].tools


@pytest.mark.parametrize("face", ["sync", "async"])
def test_remember_and_recall_round_trip_across_threads(tmp_path, face) -> None:
    spec = str(tmp_path / "memory.sqlite")
    writer = ScriptedChatModel(
        script=[tool_call("remember", note="The user's cat is called Miso."), "Noted."]
    )
    graph = build_graph("react", model=writer, store=spec, checkpointer=spec, memory_tools=True)
    ask(graph, "Remember that my cat is called Miso.", "a", face)
    reader = ScriptedChatModel(script=[tool_call("recall", query="cat name"), "Miso."])
    graph = build_graph("react", model=reader, store=spec, checkpointer=spec, memory_tools=True)
    state = ask(graph, "What is my cat called?", "b", face)

    observation = state["messages"][2]
    assert "Miso" in observation.content
    assert observation.status == "success"
    assert {"remember", "recall"} <= set(offered(reader))
    others = ScriptedChatModel(script=[tool_call("recall", query="cat name"), "?"])
    graph = build_graph("react", model=others, store=spec, memory_tools=True)
    state = graph.invoke(
        {"messages": [HumanMessage("What is my cat called?")]}, context={"memory_user": "bob"}
    )
    assert "Miso" not in state["messages"][2].content


def test_remember_writes_once_per_call_and_recall_only_reads() -> None:
    remember, recall = memory_tools()
    assert recall.concurrency_safe
    assert not recall.dangerous
    assert not remember.concurrency_safe
    assert not remember.dangerous

    store = InMemoryStore()

    same_call = tool_call("remember", id="call-1", note="Prefers metric units.")
    model = ScriptedChatModel(script=[same_call, "Noted.", same_call, "Noted."])
    graph = build_graph("react", model=model, store=store, memory_tools=True)
    for _ in range(2):  # the same call id, as after a resume: one note
        graph.invoke({"messages": [HumanMessage("Remember: metric units.")]})
    assert len(store.search(("reasoning_graphs", "default", "notes"))) == 1


def test_without_a_store_the_memory_tools_are_not_offered() -> None:
    model = ScriptedChatModel(script=["Hello."])
    build_graph("react", model=model, memory_tools=True).invoke({"messages": [HumanMessage("Hi")]})
    assert "remember" not in offered(model)
    assert "recall" not in offered(model)
    assert "calculator" in offered(model)


def test_a_memory_tool_called_without_a_store_says_so() -> None:
    model = ScriptedChatModel(script=[tool_call("recall", query="cat"), "I cannot recall."])
    state = build_graph("react", model=model, memory_tools=True).invoke(
        {"messages": [HumanMessage("What is my cat called?")]}
    )
    observation = state["messages"][2]
    assert observation.status == "error"
    assert "needs a store" in observation.content


def test_a_store_spec_that_names_nothing_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="Cannot tell"):
        open_store("notes.txt")
    (tmp_path / "junk.sqlite").write_bytes(b"not a database" * 100)
    with pytest.raises(StoreOpenError):
        open_store(tmp_path / "junk.sqlite")


def test_every_pattern_compiles_with_the_store() -> None:
    from reasoning_graphs.graphs import PATTERNS

    store = InMemoryStore()
    for name in PATTERNS:
        graph = build_graph(name, model=ScriptedChatModel(script=[]), store=store)
        assert graph.store is store, name


def test_a_served_graph_uses_the_store_the_server_gives_it() -> None:
    """langgraph-api copies each graph with its own store, as here."""
    server_store = InMemoryStore()
    served = build_graph("reflexion", model=failing_then_fixed(), tools=[])
    served.copy(update={"store": server_store}).invoke({"messages": [HumanMessage(MARS)]})
    assert server_store.search(LESSONS)


def test_the_served_store_opens_what_the_environment_names(tmp_path, monkeypatch) -> None:
    from reasoning_graphs import served_store

    monkeypatch.delenv(served_store.STORE_ENV, raising=False)
    with pytest.raises(RuntimeError, match=served_store.STORE_ENV):
        served_store.store()
    monkeypatch.setenv(served_store.STORE_ENV, str(tmp_path / "memory.sqlite"))
    opened = served_store.store()
    opened.put(LESSONS, "k", {"task": "t", "diagnosis": "d", "advice": "a"})
    assert open_store(tmp_path / "memory.sqlite").get(LESSONS, "k") is not None


@pytest.mark.parametrize("face", ["sync", "async"])
def test_recall_reads_reflexions_lessons_beside_the_notes(face) -> None:
    store = InMemoryStore()
    store.put(LESSONS, "k", {"task": MARS, "diagnosis": "It guessed.", "advice": ADVICE})
    store.put(LESSONS, "junk", {"task": 3})  # another writer's value: skipped
    store.put(NOTES, "n", {"text": "The user's cat is called Miso."})
    reader = ScriptedChatModel(script=[tool_call("recall", query="moons of Mars", k=2), "Two."])
    graph = build_graph("react", model=reader, store=store, memory_tools=True)

    state = ask(graph, "How many moons has Mars?", "r", face)

    observation = state["messages"][2].content
    first = observation.splitlines()[0]
    assert "lesson" in first
    assert MARS in first
    assert ADVICE in observation
    assert "Miso" not in observation  # a note that shares no word with the query
