"""Which calls need a person, and which are refused before anyone is asked."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import ToolCallRequest
from langchain_core.messages import ToolCall
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import get_runtime

from reasoning_graphs.review import REVIEW_DECISIONS
from reasoning_graphs.tools.asking import Asking
from reasoning_graphs.tools.injection import tool_runtime
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
        asking: Per-tool approval settings (decisions, description, ``when``; see
            :mod:`~reasoning_graphs.tools.asking`).

    Examples:
        >>> policy = ToolPolicy(rules=[require_arguments("send_email", "to", "body")])
        >>> policy.block_reason("send_email", {"to": "a@b.c"})
        "Blocked by policy: 'send_email' needs non-empty body."
    """

    approve: Collection[str] = ()
    deny: Collection[str] = ()
    rules: Sequence[Rule] = ()
    asking: Mapping[str, Asking] = field(default_factory=dict)

    def needs_approval(
        self,
        spec: ToolSpec | None,
        name: str,
        call: Mapping[str, Any] | None = None,
        state: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether a call of ``name`` needs a person. Without the ``call`` itself, whether
        one may: a tool whose setting has a ``when`` predicate counts as asked about."""
        if APPROVE_ALL in self.approve or name in self.approve:
            return True
        if spec is not None and spec.dangerous:
            return True
        asking = self.asking.get(name)
        if asking is None:
            return False
        if asking.when is None or call is None:
            return True
        return _when_asks(asking, call, state)

    def decisions(self, name: str) -> list[str]:
        """The decisions a person may take on a call of ``name``."""
        asking = self.asking.get(name)
        return list(asking.decisions if asking is not None else REVIEW_DECISIONS)

    def description(self, call: Mapping[str, Any], state: Mapping[str, Any]) -> str | None:
        """What the person reads about ``call`` when its tool's setting says; else ``None``."""
        asking = self.asking.get(call["name"])
        given = asking.description if asking is not None else None
        if given is None or isinstance(given, str):
            return given
        return str(given(_tool_call(call), state, _graph_runtime()))

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


def _tool_call(call: Mapping[str, Any]) -> ToolCall:
    return ToolCall(name=call["name"], args=dict(call["args"]), id=call.get("id"), type="tool_call")


def _graph_runtime() -> Any:
    try:
        return get_runtime()
    except RuntimeError:  # outside a run (a state update routed by hand)
        return None


def _when_asks(asking: Asking, call: Mapping[str, Any], state: Mapping[str, Any] | None) -> bool:
    """``asking.when`` on ``call``, given LangChain's request as its middleware builds one
    (no tool). A predicate that fails asks: a person's look is the safe side."""
    assert asking.when is not None
    seen = dict(state or {})
    runtime = _graph_runtime()
    call_id = str(call.get("id") or "")
    try:
        tool_runtime_ = (
            tool_runtime(runtime, seen, call_id, ())
            if runtime is not None
            else ToolRuntime(
                state=seen,
                context=None,
                config={},
                stream_writer=lambda _: None,
                tool_call_id=call_id,
                store=None,
            )
        )
        request = ToolCallRequest(
            tool_call=_tool_call(call), tool=None, state=seen, runtime=tool_runtime_
        )
        return bool(asking.when(request))
    except Exception:
        return True
