"""Each pattern's record agrees with its code, and both ``langgraph.json`` files serve
exactly the recorded patterns; a pattern's server graph is built on first use only."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reasoning_graphs.bench.oracle import PROTOCOLS
from reasoning_graphs.bench.suite import tool_patterns
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]
STUDIO_APP = ROOT / "tests" / "studio_app"


def served(config: Path) -> dict[str, str]:
    graphs: dict[str, str] = json.loads(config.read_text(encoding="utf-8"))["graphs"]
    return graphs


def test_the_repo_serves_every_pattern_from_its_graph_module() -> None:
    graphs = served(ROOT / "langgraph.json")

    assert set(graphs) == set(PATTERNS)
    for name, target in graphs.items():
        path, _, attribute = target.partition(":")
        assert path == f"./src/reasoning_graphs/graphs/{name}/graph.py"
        assert (ROOT / path).is_file()
        assert attribute == "graph"


def test_the_studio_app_serves_every_pattern_it_defines() -> None:
    graphs = served(STUDIO_APP / "langgraph.json")
    tree = ast.parse((STUDIO_APP / "agent.py").read_text(encoding="utf-8"))
    defined = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    assert set(graphs) == set(PATTERNS)
    for name, target in graphs.items():
        assert target == f"./agent.py:{name}_graph"
        assert f"{name}_graph" in defined


@pytest.mark.parametrize("name", list(PATTERNS))
def test_a_record_names_its_own_code(name: str) -> None:
    pattern = PATTERNS[name]
    graph = graph_builder(name)(ScriptedChatModel(script=[]), tools=[])

    assert pattern.name == name
    assert pattern.summary
    assert "\n" not in pattern.summary
    assert graph.name == name
    assert graph.context_schema is pattern.load_context()
    assert pattern.answer_nodes <= set(graph.nodes)
    assert PROTOCOLS[name] is pattern.load_oracle()


def test_only_the_patterns_that_call_tools_suit_suites_that_need_them() -> None:
    assert not {"cot", "tot"} & set(tool_patterns())
    assert set(tool_patterns()) == {name for name, p in PATTERNS.items() if p.uses_tools}
    assert len(tool_patterns()) == len(PATTERNS) - 2


@pytest.mark.parametrize("name", list(PATTERNS))
def test_importing_a_graph_module_builds_no_graph(name: str) -> None:
    """The server calls ``graph`` when it first needs it; an import builds nothing."""
    code = (
        "import importlib, sys\n"
        "from langgraph.graph import StateGraph\n"
        "compiled = []\n"
        "compile = StateGraph.compile\n"
        "StateGraph.compile = lambda self, *a, **k: compiled.append(1) or compile(self, *a, **k)\n"
        f"module = importlib.import_module('reasoning_graphs.graphs.{name}.graph')\n"
        "before = len(compiled)\n"
        "graph = module.graph()\n"
        "assert module.graph() is graph\n"
        "print(before, len(compiled) > 0, graph.checkpointer is None)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["0", "True", "True"]


def test_reading_the_records_loads_no_pattern() -> None:
    code = (
        "import sys\n"
        "from reasoning_graphs.graphs import PATTERNS, react\n"
        "print(len(PATTERNS), react.PATTERN.name,"
        " any(m.startswith(('langgraph', 'langchain')) for m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == [str(len(PATTERNS)), "react", "False"]


@pytest.mark.parametrize("name", list(PATTERNS))
def test_a_package_hands_out_its_builder(name: str) -> None:
    package = importlib.import_module(f"reasoning_graphs.graphs.{name}")
    assert package.build_graph is graph_builder(name)
    assert package.PATTERN is PATTERNS[name]
