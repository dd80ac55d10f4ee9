"""The set of tools one run may use, looked up by name."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from langchain_core.tools import BaseTool

from reasoning_graphs.tools.builtins.observations import READ_OBSERVATION, read_observation
from reasoning_graphs.tools.spec import ToolDefaults, ToolSpec, tool_spec

UNKNOWN_ENABLED_TOOLS = "Unknown tool name(s) {names}; available: {available}."
DUPLICATE_TOOL = "Two tools are named {name!r}; tool names must be unique."
UNKNOWN_TOOL = "Error: there is no tool named {name!r}. Available tools: {available}."
INVALID_ARGUMENTS = (
    "Error: invalid arguments for {name!r}: {problems}. "
    "Call it again with arguments matching this schema: {schema}"
)

ToolLike = BaseTool | Callable[..., Any] | ToolSpec
"""Anything a graph accepts as a tool."""


class ToolRegistry:
    """An ordered, name-unique collection of :class:`ToolSpec`.

    Every spec is stored with the unset timeout and observation length filled
    in from ``defaults``, so the runtime reads concrete values.

    Examples:
        >>> from reasoning_graphs.tools.builtins import calculator
        >>> registry = ToolRegistry([calculator()])
        >>> registry.names()
        ['calculator']
    """

    def __init__(
        self, tools: Iterable[ToolLike] = (), defaults: ToolDefaults | None = None
    ) -> None:
        self.defaults = defaults or ToolDefaults()
        self._specs: dict[str, ToolSpec] = {}
        for item in tools:
            spec = tool_spec(item).with_defaults(self.defaults)
            if spec.name in self._specs:
                raise ValueError(DUPLICATE_TOOL.format(name=spec.name))
            self._specs[spec.name] = spec

    @classmethod
    def for_graph(
        cls, tools: Iterable[ToolLike], defaults: ToolDefaults | None = None
    ) -> ToolRegistry:
        """A graph's tools, plus ``read_observation`` when there is any tool at all.

        Any tool's long result is cut with a pointer to ``read_observation``,
        so the tool that reads the rest must be there too; the model is only
        offered it once something was cut (see ``RunScope.usable_specs``).
        """
        listed = list(tools)
        registry = cls(listed, defaults)
        if listed and READ_OBSERVATION not in registry:
            registry = cls([*listed, read_observation()], defaults)
        return registry

    def brought(self, tool: ToolLike) -> ToolRegistry:
        """These tools with ``tool``, one a middleware handed a call (a dynamic tool, or one in
        place of the graph's of its name), with the same defaults: it runs, and its result
        is cut and kept, as the graph's do."""
        spec = tool_spec(tool)
        kept = [held for name, held in self._specs.items() if name != spec.name]
        return type(self)([*kept, spec], self.defaults)

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def is_read_only(self, name: str) -> bool:
        """Whether calls to ``name`` may overlap with others (an unknown tool may not)."""
        spec = self._specs.get(name)
        return spec is not None and spec.read_only

    def is_pure(self, name: str) -> bool:
        """Whether ``name`` is a pure function of its arguments, so that an identical call may
        be answered from an earlier result (see :attr:`ToolSpec.pure`)."""
        spec = self._specs.get(name)
        return spec is not None and spec.pure

    def is_upkeep(self, name: str) -> bool:
        """Whether calls to ``name`` keep the run's records only, outside the tool budgets."""
        spec = self._specs.get(name)
        return spec is not None and spec.upkeep

    def names(self) -> list[str]:
        return list(self._specs)

    def call_error(self, name: str, args: Mapping[str, Any]) -> str | None:
        """Why ``name(**args)`` cannot run at all (no such tool, arguments off its schema), as
        the observation the model gets; ``None`` when it can. The triage checks each call
        with it once, before a person is asked and before the call runs."""
        spec = self._specs.get(name)
        if spec is None:
            return UNKNOWN_TOOL.format(name=name, available=", ".join(self.names()))
        problems = spec.argument_problems(args)
        if problems:
            schema = json.dumps(spec.argument_schema())
            return INVALID_ARGUMENTS.format(name=name, problems=problems, schema=schema)
        return None

    def tools(self) -> list[BaseTool]:
        return [spec.tool for spec in self._specs.values()]

    def select(self, enabled: Collection[str] | None) -> ToolRegistry:
        """The subset named in ``enabled`` (``None``: all of them).

        ``read_observation`` stays whenever this registry has it: a cut
        observation points at it whichever tool produced it.
        """
        if enabled is None:
            return self
        unknown = [name for name in enabled if name not in self._specs]
        if unknown:
            raise ValueError(UNKNOWN_ENABLED_TOOLS.format(names=unknown, available=self.names()))
        kept = {*enabled, READ_OBSERVATION}
        return ToolRegistry(
            (spec for name, spec in self._specs.items() if name in kept), self.defaults
        )

    def with_time_limit(self, seconds: float | None) -> ToolRegistry:
        """These tools, none running longer than ``seconds`` (a run's idle timeout): a
        tool with no timeout, or a longer one, is abandoned at ``seconds`` instead."""
        if seconds is None or all(_within(spec, seconds) for spec in self):
            return self
        return ToolRegistry(
            (spec if _within(spec, seconds) else replace(spec, timeout=seconds) for spec in self),
            self.defaults,
        )


def _within(spec: ToolSpec, seconds: float) -> bool:
    return isinstance(spec.timeout, (int, float)) and spec.timeout <= seconds
