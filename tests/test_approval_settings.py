"""Per-tool approval settings in LangChain's ``interrupt_on`` shape, in every pattern.

``HumanInTheLoopMiddleware(interrupt_on=...)`` given as middleware, or the same mapping
given to ``approve=``, sets our approvals: which decisions a person may take on a tool's
calls, what they read, and (``when``) which calls need them. ``ls`` runs freely while
``rm -rf /`` waits; a setting only ever adds asking; the seal still guards each run.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolCallRequest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.asking import askings
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers.faces import FACES, run
from tests.helpers.one_call import one_call

TOOL_PATTERNS = [name for name, pattern in PATTERNS.items() if pattern.uses_tools]
WARNING = "This deletes files."


class Shell:
    """A ``shell`` tool that records the commands it ran (and runs none)."""

    def __init__(self, *, dangerous: bool = False) -> None:
        self.ran: list[str] = []
        self.dangerous = dangerous

    def spec(self) -> Any:
        def shell(command: str) -> str:
            """Run a shell command."""
            self.ran.append(command)
            return f"ran {command}"

        return tool_spec(shell, dangerous=self.dangerous)


def deleting(request: ToolCallRequest) -> bool:
    return "rm " in request.tool_call["args"]["command"]


SETTINGS: dict[str, Any] = {
    "shell": {"allowed_decisions": ["approve", "reject"], "description": WARNING, "when": deleting}
}
WAYS = {
    "middleware": lambda: {"middleware": [HumanInTheLoopMiddleware(interrupt_on=SETTINGS)]},
    "approve": lambda: {"approve": SETTINGS},
}


def build(pattern: str, command: str, shell: Shell, **given: Any) -> Any:
    script, options = one_call(pattern, "shell", {"command": command}, "Done.")
    return graph_builder(pattern)(
        ScriptedChatModel(script=script),
        tools=[shell.spec()],
        checkpointer=InMemorySaver(),
        **options,
        **given,
    )


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def ask() -> dict[str, Any]:
    return {"messages": [HumanMessage("Tidy the disk.")]}


def request_of(state: dict[str, Any]) -> dict[str, Any]:
    (interrupt,) = state["__interrupt__"]
    assert interrupt.value["kind"] == APPROVAL_KIND
    return interrupt.value


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_call_the_predicate_lets_through_runs_unasked(pattern: str, face: str, way: str) -> None:
    shell = Shell()
    graph = build(pattern, "ls", shell, **WAYS[way]())

    state = run(graph, ask(), face, thread("ls"))

    assert "__interrupt__" not in state
    assert shell.ran == ["ls"]


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_call_the_predicate_names_waits_with_the_settings_decisions(
    pattern: str, face: str, way: str
) -> None:
    shell = Shell()
    graph = build(pattern, "rm -rf /", shell, **WAYS[way]())
    config = thread("rm")

    request = request_of(run(graph, ask(), face, config))
    [pending] = request["calls"]
    assert (pending["name"], pending["args"]) == ("shell", {"command": "rm -rf /"})
    assert pending["allowed_decisions"] == ["approve", "reject"]
    assert pending["description"] == WARNING
    assert shell.ran == []

    edit = {"type": "edit", "args": {"command": "rm -rf /tmp/x"}}
    again = request_of(run(graph, Command(resume=[edit]), face, config))
    assert again["error"]  # an edit is not among the decisions
    assert shell.ran == []

    state = run(graph, Command(resume=[{"type": "reject", "reason": "no"}]), face, config)
    assert "__interrupt__" not in state
    assert shell.ran == []


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_an_approved_call_runs_once_as_approved(pattern: str, face: str) -> None:
    shell = Shell()
    graph = build(pattern, "rm -rf build", shell, approve=SETTINGS)
    config = thread("approved")

    request_of(run(graph, ask(), face, config))
    state = run(graph, Command(resume=[{"type": "approve"}]), face, config)

    assert "__interrupt__" not in state
    assert shell.ran == ["rm -rf build"]
    [event] = [e for e in state["trajectory"] if e["kind"] == "action"]
    assert (event["decision"], event["status"]) == ("approved", "success")


@pytest.mark.parametrize("face", FACES)
def test_a_setting_never_lets_a_dangerous_tool_run_unasked(face: str) -> None:
    shell = Shell(dangerous=True)
    graph = build("react", "ls", shell, approve={"shell": False})

    request = request_of(run(graph, ask(), face, thread("dangerous")))

    assert request["calls"][0]["allowed_decisions"] == ["approve", "edit", "reject", "respond"]
    assert shell.ran == []


@pytest.mark.parametrize("face", FACES)
def test_a_dangerous_tool_takes_the_settings_decisions_and_description(face: str) -> None:
    shell = Shell(dangerous=True)
    settings = {
        "shell": {"allowed_decisions": ["reject"], "description": WARNING, "when": deleting}
    }
    graph = build("react", "ls", shell, approve=settings)

    [pending] = request_of(run(graph, ask(), face, thread("narrowed")))["calls"]

    assert (pending["allowed_decisions"], pending["description"]) == (["reject"], WARNING)


def failing_predicate(request: ToolCallRequest) -> bool:
    raise KeyError("path")


@pytest.mark.parametrize("face", FACES)
def test_a_predicate_that_fails_asks(face: str) -> None:
    shell = Shell()
    settings = {"shell": {"allowed_decisions": ["approve"], "when": failing_predicate}}
    graph = build("react", "ls", shell, approve=settings)

    request_of(run(graph, ask(), face, thread("failing")))

    assert shell.ran == []


def test_a_description_made_per_call_reads_the_call_and_the_state() -> None:
    def described(call: Any, state: Any, runtime: Any) -> str:
        question = state["messages"][0].content
        return f"{call['name']} {call['args']['command']!r} for {question!r}"

    shell = Shell()
    settings = {"shell": {"allowed_decisions": ["approve"], "description": described}}
    graph = build("react", "ls", shell, approve=settings)

    [pending] = request_of(graph.invoke(ask(), thread("described")))["calls"]

    assert pending["description"] == "shell 'ls' for 'Tidy the disk.'"


@pytest.mark.parametrize(
    "settings",
    [
        {"shell": {"allowed_decisions": []}},
        {"shell": {"allowed_decisions": ["approve", "maybe"]}},
        {"shell": {"allowed_decision": ["approve"]}},
        {"shell": "yes"},
    ],
    ids=["no decisions", "unknown decision", "misspelt key", "not a setting"],
)
def test_a_setting_that_cannot_be_read_is_refused_when_built(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="shell"):
        build("react", "ls", Shell(), approve=settings)


def test_a_tool_set_twice_is_refused_when_built() -> None:
    middleware = [HumanInTheLoopMiddleware(interrupt_on={"shell": True})]
    with pytest.raises(ValueError, match="twice"):
        build("react", "ls", Shell(), approve={"shell": True}, middleware=middleware)


def test_the_mapping_reads_as_the_middleware_reads_it() -> None:
    middleware = HumanInTheLoopMiddleware(interrupt_on={"a": True, "b": False, **SETTINGS})
    ours = askings(middleware.interrupt_on)

    assert sorted(ours) == ["a", "shell"]
    assert list(ours["a"].decisions) == ["approve", "edit", "reject", "respond"]
    assert ours["shell"].when is deleting


def asked_in_a_hurry(request: ToolCallRequest) -> bool:
    """Asks a person unless the question says the user is in a hurry: a ``when`` that reads
    the state, as the request lets it."""
    question = next(m for m in request.state["messages"] if isinstance(m, HumanMessage))
    return "hurry" not in question.text.lower()


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", ["react", "react_text", "plan_react", "plan_execute"])
def test_a_predicate_reads_the_state_where_the_call_runs(pattern: str, face: str) -> None:
    setting = {"shell": {"allowed_decisions": ["approve"], "when": asked_in_a_hurry}}
    calm, hurried = Shell(), Shell()

    waiting = run(build(pattern, "ls", calm, approve=setting), ask(), face, thread("t"))
    hurry = {"messages": [HumanMessage("Hurry: tidy the disk.")]}
    done = run(build(pattern, "ls", hurried, approve=setting), hurry, face, thread("t"))

    assert "__interrupt__" in waiting  # the predicate read the question: a person is asked
    assert calm.ran == []
    assert "__interrupt__" not in done  # asked again where the call runs, with the state
    assert hurried.ran == ["ls"]
    assert done["outcome"]["status"] == "answered"
