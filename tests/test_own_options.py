"""A pattern's own options are declared once, in its run-option class, and everything else
follows: the build keyword's default, its docstring line, the build's check and the
command line's flag (kept with the thread, refused by a pattern without the option)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli.option_flags import pattern_options
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder
from reasoning_graphs.option_bounds import Fraction, LowerOnly, OneOf, OnOnly
from reasoning_graphs.pattern_options import OwnOption, own_options
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.cli_driver import run_cli

DECLARED = [
    (pattern, option)
    for pattern, record in PATTERNS.items()
    for option in own_options(record.load_context())
]


def refused_value(option: OwnOption) -> Any:
    """A value the option's bound refuses, at a build as in a run."""
    bound = option.bound
    if isinstance(bound, LowerOnly):
        return bound.least - 1
    if isinstance(bound, Fraction):
        return 0
    if isinstance(bound, OneOf):
        return "none of them"
    assert isinstance(bound, OnOnly), bound
    return "yes"


def test_the_patterns_declare_options_of_their_own() -> None:
    assert {pattern for pattern, _ in DECLARED} >= {"cot", "tot", "lats", "reflexion"}
    assert len(DECLARED) >= 17


@pytest.mark.parametrize(("pattern", "option"), DECLARED, ids=lambda x: getattr(x, "name", x))
def test_the_build_keyword_takes_its_default_and_its_line_from_the_declaration(
    pattern: str, option: OwnOption
) -> None:
    builder = graph_builder(pattern)
    parameter = inspect.signature(builder).parameters[option.name]

    assert parameter.kind is parameter.KEYWORD_ONLY
    assert parameter.default == option.default
    option.bound.check(option.name, option.default)  # the default is a value a run may give
    assert f"{option.name}: {option.about}" in (builder.__doc__ or "")


@pytest.mark.parametrize(("pattern", "option"), DECLARED, ids=lambda x: getattr(x, "name", x))
def test_the_build_refuses_what_the_bound_refuses(pattern: str, option: OwnOption) -> None:
    model = ScriptedChatModel(script=["Answer: 1"])
    with pytest.raises(ValueError, match=option.name):
        graph_builder(pattern)(model, [], **{option.name: refused_value(option)})


def test_two_patterns_that_share_an_option_name_bound_it_alike() -> None:
    shared = {name: declared for name, declared in pattern_options().items() if len(declared) > 1}
    assert shared  # threshold (lats, reflexion), max_replans (plan_execute, plan_react)
    for declared in shared.values():
        assert len({type(option.bound) for option in declared.values()}) == 1


def test_a_build_keyword_that_disagrees_with_the_declaration_is_refused() -> None:
    from reasoning_graphs.graphs.cot.context import CotContext

    def with_its_own_default(shared: SharedArgs, *, samples: int = 5) -> CompiledStateGraph:
        raise AssertionError("never built")

    def without_the_option(shared: SharedArgs) -> CompiledStateGraph:
        raise AssertionError("never built")

    for wire in (with_its_own_default, without_the_option):
        with pytest.raises(TypeError, match="samples"):
            pattern_builder(context=CotContext)(wire)


def test_a_built_value_is_the_graphs_and_a_run_may_only_lower_it() -> None:
    model = ScriptedChatModel(script=["Answer: 7"], cycle=True)
    graph = graph_builder("cot")(model, [], checkpointer="memory", samples=3)
    question = {"messages": [HumanMessage("What is 3+4?")]}

    graph.invoke(question, {"configurable": {"thread_id": "built"}})
    assert len(model.calls) == 3
    graph.invoke(question, {"configurable": {"thread_id": "lowered"}}, context={"samples": 2})
    assert len(model.calls) == 3 + 2
    graph.invoke(question, {"configurable": {"thread_id": "raised"}}, context={"samples": 9})
    assert len(model.calls) == 3 + 2 + 3


@pytest.fixture
def scripted_cli(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> ScriptedChatModel:
    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "threads.sqlite"))
    model = ScriptedChatModel(script=["It is 7.\nAnswer: 7"], cycle=True)
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    monkeypatch.chdir(tmp_path)
    return model


def test_a_flag_sets_the_patterns_own_option_for_the_thread(
    scripted_cli: ScriptedChatModel,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(monkeypatch, capsys, "run", "3+4?", "--pattern", "cot", "--samples", "3")
    assert code == exits.ANSWERED
    assert len(scripted_cli.calls) == 3
    thread = out.splitlines()[0].split()[-1]

    code, _, _ = run_cli(monkeypatch, capsys, "run", "And 3+5?", "--thread", thread)
    assert code == exits.ANSWERED
    assert len(scripted_cli.calls) == 3 + 3  # kept with the thread


@pytest.mark.parametrize(
    "flags",
    [
        ("--pattern", "react", "--samples", "3"),  # not an option of react
        ("--pattern", "cot", "--samples", "0"),  # refused by its bound
        ("--pattern", "tot", "--generator", "guess"),  # not one of its choices
    ],
)
def test_a_flag_the_pattern_cannot_take_is_a_usage_error(
    scripted_cli: ScriptedChatModel,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: tuple[str, ...],
) -> None:
    try:
        code, _, _ = run_cli(monkeypatch, capsys, "run", "3+4?", *flags)
    except SystemExit as exited:  # argparse's own refusal of a choice
        code = exited.code  # type: ignore[assignment]
    assert code == exits.USAGE
    assert not scripted_cli.calls
