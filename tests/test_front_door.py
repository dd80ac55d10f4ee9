"""``reasoning_graphs`` is the front door: it names what a caller needs, builds any pattern
by name, and stays light to import."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import reasoning_graphs
from reasoning_graphs import PATTERNS, build_graph
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.builtins import calculator


def test_the_front_door_names_what_a_caller_needs() -> None:
    from reasoning_graphs import AgentOptions, open_checkpointer, tool_spec

    assert callable(open_checkpointer)
    assert callable(tool_spec)
    assert "max_model_calls" in AgentOptions.__optional_keys__
    assert set(reasoning_graphs.__all__) >= {
        "build_graph",
        "PATTERNS",
        "tool_spec",
        "open_checkpointer",
        "AgentOptions",
    }
    for name in reasoning_graphs.__all__:
        assert getattr(reasoning_graphs, name) is not None


def test_importing_the_package_loads_no_langgraph() -> None:
    code = (
        "import sys, reasoning_graphs\n"
        "print(any(m.startswith(('langgraph', 'langchain')) for m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("name", list(PATTERNS))
def test_any_pattern_builds_by_name(name: str) -> None:
    graph = build_graph(name, model=ScriptedChatModel(script=[]), tools=[calculator()])
    assert graph.name == name


def test_an_unknown_pattern_is_a_clear_error_naming_the_patterns() -> None:
    with pytest.raises(ValueError, match="tree_of_thought") as raised:
        build_graph("tree_of_thought", model=ScriptedChatModel(script=[]))
    assert all(name in str(raised.value) for name in PATTERNS)


def test_an_option_no_pattern_takes_is_refused() -> None:
    with pytest.raises(TypeError, match="candidatez"):
        build_graph("lats", model=ScriptedChatModel(script=[]), candidatez=2)


@pytest.mark.parametrize("name", list(PATTERNS))
def test_every_builder_shows_the_shared_parameters_and_its_own(name: str) -> None:
    builder = PATTERNS[name].load_builder()
    parameters = list(inspect.signature(builder).parameters)

    assert parameters[:3] == ["model", "tools", "checkpointer"]
    assert parameters[-2:] == ["retry", "options"]
    for parameter in parameters:
        assert f"{'**' if parameter == 'options' else ''}{parameter}: " in (builder.__doc__ or "")
