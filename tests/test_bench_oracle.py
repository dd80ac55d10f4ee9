"""The oracle model: every pattern, driven by its protocol, reaches the gold answer along the
gold trajectory, with the model calls the pattern makes — and never loops."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.bench.oracle import PROTOCOLS, OracleChatModel
from reasoning_graphs.bench.scorers import score, unit_test_evaluator
from reasoning_graphs.bench.suite import Suite, Task, load_suite
from reasoning_graphs.bench.tools import task_tools
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.graphs.llm_compiler.dag import TaskPlan
from reasoning_graphs.graphs.llm_compiler.join import JoinDecision
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.reflexion.reflect import Reflection
from reasoning_graphs.graphs.rewoo.steps import PlanSchema
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.state import EXECUTED
from reasoning_graphs.tools.builtins import calculator, write_file
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

TOOL_PATTERNS = [name for name, pattern in PATTERNS.items() if pattern.uses_tools]
SUITES = Path(__file__).parents[1] / "src" / "reasoning_graphs" / "bench" / "suites"
CORRECTS_A_DRAFT = ("reflexion", "lats")
"""Feedback, a search over samples, and worked reasoning reach the gold answer past a draft."""
BENCH_MAX_MODEL_CALLS = 20
"""The bench's model-call budget per question (``BenchSettings.max_model_calls``)."""

CAPITALS = {"Veldoria": "Ostrelin", "Brask": "Vardun"}
MAYORS = {"Ostrelin": "Hanne Ruskov", "Vardun": "Tomas Ekhart"}
HEIGHTS = {"Mount Arlo": "2100 m", "Mount Brin": "2900 m", "Mount Cael": "2450 m"}

ARITHMETIC = Task.from_json(
    {
        "id": "arith",
        "question": "What is 23*17+4?",
        "answer": "395",
        "tools": ["calculator"],
        "scorer": "numeric",
        "trajectory": [{"tool": "calculator", "args": {"expression": "23*17+4"}}],
        "reasoning": "23*17 = 391, and 391 + 4 = 395.",
    }
)
CHAIN = Task.from_json(
    {
        "id": "chain",
        "question": "Who is the mayor of the capital of Veldoria?",
        "answer": "Hanne Ruskov",
        "tools": ["capital_of", "mayor_of"],
        "trajectory": [
            {"tool": "capital_of", "args": {"country": "Veldoria"}},
            {"tool": "mayor_of", "args": {"city": "#1"}},
        ],
    }
)
PARALLEL = Task.from_json(
    {
        "id": "parallel",
        "question": "Which is tallest: Mount Arlo, Mount Brin or Mount Cael?",
        "answer": "Mount Brin",
        "tools": ["height_of"],
        "trajectory": [
            {"tool": "height_of", "args": {"mountain": name}} for name in sorted(HEIGHTS)
        ],
    }
)
CODE = Task.from_json(
    {
        "id": "code",
        "question": "Write a Python function add(a, b) that returns the sum of a and b.",
        "answer": "```python\ndef add(a, b):\n    return a + b\n```",
        "draft": "```python\ndef add(a, b):\n    return a - b\n```",
        "tests": "assert add(2, 3) == 5\nassert add(-1, 1) == 0\nassert add(0, 0) == 0\n",
        "scorer": "unit_tests",
        "reasoning": "The sum is a + b.",
    }
)
DECISIONS = {
    "approve": ([[{"type": "approve"}]], "saved", "Meeting at 3 pm.\n"),
    "edit": (
        [[{"type": "edit", "args": {"path": "notes.txt", "content": "Meeting at 4 pm.\n"}}]],
        "saved",
        "Meeting at 4 pm.\n",
    ),
    "reject": ([[{"type": "reject", "reason": "Not today."}]], "not saved", None),
}


def approval_task(kind: str) -> Task:
    decisions, answer, _ = DECISIONS[kind]
    return Task.from_json(
        {
            "id": f"approval-{kind}",
            "question": "Save 'Meeting at 3 pm.' to notes.txt, then reply 'saved' or 'not saved'.",
            "answer": answer,
            "tools": ["write_file"],
            "trajectory": [
                {
                    "tool": "write_file",
                    "args": {"path": "notes.txt", "content": "Meeting at 3 pm.\n"},
                }
            ],
            "decisions": decisions,
        }
    )


def look_up(table: dict[str, str], key: str) -> str:
    """A table's entry; a key it does not hold is an error the model sees."""
    if key not in table:
        raise ValueError(f"no entry for {key}")
    return table[key]


def capital_of(country: str) -> str:
    """The capital city of a country."""
    return look_up(CAPITALS, country)


def mayor_of(city: str) -> str:
    """The mayor of a city."""
    return look_up(MAYORS, city)


def height_of(mountain: str) -> str:
    """The height of a mountain."""
    return look_up(HEIGHTS, mountain)


def tools_for(task: Task, workspace: Path | None = None) -> list[ToolSpec]:
    made = {
        "calculator": calculator,
        "capital_of": lambda: tool_spec(capital_of, concurrency_safe=True),
        "mayor_of": lambda: tool_spec(mayor_of, concurrency_safe=True),
        "height_of": lambda: tool_spec(height_of, concurrency_safe=True),
        "write_file": lambda: write_file(workspace or Path.cwd()),
    }
    return [made[name]() for name in task.tools]


def run(
    pattern: str,
    task: Task,
    tools: Sequence[ToolSpec],
    *,
    model: OracleChatModel | None = None,
    **options: Any,
) -> tuple[dict[str, Any], OracleChatModel]:
    """Ask the task's question under the bench's model-call budget, resume each approval with the
    task's decisions, and return the final state and the model."""
    options.setdefault("max_model_calls", BENCH_MAX_MODEL_CALLS)
    model = model or OracleChatModel(task=task, pattern=pattern)
    graph = graph_builder(pattern)(
        model, tools=list(tools), checkpointer=InMemorySaver(), **options
    )
    config = {"configurable": {"thread_id": f"{pattern}-{task.id}"}}
    step: Any = {"messages": [HumanMessage(task.question)]}
    decisions = list(task.decisions)
    while True:
        graph.invoke(step, config)
        snapshot = graph.get_state(config)
        if not snapshot.interrupts:
            return snapshot.values, model
        assert decisions, "the run paused more often than the task has decisions"
        step = Command(resume=decisions.pop(0))


def answer_of(state: dict[str, Any]) -> str:
    return state["messages"][-1].text


def executed(state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls that ran, in a stable order (concurrent ones finish in any order)."""
    calls = [
        (event["tool"], event["args"])
        for event in state["trajectory"]
        if event["kind"] == "action" and event["decision"] in EXECUTED
    ]
    return sorted(calls, key=repr)


def gold_calls(task: Task, outputs: dict[int, str]) -> list[tuple[str, dict[str, Any]]]:
    return sorted(((step.tool, step.resolved(outputs)) for step in task.trajectory), key=repr)


def bound(model: OracleChatModel) -> list[list[str]]:
    return [list(call.tools) for call in model.calls]


def test_every_pattern_has_a_protocol() -> None:
    assert set(PROTOCOLS) == set(PATTERNS)


def test_an_unknown_pattern_is_refused() -> None:
    with pytest.raises(ValueError, match="no protocol"):
        OracleChatModel(task=ARITHMETIC, pattern="tree_of_thoughts")


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_arithmetic_is_answered_with_the_calculator(pattern: str) -> None:
    state, _ = run(pattern, ARITHMETIC, tools_for(ARITHMETIC))

    assert answer_of(state) == "395"
    assert state["outcome"]["status"] == "answered"
    expected = gold_calls(ARITHMETIC, {}) if PATTERNS[pattern].uses_tools else []
    assert executed(state) == expected


@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_dependent_chain_feeds_each_result_into_the_next_call(pattern: str) -> None:
    state, model = run(pattern, CHAIN, tools_for(CHAIN))

    assert answer_of(state) == "Hanne Ruskov"
    assert executed(state) == gold_calls(CHAIN, {1: "Ostrelin"})
    if pattern in ("react", "react_text"):
        assert len(model.calls) == len(CHAIN.trajectory) + 1
    if pattern == "rewoo":
        assert bound(model) == [[PlanSchema.__name__], []]
    if pattern == "llm_compiler":
        assert bound(model) == [[TaskPlan.__name__], [JoinDecision.__name__]]
    if pattern == "plan_execute":
        assert bound(model)[0] == [Plan.__name__]
        assert bound(model)[-1] == [Replan.__name__]
        assert len(state["past_steps"]) == len(CHAIN.trajectory)


@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_independent_lookups_are_all_made(pattern: str) -> None:
    state, model = run(pattern, PARALLEL, tools_for(PARALLEL))

    assert answer_of(state) == "Mount Brin"
    assert executed(state) == gold_calls(PARALLEL, {})
    if pattern == "react":  # the sequential baseline: one call per turn
        replies = [m for m in state["messages"] if isinstance(m, AIMessage)]
        assert all(len(reply.tool_calls) <= 1 for reply in replies)
        assert len(model.calls) == len(PARALLEL.trajectory) + 1
    if pattern == "llm_compiler":  # one plan, one pass, one join
        assert len(model.calls) == 2
        assert all(not task["deps"] for task in state["plan"])


def test_a_draft_stays_where_no_feedback_corrects_it() -> None:
    state, model = run("react", CODE, [])

    assert answer_of(state) == CODE.draft
    assert not score(CODE, answer_of(state)).correct
    assert len(model.calls) == 1


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_text_format_is_read_at_its_strictest_in_the_run_s_labels(language: str) -> None:
    state, model = run("react_text", CHAIN, tools_for(CHAIN), language=language)

    assert answer_of(state) == "Hanne Ruskov"
    assert executed(state) == gold_calls(CHAIN, {1: "Ostrelin"})
    levels = [event["parse_level"] for event in state["trajectory"] if "parse_level" in event]
    assert levels == ["exact"] * len(model.calls) == ["exact"] * 3


def test_reflexion_answers_the_draft_then_the_gold_after_the_unit_tests_fail() -> None:
    state, model = run("reflexion", CODE, [], evaluator=unit_test_evaluator(CODE))

    first, second = state["trials"]
    assert (first["answer"], second["answer"]) == (CODE.draft, CODE.answer)
    assert first["score"] < second["score"] == 1.0
    assert answer_of(state) == CODE.answer
    assert [Judgement.__name__] not in bound(model)  # the grader is no model call
    assert bound(model).count([Reflection.__name__]) == 1
    assert len(model.calls) == 3  # attempt, reflection, attempt


def test_reflexion_with_the_model_as_judge_grades_by_the_scorer() -> None:
    state, model = run("reflexion", CODE, [])

    assert [trial["score"] for trial in state["trials"]] == [0.0, 1.0]
    assert answer_of(state) == CODE.answer
    assert bound(model).count([Judgement.__name__]) == 2


def test_reflexion_accepts_a_right_first_attempt() -> None:
    state, _ = run("reflexion", CHAIN, tools_for(CHAIN))

    assert [trial["score"] for trial in state["trials"]] == [1.0]


def test_lats_scores_the_gold_branch_high_and_the_alternative_low() -> None:
    state, _ = run("lats", CODE, [])

    answers = {node["answer"]: node["score"] for node in state["tree"]["nodes"] if node["terminal"]}
    assert answers == {CODE.answer: 1.0, CODE.draft: 0.0}
    assert answer_of(state) == CODE.answer


def test_lats_values_unfinished_gold_steps_below_any_answer() -> None:
    state, _ = run("lats", CHAIN, tools_for(CHAIN))

    calls = [node for node in state["tree"]["nodes"] if node["call"] is not None]
    assert [node["call"]["name"] for node in calls] == ["capital_of", "mayor_of"]
    assert all(0.0 < node["score"] < 0.8 for node in calls)
    assert calls[0]["score"] < calls[1]["score"]  # further along the gold path
    assert answer_of(state) == "Hanne Ruskov"


def test_self_consistency_agrees_in_every_sample() -> None:
    state, model = run("cot", ARITHMETIC, [], samples=3)

    assert state["agreement"] == "3/3"
    assert len(model.calls) == 3
    assert ARITHMETIC.reasoning in state["messages"][-1].response_metadata["reasoning"]


def test_chain_of_thought_answers_a_code_task_with_the_whole_code_block() -> None:
    state, _ = run("cot", CODE, [])

    # no feedback reaches a chain of thought, so the draft stands, fenced block and all
    assert answer_of(state) == CODE.draft
    assert not score(CODE, answer_of(state)).correct


@pytest.mark.parametrize("kind", list(DECISIONS))
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_an_approval_is_answered_as_the_person_decided(
    pattern: str, kind: str, tmp_path: Path
) -> None:
    task = approval_task(kind)
    decisions, answer, on_disk = DECISIONS[kind]

    state, _ = run(pattern, task, tools_for(task, tmp_path))

    assert answer_of(state) == answer
    notes = tmp_path / "notes.txt"
    assert (notes.read_text() if notes.exists() else None) == on_disk
    edited = decisions[0][0].get("args")
    expected = [] if kind == "reject" else [("write_file", edited or dict(task.trajectory[0].args))]
    assert executed(state) == expected


@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_failing_step_ends_in_the_gold_answer_without_going_round(pattern: str) -> None:
    first, *rest = CHAIN.trajectory
    task = dataclasses.replace(
        CHAIN,
        question="Who is the mayor of the capital of Atlantis?",
        answer="unknown",
        trajectory=(dataclasses.replace(first, args={"country": "Atlantis"}), *rest),
    )

    state, model = run(pattern, task, tools_for(task))
    _, on_gold_path = run(pattern, CHAIN, tools_for(CHAIN))

    assert answer_of(state) == "unknown"
    assert [call for call in executed(state) if call[0] == "mayor_of"] == []
    assert len(model.calls) <= len(on_gold_path.calls)


def test_the_oracle_is_deterministic() -> None:
    runs = [run("lats", CHAIN, tools_for(CHAIN)) for _ in range(2)]

    (first, first_model), (second, second_model) = runs
    assert answer_of(first) == answer_of(second)
    assert bound(first_model) == bound(second_model)
    assert executed(first) == executed(second)


def test_the_async_face_follows_the_same_protocol() -> None:
    model = OracleChatModel(task=CHAIN, pattern="react")
    graph = graph_builder("react")(model, tools=tools_for(CHAIN))

    state = asyncio.run(graph.ainvoke({"messages": [HumanMessage(CHAIN.question)]}))

    assert answer_of(state) == "Hanne Ruskov"
    assert len(model.calls) == 3


def test_the_answer_streams_word_by_word() -> None:
    graph = graph_builder("react")(OracleChatModel(task=CHAIN, pattern="react"), tools_for(CHAIN))

    stream = graph.stream({"messages": [HumanMessage(CHAIN.question)]}, stream_mode="messages")
    words = [chunk.text for chunk, _ in stream if isinstance(chunk, AIMessageChunk) and chunk.text]

    assert words == ["Hanne", " Ruskov"]


def test_the_oracle_takes_as_long_as_its_delays_say() -> None:
    model = OracleChatModel(task=ARITHMETIC, pattern="react", delay=0.05)

    started = time.perf_counter()
    state, _ = run("react", ARITHMETIC, tools_for(ARITHMETIC), model=model)

    assert time.perf_counter() - started >= 2 * 0.05
    assert answer_of(state) == "395"
    assert all(call.usage and call.usage["output_tokens"] > 0 for call in model.calls)


def shipped_cells() -> list[Any]:
    cells = []
    for path in sorted(SUITES.glob("*.jsonl")):
        suite = dataclasses.replace(load_suite(path), tool_delay=0.0)
        for task in suite.tasks:
            for pattern in suite.patterns_for(task):
                cells.append(pytest.param(suite, task, pattern, id=f"{task.id}-{pattern}"))
    return cells


@pytest.mark.parametrize(("suite", "task", "pattern"), shipped_cells())
def test_every_shipped_task_is_solved_under_every_pattern_of_its_suite(
    suite: Suite, task: Task, pattern: str, tmp_path: Path
) -> None:
    options: dict[str, Any] = {}
    if pattern == "cot":
        options["samples"] = 3
    if pattern == "reflexion" and task.tests is not None:
        options["evaluator"] = unit_test_evaluator(task)

    state, _ = run(pattern, task, task_tools(suite, task, tmp_path), **options)

    assert state["outcome"]["status"] == "answered"
    verdict = score(task, answer_of(state))
    if task.draft is not None and pattern not in CORRECTS_A_DRAFT:
        assert answer_of(state) == task.draft
    else:
        assert verdict.correct, verdict.detail
    for name, expected in task.expect_files.items():
        path = tmp_path / name
        assert (path.read_text(encoding="utf-8") if path.exists() else None) == expected
