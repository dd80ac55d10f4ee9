"""``max_steps`` is the former name of ``max_model_calls`` (a "step" is a plan's), read for one
more release: as a build option, as a run option on both faces and as ``--max-steps``, each
with a ``DeprecationWarning``, obeying the same bound, and refused beside a different value
under the new name. Thread records an earlier release saved still read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.context import AgentContext, Limits
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.run_input import RunInputError
from reasoning_graphs.server_checks import sent_options
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator
from tests.helpers.cli_driver import run_cli, thread_id_from

QUESTION = {"messages": [("user", "What is 1+1?")]}


def counting_model() -> ScriptedChatModel:
    """A model that asks for a calculation at every call, so only a budget ends its run."""
    return ScriptedChatModel(script=[tool_call("calculator", expression="1+1")], cycle=True)


def calls_made(**build: Any) -> int:
    """Model calls of one question on a graph built with ``build``, run with ``context``."""
    context = build.pop("context", None)
    model = counting_model()
    graph = build_graph(model, tools=[calculator()], **build)
    state = graph.invoke(QUESTION, context=context)
    assert state["outcome"]["status"] == "incomplete"
    return len(model.calls)


def test_a_graph_built_with_max_steps_gets_that_many_model_calls() -> None:
    with pytest.warns(DeprecationWarning, match="max_model_calls"):
        old = calls_made(max_steps=2)

    assert old == calls_made(max_model_calls=2) < calls_made(max_model_calls=4)


def test_a_graph_built_with_both_names_takes_one_value() -> None:
    with pytest.warns(DeprecationWarning, match="max_model_calls"):
        both = calls_made(max_steps=2, max_model_calls=2)
    assert both == calls_made(max_model_calls=2)
    with pytest.raises(ValueError, match="max_steps"):
        build_graph(counting_model(), tools=[], max_steps=2, max_model_calls=3)


@pytest.mark.parametrize("as_dataclass", [False, True], ids=["dict", "dataclass"])
def test_a_run_option_max_steps_lowers_the_model_calls_and_never_raises_them(
    as_dataclass: bool,
) -> None:
    def context(calls: int) -> Any:
        return AgentContext(max_steps=calls) if as_dataclass else {"max_steps": calls}

    with pytest.warns(DeprecationWarning, match="max_model_calls"):
        lowered = calls_made(max_model_calls=4, context=context(2))
    with pytest.warns(DeprecationWarning, match="max_model_calls"):
        raised = calls_made(max_model_calls=2, context=context(9))

    assert lowered == raised == calls_made(max_model_calls=2)


@pytest.mark.parametrize(
    "options",
    [{"max_steps": 0}, {"max_steps": "ten"}, {"max_steps": 2, "max_model_calls": 3}],
    ids=["below its least", "not a number", "two values"],
)
def test_a_python_run_refuses_what_max_model_calls_would(options: dict[str, Any]) -> None:
    model = counting_model()
    graph = build_graph(model, tools=[calculator()])

    with pytest.raises(RunInputError, match="max_steps"):
        graph.invoke(QUESTION, context=options)
    assert model.calls == []


@pytest.mark.parametrize("way", ["context", "configurable"])
def test_the_servers_door_reads_max_steps_as_max_model_calls(way: str) -> None:
    graph = build_graph(counting_model(), tools=[calculator()])

    def door(options: dict[str, Any]) -> None:
        sent = {"context": options} if way == "context" else {"config": {"configurable": options}}
        for each in sent_options(sent):
            graph.check_run(None, each)

    for accepted in ({"max_steps": 3}, {"max_steps": 3, "max_model_calls": 3}):
        with pytest.warns(DeprecationWarning, match="max_model_calls"):
            door(accepted)
    for refused in ({"max_steps": 0}, {"max_steps": 3, "max_model_calls": 4}):
        with pytest.raises(RunInputError, match="max_steps"):
            door(refused)


def test_the_option_keeps_one_name_once_read() -> None:
    with pytest.warns(DeprecationWarning, match="max_model_calls"):
        context = AgentContext(max_steps=3)

    assert (context.max_model_calls, context.max_steps) == (3, None)
    assert Limits(max_model_calls=5).apply(context).max_model_calls == 3


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    return path


def use_counting_model(monkeypatch: pytest.MonkeyPatch) -> ScriptedChatModel:
    model = counting_model()
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    return model


def test_the_cli_reads_max_steps_as_max_model_calls(db, monkeypatch, capsys) -> None:
    model = use_counting_model(monkeypatch)
    code, _, _ = run_cli(monkeypatch, capsys, "run", "Count.", "--max-model-calls", "2")
    current = len(model.calls)

    model = use_counting_model(monkeypatch)
    with pytest.warns(DeprecationWarning, match="--max-model-calls"):
        old_code, _, _ = run_cli(monkeypatch, capsys, "run", "Count.", "--max-steps", "2")

    assert code == old_code == exits.INCOMPLETE
    assert len(model.calls) == current


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(
    "flags", [("--max-steps", "0"), ("--max-steps", "2", "--max-model-calls", "3")]
)
def test_the_cli_refuses_max_steps_as_it_would_max_model_calls(db, capsys, flags) -> None:
    code = cli.main(["run", "q", *flags])

    assert code == exits.USAGE
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_thread_saved_with_max_steps_keeps_its_limit(db, monkeypatch, capsys) -> None:
    use_counting_model(monkeypatch)
    _, out, _ = run_cli(monkeypatch, capsys, "run", "Count.", "--max-model-calls", "4")
    thread_id = thread_id_from(out)
    with sqlite3.connect(db) as saved:  # as an earlier release wrote the thread's limits
        saved.execute(
            "UPDATE rg_threads SET limits = ? WHERE thread_id = ?",
            (json.dumps({"max_steps": 2}), thread_id),
        )

    model = use_counting_model(monkeypatch)
    code, _, _ = run_cli(monkeypatch, capsys, "run", "Again.", "--thread", thread_id)
    assert code == exits.INCOMPLETE
    follow_up = len(model.calls)

    model = use_counting_model(monkeypatch)
    flags = ("--thread", thread_id, "--max-model-calls", "1")
    code, _, _ = run_cli(monkeypatch, capsys, "run", "Once more.", *flags)
    assert code == exits.INCOMPLETE
    assert len(model.calls) < follow_up, "the new flag replaces the saved limit"
    _, listing, _ = run_cli(monkeypatch, capsys, "threads", "--json")
    record = next(r for r in map(json.loads, listing.splitlines()) if r["thread_id"] == thread_id)
    assert record["limits"] == {"max_model_calls": 1}
