"""The package's types hold for its users: nodes write only their state's keys, and a
script that calls the public API is checked against it (the package ships ``py.typed``)."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typing_extensions import is_typeddict

from reasoning_graphs.state import AgentState, AgentUpdate

PATTERN_STATES = {
    "cot": "CotState",
    "lats": "LatsState",
    "llm_compiler": "LlmCompilerState",
    "plan_execute": "PlanExecuteState",
    "reflexion": "ReflexionState",
    "rewoo": "RewooState",
}

USER_SCRIPT = """
from langchain_core.messages import HumanMessage

from reasoning_graphs import build_graph
from reasoning_graphs.testing import ScriptedChatModel

graph = build_graph("react", model=ScriptedChatModel(script=["Hello."]))
state = graph.invoke({"messages": [HumanMessage("Hi")]})
answer: str = state["messages"][-1].text
"""

MISUSE = """
from reasoning_graphs import build_graph

graph = build_graph(42)
"""

STRAY_KEY = """
from reasoning_graphs.graphs.rewoo.state import PlanUpdate


def plan() -> PlanUpdate:
    return {"plan": None, "samples": []}
"""


def _keys(typed_dict: type) -> frozenset[str]:
    return typed_dict.__required_keys__ | typed_dict.__optional_keys__


def test_the_agent_update_writes_only_agent_state_keys() -> None:
    assert _keys(AgentUpdate) <= _keys(AgentState)


@pytest.mark.parametrize("pattern", sorted(PATTERN_STATES))
def test_each_node_update_writes_only_its_patterns_state_keys(pattern: str) -> None:
    module = importlib.import_module(f"reasoning_graphs.graphs.{pattern}.state")
    state = _keys(getattr(module, PATTERN_STATES[pattern]))
    updates = [
        value
        for name, value in inspect.getmembers(module)
        if name.endswith("Update") and is_typeddict(value) and value.__module__ == module.__name__
    ]

    assert updates, f"{pattern} declares no node update"
    for update in updates:
        assert _keys(update) <= state, update.__name__


def test_a_users_script_is_checked_against_the_package(tmp_path: Path) -> None:
    for name, text in {"user": USER_SCRIPT, "misuse": MISUSE, "stray": STRAY_KEY}.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))

    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "user.py", "misuse.py", "stray.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )

    errors = re.findall(r"^(\w+)\.py:\d+: error: .*\[([\w-]+)\]$", checked.stdout, re.MULTILINE)
    assert sorted(errors) == [("misuse", "arg-type"), ("stray", "typeddict-unknown-key")], (
        checked.stdout
    )
