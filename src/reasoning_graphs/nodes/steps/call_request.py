"""The one request a cleared call travels in, from the runner to its tool, and what comes back.

Every check between a cleared call and its tool is a link of one chain
(:func:`~reasoning_graphs.nodes.steps.tool_task.checked_call`): a link reads the
:class:`CallRequest`, may answer it itself, and otherwise hands it (or a changed copy)
to ``then``, the rest of the chain, whose last step runs the tool.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.tools import BaseTool

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.state import CallDecision, ClearedCall
from reasoning_graphs.tools.output import ToolResult


@dataclass(frozen=True)
class CallRequest:
    """A cleared call on its way to its tool.

    Attributes:
        run: The run's model, tools, policy and limits.
        call: The call as it was cleared (its decision, and a person's seal).
        name: The tool that runs: the cleared call's, or the one a middleware hook handed
            on (a later link decides whether it may).
        args: The arguments that run: the cleared ones, or those a hook handed on.
        observations: Stored full texts, for a tool that reads them.
        state: The graph state, for a tool or a hook that reads it (``None``: none does).
        tool: The tool object a ``wrap_tool_call`` hook handed on for a name the graph does
            not hold (a tool a ``wrap_model_call`` hook added: a dynamic tool).
        needs_person: Whether a person must decide the call, read once where it runs
            (a ``when`` setting is the user's code: its answer must not change between
            the seal's check, the hooks and the journal).
    """

    run: RunScope
    call: ClearedCall
    name: str
    args: Mapping[str, Any]
    observations: Mapping[str, str]
    state: Mapping[str, Any] | None
    needs_person: bool
    tool: BaseTool | None = None

    def handed_on(
        self, name: str, args: Mapping[str, Any], tool: BaseTool | None = None
    ) -> CallRequest:
        """The request as a hook hands it on: its tool, arguments and the tool object a hook
        chose for a tool the graph does not hold (a dynamic tool; ``None``: the graph's)."""
        return replace(self, name=name, args=args, tool=tool)


@dataclass(frozen=True)
class CallOutcome:
    """What became of a cleared call.

    Attributes:
        result: Its observation.
        decision: How it was settled: the cleared decision, ``blocked``, or the person's
            when they were asked again (``rejected``, ``responded``).
        rejection: The person's reason, when they rejected it now.
    """

    result: ToolResult
    decision: CallDecision
    rejection: str | None = None


Next = Callable[[CallRequest], Body[CallOutcome]]
"""The rest of the chain after a link."""

Link = Callable[[CallRequest, Next], Body[CallOutcome]]
"""One check of the chain: the request, and the rest of the chain to hand it to."""
