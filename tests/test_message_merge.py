"""The conversation merges message writes as LangGraph does, with or without its private
batch reducer.

reasoning_graphs.message_merge uses LangGraph's private ``_messages_delta_reducer``.
These tests fail, with a message naming the LangGraph version, when an upgrade removes
it or changes how it merges; the fallback must then merge the same way.
"""

from __future__ import annotations

import importlib
import warnings
from importlib.metadata import version

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.graph import message as langgraph_message

from reasoning_graphs import message_merge, private_names

CHANGED = (
    f"LangGraph {version('langgraph')} changed its private message batch reducer: "
    "update reasoning_graphs/message_merge.py (see its docstring)."
)

START = [HumanMessage("hi", id="h1"), AIMessage("draft", id="a1")]
CASES = {
    "append": [[AIMessage("more", id="a2")], HumanMessage("next", id="h2")],
    "replace by id": [[AIMessage("final", id="a1")]],
    "remove by id": [[RemoveMessage(id="h1")], [AIMessage("after", id="a3")]],
    "replace then remove": [[AIMessage("v2", id="a1")], [RemoveMessage(id="a1")]],
}
EXPECTED = {
    "append": [("h1", "hi"), ("a1", "draft"), ("a2", "more"), ("h2", "next")],
    "replace by id": [("h1", "hi"), ("a1", "final")],
    "remove by id": [("a1", "draft"), ("a3", "after")],
    "replace then remove": [("h1", "hi")],
}


def _merged(merge, writes) -> list[tuple[str | None, str]]:
    return [(m.id, m.content) for m in merge(list(START), writes)]


def test_the_private_batch_reducer_is_still_there() -> None:
    assert hasattr(langgraph_message, "_messages_delta_reducer"), f"It is gone. {CHANGED}"
    assert message_merge._batch_reducer is langgraph_message._messages_delta_reducer


@pytest.mark.parametrize("case", sorted(CASES))
def test_writes_merge_by_id(case: str) -> None:
    assert _merged(message_merge.merge_message_writes, CASES[case]) == EXPECTED[case], CHANGED


@pytest.mark.parametrize("case", sorted(CASES))
def test_merging_in_one_batch_or_write_by_write_agrees(case: str) -> None:
    writes = CASES[case]
    at_once = _merged(message_merge.merge_message_writes, writes)
    state = list(START)
    for write in writes:
        state = message_merge.merge_message_writes(state, [write])
    assert [(m.id, m.content) for m in state] == at_once, CHANGED


@pytest.fixture
def without_private_reducer(monkeypatch: pytest.MonkeyPatch):
    """message_merge as imported from a LangGraph that lacks the private reducer."""
    monkeypatch.delattr(langgraph_message, "_messages_delta_reducer")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        importlib.reload(private_names)
        fallback = importlib.reload(message_merge)
    yield fallback, caught
    monkeypatch.undo()
    importlib.reload(private_names)
    importlib.reload(message_merge)


def test_without_the_private_reducer_a_warning_says_so(without_private_reducer) -> None:
    _, caught = without_private_reducer
    assert [w.category for w in caught] == [RuntimeWarning]


@pytest.mark.parametrize("case", sorted(CASES))
def test_without_the_private_reducer_writes_merge_the_same(
    without_private_reducer, case: str
) -> None:
    fallback, _ = without_private_reducer
    assert _merged(fallback.merge_message_writes, CASES[case]) == EXPECTED[case]
