"""Pattern options as run options: Studio shows them, a run may narrow them, never widen them.

``max_replans``, ``max_rounds``, ``max_trials``, ``candidates``, ``samples``,
``max_expansions`` and ``max_depth`` bound how much work a question does, so a
run's value only counts when it is lower than the graph's. ``threshold`` is
how good an answer must be; a run may set it anywhere in 0..1.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.graphs.cot import build_graph as cot_graph
from reasoning_graphs.graphs.lats import build_graph as lats_graph
from reasoning_graphs.graphs.plan_execute import build_graph as plan_execute_graph
from reasoning_graphs.graphs.plan_execute.plan import REPLAN_LIMIT, Plan, Replan
from reasoning_graphs.graphs.reflexion import build_graph as reflexion_graph
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.outcomes import without_note

OWN_OPTIONS = {
    "react": set(),
    "react_text": set(),
    "rewoo": set(),
    "plan_execute": {"max_replans"},
    "plan_react": {"max_replans"},
    "llm_compiler": {"max_rounds"},
    "reflexion": {"max_trials", "threshold"},
    "lats": {"candidates", "max_expansions", "max_depth", "threshold"},
    "cot": {"samples"},
    "tot": {"breadth", "depth", "beam", "votes", "generator", "evaluator"},
}
SHARED = {"model", "max_model_calls", "token_budget", "approve", "deny", "tools", "time_budget"}


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_run_option_is_in_the_schema_with_a_description(pattern: str) -> None:
    graph = importlib.import_module(f"reasoning_graphs.graphs.{pattern}.graph").graph()
    properties = graph.get_context_jsonschema()["properties"]

    assert set(properties) >= SHARED | OWN_OPTIONS[pattern]
    assert not {name for name, schema in properties.items() if not schema.get("description")}
    others = set().union(*OWN_OPTIONS.values()) - OWN_OPTIONS[pattern]
    assert not set(properties) & others


def graded_reflexion(**options: Any) -> tuple[Any, ScriptedChatModel]:
    """Reflexion whose every attempt fails its grade, so only the trial bound ends it."""
    model = ScriptedChatModel(
        script=["A", {"diagnosis": "Wrong.", "advice": "Try again."}], cycle=True
    )

    def grade(task: str, answer: str) -> dict[str, Any]:
        return {"score": 0.5, "feedback": "Not yet."}

    return reflexion_graph(model, tools=[], evaluator=grade, **options), model


@pytest.mark.parametrize(("run_trials", "trials"), [(1, 1), (2, 2), (9, 3)])
def test_a_run_lowers_the_trial_bound_but_cannot_raise_it(run_trials: int, trials: int) -> None:
    graph, _ = graded_reflexion(max_trials=3)

    state = graph.invoke(ask("Pick a letter."), context={"max_trials": run_trials})

    assert len(state["trials"]) == trials
    assert state["outcome"]["status"] == "incomplete"


def test_a_run_sets_the_reflexion_threshold_either_way() -> None:
    graph, _ = graded_reflexion(max_trials=3, threshold=0.9)

    lenient = graph.invoke(ask("Pick a letter."), context={"threshold": 0.5})
    assert (len(lenient["trials"]), lenient["outcome"]) == (1, {"status": "answered"})

    graph, _ = graded_reflexion(max_trials=2, threshold=0.4)
    strict = graph.invoke(ask("Pick a letter."), context={"threshold": 0.6})
    assert (len(strict["trials"]), strict["outcome"]["status"]) == (2, "incomplete")


@pytest.mark.parametrize(("run_samples", "calls"), [(None, 3), (1, 1), (2, 2), (7, 3)])
def test_a_run_takes_fewer_cot_samples_never_more(run_samples: int | None, calls: int) -> None:
    model = ScriptedChatModel(script=["Answer: 4"], cycle=True)
    graph = cot_graph(model, samples=3)

    state = graph.invoke(ask("2+2?"), context={"samples": run_samples})

    assert len(model.calls) == calls
    assert state["agreement"] == f"{calls}/{calls}"


def test_a_run_samples_fewer_lats_candidates() -> None:
    grade = Judgement(feedback="Right.", score=0.95)
    model = ScriptedChatModel(script=["Paris", grade], cycle=True)
    graph = lats_graph(model, tools=[], candidates=3)

    state = graph.invoke(ask("Capital of France?"), context={"candidates": 1})

    assert state["outcome"] == {"status": "answered"}
    assert len(model.calls) == 2  # one sample and its grade


def test_a_run_allows_fewer_plan_revisions() -> None:
    revise = Replan(steps=["Look again."])
    model = ScriptedChatModel(
        script=[Plan(steps=["Look it up."]), tool_call("lookup", item="x"), "Found x.", revise],
    )

    def lookup(item: str) -> str:
        """Look an item up."""
        return f"{item}: nothing found"

    graph = plan_execute_graph(model, tools=[lookup], max_replans=3)
    state = graph.invoke(ask("Find x."), context={"max_replans": 0})

    assert without_note(state["outcome"]) == {
        "status": "incomplete",
        "reason": REPLAN_LIMIT.format(limit=0),
    }
    assert not state.get("replans")


@pytest.mark.parametrize(
    ("pattern", "context"),
    [
        ("cot", {"samples": 0}),
        ("cot", {"samples": "three"}),
        ("lats", {"threshold": 1.5}),
        ("lats", {"max_depth": True}),
        ("plan_execute", {"max_replans": -1}),
        ("plan_react", {"max_replans": -1}),
        ("reflexion", {"max_trials": 2.5}),
    ],
)
def test_ill_typed_pattern_options_are_refused_before_anything_runs(
    pattern: str, context: dict[str, Any]
) -> None:
    model = ScriptedChatModel(script=[])
    graph = graph_builder(pattern)(model, tools=[])
    name = next(iter(context))

    with pytest.raises((ValueError, TypeError), match=name):
        graph.invoke(ask("Anything?"), context=context)
    assert model.calls == []
