"""Task suites as data: the questions, the tools they need, and what counts as right.

A suite is a JSONL file. Its first line may be a header, ``{"suite": {...}}``,
naming the suite, the patterns it suits (or ``needs_tools``: those that call
tools), a documents folder for ``search_docs``
(relative to the file), lookup tables that become tools and a ``tool_delay`` in
seconds that those lookups wait, as a remote service would. Every other line is
one :class:`Task`. Gold tool trajectories may refer to the output of an earlier
gold step as ``#1``, ``#2`` … (1-based), so a chain of dependent lookups is data,
not code; each pattern's oracle turns the reference into its own syntax.

Examples:
    >>> task = Task.from_json({"id": "t1", "question": "What is 6*7?", "tools": ["calculator"],
    ...     "answer": "42", "scorer": "numeric",
    ...     "trajectory": [{"tool": "calculator", "args": {"expression": "6*7"}}]})
    >>> task.trajectory[0].tool, task.scorer
    ('calculator', 'numeric')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasoning_graphs.graphs import PATTERNS

REFERENCE = re.compile(r"#(\d+)")
"""``#N`` in a gold step's string argument: the output of gold step N."""

BAD_LINE = "{path}:{line}: {error}"
NOT_OBJECT = "a task must be a JSON object, got {kind}"
MISSING_FIELD = "task {id!r} has no {field!r}"
UNKNOWN_FIELDS = "task {id!r} has unknown fields: {fields}"
BAD_REFERENCE = "task {id!r}: gold step {step} refers to #{ref}, which is not an earlier step"
UNKNOWN_PATTERNS = "unknown patterns {names}; available: {available}"
DUPLICATE_ID = "task id {id!r} appears twice"
EMPTY_SUITE = "{path} holds no tasks"
BAD_HEADER = "{path}: bad suite header: {error}"
UNKNOWN_HEADER_FIELDS = "unknown fields: {fields}"
HEADER_FIELDS = {"name", "description", "patterns", "needs_tools", "docs", "tables", "tool_delay"}


class SuiteError(ValueError):
    """A suite file that cannot be read as tasks: the message names the file and line."""


@dataclass(frozen=True)
class GoldStep:
    """One tool call of the gold trajectory.

    Attributes:
        tool: The tool's name.
        args: Its arguments; a string may hold ``#N``, the output of gold step N.
    """

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def references(self) -> list[int]:
        """The earlier gold steps (1-based) whose outputs this step's arguments use."""
        found = {
            int(ref)
            for value in self.args.values()
            if isinstance(value, str)
            for ref in REFERENCE.findall(value)
        }
        return sorted(found)

    def resolved(self, outputs: Mapping[int, str]) -> dict[str, Any]:
        """The arguments with each ``#N`` replaced by ``outputs[N]``."""
        return {
            name: REFERENCE.sub(lambda ref: outputs[int(ref.group(1))], value)
            if isinstance(value, str)
            else value
            for name, value in self.args.items()
        }

    def written_as(self, syntax: str) -> dict[str, Any]:
        """The arguments with each ``#N`` written in a pattern's own reference syntax.

        ``syntax`` is a format string with one ``{n}``: ``"#E{n}"`` for ReWOO, ``"${n}"``
        for LLM Compiler.
        """
        return {
            name: REFERENCE.sub(lambda ref: syntax.format(n=ref.group(1)), value)
            if isinstance(value, str)
            else value
            for name, value in self.args.items()
        }


@dataclass(frozen=True)
class Document:
    """One paragraph a task brings for ``search_docs`` (the HotpotQA adapter makes these)."""

    title: str
    text: str


@dataclass(frozen=True)
class Task:
    """One question of a suite.

    Attributes:
        id: Unique within the suite.
        question: What the agent is asked.
        answer: The gold answer.
        tools: The tools the task needs, by name (built-ins, the suite's tables).
        scorer: ``exact``, ``f1``, ``numeric``, ``unit_tests`` or ``module:function``.
        scorer_options: Options of the scorer (``tolerance``, ``threshold`` …).
        trajectory: The gold tool calls, in an order that respects their references.
        decisions: What the person answers at each approval pause, in order: one
            resume value per pause (a list of decisions, as ``Command(resume=...)`` takes).
        expect_files: Files the run must leave in its workspace (path → exact text);
            a path mapped to ``None`` must not exist.
        draft: A plausible wrong first answer: the oracle gives it until feedback
            (a failed evaluation, a reflection) tells it what is wrong.
        tests: Python source with ``assert`` statements that a code answer must pass.
        reasoning: The worked steps the oracle writes for Chain-of-Thought.
        documents: Paragraphs only this task searches (the HotpotQA adapter's closed world).
        patterns: The patterns the task suits; ``None`` for the suite's own list.
    """

    id: str
    question: str
    answer: str
    tools: tuple[str, ...] = ()
    scorer: str = "exact"
    scorer_options: Mapping[str, Any] = field(default_factory=dict)
    trajectory: tuple[GoldStep, ...] = ()
    decisions: tuple[Any, ...] = ()
    expect_files: Mapping[str, str | None] = field(default_factory=dict)
    draft: str | None = None
    tests: str | None = None
    reasoning: str | None = None
    documents: tuple[Document, ...] = ()
    patterns: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, data: Any) -> Task:
        """A task from one decoded JSONL line.

        Raises:
            SuiteError: A field is missing, unknown or inconsistent.
        """
        if not isinstance(data, dict):
            raise SuiteError(NOT_OBJECT.format(kind=type(data).__name__))
        task_id = str(data.get("id", "?"))
        for name in ("id", "question", "answer"):
            if name not in data:
                raise SuiteError(MISSING_FIELD.format(id=task_id, field=name))
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise SuiteError(UNKNOWN_FIELDS.format(id=task_id, fields=", ".join(unknown)))
        steps = tuple(
            GoldStep(tool=step["tool"], args=dict(step.get("args", {})))
            for step in data.get("trajectory", ())
        )
        for number, step in enumerate(steps, 1):
            for ref in step.references():
                if not 1 <= ref < number:
                    raise SuiteError(BAD_REFERENCE.format(id=task_id, step=number, ref=ref))
        patterns = data.get("patterns")
        if patterns is not None:
            check_patterns(patterns)
        return cls(
            id=task_id,
            question=str(data["question"]),
            answer=str(data["answer"]),
            tools=tuple(data.get("tools", ())),
            scorer=data.get("scorer", "exact"),
            scorer_options=dict(data.get("scorer_options", {})),
            trajectory=steps,
            decisions=tuple(data.get("decisions", ())),
            expect_files=dict(data.get("expect_files", {})),
            draft=data.get("draft"),
            tests=data.get("tests"),
            reasoning=data.get("reasoning"),
            documents=tuple(
                Document(title=doc["title"], text=doc["text"]) for doc in data.get("documents", ())
            ),
            patterns=tuple(patterns) if patterns is not None else None,
        )


@dataclass(frozen=True)
class Table:
    """A lookup table the suite offers as a tool: one string argument, one answer per key.

    Attributes:
        name: The tool's name.
        description: What the tool looks up (the model reads it).
        argument: The argument's name.
        values: Key → answer; a key that is not there is an error the model sees.
    """

    name: str
    description: str
    argument: str
    values: Mapping[str, str]


@dataclass(frozen=True)
class Suite:
    """A named list of tasks with the tools and documents they share.

    Attributes:
        name: The suite's name (the file's stem unless the header names it).
        tasks: The tasks, in file order.
        description: One line on what the suite measures.
        patterns: The patterns the suite suits (all eight unless the header says).
        docs: The folder ``search_docs`` reads for tasks that bring no documents.
        tables: Lookup tools, by name.
        source: The file it was read from.
        tool_delay: Seconds each table lookup and ``search_docs`` call waits before it
            answers, to model a real service's latency (so that running calls side by
            side shows in the wall time).
    """

    name: str
    tasks: tuple[Task, ...]
    description: str = ""
    patterns: tuple[str, ...] = tuple(PATTERNS)
    docs: Path | None = None
    tables: Mapping[str, Table] = field(default_factory=dict)
    source: Path | None = None
    tool_delay: float = 0.0

    def patterns_for(self, task: Task) -> tuple[str, ...]:
        """The patterns ``task`` runs under."""
        return task.patterns if task.patterns is not None else self.patterns


def check_scorer(task: Task) -> None:
    """Raise :class:`SuiteError` when no scorer can score ``task`` (see the scorers module)."""
    from reasoning_graphs.bench import scorers  # scorers builds on this module

    scorers.check_scorer(task)


def tool_patterns() -> tuple[str, ...]:
    """The patterns that call tools: those a suite whose questions need tools suits."""
    return tuple(name for name, pattern in PATTERNS.items() if pattern.uses_tools)


def check_patterns(names: Sequence[str]) -> None:
    """Raise :class:`SuiteError` naming any of ``names`` that is not a pattern."""
    unknown = [name for name in names if name not in PATTERNS]
    if unknown:
        raise SuiteError(
            UNKNOWN_PATTERNS.format(names=", ".join(unknown), available=", ".join(PATTERNS))
        )


def load_suite(path: str | Path) -> Suite:
    """Read a suite from a JSONL file (see the module docstring for the format).

    Raises:
        SuiteError: A line is not JSON or not a valid task; the message says which.
        OSError: The file cannot be read.
    """
    path = Path(path)
    header: dict[str, Any] = {}
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if isinstance(data, dict) and set(data) == {"suite"} and not tasks:
                header = dict(data["suite"])
                continue
            task = Task.from_json(data)
            check_scorer(task)
            if task.id in seen:
                raise SuiteError(DUPLICATE_ID.format(id=task.id))
        except (json.JSONDecodeError, SuiteError, KeyError, TypeError) as error:
            raise SuiteError(BAD_LINE.format(path=path, line=number, error=error)) from None
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise SuiteError(EMPTY_SUITE.format(path=path))
    try:
        return suite_from_header(header, tasks, path)
    except (SuiteError, KeyError, TypeError, ValueError) as error:
        raise SuiteError(BAD_HEADER.format(path=path, error=error)) from None


def suite_from_header(header: Mapping[str, Any], tasks: Sequence[Task], path: Path) -> Suite:
    """The suite a header describes, with ``tasks``; relative paths are read from ``path``'s
    folder."""
    unknown = sorted(set(header) - HEADER_FIELDS)
    if unknown:
        raise SuiteError(UNKNOWN_HEADER_FIELDS.format(fields=", ".join(unknown)))
    patterns = tuple(
        header.get("patterns", tool_patterns() if header.get("needs_tools") else PATTERNS)
    )
    check_patterns(patterns)
    docs = header.get("docs")
    tables = {
        name: Table(
            name=name,
            description=spec["description"],
            argument=spec["argument"],
            values=dict(spec["values"]),
        )
        for name, spec in header.get("tables", {}).items()
    }
    return Suite(
        name=header.get("name", path.stem),
        tasks=tuple(tasks),
        description=header.get("description", ""),
        patterns=patterns,
        docs=(path.parent / docs) if docs else None,
        tables=tables,
        source=path,
        tool_delay=float(header.get("tool_delay", 0.0)),
    )
