"""Which calls need a person, and which are refused before anyone is asked."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reasoning_graphs.tools.spec import ToolSpec

Rule = Callable[[str, Mapping[str, Any]], "str | None"]
"""A check on one call: return a reason to block it, or ``None`` to let it through."""

DENIED = "Blocked by policy: the tool {name!r} is not allowed in this run."
MISSING_ARGUMENTS = "Blocked by policy: {name!r} needs non-empty {missing}."
APPROVE_ALL = "all"


@dataclass(frozen=True)
class ToolPolicy:
    """Approval and blocking rules for tool calls.

    Attributes:
        approve: Tool names that need approval besides those marked dangerous,
            or ``("all",)`` for every call.
        deny: Tool names that are never run.
        rules: Extra checks; the first reason returned blocks the call.

    Example:
        >>> policy = ToolPolicy(rules=[require_arguments("send_email", "to", "body")])
        >>> policy.block_reason("send_email", {"to": "a@b.c"})
        "Blocked by policy: 'send_email' needs non-empty body."
    """

    approve: Collection[str] = ()
    deny: Collection[str] = ()
    rules: Sequence[Rule] = ()

    def needs_approval(self, spec: ToolSpec | None, name: str) -> bool:
        if APPROVE_ALL in self.approve or name in self.approve:
            return True
        return spec is not None and spec.dangerous

    def block_reason(self, name: str, args: Mapping[str, Any]) -> str | None:
        if name in self.deny:
            return DENIED.format(name=name)
        for rule in self.rules:
            reason = rule(name, args)
            if reason:
                return reason
        return None


def require_arguments(tool_name: str, *required: str) -> Rule:
    """A rule that blocks ``tool_name`` unless every named argument is present and non-empty."""

    def rule(name: str, args: Mapping[str, Any]) -> str | None:
        if name != tool_name:
            return None
        missing = [arg for arg in required if args.get(arg) in (None, "", [], {})]
        if not missing:
            return None
        return MISSING_ARGUMENTS.format(name=name, missing=", ".join(missing))

    return rule
