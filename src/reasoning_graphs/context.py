"""Run-time options: what Studio shows as editable fields and any run may send.

Every field defaults to ``None``; ``None``, an empty string, an empty list and
an empty object all mean "use the value the graph was built with", so a run (or a Studio
assistant) changes only what it names.

Any client of the dev server can send these options, so a run may only make a
graph stricter, and each option declares how where it is defined (its
:mod:`bound <reasoning_graphs.option_bounds>`): budgets and timeouts may be
lowered, never raised or removed (at build time ``max_model_calls=None`` and
``token_budget=None`` mean "no limit"); ``approve`` and ``deny`` add to the
graph's lists; ``tools`` picks among the graph's tools; a ``mode`` is a preset
of budgets and tightens the same way. Only ``model``, ``summary_model`` and the
options that shape the prompt (``context_*``, ``keep_messages``) replace the
graph's choice. An option without a bound cannot be set by a run.

``max_steps`` is the former name of ``max_model_calls`` (a "step" is a plan's):
for one release it is still read, as a run option and as a build option, with a
``DeprecationWarning``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, TypeVar, get_args

from reasoning_graphs.option_bounds import (
    BOUND,
    AddsTools,
    AnswerShape,
    Bound,
    Fraction,
    FreeCount,
    LowerOnly,
    ModelSpec,
    NarrowsTools,
    OneOf,
    OnOnly,
    PlainName,
    RenamedTo,
    bound_of,
)

BAD_CONTEXT = "Unknown run option(s) {names}; known options: {known}."
RENAMED = "Option {old!r} is now called {new!r}; the old name goes in a later release."
BOTH_NAMES = (
    "Options {old!r} and {new!r} are one option under its old and new name, given different "
    "values ({old_value!r}, {new_value!r}): give only {new!r}."
)

Mode = Literal["chat", "agent"]
ContextStrategy = Literal["none", "window", "summary", "protective", "hybrid"]
StepFormat = Literal["free", "structured"]
"""How a ReAct step is written: ``free``, the pattern's own way (native tool calls in
``react``, Thought/Action text in ``react_text``), or ``structured``, a typed reply
(:mod:`~reasoning_graphs.nodes.steps.typed_step`)."""

DEFAULT_MEMORY_USER = "default"
"""Whose memory a run uses when neither the graph nor the run names a user."""

DEFAULT_IDLE_TIMEOUT = 600.0
"""Seconds without any model or tool activity before a question stops (10 minutes)."""

MODES: dict[str, dict[str, Any]] = {
    "chat": {
        "max_tool_rounds": 1,
        "max_model_calls": 2,
        "max_tool_calls_per_turn": 5,
        "retries": 3,
    },
    "agent": {
        "max_tool_rounds": 20,
        "max_model_calls": 21,
        "max_tool_calls_per_turn": 5,
        "max_tool_calls": 200,
        "token_budget": 200_000,
        "retries": 5,
    },
}
"""Presets over the explicit options.

``chat``: one round of at most 5 tool calls, then the answer (2 model calls).
``agent``: 20 rounds of at most 5 calls, then the answer (21 model calls), 200 tool calls
and 200,000 tokens per question. The model call after the last round is asked with tools
off, and its reply is the answer (``max_tool_rounds``); ``max_model_calls`` bounds the model
calls of patterns that make no tool rounds alike. ``retries``: attempts of a model call
that failed for a transient reason (rate limit, timeout, server error): 3 and 5."""

LOWER_ONLY = " May lower the graph's limit, not raise it."
LOWERED_GUARD = " May be lowered, not raised."


def run_option(description: str, *, bound: Bound) -> Any:
    """A run option's field: unset by default (the graph's value), described for Studio, and
    bounded: ``bound`` says how a run may change it."""
    return field(default=None, metadata={"description": description, BOUND: bound})


@dataclass(kw_only=True)
class AgentContext:
    """Per-run options for every reasoning-graphs pattern.

    Each value a run gives is checked by its option's bound here, so a dev-server
    run fails at its start rather than a string of letters becoming a list of tool
    names, and an option that declares no bound cannot be given at all.
    """

    model: str | None = run_option(
        "Model spec: 'openai:<model>', 'local' or 'local:<path.gguf>'. Empty: the graph's model.",
        bound=ModelSpec(),
    )
    summary_model: str | None = run_option(
        "Model spec for the summaries that keep the prompt within the context window (a "
        "cheaper model may do). Empty: the graph's, else the run's model.",
        bound=ModelSpec(),
    )
    max_model_calls: int | None = run_option(
        "Model calls per question (in every step and trial; summaries that fit the prompt to "
        "the window are not counted) before the run must answer." + LOWER_ONLY,
        bound=LowerOnly(least=1),
    )
    max_tool_rounds: int | None = run_option(
        "Rounds of tool calls per question; the model call after the last is asked with tools "
        "off and its reply is the answer." + LOWER_ONLY,
        bound=LowerOnly(least=0),
    )
    max_tool_calls_per_turn: int | None = run_option(
        "Tool calls one model turn may make." + LOWER_ONLY,
        bound=LowerOnly(least=0),
    )
    token_budget: int | None = run_option(
        "Prompt plus completion tokens allowed per question. "
        "May lower the graph's budget, not raise it.",
        bound=LowerOnly(least=1),
    )
    approve: list[str] | None = run_option(
        "Tools whose calls also need a person's approval, added to the graph's list and to "
        "dangerous tools; ['all'] for every tool.",
        bound=AddsTools(),
    )
    deny: list[str] | None = run_option(
        "Tools blocked outright, added to the graph's list.",
        bound=AddsTools(),
    )
    tools: list[str] | None = run_option(
        "Tools enabled for this run, among the graph's own. Empty: all of the graph's tools.",
        bound=NarrowsTools(),
    )
    mode: Mode | None = run_option(
        "'chat' (one round of at most 5 tool calls, then the answer) or 'agent' (20 rounds of "
        "5, then the answer; 200 tool calls and 200k tokens per question): presets that only "
        "tighten the graph's limits.",
        bound=OneOf(get_args(Mode)),
    )
    max_tool_calls: int | None = run_option(
        "Tool calls per question, in every round, step and trial." + LOWER_ONLY,
        bound=LowerOnly(least=0),
    )
    time_budget: int | None = run_option(
        "Seconds of work (model calls and tool runs) per question; time spent waiting for a "
        "person does not count. May lower the graph's, not raise it.",
        bound=LowerOnly(least=1),
    )
    repeat_failure_limit: int | None = run_option(
        "Consecutive rounds with the same failing call before the run stops with an "
        "explanation (default 2)." + LOWERED_GUARD,
        bound=LowerOnly(least=1),
    )
    empty_result_streak: int | None = run_option(
        "Empty or 'not found' results in a row before the model is told to change strategy "
        "(default 3)." + LOWERED_GUARD,
        bound=LowerOnly(least=1),
    )
    stale_round_limit: int | None = run_option(
        "Rounds that bring no new information before the model is asked to summarise and "
        "answer (default 5)." + LOWERED_GUARD,
        bound=LowerOnly(least=1),
    )
    repeat_round_limit: int | None = run_option(
        "Rounds in a row made only of pure tools' calls answered from an earlier identical "
        "call (nothing ran, nothing could change) before the model is asked to answer "
        "(default 2)." + LOWERED_GUARD,
        bound=LowerOnly(least=1),
    )
    context_strategy: ContextStrategy | None = run_option(
        "How the prompt is kept within the model's window: 'none', 'window' (last messages), "
        "'summary', 'protective' (question and recent steps verbatim, the middle summarised) "
        "or 'hybrid' (each as the prompt grows; the default, active wherever the context "
        "window is known).",
        bound=OneOf(get_args(ContextStrategy)),
    )
    context_window: int | None = run_option(
        "The model's context window in tokens (for 'hybrid'). Empty: what the model declares "
        "(its LangChain profile, the embedded model's n_ctx, or the context an "
        "OpenAI-compatible server reports).",
        bound=FreeCount(),
    )
    context_threshold: float | None = run_option(
        "Share of the context window a prompt may fill before it is compressed (default 0.8).",
        bound=Fraction(),
    )
    keep_messages: int | None = run_option(
        "Recent messages the 'window' strategy keeps (default 20).",
        bound=FreeCount(),
    )
    model_timeout: float | None = run_option(
        "Seconds one model call may take before the question stops with an incomplete "
        "answer." + LOWER_ONLY,
        bound=LowerOnly(seconds=True),
    )
    idle_timeout: float | None = run_option(
        "Seconds a model call may send nothing, or a tool run, before the question stops with "
        "an incomplete answer (default 600)." + LOWERED_GUARD,
        bound=LowerOnly(seconds=True),
    )
    verify: bool | None = run_option(
        "After the answer, one more model call lists its claims, each backed by a quote of a "
        "tool observation (checked) or inferred. May turn it on, not off.",
        bound=OnOnly(),
    )
    memory_user: str | None = run_option(
        "Whose memory this run reads and writes (Reflexion's lessons, the remember and recall "
        "tools): letters, digits, '_', '@' or '-'. Empty: the graph's (default 'default'). "
        "A server that authenticates users uses the signed-in user instead.",
        bound=PlainName(),
    )
    response_format: dict[str, Any] | None = run_option(
        "A JSON schema (an object's) for the answer: once the question is answered, one more "
        "model call writes the answer in that shape, kept as structured_response. Ignored by a "
        "graph built with a response format of its own.",
        bound=AnswerShape(),
    )
    max_steps: int | None = run_option(
        "Deprecated: the former name of max_model_calls, read as it for one more release.",
        bound=RenamedTo("max_model_calls"),
    )

    def __post_init__(self) -> None:
        """A value under a former name moves to the current option, checked by that option's
        bound under the name the run used; then each value given is checked by its own bound
        (an option that declares none refuses any)."""
        for old, new in renamed_options(type(self)).items():
            value = getattr(self, old)
            if _is_unset(value):
                continue
            _bound(type(self), new).check(old, value)
            given = getattr(self, new)
            setattr(self, new, _moved(old, new, value, None if _is_unset(given) else given))
            setattr(self, old, None)
        for item in fields(self):
            value = getattr(self, item.name)
            if not _is_unset(value):
                bound_of(item).check(item.name, value)


@dataclass(kw_only=True)
class ReactLoopContext(AgentContext):
    """Per-run options of the patterns whose turn is the ReAct loop (``react``,
    ``react_text``, ``plan_react``): the shared ones plus the loop's own."""

    step_format: StepFormat | None = run_option(
        "How each step is written: 'free' (the pattern's own way: native tool calls in react, "
        "Thought/Action text in react_text) or 'structured' (a typed reply with thought, "
        "action, input, confidence and needs_more_info). Empty: the graph's.",
        bound=OneOf(get_args(StepFormat)),
    )

    reflect_every: int | None = run_option(
        "Tool rounds between the model's reflections on what the latest observations gave "
        "(shown in its next prompt). Empty: the graph's (default: none). May make them more "
        "frequent, not rarer.",
        bound=LowerOnly(least=1),
    )
    reflect_on_failure: bool | None = run_option(
        "Reflect after a round with a failed call (a tool error, a refused or invalid call, "
        "a timeout). May turn it on, not off.",
        bound=OnOnly(),
    )


@dataclass(frozen=True)
class Limits:
    """Resolved limits and approval lists for one run (``None`` budgets: no limit)."""

    model: str | None = None
    max_model_calls: int | None = 10
    max_tool_rounds: int | None = None
    max_tool_calls_per_turn: int = 8
    token_budget: int | None = None
    max_tool_calls: int | None = None
    time_budget: int | None = None
    repeat_failure_limit: int = 2
    empty_result_streak: int = 3
    stale_round_limit: int = 5
    repeat_round_limit: int = 2
    approve: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None
    mode: Mode | None = None
    context_strategy: ContextStrategy = "hybrid"
    context_window: int | None = None
    context_threshold: float = 0.8
    keep_messages: int = 20
    summary_model: str | None = None
    model_timeout: float | None = None
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT
    verify: bool = False
    memory_user: str = DEFAULT_MEMORY_USER
    response_format: dict[str, Any] | None = field(default=None, hash=False)

    @classmethod
    def preset(cls, mode: Mode | None) -> Limits:
        """The default limits, or ``mode``'s: what a graph built with ``mode`` starts from."""
        if mode is None:
            return cls()
        return cls(mode=mode, **_preset(mode))

    def with_mode(self, mode: Mode | None) -> Limits:
        """These limits tightened by ``mode``'s preset; ``None`` leaves them as they are."""
        if mode is None:
            return self
        return replace(self, mode=mode, **self._merged(_preset(mode)))

    def apply(self, context: AgentContext | dict[str, Any] | None) -> Limits:
        """These limits made no looser by the options a run's context names, each merged as
        its bound says.

        A run's ``mode`` tightens like the budgets it presets; budgets the run
        names tighten further.
        """
        if context is None:
            return self
        if isinstance(context, dict):
            refuse_unknown_options(context, AgentContext)
            context = AgentContext(**context)
        limits = self.with_mode(context.mode)
        named = {
            item.name: getattr(context, item.name)
            for item in fields(AgentContext)
            if item.name != "mode" and not _is_unset(getattr(context, item.name))
        }  # the rest are the graph's values, as Studio leaves blank fields
        return replace(limits, **limits._merged(named))

    def _merged(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` (shared run options) as new values, each merged with this one's."""
        return {
            name: _bound(AgentContext, name).merged(name, getattr(self, name), value)
            for name, value in options.items()
        }


Setting = TypeVar("Setting", int, float, int | None, str)


def pattern_option(context: AgentContext | None, name: str, built: Setting) -> Setting:
    """A pattern's option as a run's ``context`` sets it, merged with the graph's ``built`` value
    as the option's bound says (a count may only come down). Values were checked when the
    context was made."""
    value = getattr(context, name, None)
    if _is_unset(value):
        return built
    merged: Setting = _bound(type(context), name).merged(name, built, value)
    return merged


def refuse_unknown_options(context: Mapping[str, Any], schema: type) -> None:
    """A ``ValueError`` naming every option of ``context`` that ``schema`` (a dataclass) lacks,
    and its own."""
    known = [item.name for item in fields(schema)]
    unknown = sorted(str(name) for name in context if name not in known)
    if unknown:
        raise ValueError(BAD_CONTEXT.format(names=unknown, known=known))


def renamed_options(schema: type = AgentContext) -> dict[str, str]:
    """Each former option name of ``schema`` (a dataclass), and the name it now has."""
    return {
        item.name: item.metadata[BOUND].current
        for item in fields(schema)
        if isinstance(item.metadata.get(BOUND), RenamedTo)
    }


def current_names(options: Mapping[str, Any]) -> dict[str, Any]:
    """Build ``options`` with each former name given as the option's current one (and a
    ``DeprecationWarning``); the two names with different values are a ``ValueError``."""
    current = dict(options)
    for old, new in renamed_options().items():
        if old in current:
            value = current.pop(old)
            current[new] = _moved(old, new, value, current.get(new))
    return current


def _moved(old: str, new: str, value: Any, given: Any) -> Any:
    """``value``, given under the former name ``old``, as the option ``new`` (which was
    given as ``given``: ``None`` when unset), with a ``DeprecationWarning``."""
    if given is not None and given != value:
        raise ValueError(BOTH_NAMES.format(old=old, new=new, old_value=value, new_value=given))
    warnings.warn(RENAMED.format(old=old, new=new), DeprecationWarning, stacklevel=3)
    return value


def _preset(mode: Mode) -> dict[str, Any]:
    """The limits ``mode`` presets (its retries are the graph's, not a limit)."""
    return {name: value for name, value in MODES[mode].items() if name != "retries"}


def _bound(schema: type, name: str) -> Bound:
    """The bound that ``schema``'s option ``name`` declares."""
    return bound_of(next(item for item in fields(schema) if item.name == name))


def _is_unset(value: Any) -> bool:
    """``None``, ``""``, an empty list and an empty object all mean "the graph's value"."""
    return value is None or (isinstance(value, (str, list, tuple, dict)) and not value)
