"""A calculator the model can trust with arithmetic it would otherwise guess.

The arithmetic itself (parsed, never ``eval``-ed, every operation bounded) is
:func:`~reasoning_graphs.tools.arithmetic.evaluate`. It runs in a worker
process: should some operation still slip past the bounds and hold the
interpreter in one long C call, the worker is killed at the time limit (or at
the graph's tool timeout on the async face) and this process keeps answering.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.tools import StructuredTool
from pydantic import Field

from reasoning_graphs.tools.arithmetic import EXAMPLE, MAX_EXPRESSION_CHARS, evaluate
from reasoning_graphs.tools.isolated import acall_isolated, call_isolated
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

TIME_LIMIT_SECONDS = 5.0
"""Bounded arithmetic takes milliseconds; this stops whatever the bounds missed."""

DESCRIPTION = (
    "Evaluate an arithmetic expression exactly and return the number, e.g. "
    f"'{EXAMPLE}' or 'sqrt(2)*pi'. Use it for every calculation instead of doing "
    "arithmetic in your head. Understands + - * / // % **, parentheses, numbers, "
    "the functions sqrt, log, sin, cos, abs, round, min, max and the constants pi "
    "and e. Do not use it for facts, look-ups, dates, unit conversions or "
    "anything that is not a pure numeric expression: it knows no variables or words."
)
EXPRESSION_HELP = (
    f"The arithmetic expression, at most {MAX_EXPRESSION_CHARS} characters, e.g. '{EXAMPLE}'."
)


def calculator() -> ToolSpec:
    """The ``calculator`` tool: a pure function of its expression, so it may run alongside
    other calls, and an identical call of a question is answered from the first one."""

    def run(expression: Annotated[str, Field(min_length=1, description=EXPRESSION_HELP)]) -> str:
        """Evaluate ``expression`` in a worker process (see :func:`evaluate`)."""
        return call_isolated(evaluate, expression, limit=TIME_LIMIT_SECONDS)

    async def arun(expression: str) -> str:
        return await acall_isolated(evaluate, expression, limit=TIME_LIMIT_SECONDS)

    tool = StructuredTool.from_function(
        func=run, coroutine=arun, name="calculator", description=DESCRIPTION
    )
    return tool_spec(tool, dangerous=False, concurrency_safe=True, pure=True)
