"""A model's binding for a kind of request is built once and reused while it is the same."""

from __future__ import annotations

import gc
import re

import pytest
from langchain_core.tools import tool
from pydantic import BaseModel

from reasoning_graphs.nodes.model import bindings
from reasoning_graphs.nodes.model.bindings import Bindings
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.counted_calls import counted_calls


@tool
def lookup(item: str) -> str:
    """Look an item up."""
    return item


@tool
def other(item: str) -> str:
    """Another tool."""
    return item


class Answer(BaseModel):
    text: str


@pytest.fixture
def binds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the bindings actually built."""
    return counted_calls(monkeypatch, bindings, "_bind")


def test_the_same_model_and_tools_reuse_one_binding(binds: list[int]) -> None:
    model, bound_model = ScriptedChatModel(script=[]), Bindings().bound

    first = bound_model(model, tools=[lookup])
    again = bound_model(model, tools=[lookup])

    assert again is first
    assert binds[0] == 1
    assert bound_model(model, tools=[lookup], tool_choice="none") is not first
    assert bound_model(model, tools=[lookup, other]) is not first
    assert bound_model(ScriptedChatModel(script=[]), tools=[lookup]) is not first
    assert binds[0] == 4


def test_only_the_latest_bindings_are_kept_and_never_serve_another_model(
    binds: list[int],
) -> None:
    kept = Bindings(size=2)
    for _ in range(5):  # a new model may get a freed one's id; no binding of another serves it
        model = ScriptedChatModel(script=[])
        assert kept.bound(model, tools=[lookup]).bound is model  # type: ignore[attr-defined]
        del model
        gc.collect()
    assert binds[0] == 5
    assert len(kept._kept) == 2


def test_a_typed_binding_serves_the_probe_and_the_call(binds: list[int]) -> None:
    model, kept = ScriptedChatModel(script=[]), Bindings()

    assert kept.supports_schema(model, Answer)
    kept.bound(model, schema=Answer)

    assert binds[0] == 1


def test_bad_combinations_are_clear_errors() -> None:
    model, bound_model = ScriptedChatModel(script=[]), Bindings().bound

    grammar_refused = bindings.GRAMMAR_NEEDS_LLAMA.format(model="ScriptedChatModel")
    with pytest.raises(ValueError, match=re.escape(grammar_refused)):
        bound_model(model, grammar='root ::= "a"')
    with pytest.raises(ValueError, match=re.escape(bindings.TYPED_WITH_OPTIONS)):
        bound_model(model, schema=Answer, stop=["\n"])
