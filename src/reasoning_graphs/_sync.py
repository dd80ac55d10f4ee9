"""Give async node implementations a sync twin.

Nodes are written once, as coroutines. LangGraph's ``invoke``/``stream`` need a
sync callable, so :func:`dual_node` pairs each coroutine with a wrapper that runs
it to completion — on a private event loop in a worker thread when the caller's
thread already runs one (Jupyter), so sync entry points work everywhere.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from langchain_core.runnables import RunnableLambda

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, whether or not this thread has a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, asyncio.run, coroutine).result()


def dual_node(name: str, afunc: Callable[[Any], Awaitable[Any]]) -> RunnableLambda:
    """A graph node that runs ``afunc`` natively when async and via :func:`run_sync` when sync."""

    def func(state: Any) -> Any:
        return run_sync(afunc(state))  # type: ignore[arg-type]

    return RunnableLambda(func, afunc=afunc, name=name)
