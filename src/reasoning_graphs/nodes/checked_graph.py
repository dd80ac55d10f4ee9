"""The compiled graph every pattern returns: its runs are checked before LangGraph starts them.

- A new input and the run's options are checked first
  (:mod:`reasoning_graphs.run_input`), so a malformed run fails with a clear
  error and writes nothing to its thread.
- A resume is addressed to the pending interrupts by id (:mod:`.resume`).
- The run options' schema, which Studio draws as a form, lists the graph's own
  tool names for the options that name tools.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig, ensure_config
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from reasoning_graphs.nodes.resume import addressed, is_resume
from reasoning_graphs.run_input import TOOL_OPTIONS, check_context, check_input, tool_choices


class CheckedGraph(CompiledStateGraph):
    """A compiled graph whose runs are checked first; see the module docstring."""

    def __init__(self, *, tool_names: Sequence[str] = (), **kwargs: Any) -> None:
        """``tool_names``: the tools the graph was built with, all that a run's options may
        name. (LangGraph's copies, e.g. ``with_config``, pass every attribute back in.)"""
        super().__init__(**kwargs)
        self.tool_names = tuple(tool_names)

    def check_run(
        self, input: Any, context: Any = None, config: RunnableConfig | None = None
    ) -> None:
        """Raise :class:`~reasoning_graphs.run_input.RunInputError` for a run that cannot start.

        A run inside another graph's step (a plan step, or this graph as a node of a
        user's graph) gets its input from that graph, which LangGraph fits to the input
        schema itself; only a run's own caller is checked.
        """
        if not isinstance(input, Command) and not _nested(config):
            check_input(input, self.input_fields)
        check_context(context, self.context_schema, self.tool_names)

    @property
    def input_fields(self) -> frozenset[str]:
        """The keys a new input may hold (the input schema's)."""
        schema = self.builder.input_schema
        return frozenset(
            getattr(schema, "__required_keys__", set())
            | getattr(schema, "__optional_keys__", set())
        )

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        self.check_run(input, kwargs.get("context"), config)
        if is_resume(input):
            input = addressed(input, self.get_state(config or {}))
        return super().stream(input, config, **kwargs)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        self.check_run(input, kwargs.get("context"), config)
        if is_resume(input):
            input = addressed(input, await self.aget_state(config or {}))
        async for chunk in super().astream(input, config, **kwargs):
            yield chunk

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        schema = super().get_context_jsonschema()
        if not schema or not self.tool_names:
            return schema
        for name in TOOL_OPTIONS:
            names = tool_choices(name, self.tool_names)
            for branch in schema.get("properties", {}).get(name, {}).get("anyOf", []):
                if branch.get("type") == "array":
                    branch["items"] = {"type": "string", "enum": names}
        return schema


def checked(graph: CompiledStateGraph, tool_names: Sequence[str] = ()) -> CheckedGraph:
    """``graph`` as a :class:`CheckedGraph` (same nodes, channels and config)."""
    graph.__class__ = CheckedGraph
    checked_graph: CheckedGraph = graph  # type: ignore[assignment]
    checked_graph.tool_names = tuple(tool_names)
    return checked_graph


def _nested(config: RunnableConfig | None) -> bool:
    """Whether the run is part of another graph's step (its checkpoints have a namespace)."""
    return bool(ensure_config(config).get("configurable", {}).get("checkpoint_ns"))
