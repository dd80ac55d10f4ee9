"""The LLM Compiler plan as data: a task DAG, the schema a model fills in, a text parser, checks.

A plan is a list of tasks, each a tool call with the ids of the tasks it
needs; a string argument may contain ``$1`` (or ``${1}``) for task 1's
result. Nothing here calls a model or a tool, so a plan is read and checked
— unknown tools, missing ids, duplicates, cycles — before anything runs: a
bad plan costs one more planning call, never a wasted or harmful tool run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from reasoning_graphs.metadata import advice_of, mark_of
from reasoning_graphs.nodes.guards.advice import NOTE
from reasoning_graphs.nodes.guards.untrusted import as_data
from reasoning_graphs.nodes.steps.plan_references import ReferenceSyntax
from reasoning_graphs.python_syntax import parse
from reasoning_graphs.question import describe_call, question_answers, question_bookkeeping
from reasoning_graphs.tools.execute import cut_message
from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec

RUNTIME = "llm_compiler"
"""``response_metadata["runtime"]`` of the messages this pattern writes itself."""
PLAN_KIND = "plan"
SCHEDULE_KIND = "schedule"
JOIN_KIND = "join"

EMPTY_PLAN = "(no tasks)"
"""How an empty plan is shown to people and to the joiner."""

TASK_RESULTS = ReferenceSyntax(
    re.compile(r"\$\{(\d+)\}|\$(\d+)"), lambda match: int(match.group(1) or match.group(2))
)
"""``$n`` or ``${n}`` in a task's arguments: the result of task ``n``."""
TASK_LINE = re.compile(r"^\s*(\d+)\s*[.):]\s*([A-Za-z_][\w.-]*)\s*\((.*)\)\s*(?:#.*)?$")
JOIN_TOOL = "join"

DUPLICATE_ID = "Task {id} is defined more than once; give each task its own id."
UNKNOWN_TOOL = "Task {id} uses {tool!r}, which is not an available tool (available: {available})."
SELF_DEPENDENCY = "Task {id} depends on its own result."
MISSING_TASK = "Task {id} needs task {dep}, which the plan does not define."
CYCLE = "Tasks {ids} depend on each other in a circle, so none of them can run first."
TOO_MANY_TASKS = "The plan has {count} tasks; at most {limit} may run in one plan."
UNREADABLE_TASK = (
    "Task {id}: cannot read the arguments {raw!r} of {tool!r}; "
    'write them as name=value pairs, e.g. {tool}(name="value").'
)
ROUND_HEADER = "Round {round}:"
RESULT_LINE = "${id}:\n{data}"
RESULT_BODY = "{call}\n→ {result}"
"""A task's call and its result, exactly as the tool gave it; the runtime's advice on the
result (:func:`~reasoning_graphs.metadata.advice_of`) follows the data block."""


class CompilerTask(TypedDict):
    """One task of a plan as the state keeps it.

    Attributes:
        id: The task's number in the plan (``$id`` refers to its result).
        tool: Name of the tool to call.
        args: Arguments, whose strings may contain ``$n`` references.
        deps: Ids of the tasks that must finish first (references included).
        call_id: The tool-call id its result is recorded under, unique per thread.
    """

    id: int
    tool: str
    args: dict[str, Any]
    deps: list[int]
    call_id: str


class TaskSchema(BaseModel):
    """One tool call of the plan."""

    id: int = Field(description="The task's number: 1 for the first task, 2 for the next, …")
    tool: str = Field(description="Name of the tool to call.")
    args: dict[str, Any] = Field(
        description="The tool's arguments. A string value may contain '$1' (or '${1}') to use "
        "the result of task 1."
    )
    deps: list[int] = Field(
        default_factory=list, description="Ids of the tasks whose results this task needs."
    )


class TaskPlan(BaseModel):
    """Every tool call needed to answer, as a graph of tasks, written before any of them runs."""

    tasks: list[TaskSchema] = Field(description="The tasks; empty when no tool is needed.")


def tasks_from_schema(plan: TaskPlan) -> list[CompilerTask]:
    """The state's form of a structured plan (call ids are given by the plan node)."""
    return [
        CompilerTask(
            id=task.id, tool=task.tool, args=dict(task.args), deps=list(task.deps), call_id=""
        )
        for task in plan.tasks
    ]


def render_plan(tasks: Sequence[CompilerTask]) -> str:
    """A plan in the paper's text form (``1. tool(arg='…')``), for people and for prompts."""
    lines = []
    for task in tasks:
        line = f"{task['id']}. {describe_call(task['tool'], task['args'])}"
        ordering = [dep for dep in task["deps"] if dep not in TASK_RESULTS.references(task["args"])]
        if ordering:
            line += f"  # after task {', '.join(map(str, ordering))}"
        lines.append(line)
    return "\n".join(lines) or EMPTY_PLAN


def parse_plan_text(text: str, specs: Iterable[ToolSpec]) -> tuple[list[CompilerTask], list[str]]:
    """Read a plan in the paper's text form; returns the tasks and what could not be read.

    Lines look like ``1. search(query="x")`` or ``2. math("$1 * 2")``; other
    lines (thoughts) are ignored and ``join()`` ends the plan. Positional
    arguments are given to the tool's parameters in order.
    """
    by_name = {spec.name: spec for spec in specs}
    tasks: list[CompilerTask] = []
    problems: list[str] = []
    for line in text.splitlines():
        match = TASK_LINE.match(line)
        if not match:
            continue
        task_id, tool, raw = int(match.group(1)), match.group(2), match.group(3).strip()
        if tool == JOIN_TOOL:
            break
        args = _call_arguments(raw, by_name.get(tool))
        if args is None:
            problems.append(UNREADABLE_TASK.format(id=task_id, raw=raw, tool=tool))
            args = {}
        tasks.append(CompilerTask(id=task_id, tool=tool, args=args, deps=[], call_id=""))
    return tasks, problems


def plan_problems(
    tasks: Sequence[CompilerTask], tool_names: Sequence[str], limit: int
) -> list[str]:
    """Everything that stops a plan from running as written (empty: it can run).

    References imply dependencies: each task's ``deps`` gain the ids its
    arguments mention (in place), so the scheduler waits for what it substitutes.
    """
    problems: list[str] = []
    if len(tasks) > limit:
        problems.append(TOO_MANY_TASKS.format(count=len(tasks), limit=limit))
    ids: set[int] = set()
    for task in tasks:
        task["deps"] = sorted({*task["deps"], *TASK_RESULTS.references(task["args"])})
        if task["id"] in ids:
            problems.append(DUPLICATE_ID.format(id=task["id"]))
        ids.add(task["id"])
        if task["tool"] not in tool_names:
            available = ", ".join(tool_names) or "none"
            problems.append(
                UNKNOWN_TOOL.format(id=task["id"], tool=task["tool"], available=available)
            )
    for task in tasks:
        for dep in task["deps"]:
            if dep == task["id"]:
                problems.append(SELF_DEPENDENCY.format(id=task["id"]))
            elif dep not in ids:
                problems.append(MISSING_TASK.format(id=task["id"], dep=dep))
    if not problems:
        ordered = topological_order(tasks)
        stuck = [task["id"] for task in tasks if task not in ordered]
        if stuck:
            problems.append(CYCLE.format(ids=", ".join(map(str, stuck))))
    return problems


def topological_order(tasks: Sequence[CompilerTask]) -> list[CompilerTask]:
    """The tasks in an order where each comes after its deps, plan order kept where it can be.

    Tasks on a cycle (or needing a missing id) never become ready and are left out.
    """
    placed: set[int] = set()
    ordered: list[CompilerTask] = []
    remaining = list(tasks)
    while True:
        ready = next((t for t in remaining if all(d in placed for d in t["deps"])), None)
        if ready is None:
            return ordered
        remaining.remove(ready)
        placed.add(ready["id"])
        ordered.append(ready)


def rounds_run(messages: Sequence[AnyMessage]) -> int:
    """Plan-and-run rounds this question has had (the passes of a round share its number)."""
    schedules = question_bookkeeping(messages, RUNTIME, SCHEDULE_KIND)
    return len({mark_of(message).get("round") for message in schedules})


def rounds_report(messages: Sequence[AnyMessage], registry: ToolRegistry) -> str:
    """Every task run this question, round by round, with its call as run and its result
    (a long one cut as for every prompt).

    Each call (its arguments may hold earlier results) and its result form one
    labelled data block, so no tool output reads as the person's words.
    """
    answers = question_answers(messages)
    sections: dict[Any, list[str]] = {}
    for message in question_bookkeeping(messages, RUNTIME, SCHEDULE_KIND):
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue  # an empty plan ran nothing
        written_as = mark_of(message)
        task_ids, number = written_as.get("tasks", {}), written_as.get("round", 1)
        lines = sections.setdefault(number, [ROUND_HEADER.format(round=number)])
        for call in message.tool_calls:
            call_id = call["id"] or ""  # the schedule always gives one
            answer, task_id = answers.get(call_id), task_ids.get(call_id, "?")
            shown = cut_message(answer, registry, call["name"]) if answer else None
            body = RESULT_BODY.format(
                call=describe_call(call["name"], call["args"]),
                result=content_text(shown.content) if shown else "",
            )
            lines.append(RESULT_LINE.format(id=task_id, data=as_data(body, source=f"${task_id}")))
            lines.extend(NOTE.format(advice=note) for note in (advice_of(shown) if shown else []))
    return "\n\n".join("\n".join(lines) for lines in sections.values())


def _call_arguments(raw: str, spec: ToolSpec | None) -> dict[str, Any] | None:
    """``a, b=1`` as arguments; ``None`` when it is not a list of Python literals."""
    try:
        call = parse(f"f({raw})", mode="eval").body
        if not isinstance(call, ast.Call):
            return None
        positional = [ast.literal_eval(arg) for arg in call.args]
        named = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
    except (SyntaxError, ValueError):
        return None
    names = list(spec.argument_schema().get("properties", {})) if spec else []
    free = [name for name in names if name not in named]
    if len(positional) > len(free):
        return None
    return {**dict(zip(free, positional, strict=False)), **named}
