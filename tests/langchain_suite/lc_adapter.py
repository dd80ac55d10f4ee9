"""A pytest plugin that runs LangChain's agent tests against one of our patterns.

Loaded into a pytest run of LangChain's own tests (``-p lc_adapter``, see :mod:`.run`), it
replaces ``langchain.agents.create_agent`` before any test module imports it with a thin
adapter that builds the pattern ``$LC_SUITE_PATTERN`` from the same model, tools,
``system_prompt``, ``middleware``, ``response_format``, schemas and checkpointer, our
extra guards (budgets, retries, timeouts, context fitting) off: what is left is the
middleware contract. ``create_agent`` keeps LangChain's own builder (the baseline). Each
test's outcome, and whether it built an agent, is written as JSON to ``$LC_SUITE_REPORT``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import pytest

PATTERN_ENV = "LC_SUITE_PATTERN"
REPORT_ENV = "LC_SUITE_REPORT"

GUARDS_OFF: dict[str, Any] = {
    "max_model_calls": None,
    "max_tool_rounds": None,
    "token_budget": None,
    "time_budget": None,
    "model_timeout": None,
    "idle_timeout": None,
    "tool_timeout": None,
    "context_strategy": "none",
    "max_tool_calls_per_turn": 1000,
    "max_observation_chars": 10**9,
}
"""Our guards that ``create_agent`` has no match for, switched off."""

_built: set[str] = set()
_current: list[str] = []
_outcomes: dict[str, dict[str, Any]] = {}


def adapter(pattern: str) -> Callable[..., Any]:
    """``create_agent``'s signature, building ``pattern``."""
    from langgraph.types import RetryPolicy

    from reasoning_graphs.graphs import PATTERNS

    build = PATTERNS[pattern].load_builder()

    def create_agent(
        model: Any,
        tools: Sequence[Any] | None = None,
        *,
        system_prompt: Any = None,
        middleware: Sequence[Any] = (),
        response_format: Any = None,
        state_schema: Any = None,
        context_schema: Any = None,
        checkpointer: Any = None,
        store: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        debug: bool = False,
        name: str | None = None,
        cache: Any = None,
        **rest: Any,
    ) -> Any:
        options: dict[str, Any] = dict(GUARDS_OFF)
        # create_agent's prompt, or none: not our patterns' own instructions
        options["system_prompt"] = (
            "" if system_prompt is None else getattr(system_prompt, "text", system_prompt)
        )
        if response_format is not None:
            options["response_format"] = response_format
        if state_schema is not None:
            options["state_schema"] = state_schema
        if context_schema is not None:
            options["context_schema"] = context_schema
        options.update(rest)
        no_retry = RetryPolicy(max_attempts=1, retry_on=lambda error: False)
        return build(
            model,
            list(tools or ()),
            checkpointer,
            store=store,
            retry=no_retry,
            middleware=list(middleware),
            **options,
        )

    return create_agent


def _install() -> None:
    import langchain.agents
    import langchain.agents.factory

    pattern = os.environ.get(PATTERN_ENV, "create_agent")
    original = langchain.agents.factory.create_agent
    inner = original if pattern == "create_agent" else adapter(pattern)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        if _current:
            _built.add(_current[-1])
        return inner(*args, **kwargs)

    langchain.agents.create_agent = recorded  # type: ignore[assignment]
    langchain.agents.factory.create_agent = recorded  # type: ignore[assignment]


_install()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _current.append(item.nodeid)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    entry = _outcomes.setdefault(report.nodeid, {"outcome": "passed", "error": ""})
    if report.failed:
        entry["outcome"] = "failed"
        crash = getattr(report.longrepr, "reprcrash", None)
        entry["error"] = (crash.message if crash else str(report.longrepr))[:600]
    elif report.skipped and report.when in ("setup", "call"):
        entry["outcome"] = "skipped"


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get(REPORT_ENV)
    if not path:
        return
    for nodeid, entry in _outcomes.items():
        entry["built"] = nodeid in _built
    with open(path, "w") as out:
        json.dump(_outcomes, out, indent=1, sort_keys=True)
