"""Run-time options: what Studio shows as editable fields and any run may send.

Every field defaults to ``None``; ``None``, an empty string and an empty list
all mean "use the value the graph was built with", so a run (or a Studio
assistant) changes only what it names.

Any client of the dev server can send these options, so a run may only make a
graph stricter: its budgets may lower the graph's, never raise or remove them
(at build time ``max_steps=None`` and ``token_budget=None`` mean "no limit");
its ``approve`` and ``deny`` lists add to the graph's; its ``tools`` pick among
the graph's tools. Only ``model`` replaces the graph's choice.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

BAD_CONTEXT = "Unknown run option(s) {names}; known options: {known}."
BAD_BUDGET = "Run option {name!r} must be a whole number, not {value!r}."
BAD_NAMES = "Run option {name!r} must be a list of tool names, not {value!r}."
BAD_MODEL = "Run option 'model' must be a model spec string, not {value!r}."
TOOLS_NOT_IN_GRAPH = "Run option 'tools' names {names}, which this graph does not enable: {known}."

BUDGETS = ("max_steps", "max_tool_calls_per_turn", "token_budget")
"""Limits a run may lower, never raise or remove."""
ADDED_LISTS = ("approve", "deny")
"""Tool lists a run adds to, never takes from."""
TOOL_LISTS = (*ADDED_LISTS, "tools")


@dataclass(kw_only=True)
class AgentContext:
    """Per-run options for every reasoning-graphs pattern.

    Values of the wrong type are refused here, so a dev-server run fails at
    its start rather than a string of letters becoming a list of tool names.
    """

    model: str | None = field(
        default=None,
        metadata={
            "description": "Model spec: 'openai:<model>', 'local' or 'local:<path.gguf>'. "
            "Empty: the graph's model."
        },
    )
    max_steps: int | None = field(
        default=None,
        metadata={
            "description": "Model calls per question (all of them, in every step and trial) "
            "before the run must answer. "
            "May lower the graph's limit, not raise it."
        },
    )
    max_tool_calls_per_turn: int | None = field(
        default=None,
        metadata={
            "description": "Tool calls one model turn may make. "
            "May lower the graph's limit, not raise it."
        },
    )
    token_budget: int | None = field(
        default=None,
        metadata={
            "description": "Prompt plus completion tokens allowed per question. "
            "May lower the graph's budget, not raise it."
        },
    )
    approve: list[str] | None = field(
        default=None,
        metadata={
            "description": "Tools whose calls also need a person's approval, added to the "
            "graph's list and to dangerous tools; ['all'] for every tool."
        },
    )
    deny: list[str] | None = field(
        default=None,
        metadata={"description": "Tools blocked outright, added to the graph's list."},
    )
    tools: list[str] | None = field(
        default=None,
        metadata={
            "description": "Tools enabled for this run, among the graph's own. "
            "Empty: all of the graph's tools."
        },
    )

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if _is_unset(value):
                continue
            if item.name in BUDGETS and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(BAD_BUDGET.format(name=item.name, value=value))
            if item.name in TOOL_LISTS and (
                not isinstance(value, (list, tuple)) or not all(isinstance(n, str) for n in value)
            ):
                raise ValueError(BAD_NAMES.format(name=item.name, value=value))
            if item.name == "model" and not isinstance(value, str):
                raise ValueError(BAD_MODEL.format(value=value))


@dataclass(frozen=True)
class Limits:
    """Resolved limits and approval lists for one run (``None`` budgets: no limit)."""

    model: str | None = None
    max_steps: int | None = 10
    max_tool_calls_per_turn: int = 8
    token_budget: int | None = None
    approve: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None

    def apply(self, context: AgentContext | dict[str, Any] | None) -> Limits:
        """These limits made no looser by the options a run's context names."""
        if context is None:
            return self
        if isinstance(context, dict):
            known = {f.name for f in fields(AgentContext)}
            unknown = sorted(set(context) - known)
            if unknown:
                raise ValueError(BAD_CONTEXT.format(names=unknown, known=sorted(known)))
            context = AgentContext(**context)
        changes: dict[str, Any] = {}
        for item in fields(AgentContext):
            value = getattr(context, item.name)
            if _is_unset(value):
                continue  # the graph's default, as Studio leaves blank fields
            built = getattr(self, item.name)
            if item.name in BUDGETS:
                changes[item.name] = value if built is None else min(built, value)
            elif item.name in ADDED_LISTS:
                changes[item.name] = tuple(dict.fromkeys((*built, *value)))
            elif item.name == "tools":
                changes[item.name] = self._narrowed_tools(value)
            else:
                changes[item.name] = value
        return replace(self, **changes)

    def _narrowed_tools(self, enabled: list[str]) -> tuple[str, ...]:
        """A run's tool selection, refused if it names a tool the graph does not enable."""
        if self.tools is not None:
            outside = [name for name in enabled if name not in self.tools]
            if outside:
                raise ValueError(TOOLS_NOT_IN_GRAPH.format(names=outside, known=list(self.tools)))
        return tuple(enabled)


def _is_unset(value: Any) -> bool:
    """``None``, ``""`` and an empty list all mean "the graph's value"."""
    return value is None or (isinstance(value, (str, list, tuple)) and not value)
