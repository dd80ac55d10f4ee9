"""Run-time options: what Studio shows as editable fields and the CLI sets per run.

Every field defaults to ``None``; ``None``, an empty string and an empty list
all mean "use the value the graph was built with", so a run (or a Studio
assistant) changes only what it names. (At build time ``max_steps=None`` and
``token_budget=None`` mean "no limit"; a run cannot lift a limit the graph has.)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

BAD_CONTEXT = "Unknown run option(s) {names}; known options: {known}."


@dataclass(kw_only=True)
class AgentContext:
    """Per-run options for every reasoning-graphs pattern."""

    model: str | None = field(
        default=None,
        metadata={
            "description": "Model spec: 'openai:<model>', 'local' or 'local:<path.gguf>'. "
            "Empty: the graph's model."
        },
    )
    max_steps: int | None = field(
        default=None, metadata={"description": "Model turns allowed before the run must answer."}
    )
    max_tool_calls_per_turn: int | None = field(
        default=None, metadata={"description": "Tool calls one model turn may make."}
    )
    token_budget: int | None = field(
        default=None,
        metadata={"description": "Prompt plus completion tokens allowed per question."},
    )
    approve: list[str] | None = field(
        default=None,
        metadata={
            "description": "Tools whose calls need a person's approval, besides dangerous ones; "
            "['all'] for every tool."
        },
    )
    deny: list[str] | None = field(
        default=None, metadata={"description": "Tools that are blocked outright."}
    )
    tools: list[str] | None = field(
        default=None, metadata={"description": "Tools enabled for this run. Empty: all tools."}
    )


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
        """These limits with the options a run's context names."""
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
            if value is None or value == "" or value == []:
                continue  # empty means "the graph's default", as Studio leaves blank fields
            changes[item.name] = tuple(value) if isinstance(value, list) else value
        return replace(self, **changes)
