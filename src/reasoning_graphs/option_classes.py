"""The option classes, derived from :mod:`reasoning_graphs.option_table`.

Written by ``python -m reasoning_graphs.option_codegen``: change the table, not this file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from reasoning_graphs.option_bounds import CheckedOptions
from reasoning_graphs.option_table import (
    ContextStrategy,
    Mode,
    StepFormat,
    limit_field,
    run_field,
)

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models import BaseChatModel

    from reasoning_graphs.nodes.model.stream_transformers import TransformerFactory
    from reasoning_graphs.response_format import AnswerFormat
    from reasoning_graphs.tools.policy import Rule


@dataclass(kw_only=True)
class AgentContext(CheckedOptions):
    """Per-run options for every reasoning-graphs pattern (unset: the graph's value).

    Each value a run gives is checked by its option's bound when the options are made,
    so a dev-server run fails at its start; an option that declares no bound cannot be
    given at all.
    """

    model: str | None = run_field("model")
    summary_model: str | None = run_field("summary_model")
    max_model_calls: int | None = run_field("max_model_calls")
    max_tool_rounds: int | None = run_field("max_tool_rounds")
    max_tool_calls_per_turn: int | None = run_field("max_tool_calls_per_turn")
    token_budget: int | None = run_field("token_budget")
    approve: list[str] | None = run_field("approve")
    deny: list[str] | None = run_field("deny")
    tools: list[str] | None = run_field("tools")
    mode: Mode | None = run_field("mode")
    max_tool_calls: int | None = run_field("max_tool_calls")
    time_budget: int | None = run_field("time_budget")
    repeat_failure_limit: int | None = run_field("repeat_failure_limit")
    empty_result_streak: int | None = run_field("empty_result_streak")
    stale_round_limit: int | None = run_field("stale_round_limit")
    repeat_round_limit: int | None = run_field("repeat_round_limit")
    context_strategy: ContextStrategy | None = run_field("context_strategy")
    context_window: int | None = run_field("context_window")
    context_threshold: float | None = run_field("context_threshold")
    keep_messages: int | None = run_field("keep_messages")
    model_timeout: float | None = run_field("model_timeout")
    idle_timeout: float | None = run_field("idle_timeout")
    verify: bool | None = run_field("verify")
    memory_user: str | None = run_field("memory_user")
    response_format: dict[str, Any] | None = run_field("response_format")
    max_steps: int | None = run_field("max_steps")


@dataclass(kw_only=True)
class ReactLoopContext(AgentContext):
    """Per-run options of the patterns whose turn is the ReAct loop (``react``,
    ``react_text``, ``plan_react``): the shared ones plus the loop's own."""

    step_format: StepFormat | None = run_field("step_format")
    reflect_every: int | None = run_field("reflect_every")
    reflect_on_failure: bool | None = run_field("reflect_on_failure")


@dataclass(frozen=True)
class LimitFields:
    """A run's resolved limits and approval lists."""

    model: str | None = limit_field("model")
    summary_model: str | None = limit_field("summary_model")
    max_model_calls: int | None = limit_field("max_model_calls")
    max_tool_rounds: int | None = limit_field("max_tool_rounds")
    max_tool_calls_per_turn: int = limit_field("max_tool_calls_per_turn")
    token_budget: int | None = limit_field("token_budget")
    approve: tuple[str, ...] = limit_field("approve")
    deny: tuple[str, ...] = limit_field("deny")
    tools: tuple[str, ...] | None = limit_field("tools")
    mode: Mode | None = limit_field("mode")
    max_tool_calls: int | None = limit_field("max_tool_calls")
    time_budget: int | None = limit_field("time_budget")
    repeat_failure_limit: int = limit_field("repeat_failure_limit")
    empty_result_streak: int = limit_field("empty_result_streak")
    stale_round_limit: int = limit_field("stale_round_limit")
    repeat_round_limit: int = limit_field("repeat_round_limit")
    context_strategy: ContextStrategy = limit_field("context_strategy")
    context_window: int | None = limit_field("context_window")
    context_threshold: float = limit_field("context_threshold")
    keep_messages: int = limit_field("keep_messages")
    model_timeout: float | None = limit_field("model_timeout")
    idle_timeout: float | None = limit_field("idle_timeout")
    verify: bool = limit_field("verify")
    memory_user: str = limit_field("memory_user")
    response_format: dict[str, Any] | None = limit_field("response_format")


class AgentOptions(TypedDict, total=False):
    """Build-time options shared by the patterns (each pattern's ``build_graph`` adds its own).

    Attributes:
        summary_model: The model that writes the summaries keeping the prompt within the
            context window (a cheaper model may do), as a model spec. Or a chat model.
            Default: the run's model.
        max_model_calls: Model calls per question, in every step and trial (the summaries
            that fit a prompt to the window are not counted), before an incomplete answer.
            None: no limit. Default 10.
        max_tool_rounds: Rounds of tool calls per question; the model call after the last is
            asked with tools off and its reply is the answer. None: no limit.
        max_tool_calls_per_turn: Tool calls one model turn may make; extra calls are
            refused. Default 8.
        token_budget: Prompt plus completion tokens allowed per question. None: no limit.
        approve: Tools whose calls also need a person's approval, besides dangerous ones
            (['all']: every tool). Also a mapping in the interrupt_on shape of LangChain's
            HumanInTheLoopMiddleware: per tool True, False or its allowed_decisions,
            description and when (see reasoning_graphs.tools.asking).
        deny: Tools blocked outright.
        mode: 'chat' (one round of at most 5 tool calls, then the answer) or 'agent' (20
            rounds of 5, then the answer; 200 tool calls and 200k tokens per question):
            presets that only tighten the limits, and set how often a failed model call is
            tried again.
        max_tool_calls: Tool calls per question, in every round, step and trial. None: no
            limit.
        time_budget: Seconds of work (model calls and tool runs) per question; time spent
            waiting for a person does not count. None: no limit.
        repeat_failure_limit: Consecutive rounds with the same failing call before the run
            stops with an explanation. Default 2.
        empty_result_streak: Empty or 'not found' results in a row before the model is told
            to change strategy. Default 3.
        stale_round_limit: Rounds that bring no new information before the model is asked to
            summarise and answer. Default 5.
        repeat_round_limit: Rounds in a row made only of pure tools' calls answered from an
            earlier identical call (nothing ran, nothing could change) before the model's
            next call is made with tools off, for its answer. Default 2.
        context_strategy: How the prompt is kept within the model's window: 'none', 'window'
            (last messages), 'summary', 'protective' (question and recent steps verbatim,
            the middle summarised) or 'hybrid' (each as the prompt grows; active wherever
            the context window is known). Default 'hybrid'.
        context_window: The model's context window in tokens (for 'hybrid'); by default what
            the model declares (its LangChain profile, the embedded model's n_ctx, or the
            context an OpenAI-compatible server reports).
        context_threshold: Share of the context window a prompt may fill before it is
            compressed. Default 0.8.
        keep_messages: Recent messages the 'window' strategy keeps. Default 20.
        model_timeout: Seconds one model call may take before the question stops with an
            incomplete answer. None: no limit.
        idle_timeout: Seconds a model call may send nothing, or a tool run, before the
            question stops with an incomplete answer. None: no limit. Default 600.0.
        verify: After the answer, one more model call lists its claims, each backed by a
            quote of a tool observation (checked) or inferred. Default False.
        memory_user: Whose memory runs read and write in the store (Reflexion's lessons, the
            remember and recall tools): letters, digits, '_', '@' or '-'. A server that
            authenticates users uses the signed-in user instead. Default 'default'.
        response_format: The shape of the final answer: once the question is answered, one
            more model call writes the answer in it, kept as structured_response: an
            object's JSON schema (a run's is ignored by a graph built with a response format
            of its own). Or a Pydantic model class, a TypedDict class, a provider's {'type':
            'json_schema', ...} dict, or LangChain's ToolStrategy or ProviderStrategy of
            one: then the loop's own calls give it, as create_agent's do.
        max_steps: Deprecated: the former name of max_model_calls, read as it (with a
            DeprecationWarning) for one more release.
        tool_timeout: Seconds before a tool call is abandoned, for every tool whose spec
            sets no timeout. None: no limit. Default 30.
        max_observation_chars: Length beyond which a tool's result is cut, for every tool
            whose spec sets none. Default 4000.
        rules: Checks that may block a call before anyone is asked.
        system_prompt: The model's instructions, above each step's own (patterns bring their
            own default).
        memory_tools: Offer the model remember and recall, which keep notes in the run's
            store across threads (only offered when the run has a store). Default False.
        middleware: LangChain AgentMiddleware, first outermost, as create_agent takes it:
            its wrap_model_call hooks wrap every model call the pattern makes, its
            wrap_tool_call hooks every tool run (inside the approval boundary), its
            before_model/after_model hooks each model turn, its before_agent/after_agent
            hooks each question's start and end; its tools join the graph's and its state
            fields the pattern's (see reasoning_graphs.middleware).
        state_schema: A state class (a TypedDict, as create_agent takes it) whose fields
            join the pattern's state and input, as a middleware's state_schema does.
        context_schema: The class of what a run's context carries for the user's own code
            (middleware, tools: runtime.context), as create_agent takes it; the run options
            of ours then come from the keys of that context that name them.
        transformers: Stream transformer factories, each called with a scope, as
            create_agent takes them: they join the graph's v3 stream
            (stream_events(version='v3')) after its own and its middleware's (see
            reasoning_graphs.nodes.model.stream_transformers).
        reflect_every: Tool rounds between the model's reflections on what the latest
            observations gave (shown in its next prompt). None: no reflections.
        reflect_on_failure: Reflect after a round with a failed call (a tool error, a
            refused or invalid call, a timeout). Default False.
    """

    summary_model: BaseChatModel | str | None
    max_model_calls: int | None
    max_tool_rounds: int | None
    max_tool_calls_per_turn: int
    token_budget: int | None
    approve: Sequence[str] | Mapping[str, Any]
    deny: Sequence[str]
    mode: Mode | None
    max_tool_calls: int | None
    time_budget: int | None
    repeat_failure_limit: int
    empty_result_streak: int
    stale_round_limit: int
    repeat_round_limit: int
    context_strategy: ContextStrategy
    context_window: int | None
    context_threshold: float
    keep_messages: int
    model_timeout: float | None
    idle_timeout: float | None
    verify: bool
    memory_user: str
    response_format: AnswerFormat | None
    max_steps: int | None
    tool_timeout: float | None
    max_observation_chars: int
    rules: Sequence[Rule]
    system_prompt: str
    memory_tools: bool
    middleware: Sequence[AgentMiddleware]
    state_schema: type
    context_schema: type
    transformers: Sequence[TransformerFactory]
    reflect_every: int | None
    reflect_on_failure: bool
