"""The ReWOO plan as data: its steps, the schema a model fills in, a text parser and checks.

A ReWOO plan names every tool call up front and wires them together with
evidence variables: ``#E2``'s arguments may contain ``#E1``, which is replaced
by ``#E1``'s result before ``#E2`` runs. Nothing here calls a model or a
tool, so a plan can be read and checked before anything happens — a bad plan
costs one more planning call, never a wasted or harmful tool run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from reasoning_graphs.nodes.steps.plan_references import ReferenceSyntax
from reasoning_graphs.python_syntax import literal
from reasoning_graphs.tools.spec import ToolSpec

RUNTIME = "rewoo"
"""``response_metadata["runtime"]`` of the messages this pattern writes itself."""
PLAN_KIND = "plan"
WORK_KIND = "work"

EMPTY_PLAN = "Plan: no tool is needed."
"""How an empty plan is shown to people and to the solver."""

EVIDENCE = ReferenceSyntax(re.compile(r"#([Ee]\d+)"), lambda match: match.group(1).upper())
"""``#E<n>`` in a step's arguments: the result of the step whose variable is ``E<n>``."""
VARIABLE = re.compile(r"#?([Ee]\d+)")
ASSIGNMENT = re.compile(
    r"#([Ee]\d+)\s*[=:]\s*([\w.-]+)\s*(?:\[(?P<bracketed>.*)\]|\((?P<called>.*)\))\s*$"
)
"""``#E1 = tool[input]``, or ``#E1 = tool(input)`` as models that write code spell it."""
STEP_START = re.compile(r"#([Ee]\d+)\s*[=:]\s*[\w.-]+\s*[\[(]")
"""The opening of a step, to tell a step written wrongly from a line of prose."""
KEYWORD_ARGUMENT = re.compile(
    r"""\s*(\w+)\s*=(?!=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^,]*?)\s*(?:,|$)"""
)
PLAN_LABEL = re.compile(r"^\W*plan\s*\d*\s*[:：]\s*", re.IGNORECASE)

BAD_VARIABLE = "Step {index} has the variable {var!r}; name the steps E1, E2, E3, … in order."
DUPLICATE_VARIABLE = "#{var} is defined more than once; give each step its own variable."
UNKNOWN_TOOL = "#{var} uses {tool!r}, which is not an available tool (available: {available})."
SELF_REFERENCE = "#{var} refers to its own result."
UNDEFINED_REFERENCE = "#{var} refers to #{ref}, which no step defines."
LATER_REFERENCE = (
    "#{var} refers to #{ref}, which comes later; a step may only use results of earlier steps."
)
CYCLE = "Steps depend on each other in a circle ({path}), so none of them can run first."
MALFORMED_STEP = (
    "#{var}: cannot read the step {line!r}; write it as #{var} = <tool>[<arguments as JSON>]."
)
UNMAPPED_INPUT = (
    "#{var}: cannot tell which argument of {tool!r} the input {input!r} is for; "
    "write the arguments as a JSON object."
)


class PlanStep(TypedDict):
    """One step of a plan as the state keeps it."""

    var: str
    tool: str
    args: dict[str, Any]
    reason: str


class StepSchema(BaseModel):
    """One tool call of the plan."""

    reason: str = Field(description="Why this step is needed, in one short sentence.")
    var: str = Field(description="Evidence variable for the result: E1, E2, E3, … in order.")
    tool: str = Field(description="Name of the tool to call.")
    args: dict[str, Any] = Field(
        description="The tool's arguments. A string value may contain '#E1' (etc.) to use "
        "the result of an earlier step."
    )


class PlanSchema(BaseModel):
    """The complete plan: every tool call needed to answer, written before any of them runs."""

    steps: list[StepSchema] = Field(description="The steps in order; empty when no tool is needed.")


def steps_from_schema(plan: PlanSchema) -> list[PlanStep]:
    """The state's form of a structured plan."""
    return [
        PlanStep(var=step.var, tool=step.tool, args=dict(step.args), reason=step.reason)
        for step in plan.steps
    ]


def render_plan(steps: Sequence[PlanStep]) -> str:
    """A plan in the classic ReWOO text form, for people and for prompts."""
    lines = [
        f"Plan: {step['reason']} #{step['var']} = "
        f"{step['tool']}[{json.dumps(step['args'], ensure_ascii=False)}]"
        for step in steps
    ]
    return "\n".join(lines) or EMPTY_PLAN


def parse_plan_text(text: str, specs: Iterable[ToolSpec]) -> tuple[list[PlanStep], list[str]]:
    """Read a plan in the classic text form; returns the steps and what could not be read.

    Tolerates what models commonly write: the ``Plan:`` line before or on the
    same line as ``#E1 = tool[input]``, numbered labels, ``:`` instead of
    ``=``, call syntax (``tool("x")``, ``tool(x)``, ``tool(query="x")``), and
    an input that is a JSON object or a bare value for a tool with a single
    argument. A line that starts a step but cannot be read is a problem, not
    prose.

    Examples:
        >>> steps, problems = parse_plan_text('#E1 = search(query="Paris")', [])
        >>> steps[0]["tool"], steps[0]["args"], problems
        ('search', {'query': 'Paris'}, [])
    """
    by_name = {spec.name: spec for spec in specs}
    steps: list[PlanStep] = []
    problems: list[str] = []
    reason = ""
    for line in text.splitlines():
        match = ASSIGNMENT.search(line)
        before = PLAN_LABEL.sub("", line[: match.start()] if match else line).strip()
        if not match:
            started = STEP_START.search(line)
            if started:
                var = started.group(1).upper()
                problems.append(MALFORMED_STEP.format(var=var, line=line.strip()))
            reason = before or reason
            continue
        var, tool = match.group(1).upper(), match.group(2)
        spec = by_name.get(tool)
        if match.group("called") is not None:
            raw = match.group("called").strip()
            keywords = _keyword_arguments(raw)
            args = _text_arguments(raw, spec) if keywords is None else _known(keywords, spec)
        else:
            raw = match.group("bracketed").strip()
            args = _text_arguments(raw, spec)
        if args is None:
            problems.append(UNMAPPED_INPUT.format(var=var, tool=tool, input=raw))
            args = {}
        steps.append(PlanStep(var=var, tool=tool, args=args, reason=before or reason))
        reason = ""
    return steps, problems


def plan_problems(steps: Sequence[PlanStep], tool_names: Sequence[str]) -> list[str]:
    """Everything that stops a plan from running as written (empty: it can run).

    Variable names are normalised in place (``e1`` and ``#E1`` become ``E1``).
    A reference to a later step is reported as a cycle when it is part of one,
    because "reorder the steps" would not fix it.
    """
    problems: list[str] = []
    position: dict[str, int] = {}
    for index, step in enumerate(steps, start=1):
        match = VARIABLE.fullmatch(step["var"].strip())
        if not match:
            problems.append(BAD_VARIABLE.format(index=index, var=step["var"]))
            continue
        step["var"] = match.group(1).upper()
        if step["var"] in position:
            problems.append(DUPLICATE_VARIABLE.format(var=step["var"]))
            continue
        position[step["var"]] = index
        if step["tool"] not in tool_names:
            available = ", ".join(tool_names) or "none"
            problems.append(
                UNKNOWN_TOOL.format(var=step["var"], tool=step["tool"], available=available)
            )
    problems.extend(_reference_problems(steps, position))
    return problems


def _reference_problems(steps: Sequence[PlanStep], position: Mapping[str, int]) -> list[str]:
    needs = {
        step["var"]: EVIDENCE.references(step["args"]) for step in steps if step["var"] in position
    }
    problems: list[str] = []
    cycles: set[frozenset[str]] = set()
    for var, refs in needs.items():
        for ref in refs:
            if ref == var:
                problems.append(SELF_REFERENCE.format(var=var))
            elif ref not in position:
                problems.append(UNDEFINED_REFERENCE.format(var=var, ref=ref))
            elif position[ref] > position[var]:
                back = _path(needs, ref, var)
                if back is None:
                    problems.append(LATER_REFERENCE.format(var=var, ref=ref))
                elif frozenset(back) not in cycles:
                    cycles.add(frozenset(back))
                    path = " needs ".join(f"#{item}" for item in [var, *back])
                    problems.append(CYCLE.format(path=path))
    return problems


def _path(needs: Mapping[str, list[str]], start: str, goal: str) -> list[str] | None:
    """A chain of "needs" from ``start`` to ``goal``, if there is one."""
    stack, seen = [[start]], {start}
    while stack:
        path = stack.pop()
        if path[-1] == goal:
            return path
        for ref in needs.get(path[-1], []):
            if ref not in seen:
                seen.add(ref)
                stack.append([*path, ref])
    return None


def _keyword_arguments(raw: str) -> dict[str, Any] | None:
    """``query="x", limit=3`` as a dict; ``None`` when ``raw`` is not in keyword form."""
    args: dict[str, Any] = {}
    position = 0
    while position < len(raw):
        match = KEYWORD_ARGUMENT.match(raw, position)
        if not match or match.end() == position:
            return None
        args[match.group(1)] = _keyword_value(match.group(2))
        position = match.end()
    return args or None


def _known(args: dict[str, Any], spec: ToolSpec | None) -> dict[str, Any] | None:
    """``args`` when the tool takes every one of them (an unknown tool is reported elsewhere)."""
    if spec is None:
        return args
    names = spec.argument_schema().get("properties", {})
    return args if all(name in names for name in args) else None


def _keyword_value(text: str) -> Any:
    """A keyword argument's value: a quoted string unquoted, a number or flag as such."""
    if text[:1] in "\"'":
        try:
            return literal(text)
        except (ValueError, SyntaxError):
            return text.strip("\"'")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _text_arguments(raw: str, spec: ToolSpec | None) -> dict[str, Any] | None:
    """A text step's input as arguments: a JSON object, or the value of the only argument."""
    if raw.startswith("{"):
        try:
            value = json.loads(raw, strict=False)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
    if spec is None:
        return {"input": raw}  # the unknown tool is reported by the checks
    schema = spec.argument_schema()
    names = list(schema.get("properties", {}))
    required = list(schema.get("required", []))
    only = names if len(names) == 1 else required if len(required) == 1 else []
    if not only:
        return None
    return {only[0]: raw.strip("\"'")}
