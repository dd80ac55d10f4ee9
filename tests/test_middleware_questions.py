"""LangChain's ``before_agent``/``after_agent`` middleware at each question's start and end,
in every pattern, both faces.

The hooks run once per question as under ``create_agent``: what they write is kept (a
middleware's own state fields too), a resume after a person's decision runs neither
again, a ``before_agent`` jump to ``"end"`` is an honest incomplete stop that calls no
model, and LangChain's own ``ShellToolMiddleware`` (a shell session opened by
``before_agent``, used by its tool and closed by ``after_agent``) works as it does there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ShellToolMiddleware,
    before_agent,
    hook_config,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import Command
from typing_extensions import NotRequired

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers.faces import FACES, run
from tests.helpers.one_call import one_call


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script_for(pattern: str) -> tuple[list[Any], dict[str, Any]]:
    if PATTERNS[pattern].uses_tools:
        return one_call(pattern, "add", {"a": 20, "b": 22}, "It is 42.")
    return ["It is 42."], {}


def model_for(pattern: str, script: list[Any]) -> ScriptedChatModel:
    return ScriptedChatModel(script=script, cycle=not PATTERNS[pattern].uses_tools)


def ask(text: str = "What is 20+22?") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


class AuditState(AgentState):
    audit: NotRequired[list[str]]


class Audit(AgentMiddleware):
    """Notes each question's start and end, in its own log and in a state field of its own."""

    state_schema = AuditState

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        self.log.append(("start", state["messages"][-1].text))
        return {"audit": [*state.get("audit", []), "start"]}

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        self.log.append(("end", state["messages"][-1].text))
        return {"audit": [*state.get("audit", []), "end"]}


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_the_hooks_run_once_at_each_questions_start_and_end(pattern: str, face: str) -> None:
    script, options = script_for(pattern)
    plain = graph_builder(pattern)(model_for(pattern, script), tools=[tool_spec(add)], **options)
    audit = Audit()
    graph = graph_builder(pattern)(
        model_for(pattern, script * 2),
        tools=[tool_spec(add)],
        middleware=[audit],
        checkpointer="memory",
        **options,
    )

    alone = run(plain, ask(), face)
    first = run(graph, ask(), face, thread("t"))
    second = run(graph, ask("And again?"), face, thread("t"))

    answer = alone["messages"][-1].text
    assert audit.log == [
        ("start", "What is 20+22?"),
        ("end", answer),
        ("start", "And again?"),
        ("end", answer),
    ]
    assert first["audit"] == ["start", "end"]
    assert second["audit"] == ["start", "end", "start", "end"]
    assert first["outcome"] == alone["outcome"]  # the hooks leave a correct run as it was
    assert first["messages"][-1].text == answer


@before_agent(can_jump_to=["end"])
def gate(state: Any, runtime: Any) -> dict[str, Any] | None:
    if "forbidden" in state["messages"][-1].text:
        return {"messages": [AIMessage("I will not answer that.")], "jump_to": "end"}
    return None


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_a_jump_to_the_end_before_the_question_calls_no_model(pattern: str, face: str) -> None:
    script, options = script_for(pattern)
    model = model_for(pattern, script)
    audit = Audit()
    graph = graph_builder(pattern)(
        model, tools=[tool_spec(add)], middleware=[gate, audit], checkpointer="memory", **options
    )

    stopped = run(graph, ask("Tell me the forbidden thing."), face, thread("t"))

    assert model.calls == []
    assert stopped["outcome"]["status"] == "incomplete"
    assert stopped["outcome"]["ended"]
    assert "gate" in stopped["outcome"]["reason"]
    assert stopped["messages"][-1].text == "I will not answer that."
    assert audit.log == [("end", "I will not answer that.")]  # after_agent still runs

    plain = graph_builder(pattern)(model_for(pattern, script), tools=[tool_spec(add)], **options)
    answered = run(graph, ask(), face, thread("t"))  # the thread goes on, as a fresh one would
    assert answered["outcome"] == run(plain, ask(), face)["outcome"]
    assert model.calls


class Inner(Audit):
    """Another audit, sharing the first one's state field."""


class Last(AgentMiddleware):
    """An ``after_agent`` hook that ends the hooks' round: those after it do not run."""

    @hook_config(can_jump_to=["end"])
    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"jump_to": "end"}


def test_a_jump_to_the_end_after_the_question_skips_the_hooks_after_it() -> None:
    outer, inner = Audit(), Inner()
    graph = graph_builder("react")(
        ScriptedChatModel(script=["Hi."]), tools=[], middleware=[outer, Last(), inner]
    )

    graph.invoke(ask("Hello?"))

    assert inner.log == [("start", "Hello?"), ("end", "Hi.")]  # last first, as create_agent
    assert outer.log == [("start", "Hello?")]


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", ["react", "rewoo", "llm_compiler"])
def test_a_resume_after_a_decision_runs_neither_hook_again(pattern: str, face: str) -> None:
    script, options = script_for(pattern)
    audit = Audit()
    graph = graph_builder(pattern)(
        model_for(pattern, script),
        tools=[tool_spec(add, dangerous=True)],
        middleware=[audit],
        checkpointer="memory",
        **options,
    )

    waiting = run(graph, ask(), face, thread("t"))
    assert "__interrupt__" in waiting
    assert audit.log == [("start", "What is 20+22?")]

    done = run(graph, Command(resume=[{"type": "approve"}]), face, thread("t"))

    assert done["outcome"]["status"] == "answered"
    assert [kind for kind, _ in audit.log] == ["start", "end"]
    assert done["audit"] == ["start", "end"]


@pytest.mark.parametrize("face", FACES)
def test_langchains_shell_middleware_keeps_one_session_for_the_question(
    face: str, tmp_path: Path
) -> None:
    shell = ShellToolMiddleware(workspace_root=tmp_path / "work")
    calls = [
        tool_call("shell", command="export X=41 && pwd > where.txt"),
        tool_call("shell", command="echo $((X+1))"),
    ]
    graph = graph_builder("react")(
        ScriptedChatModel(script=[*calls, "It is 42."]), tools=[], middleware=[shell]
    )

    state = run(graph, ask("Use the shell."), face)

    results = [m.text for m in state["messages"] if isinstance(m, ToolMessage)]
    assert results[-1].strip() == "42"  # the second call saw what the first one set
    assert (tmp_path / "work" / "where.txt").read_text().strip() == str(tmp_path / "work")
    assert state["outcome"]["status"] == "answered"


def test_the_shell_session_is_closed_when_the_question_ends() -> None:
    shell = ShellToolMiddleware()  # a session in a directory of its own, removed at its end
    graph = graph_builder("react")(
        ScriptedChatModel(script=[tool_call("shell", command="pwd"), "Done."]),
        tools=[],
        middleware=[shell],
    )

    state = graph.invoke(ask("Use the shell."))

    [result] = [m.text for m in state["messages"] if isinstance(m, ToolMessage)]
    workspace = Path(result.strip())
    assert workspace.name.startswith("langchain-shell-")
    assert not workspace.exists()


class OutcomeState(AgentState):
    outcome: NotRequired[str]


class CountState(AgentState):
    audit: NotRequired[int]


class Clashing(AgentMiddleware):
    state_schema = OutcomeState


class Counting(AgentMiddleware):
    state_schema = CountState


@pytest.mark.parametrize("pattern", ["react", "rewoo", "cot"])
@pytest.mark.parametrize(
    "middleware",
    [[Clashing()], [Audit(), Counting()]],
    ids=["a field of the pattern", "one field of two types"],
)
def test_a_state_field_that_clashes_is_refused_when_built(
    pattern: str, middleware: list[Any]
) -> None:
    with pytest.raises(ValueError, match="state field"):
        graph_builder(pattern)(ScriptedChatModel(script=["?"]), tools=[], middleware=middleware)
