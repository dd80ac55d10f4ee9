"""What every node of one graph shares: the model, the tools, the policy and the limits.

A graph is built once; each run may change the model, the enabled tools, the
approval lists and the limits through its context (see :mod:`reasoning_graphs.context`).
:meth:`AgentSetup.for_run` merges the two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.runtime import get_runtime

from reasoning_graphs.context import Limits
from reasoning_graphs.models.resolve import resolve_model
from reasoning_graphs.tools.execute import OBSERVATIONS_ARGUMENT
from reasoning_graphs.tools.policy import Rule, ToolPolicy
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec


@dataclass(frozen=True)
class AgentSetup:
    """Build-time choices of a graph; run-time context may override the limits."""

    registry: ToolRegistry
    limits: Limits
    model: BaseChatModel | None = None
    rules: Sequence[Rule] = ()
    system_prompt: str = ""

    def for_run(self) -> RunScope:
        """The setup as the current run sees it (its context applied)."""
        limits = self.limits.apply(get_runtime().context)
        return RunScope(setup=self, limits=limits)


@dataclass(frozen=True)
class RunScope:
    """The model, tools and policy of one run."""

    setup: AgentSetup
    limits: Limits

    @cached_property
    def model(self) -> BaseChatModel:
        if self.limits.model or self.setup.model is None:
            return resolve_model(self.limits.model)
        return self.setup.model

    @cached_property
    def registry(self) -> ToolRegistry:
        return self.setup.registry.select(self.limits.tools)

    @cached_property
    def policy(self) -> ToolPolicy:
        return ToolPolicy(
            approve=self.limits.approve, deny=self.limits.deny, rules=self.setup.rules
        )

    def model_with_tools(
        self, state: Mapping[str, Any], tool_choice: str | None = None
    ) -> Runnable:
        """The model bound to the tools usable now (plain when there are none)."""
        tools = self.usable_tools(state)
        if not tools:
            return self.model
        if tool_choice is None:
            return self.model.bind_tools(tools)
        return self.model.bind_tools(tools, tool_choice=tool_choice)

    def usable_tools(self, state: Mapping[str, Any]) -> list[BaseTool]:
        return [spec.tool for spec in self.usable_specs(state)]

    def usable_specs(self, state: Mapping[str, Any]) -> list[ToolSpec]:
        """This run's tools, less those that read stored observations while none are stored.

        A tool that can only fail is prompt noise, and small models pick it.
        """
        stored = bool(state.get("observations"))
        return [
            spec
            for spec in self.registry
            if stored or OBSERVATIONS_ARGUMENT not in spec.injected_arguments()
        ]
