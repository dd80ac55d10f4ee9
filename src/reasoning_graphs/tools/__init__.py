"""Tools: their specs (:mod:`.spec`), registry, policy and execution; built-ins in :mod:`.builtins`.

``tool_spec`` and ``ToolSpec`` are imported on first use, so that importing a module of
this package loads only what that module needs.
"""

from typing import TYPE_CHECKING

from reasoning_graphs.patterns import lazy_attributes

if TYPE_CHECKING:
    from reasoning_graphs.tools.spec import ToolSpec, tool_spec

__all__ = ["ToolSpec", "tool_spec"]

__getattr__ = lazy_attributes(
    __name__,
    {
        "ToolSpec": "reasoning_graphs.tools.spec:ToolSpec",
        "tool_spec": "reasoning_graphs.tools.spec:tool_spec",
    },
)
