"""The set of tools one run may use, looked up by name."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from langchain_core.tools import BaseTool

from reasoning_graphs.tools.spec import ToolSpec, tool_spec

UNKNOWN_ENABLED_TOOLS = "Unknown tool name(s) {names}; available: {available}."
DUPLICATE_TOOL = "Two tools are named {name!r}; tool names must be unique."


class ToolRegistry:
    """An ordered, name-unique collection of :class:`ToolSpec`.

    Example:
        >>> from reasoning_graphs.tools.builtins import calculator
        >>> registry = ToolRegistry([calculator()])
        >>> registry.names()
        ['calculator']
    """

    def __init__(self, tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for item in tools:
            spec = tool_spec(item)
            if spec.name in self._specs:
                raise ValueError(DUPLICATE_TOOL.format(name=spec.name))
            self._specs[spec.name] = spec

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
        return spec is not None and spec.concurrency_safe

    def names(self) -> list[str]:
        return list(self._specs)

    def select(self, enabled: Collection[str] | None) -> ToolRegistry:
        """The subset named in ``enabled`` (``None``: all of them)."""
        if enabled is None:
            return self
        unknown = [name for name in enabled if name not in self._specs]
        if unknown:
            raise ValueError(UNKNOWN_ENABLED_TOOLS.format(names=unknown, available=self.names()))
        return ToolRegistry(spec for name, spec in self._specs.items() if name in enabled)
