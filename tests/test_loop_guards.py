"""Loop and progress guards, in every pattern whose loop they watch.

- A call that failed with the same arguments in the round before stops the run
  rather than run again (stateful tools too).
- A transient failure of a read-only tool is retried once and never reused; a
  stateful tool's is not retried.
- Empty or "not found" results in a row earn the model a hint to change strategy, in
  its next prompt: the observations stay exactly as the tools gave them.
- Rounds in a row that bring no new information end the loop in ``finish``.

ReAct, Plan-and-Execute (each step) and Reflexion (each trial) run the same
ReAct loop, so each guard is shown in all three; text-format ReAct and ReWOO
hand their calls to the same ``approve`` → ``act`` → ``observe`` loop (in
ReWOO a plan's wave is a round).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from reasoning_graphs.graphs import plan_execute, react_text, reflexion, rewoo
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.react import build_graph as build_react
from reasoning_graphs.metadata import failed_transiently
from reasoning_graphs.nodes.guards.advice import CHANGE_STRATEGY
from reasoning_graphs.nodes.guards.loops import (
    REPEATED_FAILURE,
    ROUND_BEFORE,
    STALE_ROUNDS,
    is_empty_result,
)
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import ToolSpec, tool_spec
from tests.helpers.outcomes import without_note

NO_RESULTS = "No results found."
SAME_TEXT = "The archive is closed today."


class Calls:
    """How often each tool was invoked, by name."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        self.count[name] = self.count.get(name, 0) + 1
        return self.count[name]

    def of(self, name: str) -> int:
        return self.count.get(name, 0)


def guard_tools(calls: Calls, *, transient_failures: int = 1) -> list[ToolSpec]:
    """Tools for every guard: a failing stateful ``save``, a ``lookup`` that loses its
    connection ``transient_failures`` times, a stateful ``upload`` that loses it always,
    a ``search`` that finds nothing and an ``archive`` that always says the same."""

    @tool
    def save(text: str) -> str:
        """Save text to the store."""
        calls("save")
        raise ValueError("the store is read-only")

    @tool
    def lookup(query: str) -> str:
        """Look a fact up."""
        if calls("lookup") <= transient_failures:
            raise ConnectionError("connection reset by peer")
        return f"{query}: found it"

    @tool
    def upload(text: str) -> str:
        """Upload text."""
        calls("upload")
        raise ConnectionError("connection reset by peer")

    @tool
    def search(query: str) -> str:
        """Search the web."""
        calls("search")
        return NO_RESULTS

    @tool
    def archive(query: str) -> str:
        """Ask the archive."""
        calls("archive")
        return SAME_TEXT

    return [
        tool_spec(save, concurrency_safe=False),
        tool_spec(lookup, concurrency_safe=True),
        tool_spec(upload, concurrency_safe=False),
        tool_spec(search, concurrency_safe=True),
        tool_spec(archive, concurrency_safe=True),
    ]


def repeat_reason(call: str) -> str:
    """How the stop for a call that failed in the round before begins."""
    return REPEATED_FAILURE.split("{error}")[0].format(call=call, rounds=ROUND_BEFORE)


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


# --- ReAct, Plan-and-Execute and Reflexion: the same ReAct loop --------------------


class LoopRun:
    """A run of one pattern whose tool loop is the ReAct loop, with its loop outcome."""

    def __init__(self, pattern: str, loop_script: list[Any], **options: Any) -> None:
        self.calls = Calls()
        self.model = ScriptedChatModel(script=_wrapped(pattern, loop_script))
        graph = _build(pattern, self.model, guard_tools(self.calls, **options))
        self.state = graph.invoke(ask("Do the task."))
        self.pattern = pattern

    @property
    def loop_outcome(self) -> dict[str, Any]:
        """How the ReAct loop ended: the run's, a step's or a trial's outcome."""
        if self.pattern == "plan_execute":
            return self.state["past_steps"][0]["outcome"]
        if self.pattern == "reflexion":
            return self.state["trials"][0]["outcome"]
        return self.state["outcome"]

    def loop_prompts(self) -> list[list[BaseMessage]]:
        """The prompts of the loop's model calls (not planning, replanning or grading)."""
        prompts = self.model.prompts
        return prompts[1:-1] if self.pattern == "plan_execute" else prompts


def _wrapped(pattern: str, loop_script: list[Any]) -> list[Any]:
    if pattern == "plan_execute":
        return [Plan(steps=["Do the task."]), *loop_script, Replan(response="Done.")]
    return loop_script


def _build(pattern: str, model: ScriptedChatModel, tools: list[ToolSpec]) -> Any:
    if pattern == "plan_execute":
        return plan_execute.build_graph(model, tools=tools, max_model_calls=20)
    if pattern == "reflexion":
        return reflexion.build_graph(
            model, tools=tools, evaluator=_pass, max_trials=1, max_model_calls=20
        )
    return build_react(model, tools=tools, max_model_calls=20)


def _pass(task: str, answer: str) -> dict[str, Any]:
    return {"score": 1.0, "feedback": "fine"}


LOOP_PATTERNS = ["react", "plan_execute", "reflexion"]


@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_a_stateful_call_that_failed_the_round_before_is_not_run_again(pattern: str) -> None:
    run = LoopRun(
        pattern,
        [tool_call("save", text="x"), tool_call("save", text="x"), "Could not save."],
    )

    assert run.calls.of("save") == 1
    outcome = run.loop_outcome
    assert outcome["status"] == "incomplete"
    assert outcome["reason"].startswith(repeat_reason("save(text='x')"))
    assert "Could not save." in run.state["messages"][-1].text or pattern == "plan_execute"


@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_the_same_call_with_new_arguments_is_not_a_repeat(pattern: str) -> None:
    run = LoopRun(
        pattern, [tool_call("save", text="x"), tool_call("save", text="y"), "Could not save."]
    )

    assert run.calls.of("save") == 2
    assert run.loop_outcome == {"status": "answered"}


@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_a_transient_failure_of_a_read_only_tool_is_retried_once(pattern: str) -> None:
    run = LoopRun(pattern, [tool_call("lookup", query="tides"), "High tide at noon."])

    assert run.calls.of("lookup") == 2
    observation = _observations(run.loop_prompts()[-1])[-1]
    assert observation.status == "success"
    assert "tides: found it" in observation.text
    assert run.loop_outcome == {"status": "answered"}


@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_a_transient_failure_is_not_reused_but_runs_again(pattern: str) -> None:
    script = [tool_call("lookup", query="tides"), tool_call("lookup", query="tides"), "Noon."]
    run = LoopRun(pattern, script, transient_failures=2)

    assert run.calls.of("lookup") == 3  # two tries in the first round, one in the second
    first, second = (_observations(prompt)[-1] for prompt in run.loop_prompts()[1:3])
    assert first.status == "error"
    assert failed_transiently(first)
    assert second.status == "success"
    assert run.loop_outcome == {"status": "answered"}


@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_a_stateful_tool_is_not_retried_blindly(pattern: str) -> None:
    run = LoopRun(pattern, [tool_call("upload", text="x"), "Upload failed."])

    assert run.calls.of("upload") == 1
    assert _observations(run.loop_prompts()[-1])[-1].status == "error"


@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_empty_results_in_a_row_earn_a_hint_to_change_strategy(pattern: str) -> None:
    script = [tool_call("search", query=f"try {n}") for n in range(3)]
    run = LoopRun(pattern, [*script, "Nothing to report."])

    prompts = run.loop_prompts()
    assert not _hinted(prompts[2])  # two so far
    assert _hinted(prompts[3])
    assert [m.text for m in _observations(prompts[3])] == [NO_RESULTS] * 3  # the tool's own
    assert run.loop_outcome == {"status": "answered"}


@pytest.mark.parametrize("pattern", LOOP_PATTERNS)
def test_rounds_without_new_information_end_the_loop(pattern: str) -> None:
    script = [tool_call("archive", query=f"ask {n}") for n in range(7)]
    run = LoopRun(pattern, [*script[:6], "Summary: the archive is closed."])

    assert run.calls.of("archive") == 6  # one new result, then five rounds of the same
    assert without_note(run.loop_outcome) == {
        "status": "incomplete",
        "reason": STALE_ROUNDS.format(rounds=5),
    }
    assert len(run.loop_prompts()) == 7  # six rounds and the one closing call


def _observations(prompt: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in prompt if isinstance(m, ToolMessage)]


def _hinted(prompt: list[BaseMessage]) -> bool:
    """Whether the prompt ends with the advice to change strategy (after three empties)."""
    return CHANGE_STRATEGY.format(count=3) in prompt[-1].text


# --- ReWOO: a plan's waves go through the same loop ----------------------------------


def step(var: str, name: str, **args: Any) -> dict[str, Any]:
    return {"var": var, "tool": name, "reason": "needed", "args": args}


def run_rewoo(
    steps: list[dict[str, Any]], **options: Any
) -> tuple[dict[str, Any], Calls, ScriptedChatModel]:
    calls = Calls()
    model = ScriptedChatModel(script=[{"steps": steps}, "The answer."])
    graph = rewoo.build_graph(model, tools=guard_tools(calls, **options))
    return graph.invoke(ask("Do the task.")), calls, model


def test_rewoo_stops_before_a_wave_repeats_the_failed_call_of_the_wave_before() -> None:
    # E3 waits for E1, so it goes out in the second wave, as the call E2 made in the first
    state, calls, _ = run_rewoo(
        [
            step("E1", "lookup", query="x"),
            step("E2", "save", text="x: found it"),
            step("E3", "save", text="#E1"),
        ],
        transient_failures=0,
    )

    assert calls.of("save") == 1
    assert state["outcome"]["status"] == "incomplete"
    assert state["outcome"]["reason"].startswith(repeat_reason("save(text='x: found it')"))


def test_rewoo_retries_a_transient_failure_once() -> None:
    state, calls, model = run_rewoo([step("E1", "lookup", query="tides")])

    assert calls.of("lookup") == 2
    assert "tides: found it" in "\n".join(str(m.content) for m in model.prompts[-1])
    assert state["outcome"] == {"status": "answered"}


def test_rewoo_hints_the_solver_after_empty_results() -> None:
    state, calls, model = run_rewoo([step(f"E{n}", "search", query=f"try {n}") for n in (1, 2, 3)])

    assert calls.of("search") == 3
    assert _hinted(model.prompts[-1])
    assert state["outcome"] == {"status": "answered"}


def test_rewoo_stops_waves_that_bring_no_new_information() -> None:
    chain = [step("E1", "archive", query="ask 1")]
    chain += [step(f"E{n}", "archive", query=f"#E{n - 1} {n}") for n in range(2, 8)]
    state, calls, _ = run_rewoo(chain)

    assert calls.of("archive") == 6  # the seventh wave never went out
    assert without_note(state["outcome"]) == {
        "status": "incomplete",
        "reason": STALE_ROUNDS.format(rounds=5),
    }


# --- text-format ReAct: the same loop, calls written as text -------------------------


def action(name: str, **args: Any) -> str:
    return f"Thought: try it\nAction: {name}\nAction Input: {json.dumps(args)}"


def run_text(script: list[str], **options: Any) -> tuple[dict[str, Any], Calls, ScriptedChatModel]:
    calls = Calls()
    model = ScriptedChatModel(script=script)
    graph = react_text.build_graph(model, tools=guard_tools(calls, **options), max_model_calls=20)
    return graph.invoke(ask("Do the task.")), calls, model


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def test_text_react_stops_before_repeating_a_failed_call() -> None:
    script = [action("save", text="x"), action("save", text="x"), "Final Answer: not saved"]
    state, calls, _ = run_text(script)

    assert calls.of("save") == 1
    assert state["outcome"]["status"] == "incomplete"
    assert state["outcome"]["reason"].startswith(repeat_reason("save(text='x')"))


def test_text_react_retries_a_transient_failure_and_does_not_reuse_it() -> None:
    script = [action("lookup", query="q"), action("lookup", query="q"), "Final Answer: ok"]
    state, calls, _ = run_text(script, transient_failures=2)

    assert calls.of("lookup") == 3
    assert [m.status for m in tool_messages(state)] == ["error", "success"]
    assert state["outcome"] == {"status": "answered"}


def test_text_react_hints_after_empty_results() -> None:
    script = [action("search", query=f"try {n}") for n in range(3)]
    state, _, model = run_text([*script, "Final Answer: nothing"])

    assert [m.text for m in tool_messages(state)] == [NO_RESULTS] * 3  # the tools' own
    assert _hinted(model.prompts[3])
    assert not _hinted(model.prompts[2])


def test_text_react_ends_rounds_without_new_information() -> None:
    script = [action("archive", query=f"ask {n}") for n in range(6)]
    state, calls, _ = run_text([*script, "Final Answer: closed"])

    assert calls.of("archive") == 6
    assert without_note(state["outcome"]) == {
        "status": "incomplete",
        "reason": STALE_ROUNDS.format(rounds=5),
    }


# --- thresholds are options ----------------------------------------------------------


def test_thresholds_come_from_the_run_options() -> None:
    calls = Calls()
    script = [tool_call("save", text="x"), tool_call("save", text="x"), "Could not save."]
    graph = build_react(
        ScriptedChatModel(script=script), tools=guard_tools(calls), repeat_failure_limit=3
    )

    state = graph.invoke(ask("Save x."))

    assert calls.of("save") == 2  # a third identical round would have been stopped
    assert state["outcome"] == {"status": "answered"}


@pytest.mark.parametrize(
    ("text", "empty"),
    [
        ("", True),
        ("[]", True),
        ("No results found.", True),
        ("未找到相关结果", True),
        ("File not found: notes.txt", True),
        ("Paris is the capital of France.", False),
        ("A long page that mentions, in passing, a page not found. " * 10, False),
    ],
)
def test_what_counts_as_an_empty_result(text: str, empty: bool) -> None:
    message = ToolMessage(text, tool_call_id="c1", name="search")
    assert is_empty_result(message) is empty


def test_an_error_is_not_an_empty_result() -> None:
    message = ToolMessage("Error: not found", tool_call_id="c1", name="search", status="error")
    assert not is_empty_result(message)
