"""The tools a task names, built fresh for one cell of the bench.

Built-ins come from :mod:`reasoning_graphs.tools.builtins`, the file and shell
ones bound to the cell's own workspace; ``search_docs`` searches the task's own
documents when it brings any (a closed world, as in HotpotQA's distractor
setting), else the suite's documents folder. A name in the suite's tables
becomes a read-only lookup. Lookups and searches wait the suite's
``tool_delay`` first, as a call to a real service would, so that running
independent calls side by side shows in the wall time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import Field, create_model

from reasoning_graphs.bench.suite import Suite, SuiteError, Table, Task
from reasoning_graphs.tools.builtins import calculator, read_file, shell, write_file
from reasoning_graphs.tools.builtins.search_docs import Passage, search_docs, search_passages
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

UNKNOWN_TOOL = (
    "task {id!r} needs a tool {name!r}, which is neither a built-in ({builtins}) "
    "nor a table of suite {suite!r}"
)
NO_DOCS = "task {id!r} needs search_docs, but it brings no documents and suite {suite!r} names none"
NO_ENTRY = "no entry for {key!r}"
WorkspaceTool = Callable[[Path], ToolSpec]
WORKSPACE_TOOLS: dict[str, WorkspaceTool] = {
    "read_file": read_file,
    "write_file": write_file,
    "shell": shell,
}
BUILTINS = ("calculator", "search_docs", *WORKSPACE_TOOLS)


def task_tools(suite: Suite, task: Task, workspace: Path) -> list[ToolSpec]:
    """One tool per name in ``task.tools``, in that order.

    Raises:
        SuiteError: A name is no built-in and no table, or ``search_docs`` has
            nothing to search.
    """
    return [_tool(name, suite, task, Path(workspace)) for name in task.tools]


def _tool(name: str, suite: Suite, task: Task, workspace: Path) -> ToolSpec:
    if name == "calculator":
        return calculator()
    if name in WORKSPACE_TOOLS:
        return WORKSPACE_TOOLS[name](workspace)
    if name == "search_docs":
        return with_latency(_search(suite, task), suite.tool_delay)
    if name in suite.tables:
        return with_latency(table_tool(suite.tables[name]), suite.tool_delay)
    raise SuiteError(
        UNKNOWN_TOOL.format(id=task.id, name=name, builtins=", ".join(BUILTINS), suite=suite.name)
    )


def _search(suite: Suite, task: Task) -> ToolSpec:
    if task.documents:
        try:
            return search_passages([Passage(doc.title, doc.text) for doc in task.documents])
        except ValueError as error:
            raise SuiteError(f"task {task.id!r}: {error}") from None
    if suite.docs is None:
        raise SuiteError(NO_DOCS.format(id=task.id, suite=suite.name))
    return search_docs(suite.docs)


def table_tool(table: Table) -> ToolSpec:
    """A read-only lookup in ``table``: one string argument, the value as the observation.

    Keys match ignoring case and surrounding spaces, as a model may write either;
    a missing key is an error that names only the key asked for.
    """
    by_key = {_key(key): value for key, value in table.values.items()}

    def look_up(**arguments: Any) -> str:
        key = str(arguments[table.argument])
        value = by_key.get(_key(key))
        if value is None:
            raise ValueError(NO_ENTRY.format(key=key))
        return value

    fields: dict[str, Any] = {
        table.argument: (str, Field(description=f"The {table.argument} to look up."))
    }
    schema = create_model(f"{table.name}_arguments", **fields)
    tool = StructuredTool.from_function(
        func=look_up, name=table.name, description=table.description, args_schema=schema
    )
    return tool_spec(tool, concurrency_safe=True)


def with_latency(spec: ToolSpec, seconds: float) -> ToolSpec:
    """``spec`` answering ``seconds`` later (asleep, so overlapping calls overlap the wait)."""
    if seconds <= 0:
        return spec
    inner = spec.tool

    def run(**arguments: Any) -> Any:
        time.sleep(seconds)
        return inner.invoke(arguments)

    async def arun(**arguments: Any) -> Any:
        await asyncio.sleep(seconds)
        return await inner.ainvoke(arguments)

    slow = StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=inner.name,
        description=inner.description,
        args_schema=inner.args_schema,
    )
    return replace(spec, tool=slow)


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()
