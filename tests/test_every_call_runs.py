"""Every call the model makes runs; only a pure tool's identical call is answered from the
earlier result.

A tool's world changes without us (a build finishes, a clock moves, an inbox fills), so
read-only is not pure. On both faces (``invoke`` and ``ainvoke``), this file guards that:

- a repeated call runs again, whatever its tool: marked read-only, a plain LangChain
  ``@tool``, an MCP tool with ``readOnlyHint``, stateful. A CI poll sees running,
  running, passed and answers, in every pattern that can repeat a call: turn after
  turn (ReAct, text ReAct, plan-in-context ReAct), step after step (Plan-and-Execute),
  trial after trial (Reflexion), wave after wave (ReWOO), round after round (LLM
  Compiler), expansion after expansion (LATS);
- a clock read twice tells two times, a page read twice shows what arrived, a message
  sent twice (in one turn or in two) is sent twice;
- a dangerous repeat is put to the person again; one they rejected is answered from
  the rejection without asking;
- only a tool declared pure (``tool_spec(f, pure=True)``) is answered from its identical
  earlier call, marked ``reused``;
- a repeat that returned the same text earns a note at the end of the model's next
  prompt, while its observation stays the tool's own;
- a poll that never changes ends through the stale-round guard, having run every round.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.metadata import decision_of, rejected_before, reused_from
from reasoning_graphs.nodes.guards.advice import SAME_RESULT
from reasoning_graphs.nodes.guards.budget import TOOL_LIMIT
from reasoning_graphs.nodes.guards.loops import STALE_ROUNDS
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.question import describe_call
from reasoning_graphs.state import EXECUTED
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from reasoning_graphs.tools.builtins import calculator
from reasoning_graphs.tools.mcp import McpTools
from reasoning_graphs.tools.spec import ToolSpec, tool_spec
from tests.helpers.faces import FACES, run
from tests.helpers.mcp_servers import NotesLog, stdio_servers
from tests.helpers.outcomes import without_note

LOOP_PATTERNS = ["react", "react_text", "plan_react"]
"""Patterns whose model proposes its calls turn by turn in one loop."""
POLLING_PATTERNS = [*LOOP_PATTERNS, "plan_execute", "reflexion", "rewoo", "llm_compiler", "lats"]
MARKINGS = ["read_only", "plain"]

QUESTION = "Wait for CI build 42 to finish and tell me how it ended."
ANSWER = "Build 42 passed."
BUILD_ID = "42"
CHECK = ("check_build", {"build_id": BUILD_ID})
FAILING = Judgement(feedback="The build has not finished yet.", score=0.1)
REFLECTION = {"diagnosis": "I answered before the build finished.", "advice": "Check again."}
GRADE = Judgement(feedback="Right.", score=0.9)


# --- running a question --------------------------------------------------------------


def ask(question: str = QUESTION) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def build(
    pattern: str, script: list[Any], tools: list[Any], **options: Any
) -> tuple[Any, ScriptedChatModel]:
    """``pattern``'s graph on a model that plays ``script``, and that model."""
    model = ScriptedChatModel(script=script)
    return graph_builder(pattern)(model, tools=tools, **options), model


def answering(
    graph: Any, face: str, thread: dict[str, Any], decisions: list[str]
) -> tuple[dict[str, Any], int]:
    """The question run to its end, each approval request (one call each) answered with
    the next of ``decisions``; the final state and how many requests there were."""
    state = run(graph, ask(), face, thread)
    asked = 0
    while state.get("__interrupt__"):
        assert asked < len(decisions), "the person was asked more often than expected"
        [request] = state["__interrupt__"]
        [_] = request.value["calls"]  # each turn proposes one call
        state = run(graph, Command(resume=[{"type": decisions[asked]}]), face, thread)
        asked += 1
    return state, asked


# --- reading what happened -----------------------------------------------------------


def actions(state: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The trajectory's record of every call of ``name``: observation and decision."""
    return [e for e in state["trajectory"] if e["kind"] == "action" and e["tool"] == name]


def answers(state: dict[str, Any], name: str) -> list[ToolMessage]:
    """The observations of ``name``'s calls in the conversation."""
    return [m for m in state["messages"] if isinstance(m, ToolMessage) and m.name == name]


def seen(prompt: list[BaseMessage]) -> str:
    """What a prompt shows the model besides its instructions."""
    return "\n".join(m.text for m in prompt if not isinstance(m, SystemMessage))


def shown(model: ScriptedChatModel, text: str) -> bool:
    """Whether some prompt showed the model ``text``."""
    return any(text in seen(prompt) for prompt in model.prompts)


# --- scripts -------------------------------------------------------------------------


def text_action(name: str, args: dict[str, Any]) -> str:
    return f"Thought: call {name}\nAction: {name}\nAction Input: {json.dumps(args)}"


def loop_script(pattern: str, calls: list[tuple[str, dict[str, Any]]], answer: str) -> list[Any]:
    """A loop pattern's replies: each call in a turn of its own, then ``answer``."""
    if pattern == "react_text":
        return [*(text_action(*call) for call in calls), f"Thought: done\nFinal Answer: {answer}"]
    replies = [*(tool_call(name, **args) for name, args in calls), answer]
    if pattern == "plan_react":
        return [PlanItems(items=["Do what the question asks."]), *replies]
    return replies


def poll_script(pattern: str, tool_name: str, build_id: str) -> tuple[list[Any], dict[str, Any]]:
    """The replies and build options under which ``pattern`` checks ``tool_name(build_id)``
    three times, the next after the one before, and then answers :data:`ANSWER`."""
    args = {"build_id": build_id}

    def check() -> Any:
        return tool_call(tool_name, **args)

    def step(var: str, name: str, **step_args: Any) -> dict[str, Any]:
        return {"var": var, "tool": name, "args": step_args, "reason": "poll"}

    def task() -> dict[str, Any]:
        return {"tasks": [{"id": 1, "tool": tool_name, "args": args, "deps": []}]}

    def grade(messages: list[BaseMessage]) -> dict[str, Any]:
        return {"feedback": "judged", "score": 0.9 if ANSWER in messages[-1].text else 0.5}

    if pattern in LOOP_PATTERNS:
        return loop_script(pattern, [(tool_name, args)] * 3, ANSWER), {}
    scripts: dict[str, Callable[[], tuple[list[Any], dict[str, Any]]]] = {
        "plan_execute": lambda: (  # one check per step
            [
                Plan(steps=["Check the build.", "Check it again.", "Check it once more."]),
                *(
                    reply
                    for status in ("running", "running", "passed")
                    for reply in (check(), status)
                ),
                Replan(response=ANSWER),
            ],
            {},
        ),
        "reflexion": lambda: (  # a check in the first trial, two in the second
            [check(), "It is running.", FAILING, REFLECTION, check(), check(), ANSWER, GRADE],
            {"max_trials": 2},
        ),
        "rewoo": lambda: (  # check, wait, check, wait, check: each wait hands on the id
            [
                {
                    "steps": [
                        step("E1", tool_name, **args),
                        step("E2", "wait_for", build_id=build_id, after="#E1"),
                        step("E3", tool_name, build_id="#E2"),
                        step("E4", "wait_for", build_id=build_id, after="#E3"),
                        step("E5", tool_name, build_id="#E4"),
                    ]
                },
                ANSWER,
            ],
            {},
        ),
        "llm_compiler": lambda: (  # the same task in each of three rounds
            [
                task(),
                {"answer": "", "replan": True, "reason": "still running"},
                task(),
                {"answer": "", "replan": True, "reason": "still running"},
                task(),
                {"answer": ANSWER, "replan": False, "reason": ""},
            ],
            {"max_rounds": 3},
        ),
        "lats": lambda: (  # one action per expansion, each below the one before
            [check(), grade, check(), grade, check(), grade, ANSWER, grade],
            {"candidates": 1},
        ),
    }
    return scripts[pattern]()


# --- tools ---------------------------------------------------------------------------


@tool
def wait_for(build_id: str, after: str) -> str:
    """Wait a while after build ``build_id`` reported ``after``; returns the build id."""
    return build_id


def marked(function: Callable[..., str], marking: str) -> ToolSpec | BaseTool:
    """``function`` as a read-only tool spec, or as a plain LangChain tool."""
    return tool_spec(function, concurrency_safe=True) if marking == "read_only" else tool(function)


class Build:
    """CI build 42 as its status check sees it: ``running`` for ``running_checks`` checks,
    then ``passed`` (``None``: it never finishes)."""

    def __init__(self, running_checks: int | None = 2) -> None:
        self.running_checks = running_checks
        self.checks = 0

    def tools(self, marking: str = "read_only") -> list[Any]:
        def check_build(build_id: str) -> str:
            """The status of CI build ``build_id``: running, passed or failed."""
            self.checks += 1
            done = self.running_checks is not None and self.checks > self.running_checks
            return "passed" if done else "running"

        return [marked(check_build, marking), wait_for]


class Outbox:
    """Messages sent and files written, as a stateful tool does them."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.written: list[tuple[str, str]] = []

    def send_message(self, to: str, text: str) -> str:
        """Send ``text`` to ``to``."""
        self.sent.append((to, text))
        return f"sent message {len(self.sent)} to {to}"

    def write_file(self, path: str, text: str) -> str:
        """Write ``text`` to the file ``path``."""
        self.written.append((path, text))
        return f"wrote {path}"


# --- a poll runs every time ----------------------------------------------------------


def check_poll(state: dict[str, Any], model: ScriptedChatModel, tool_name: str) -> None:
    """Three checks ran and said running, running, passed; the model saw it and answered."""
    checks = actions(state, tool_name)
    assert [e["observation"] for e in checks] == ["running", "running", "passed"]
    assert all(e["decision"] in EXECUTED for e in checks)
    if answers(state, tool_name):  # the patterns that keep the calls in the conversation
        assert [m.text for m in answers(state, tool_name)] == ["running", "running", "passed"]
    assert shown(model, "passed")
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].text == ANSWER


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("marking", MARKINGS)
@pytest.mark.parametrize("pattern", POLLING_PATTERNS)
def test_a_polled_build_is_checked_every_time_until_it_passes(
    pattern: str, marking: str, face: str
) -> None:
    ci = Build()
    script, options = poll_script(pattern, "check_build", BUILD_ID)
    graph, model = build(pattern, script, ci.tools(marking), **options)

    state = run(graph, ask(), face)

    assert ci.checks == 3
    check_poll(state, model, "check_build")


@pytest.fixture(scope="module")
def mcp_status(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ToolSpec, NotesLog]]:
    """The test MCP server's ``build_status`` tool over stdio, and the server's log."""
    notes = NotesLog(tmp_path_factory.mktemp("mcp") / "notes.log")
    with McpTools(stdio_servers(notes.path)) as server:
        [status] = [spec for spec in server if spec.name == "build_status"]
        yield status, notes


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", POLLING_PATTERNS)
def test_an_mcp_read_only_poll_is_checked_every_time_until_it_passes(
    mcp_status: tuple[ToolSpec, NotesLog], pattern: str, face: str
) -> None:
    status, notes = mcp_status
    build_id = f"{pattern}-{face}"  # the server counts each build's checks
    script, options = poll_script(pattern, "build_status", build_id)
    graph, model = build(pattern, script, [status, wait_for], **options)

    state = run(graph, ask(f"Wait for CI build {build_id} to finish."), face)

    assert status.concurrency_safe  # readOnlyHint: it may overlap with other calls...
    assert not status.pure  # ...and still runs every time
    assert notes.ran(f"build_status {build_id}") == 3
    check_poll(state, model, "build_status")


# --- clocks, pages and messages ------------------------------------------------------


@pytest.mark.parametrize("face", FACES)
def test_a_clock_read_twice_tells_two_times(face: str) -> None:
    times = iter(["09:00:00", "09:00:07"])

    def now() -> str:
        """The current time."""
        return next(times)

    graph, _ = build("react", [tool_call("now"), tool_call("now"), "Seven seconds."], [now])

    state = run(graph, ask("How long between two readings of the clock?"), face)

    assert [m.text for m in answers(state, "now")] == ["09:00:00", "09:00:07"]
    assert all(decision_of(m) in EXECUTED for m in answers(state, "now"))


@pytest.mark.parametrize("face", FACES)
def test_a_page_read_twice_with_the_same_cursor_shows_what_arrived(face: str) -> None:
    inbox = ["invoice", "reminder"]

    def list_items(cursor: str = "") -> str:
        """The inbox's items from ``cursor`` on."""
        page = ", ".join(inbox)
        inbox.append("receipt")  # something arrives between two reads
        return page

    calls = [("list_items", {"cursor": ""})] * 2
    graph, _ = build(
        "react", loop_script("react", calls, "Three items."), [marked(list_items, "read_only")]
    )

    state = run(graph, ask("What is in the inbox now?"), face)

    assert [m.text for m in answers(state, "list_items")] == [
        "invoice, reminder",
        "invoice, reminder, receipt",
    ]


HI = {"to": "ann", "text": "hi"}


@pytest.mark.parametrize("face", FACES)
def test_two_identical_messages_in_one_turn_are_both_sent(face: str) -> None:
    outbox = Outbox()
    turn = tool_calls(("send_message", HI), ("send_message", HI))
    graph, _ = build("react", [turn, "Sent twice."], [tool_spec(outbox.send_message)])

    state = run(graph, ask("Say hi to Ann twice."), face)

    assert outbox.sent == [("ann", "hi"), ("ann", "hi")]
    assert [m.text for m in answers(state, "send_message")] == [
        "sent message 1 to ann",
        "sent message 2 to ann",
    ]


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_an_identical_message_in_the_next_turn_is_sent_again(pattern: str, face: str) -> None:
    outbox = Outbox()
    script = loop_script(pattern, [("send_message", HI)] * 2, "Sent twice.")
    graph, _ = build(pattern, script, [tool_spec(outbox.send_message)])

    state = run(graph, ask("Say hi to Ann, then once more."), face)

    assert outbox.sent == [("ann", "hi"), ("ann", "hi")]
    assert [e["decision"] for e in actions(state, "send_message")] == ["auto", "auto"]


def test_an_identical_task_in_one_compiler_plan_runs_twice() -> None:
    outbox = Outbox()
    tasks = [{"id": n, "tool": "send_message", "args": HI, "deps": []} for n in (1, 2)]
    script = [{"tasks": tasks}, {"answer": "Sent twice.", "replan": False, "reason": ""}]
    graph, _ = build("llm_compiler", script, [tool_spec(outbox.send_message)])

    state = run(graph, ask("Say hi to Ann twice."), "sync")

    assert outbox.sent == [("ann", "hi"), ("ann", "hi")]
    assert state["outcome"] == {"status": "answered"}


def test_an_identical_step_in_one_rewoo_plan_runs_twice() -> None:
    outbox = Outbox()
    steps = [
        {"var": v, "tool": "send_message", "args": HI, "reason": "asked"} for v in ("E1", "E2")
    ]
    script = [{"steps": steps}, "Sent twice."]
    graph, _ = build("rewoo", script, [tool_spec(outbox.send_message)])

    state = run(graph, ask("Say hi to Ann twice."), "sync")

    assert outbox.sent == [("ann", "hi"), ("ann", "hi")]
    assert state["outcome"] == {"status": "answered"}


# --- dangerous repeats ---------------------------------------------------------------

HELLO = {"path": "hi.txt", "text": "hello"}
DANGER = ["spec", "policy"]
"""How a tool is made dangerous: its spec says so, or the run's ``approve`` list names it."""


def writing_graph(outbox: Outbox, danger: str, pattern: str = "react") -> Any:
    """``pattern`` writing hi.txt in two turns, the same call each time, with approvals."""
    script = loop_script(pattern, [("write_file", HELLO)] * 2, "Wrote hi.txt.")
    dangerous = danger == "spec"
    options = {} if dangerous else {"approve": ["write_file"]}
    tools = [tool_spec(outbox.write_file, dangerous=dangerous)]
    graph, _ = build(pattern, script, tools, checkpointer=InMemorySaver(), **options)
    return graph


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("danger", DANGER)
@pytest.mark.parametrize("pattern", ["react", "react_text"])
def test_an_approved_dangerous_repeat_is_asked_again_and_runs_again(
    pattern: str, danger: str, face: str, thread: dict[str, Any]
) -> None:
    outbox = Outbox()
    graph = writing_graph(outbox, danger, pattern)

    state, asked = answering(graph, face, thread, ["approve", "approve"])

    assert asked == 2
    assert outbox.written == [("hi.txt", "hello"), ("hi.txt", "hello")]
    assert [e["decision"] for e in actions(state, "write_file")] == ["approved", "approved"]
    assert state["outcome"] == {"status": "answered"}


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("danger", DANGER)
def test_a_rejected_call_proposed_again_is_not_asked_again_and_never_runs(
    danger: str, face: str, thread: dict[str, Any]
) -> None:
    outbox = Outbox()
    graph = writing_graph(outbox, danger)

    state, asked = answering(graph, face, thread, ["reject"])

    assert asked == 1
    assert outbox.written == []
    first, again = answers(state, "write_file")
    assert decision_of(first) == decision_of(again) == "rejected"
    assert not rejected_before(first)
    assert rejected_before(again)


@pytest.mark.parametrize("face", FACES)
def test_lats_asks_again_for_the_same_dangerous_call_in_another_branch(
    face: str, thread: dict[str, Any]
) -> None:
    """The first expansion writes hi.txt in one branch and messages Ann in the other; the
    second grows the better-judged message branch with the very same write."""

    def grade(messages: list[BaseMessage]) -> dict[str, Any]:
        text = messages[-1].text
        rules = [("Final answer", 0.1), ("wrote hi.txt", 0.5), ("sent message", 0.6)]
        return {"feedback": "judged", "score": next(s for t, s in rules if t in text)}

    outbox = Outbox()
    first = [tool_call("write_file", **HELLO), tool_call("send_message", **HI)]
    second = [tool_call("write_file", **HELLO), "Wrote hi.txt."]
    tools = [tool_spec(outbox.write_file, dangerous=True), tool_spec(outbox.send_message)]
    script = [*first, grade, grade, *second, grade, grade]
    options = {"candidates": 2, "max_expansions": 2, "checkpointer": InMemorySaver()}
    graph, _ = build("lats", script, tools, **options)

    state, asked = answering(graph, face, thread, ["approve", "approve"])

    assert asked == 2
    assert outbox.written == [("hi.txt", "hello"), ("hi.txt", "hello")]
    nodes = state["tree"]["nodes"]
    [message] = [n["id"] for n in nodes if n["call"] and n["call"]["name"] == "send_message"]
    writes = [n for n in nodes if n["call"] and n["call"]["name"] == "write_file"]
    assert [n["parent"] for n in writes] == [0, message]  # two branches, one call
    assert [n["decision"] for n in writes] == ["approved", "approved"]


# --- pure tools ----------------------------------------------------------------------


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pure", [True, False], ids=["pure", "read_only"])
def test_only_a_pure_tools_identical_call_is_answered_from_the_earlier_one(
    pure: bool, face: str
) -> None:
    runs: list[str] = []

    def slugify(title: str) -> str:
        """The URL slug of ``title``."""
        runs.append(title)
        return title.lower().replace(" ", "-")

    script = [
        tool_call("slugify", id="first", title="Hello World"),
        tool_call("slugify", id="second", title="Hello World"),
        "hello-world",
    ]
    spec = tool_spec(slugify, pure=True) if pure else tool_spec(slugify, concurrency_safe=True)
    graph, _ = build("react", script, [spec])

    state = run(graph, ask("Slug of 'Hello World', twice?"), face)

    first, second = answers(state, "slugify")
    assert first.text == second.text == "hello-world"
    assert decision_of(first) == "auto"
    if pure:
        assert runs == ["Hello World"]
        assert decision_of(second) == "reused"
        assert reused_from(second) == "first"
        assert actions(state, "slugify")[1]["decision"] == "reused"
    else:
        assert runs == ["Hello World", "Hello World"]
        assert decision_of(second) == "auto"
        assert reused_from(second) is None


def test_the_built_in_calculator_is_declared_pure() -> None:
    assert calculator().pure


# --- advice and loop guards ----------------------------------------------------------


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_a_repeat_that_returned_the_same_result_is_pointed_out_in_the_next_prompt(
    pattern: str, face: str
) -> None:
    ci = Build()
    graph, model = build(pattern, loop_script(pattern, [CHECK] * 3, ANSWER), ci.tools())

    state = run(graph, ask(), face)

    note = SAME_RESULT.format(calls=describe_call(*CHECK))
    after = [prompt for prompt in model.prompts if "running" in seen(prompt)]
    after_first, after_second, after_passed = after  # the prompts after each check
    assert note not in after_first[-1].text
    assert note in after_second[-1].text  # running again: the same result
    assert note not in after_passed[-1].text  # passed: a changed result
    # the observations stay the tool's own output
    assert [m.text for m in answers(state, "check_build")] == ["running", "running", "passed"]


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", ["llm_compiler", "lats"])
def test_the_joiner_and_the_search_are_told_of_a_same_result_too(pattern: str, face: str) -> None:
    ci = Build()
    script, options = poll_script(pattern, "check_build", BUILD_ID)
    graph, model = build(pattern, script, ci.tools(), **options)

    run(graph, ask(), face)

    note = SAME_RESULT.format(calls=describe_call(*CHECK))
    [noted] = [prompt for prompt in model.prompts if note in prompt[-1].text]
    assert seen(noted).count("running") >= 2  # told once: after the second "running"
    assert "passed" not in seen(noted)


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_a_poll_that_never_changes_ends_through_the_stale_round_guard(
    pattern: str, face: str
) -> None:
    ci = Build(running_checks=None)
    polls = [CHECK] * 4  # one new result, three stale rounds
    graph, _ = build(
        pattern, loop_script(pattern, polls, "Still running."), ci.tools(), stale_round_limit=3
    )

    state = run(graph, ask(), face)

    assert ci.checks == 4
    assert without_note(state["outcome"]) == {
        "status": "incomplete",
        "reason": STALE_ROUNDS.format(rounds=3),
    }
    assert state["messages"][-1].text == "Still running."


@pytest.mark.parametrize("face", FACES)
def test_a_poll_that_never_changes_ends_at_the_tool_call_budget_first(face: str) -> None:
    ci = Build(running_checks=None)
    polls = [CHECK] * 4
    graph, _ = build(
        "react", loop_script("react", polls, "Still running."), ci.tools(), max_tool_calls=2
    )

    state = run(graph, ask(), face)

    assert ci.checks == 2
    assert without_note(state["outcome"]) == {
        "status": "incomplete",
        "reason": TOOL_LIMIT.format(limit=2),
    }
