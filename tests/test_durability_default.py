"""Graphs with a checkpointer save each checkpoint before the next step starts.

LangGraph has no public way to set a compiled graph's default durability, so
reasoning_graphs.nodes.wiring.durability uses a private config key. These tests fail,
with a message saying what changed, when a LangGraph upgrade breaks that.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
import time
import warnings
from importlib.metadata import version
from typing import Any, TypedDict

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from reasoning_graphs.graphs import react
from reasoning_graphs.nodes.wiring.durability import with_sync_durability
from reasoning_graphs.nodes.wiring.tool_loop import compile_agent
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator

SAVE_SECONDS = 0.05
CHANGED = (
    f"LangGraph {version('langgraph')} changed how a graph's default durability is set: "
    "update reasoning_graphs/nodes/wiring/durability.py (see its docstring)."
)


class SlowSaver(InMemorySaver):
    """Saves take a while and are recorded, so a step that does not wait shows up."""

    def __init__(self) -> None:
        super().__init__()
        self.saved_steps: list[int] = []
        self._lock = threading.Lock()

    def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[override]
        time.sleep(SAVE_SECONDS)
        saved = super().put(config, checkpoint, metadata, new_versions)
        self._record(config, metadata)
        return saved

    async def aput(self, config, checkpoint, metadata, new_versions):  # type: ignore[override]
        await asyncio.sleep(SAVE_SECONDS)
        saved = InMemorySaver.put(self, config, checkpoint, metadata, new_versions)
        self._record(config, metadata)
        return saved

    def _record(self, config: dict, metadata: dict) -> None:
        if config["configurable"].get("checkpoint_ns", "") == "":
            with self._lock:
                self.saved_steps.append(metadata["step"])


class StepStarts(BaseCallbackHandler):
    """For each root-graph step that starts: was the previous step's checkpoint saved?"""

    run_inline = True

    def __init__(self, saver: SlowSaver) -> None:
        self.saver = saver
        self.late: set[int] = set()
        self.steps: set[int] = set()

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        meta = kwargs.get("metadata") or {}
        step = meta.get("langgraph_step")
        if step is None:
            return
        self.steps.add(step)
        if step - 1 not in self.saver.saved_steps:
            self.late.add(step)


class Counter(TypedDict):
    n: int


def _three_steps() -> StateGraph:
    builder = StateGraph(Counter)
    for name in ("one", "two", "three"):
        builder.add_node(name, lambda state: {"n": state["n"] + 1})
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", "three")
    builder.add_edge("three", END)
    return builder


def _tiny_graph(saver: SlowSaver):
    """Three steps in a row, compiled the way every pattern is."""
    return compile_agent(_three_steps(), saver, "tiny")


def _run(graph, saver: SlowSaver, face: str, inputs: dict, **call: Any) -> StepStarts:
    starts = StepStarts(saver)
    config = {"configurable": {"thread_id": "t"}, "callbacks": [starts]}
    if face == "sync":
        graph.invoke(inputs, config, **call)
    else:
        asyncio.run(graph.ainvoke(inputs, config, **call))
    assert len(starts.steps) >= 3, "the graph ran too few steps to tell"
    return starts


def test_the_private_durability_key_is_still_there() -> None:
    try:
        constants = importlib.import_module("langgraph._internal._constants")
    except ImportError:
        pytest.fail(f"langgraph._internal._constants is gone. {CHANGED}")
    assert hasattr(constants, "CONFIG_KEY_DURABILITY"), f"CONFIG_KEY_DURABILITY moved. {CHANGED}"

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        durable = with_sync_durability(_three_steps().compile(checkpointer=InMemorySaver()))
    assert durable.config["configurable"][constants.CONFIG_KEY_DURABILITY] == "sync"


@pytest.mark.parametrize("face", ["sync", "async"])
def test_each_checkpoint_is_saved_before_the_next_step_starts(face: str) -> None:
    saver = SlowSaver()

    starts = _run(_tiny_graph(saver), saver, face, {"n": 0})

    assert not starts.late, f"steps {sorted(starts.late)} started before the last save. {CHANGED}"


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_run_may_still_choose_async_durability(face: str) -> None:
    # Also shows the check above can fail: without waiting, steps overtake the saves.
    saver = SlowSaver()

    starts = _run(_tiny_graph(saver), saver, face, {"n": 0}, durability="async")

    assert starts.late, "async durability waited for every save; the check above proves nothing"


@pytest.mark.parametrize("durability", ["async", "exit"])
@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_served_run_may_not_choose_a_weaker_durability(face: str, durability: str) -> None:
    # an engine lets any client pick the durability of a run; a served graph's stays "sync"
    saver = SlowSaver()
    graph = _tiny_graph(saver)
    graph.served = True

    starts = _run(graph, saver, face, {"n": 0}, durability=durability)

    assert not starts.late, f"steps {sorted(starts.late)} started before the last save"


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_pattern_graph_waits_for_each_save(face: str) -> None:
    saver = SlowSaver()
    model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"])
    graph = react.build_graph(model, tools=[calculator()], checkpointer=saver)

    starts = _run(graph, saver, face, {"messages": [HumanMessage("6*7?")]})

    assert not starts.late, f"steps {sorted(starts.late)} started before the last save. {CHANGED}"
