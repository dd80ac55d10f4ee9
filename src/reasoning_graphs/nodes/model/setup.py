"""What every node of one graph shares: the model, the tools, the policy and the limits.

A graph is built once; each run may change the model, the enabled tools, the
approval lists and the limits through its context (see :mod:`reasoning_graphs.context`).
:meth:`AgentSetup.for_run` merges the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langgraph.runtime import get_runtime
from langgraph.store.base import BaseStore
from langgraph.types import RetryPolicy
from typing_extensions import Unpack

from reasoning_graphs.context import (
    DEFAULT_MEMORY_USER,
    AgentContext,
    Limits,
    Setting,
    current_names,
    pattern_option,
)
from reasoning_graphs.memory import namespace, run_user
from reasoning_graphs.middleware import (
    AFTER_AGENT,
    AFTER_MODEL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    MODEL_HOOKS,
    TOOL_HOOKS,
    check_distinct,
    check_runnable,
    hook_writable,
    hooked,
)
from reasoning_graphs.models.resolve import resolve_model
from reasoning_graphs.nodes.guards.call_limits import read_call_limits
from reasoning_graphs.nodes.model.bindings import Bindings
from reasoning_graphs.nodes.model.retry import mode_retry_policy
from reasoning_graphs.nodes.model.stream_transformers import TransformerFactory, graph_transformers
from reasoning_graphs.option_bounds import (
    Fraction,
    FreeCount,
    LowerOnly,
    OneOf,
    OnOnly,
    PlainName,
    options_bounded_by,
)
from reasoning_graphs.option_classes import AgentOptions
from reasoning_graphs.response_format import AnswerSchema, answer_schema
from reasoning_graphs.tools.asking import Asking, merged_askings
from reasoning_graphs.tools.builtins import default_tools
from reasoning_graphs.tools.builtins.memory import memory_tools
from reasoning_graphs.tools.policy import Rule, ToolPolicy
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import (
    DEFAULT_MAX_OBSERVATION_CHARS,
    DEFAULT_TIMEOUT_SECONDS,
    ToolDefaults,
    ToolSpec,
)

LIMIT_OPTIONS = options_bounded_by(AgentContext, (LowerOnly, FreeCount, Fraction, OneOf, OnOnly))
"""Build options that set a field of :class:`~reasoning_graphs.context.Limits` directly: the
limits, the checks and the settings of the prompt (not models or tool lists)."""


def agent_setup(
    model: BaseChatModel | str | None,
    tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] | None,
    retry: RetryPolicy | None = None,
    **options: Unpack[AgentOptions],
) -> AgentSetup:
    """The setup a pattern's nodes share; ``tools=None`` means the built-in tools, and
    ``retry=None`` the mode's retries of a failed model call; a ``response_format`` that is
    no schema is a ``ValueError`` here, before any run."""
    response_format = options.get("response_format")
    spec_string, chat_model = (model, None) if isinstance(model, str) else (None, model)
    summary_model = options.get("summary_model")
    summary_spec, summary_chat_model = (
        (summary_model, None) if isinstance(summary_model, str) else (None, summary_model)
    )
    defaults = Limits.preset(options.get("mode"))
    given: Mapping[str, Any] = current_names(options)
    tool_defaults = ToolDefaults(
        timeout=options.get("tool_timeout", DEFAULT_TIMEOUT_SECONDS),
        max_observation_chars=options.get("max_observation_chars", DEFAULT_MAX_OBSERVATION_CHARS),
    )
    memory_user = options.get("memory_user", DEFAULT_MEMORY_USER)
    PlainName().check("memory_user", memory_user)  # as a run's value is checked
    tool_list = list(default_tools() if tools is None else tools)
    if options.get("memory_tools", False):
        tool_list += memory_tools(memory_user)
    approve = options.get("approve", ())
    check_distinct(options.get("middleware", ()))
    asking, middleware = merged_askings(
        approve if isinstance(approve, Mapping) else {}, tuple(options.get("middleware", ()))
    )
    call_limits, middleware = read_call_limits(middleware)
    check_runnable(middleware)
    tool_list += [tool for m in middleware for tool in getattr(m, "tools", ())]
    return AgentSetup(
        registry=ToolRegistry.for_graph(tool_list, tool_defaults),
        limits=replace(
            defaults,
            model=spec_string,
            summary_model=summary_spec,
            approve=() if isinstance(approve, Mapping) else tuple(approve),
            deny=tuple(options.get("deny", ())),
            memory_user=memory_user,
            call_limits=call_limits,
            **{name: value for name, value in given.items() if name in LIMIT_OPTIONS},
        ),
        model=chat_model,
        summary_model=summary_chat_model,
        rules=tuple(options.get("rules", ())),
        system_prompt=options.get("system_prompt", ""),
        retry_policy=retry or mode_retry_policy(options.get("mode")),
        reflect_every=options.get("reflect_every"),
        reflect_on_failure=options.get("reflect_on_failure", False),
        response_format=None if response_format is None else answer_schema(response_format),
        middleware=middleware,
        asking=asking,
        state_schema=options.get("state_schema"),
        context_schema=options.get("context_schema"),
        transformers=graph_transformers(
            options.get("middleware", ()), options.get("transformers", ())
        ),
    )


def options_in(context: Any) -> dict[str, Any] | None:
    """The run options of ours that a user's run context names (its keys, or its
    attributes), as a run's options; ``None`` when it names none."""
    names = {item.name for item in fields(AgentContext)}
    if isinstance(context, Mapping):
        found = {name: context[name] for name in names if name in context}
    else:
        found = {name: getattr(context, name) for name in names if hasattr(context, name)}
    return found or None


MAX_REGISTRIES = 64
"""Tool sets a graph keeps made for its runs (each run may enable its own)."""


@dataclass(frozen=True)
class AgentSetup:
    """Build-time choices of a graph; run-time context may override the limits.

    ``retry_policy`` is how the model-call seam tries a failed call again: it is
    fixed when the graph is built, so a run's ``mode`` tightens the budgets but
    not the retries.
    """

    registry: ToolRegistry
    limits: Limits
    model: BaseChatModel | None = None
    summary_model: BaseChatModel | None = None
    rules: Sequence[Rule] = ()
    system_prompt: str = ""
    retry_policy: RetryPolicy = field(default_factory=lambda: mode_retry_policy(None))
    reflect_every: int | None = None
    reflect_on_failure: bool = False
    response_format: AnswerSchema | None = None
    middleware: tuple[AgentMiddleware, ...] = ()
    asking: Mapping[str, Asking] = field(default_factory=dict)
    state_schema: type | None = None
    """A user's state class, whose fields join the pattern's (``create_agent``'s)."""
    context_schema: type | None = None
    """A user's class of run context, which runs carry in place of the run options' class."""
    transformers: tuple[TransformerFactory, ...] = ()
    """The v3 stream's transformers: the built-in ones, the middleware's, the caller's."""
    bindings: Bindings = field(default_factory=Bindings, compare=False, repr=False)
    # made for runs, never copied: a copy (``dataclasses.replace``) may differ in what they hold
    _registries: dict[tuple[tuple[str, ...] | None, float | None], ToolRegistry] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _plain_scope: RunScope | None = field(default=None, init=False, compare=False, repr=False)

    def run_registry(self, tools: Sequence[str] | None, seconds: float | None) -> ToolRegistry:
        """The tools of a run that enables ``tools`` (``None``: all) with an idle timeout of
        ``seconds``, made once per pair: every step of a run asks for them."""
        key = (None if tools is None else tuple(tools), seconds)
        found = self._registries.get(key)
        if found is None:
            if len(self._registries) >= MAX_REGISTRIES:  # runs may name any subset
                self._registries.clear()
            found = self.registry.select(tools).with_time_limit(seconds)
            self._registries[key] = found
        return found

    @cached_property
    def system(self) -> list[SystemMessage]:
        """The graph's ``system_prompt`` as the prompt's first message; none when it is empty
        (``create_agent`` sends no empty system message either)."""
        return [SystemMessage(self.system_prompt)] if self.system_prompt else []

    def instructed(self, own: str) -> str:
        """A step's own instructions under the graph's ``system_prompt`` (when it has one)."""
        return f"{self.system_prompt}\n\n{own}" if self.system_prompt else own

    @cached_property
    def hook_writable(self) -> frozenset[str]:
        """The state keys a ``wrap_model_call`` hook's command may write."""
        return hook_writable(self.middleware, self.state_schema)

    @cached_property
    def model_hooks(self) -> tuple[AgentMiddleware, ...]:
        """The middleware that wraps model calls, in order."""
        return hooked(self.middleware, MODEL_HOOKS)

    @cached_property
    def before_model_hooks(self) -> tuple[AgentMiddleware, ...]:
        """The middleware with a ``before_model`` hook, in order."""
        return hooked(self.middleware, BEFORE_MODEL)

    @cached_property
    def after_model_hooks(self) -> tuple[AgentMiddleware, ...]:
        """The middleware with an ``after_model`` hook, last first (the order they run in)."""
        return tuple(reversed(hooked(self.middleware, AFTER_MODEL)))

    @cached_property
    def before_agent_hooks(self) -> tuple[AgentMiddleware, ...]:
        """The middleware with a ``before_agent`` hook, in order."""
        return hooked(self.middleware, BEFORE_AGENT)

    @cached_property
    def after_agent_hooks(self) -> tuple[AgentMiddleware, ...]:
        """The middleware with an ``after_agent`` hook, last first (the order they run in)."""
        return tuple(reversed(hooked(self.middleware, AFTER_AGENT)))

    @cached_property
    def tool_hooks(self) -> tuple[AgentMiddleware, ...]:
        """The middleware that wraps tool runs, in order."""
        return hooked(self.middleware, TOOL_HOOKS)

    def for_run(self) -> RunScope:
        """The setup as the current run sees it (its context applied). ``update_state``
        routes from a node without a runtime: the graph's own settings then apply."""
        runtime = get_runtime()
        context = runtime.context if runtime is not None else None
        store = runtime.store if runtime is not None else None
        if context is not None and self.context_schema is not None:
            context = options_in(context)  # the user's context: our options are its keys
        if context is not None:  # a run's own options (a client may change them in place)
            return RunScope(self, self.limits.apply(context), context, store)
        plain = self._plain_scope  # the graph's own options: its tools and policy made once
        if plain is None or plain.store is not store:
            plain = RunScope(self, self.limits, None, store)
            object.__setattr__(self, "_plain_scope", plain)  # one slot: a race only misses
        return plain


@dataclass(frozen=True)
class RunScope:
    """The model, tools and policy of one run."""

    setup: AgentSetup
    limits: Limits
    context: Any = None
    store: BaseStore | None = None
    """The store the graph was compiled with, or the server's: memory across threads."""

    def option(self, name: str, built: Setting) -> Setting:
        """The pattern's option ``name`` for this run: the graph's ``built`` value, or the
        run's own where it may set one (see :func:`reasoning_graphs.context.pattern_option`)."""
        return pattern_option(self.context, name, built)

    @cached_property
    def response_format(self) -> AnswerSchema | None:
        """The shape of this run's typed answer: the graph's, else the run's JSON schema."""
        if self.setup.response_format is not None:
            return self.setup.response_format
        given = self.limits.response_format
        return None if given is None else answer_schema(given)

    @property
    def model(self) -> BaseChatModel:
        """The run's model. One named by a spec is resolved at each use, not kept: a scope
        outlives its event loop (see :meth:`AgentSetup.for_run`), and an async client stays
        bound to the loop it first ran on (:func:`~reasoning_graphs.models.resolve.
        resolve_model` keeps one per loop)."""
        if self.limits.model or self.setup.model is None:
            return resolve_model(self.limits.model)
        return self.setup.model

    @property
    def summary_model(self) -> BaseChatModel:
        """The model that writes the summaries fitting a prompt to the window: the run's
        ``summary_model``, else the graph's, else :attr:`model`."""
        if self.limits.summary_model:
            return resolve_model(self.limits.summary_model)
        return self.setup.summary_model or self.model

    @cached_property
    def registry(self) -> ToolRegistry:
        return self.setup.run_registry(self.limits.tools, self.limits.idle_timeout)

    @cached_property
    def policy(self) -> ToolPolicy:
        return ToolPolicy(
            approve=self.limits.approve,
            deny=self.limits.deny,
            rules=self.setup.rules,
            asking=self.setup.asking,
        )

    def usable_tools(self, state: Mapping[str, Any]) -> list[BaseTool]:
        return [spec.tool for spec in self.usable_specs(state)]

    def usable_specs(self, state: Mapping[str, Any]) -> list[ToolSpec]:
        """This run's tools, less those that read stored observations while none are stored
        and those that need a store when the run has none.

        A tool that can only fail is prompt noise, and small models pick it.
        """
        stored = bool(state.get("observations"))
        return [
            spec
            for spec in self.registry
            if (stored or not spec.injections.observations)
            and (self.store is not None or spec.injections.store is None)
        ]

    def memory_namespace(self, kind: str) -> tuple[str, ...]:
        """Where this run keeps memories of ``kind`` (:func:`reasoning_graphs.memory.namespace`)."""
        return namespace(run_user(self.limits.memory_user), kind)
