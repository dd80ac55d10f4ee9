"""Run options override only what they name, each as the bound it declares allows."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import pytest

from reasoning_graphs.context import AgentContext, Limits, pattern_option
from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.graphs.cot import build_graph as cot_graph
from reasoning_graphs.graphs.cot.context import CotContext
from reasoning_graphs.graphs.lats.context import LatsContext
from reasoning_graphs.option_bounds import Bound, LowerOnly, bound_of
from reasoning_graphs.run_input import RunInputError
from reasoning_graphs.server_checks import sent_options
from reasoning_graphs.testing import ScriptedChatModel


def test_named_options_override_and_blank_ones_keep_the_default() -> None:
    built = Limits(max_model_calls=10, approve=("shell",), tools=("calculator", "shell"))

    run = built.apply({"max_model_calls": 3, "approve": [], "tools": [], "model": ""})

    assert run.max_model_calls == 3
    assert run.approve == ("shell",)
    assert run.tools == ("calculator", "shell")
    assert run.model is None


def test_dataclass_context_and_lists_become_tuples() -> None:
    run = Limits().apply(AgentContext(deny=["shell"], token_budget=500))

    assert run.deny == ("shell",)
    assert run.token_budget == 500


def test_unknown_options_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="max_stpes"):
        Limits().apply({"max_stpes": 3})


# each option declares how a run may change it (its bound); one that does not, cannot be set


@dataclass(kw_only=True)
class UnboundedCotContext(CotContext):
    """Chain-of-Thought's options plus one added without declaring how a run may change it."""

    votes_needed: int | None = field(
        default=None, metadata={"description": "Votes an answer needs to win."}
    )


def unbounded_cot() -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=["Answer: 4"], cycle=True)
    return cot_graph(model).copy(update={"context_schema": UnboundedCotContext}), model


def test_an_option_without_a_bound_cannot_be_set_by_a_python_run() -> None:
    graph, model = unbounded_cot()

    with pytest.raises(ValueError, match="votes_needed"):
        graph.invoke({"messages": [("user", "2+2?")]}, context={"votes_needed": 9})
    with pytest.raises(ValueError, match="votes_needed"):
        UnboundedCotContext(votes_needed=9)
    assert model.calls == []

    graph.invoke({"messages": [("user", "2+2?")]}, context={"samples": 1})
    assert len(model.calls) == 1, "the bounded options still work"


@pytest.mark.parametrize(
    "payload",
    [{"context": {"votes_needed": 9}}, {"config": {"configurable": {"votes_needed": 9}}}],
    ids=["context", "configurable"],
)
def test_an_option_without_a_bound_is_refused_at_the_servers_door(payload: dict) -> None:
    graph, _ = unbounded_cot()
    (sent,) = sent_options(payload)

    with pytest.raises(RunInputError, match="votes_needed"):
        graph.check_run(None, sent)


def pattern_contexts() -> list[type[AgentContext]]:
    return list(dict.fromkeys(pattern.load_context() for pattern in PATTERNS.values()))


@pytest.mark.parametrize("schema", pattern_contexts(), ids=lambda schema: schema.__name__)
def test_every_option_of_every_pattern_declares_its_bound(schema: type[AgentContext]) -> None:
    for option in fields(schema):
        assert isinstance(bound_of(option), Bound), option.name


@pytest.mark.parametrize("schema", pattern_contexts(), ids=lambda schema: schema.__name__)
def test_a_run_lowers_every_lower_only_option_and_never_raises_it(
    schema: type[AgentContext],
) -> None:
    lowered = [item for item in fields(schema) if isinstance(bound_of(item), LowerOnly)]
    assert lowered
    for option in lowered:
        name = option.name
        built = Limits() if hasattr(Limits, name) else None

        def run_value(value: int, name: str = name, built: Limits | None = built) -> float:
            context = schema(**{name: value})
            if built is None:
                return pattern_option(context, name, 5)
            return getattr(replace(built, **{name: 5}).apply(context), name)

        assert run_value(2) == 2, name
        assert run_value(50) == 5, name


def test_a_run_sets_a_limit_the_graph_leaves_open() -> None:
    assert Limits(token_budget=None).apply({"token_budget": 300}).token_budget == 300


@pytest.mark.parametrize(
    ("schema", "options"),
    [
        (AgentContext, {"max_model_calls": 0}),
        (AgentContext, {"max_model_calls": 2.5}),
        (AgentContext, {"token_budget": True}),
        (AgentContext, {"model_timeout": 0}),
        (AgentContext, {"idle_timeout": "soon"}),
        (AgentContext, {"context_threshold": 1.2}),
        (AgentContext, {"keep_messages": 0}),
        (AgentContext, {"mode": "turbo"}),
        (AgentContext, {"context_strategy": "shrink"}),
        (AgentContext, {"model": 7}),
        (AgentContext, {"approve": "shell"}),
        (LatsContext, {"threshold": 0}),
        (LatsContext, {"max_depth": 0}),
    ],
)
def test_a_value_outside_the_options_bound_is_refused(
    schema: type[AgentContext], options: dict[str, Any]
) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        schema(**options)


def test_free_options_and_fractions_are_set_either_way() -> None:
    built = Limits(context_threshold=0.5, keep_messages=20, context_strategy="hybrid")

    run = built.apply({"context_threshold": 0.9, "keep_messages": 40, "context_strategy": "none"})

    assert (run.context_threshold, run.keep_messages, run.context_strategy) == (0.9, 40, "none")
    assert pattern_option(LatsContext(threshold=0.95), "threshold", 0.5) == 0.95
