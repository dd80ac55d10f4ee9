"""The calculator cannot stop the process: its operations are bounded, and it runs in a worker.

``round(1, -10**8)`` is one C call of about 100 s that holds the GIL, so no
thread-based timeout can end it. The bounds refuse it before it starts; for
whatever the bounds might miss, ``pow(3, 10**8)`` (equally one long C call)
stands in, run by a test-only tool in the same kind of worker process.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from reasoning_graphs.effects import adrive, drive
from reasoning_graphs.tools.arithmetic import evaluate
from reasoning_graphs.tools.builtins import calculator
from reasoning_graphs.tools.execute import ToolResult, execute_call
from reasoning_graphs.tools.isolated import StoppedAfter, WorkerPool
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

HOLDS_THE_GIL = (3, 10**8)
"""``pow(3, 10**8)``: a single C call of many seconds."""
QUICK = 5.0
"""Refusals and bounded work take milliseconds and a runaway call minutes: room for a loaded CI."""


def call(spec: ToolSpec, face: str, **args: Any) -> ToolResult:
    body = execute_call(ToolRegistry([spec]), spec.name, args, call_id="c1")
    return drive(body) if face == "sync" else asyncio.run(adrive(body))


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    pool = WorkerPool()
    yield pool
    pool.close()


@pytest.mark.parametrize(
    "expression",
    [
        "round(1, -10**8)",
        "round(1, 10**8)",
        "round(1.5, -10**8)",
        "round(10**3999, -4001)",
        "(10**3999 + 1) * (10**3999 + 1)",
        "(10**2000) ** 3",
        "10**999 * 10**999 * 10**999 * 10**999 * 10**999",
        "2 ** (10**3000)",
        "1e999",
    ],
)
def test_operations_that_would_run_long_are_refused_quickly(expression: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"round|digits|exponent|finite"):
        evaluate(expression)
    assert time.perf_counter() - started < QUICK


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("round((10**999)**4 + 1, -3996)", round((10**999) ** 4 + 1, -3996)),
        ("((10**999)**4 + 7) // ((10**999)**2 + 3)", ((10**999) ** 4 + 7) // ((10**999) ** 2 + 3)),
        ("((10**999)**2 + 1) * ((10**999)**2 - 1) % 997", ((10**999) ** 4 - 1) % 997),
        ("max((10**999)**4, (2**1000)**13) - (9**1000)**4", (10**999) ** 4 - 9**4000),
    ],
)
def test_the_largest_allowed_operations_are_quick(expression: str, expected: int) -> None:
    started = time.perf_counter()
    result = evaluate(expression)
    assert time.perf_counter() - started < QUICK
    assert result == str(expected)


@pytest.mark.parametrize("face", ["sync", "async"])
def test_the_calculator_tool_refuses_a_gil_holding_expression_within_its_timeout(
    face: str,
) -> None:
    spec = tool_spec(calculator(), timeout=2.0)
    started = time.perf_counter()
    result = call(spec, face, expression="round(1, -10**8)")
    assert time.perf_counter() - started < 2 * QUICK
    assert result.status == "error"
    assert "round()" in result.content
    assert call(spec, face, expression="23*17+4").content == "395"


def test_a_worker_past_its_limit_is_killed_and_replaced(pool: WorkerPool) -> None:
    first = pool.call(os.getpid, (), limit=10.0)
    assert first != os.getpid()
    started = time.perf_counter()
    with pytest.raises(StoppedAfter):
        pool.call(pow, HOLDS_THE_GIL, limit=0.5)  # takes the idle first worker
    assert time.perf_counter() - started < 0.5 + QUICK
    assert gone(first)
    second = pool.call(os.getpid, (), limit=10.0)
    assert second not in (first, os.getpid())
    assert pool.call(pow, (2, 10), limit=10.0) == 1024


@pytest.mark.parametrize("stop", ["limit", "cancel"])
async def test_async_calls_are_stopped_by_their_limit_or_by_cancellation(
    pool: WorkerPool, stop: str
) -> None:
    worker = await pool.acall(os.getpid, (), limit=10.0)
    if stop == "limit":
        stuck = pool.acall(pow, HOLDS_THE_GIL, limit=0.5)
    else:
        stuck = asyncio.wait_for(pool.acall(pow, HOLDS_THE_GIL, limit=60.0), 0.5)
    started = time.perf_counter()
    with pytest.raises(TimeoutError):  # StoppedAfter is one
        await stuck
    assert time.perf_counter() - started < 0.5 + QUICK
    assert gone(worker)
    assert await pool.acall(pow, (2, 10), limit=10.0) == 1024


def test_errors_and_dead_workers_come_back_as_exceptions(pool: WorkerPool) -> None:
    with pytest.raises(ValueError, match="round"):
        pool.call(evaluate, ("round(1, -10**8)",), limit=10.0)
    with pytest.raises(Exception, match="exit code"):
        pool.call(os._exit, (3,), limit=10.0)
    assert pool.call(evaluate, ("2**10",), limit=10.0) == "1024"


def power_tool(pool: WorkerPool, limit: float, timeout: float) -> ToolSpec:
    """A test-only tool with a GIL-holding operation no bound catches."""

    def run(base: int, exponent: int) -> int:
        return pool.call(pow, (base, exponent), limit=limit)

    async def arun(base: int, exponent: int) -> int:
        return await pool.acall(pow, (base, exponent), limit=limit)

    tool = StructuredTool.from_function(
        func=run, coroutine=arun, name="power", description="base ** exponent."
    )
    return tool_spec(tool, timeout=timeout)


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_tool_timeout_holds_while_the_work_holds_the_gil(pool: WorkerPool, face: str) -> None:
    worker = pool.call(os.getpid, (), limit=10.0)
    spec = power_tool(pool, limit=1.5, timeout=0.5)
    base, exponent = HOLDS_THE_GIL
    started = time.perf_counter()
    stuck = call(spec, face, base=base, exponent=exponent)
    assert time.perf_counter() - started < 0.5 + QUICK
    assert stuck.status == "error"
    assert "0.5 s" in stuck.content
    assert call(spec, face, base=2, exponent=10).content == "1024"  # another worker
    deadline = time.monotonic() + 1.5 + QUICK  # the sync face kills it at the tool's own limit
    while not gone(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(worker)


def test_workers_do_not_import_modules_from_the_callers_folder(
    pool: WorkerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ast.py").write_text("raise SystemExit('a workspace file was imported')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # as `python -m ...` run in that folder has it
    assert pool.call(evaluate, ("23*17+4",), limit=10.0) == "395"
