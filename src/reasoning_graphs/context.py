"""Run-time options: what Studio shows as editable fields and any run may send.

Every field defaults to ``None``; ``None``, an empty string, an empty list and
an empty object all mean "use the value the graph was built with", so a run (or a Studio
assistant) changes only what it names.

Any client of the dev server can send these options, so a run may only make a
graph stricter, and each option declares how in its entry of
:mod:`~reasoning_graphs.option_table` (its
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

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from reasoning_graphs.option_bounds import (
    bound_named,
    is_unset,
    moved,
    renamed_options,
)
from reasoning_graphs.option_classes import AgentContext, LimitFields, ReactLoopContext
from reasoning_graphs.option_table import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MEMORY_USER,
    ContextStrategy,
    Mode,
    StepFormat,
)

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MEMORY_USER",
    "MODES",
    "AgentContext",
    "ContextStrategy",
    "Limits",
    "Mode",
    "ReactLoopContext",
    "StepFormat",
    "current_names",
    "pattern_option",
    "refuse_unknown_options",
    "run_settings",
]

if TYPE_CHECKING:
    from reasoning_graphs.nodes.guards.call_limits import CallLimit

BAD_CONTEXT = "Unknown run option(s) {names}; known options: {known}."

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


@dataclass(frozen=True)
class Limits(LimitFields):
    """Resolved limits and approval lists for one run (``None`` budgets: no limit); the
    fields and their defaults are the option table's.

    Attributes:
        call_limits: The call limits of the graph's LangChain call-limit middleware
            (:mod:`~reasoning_graphs.nodes.guards.call_limits`); no run option changes them.
    """

    call_limits: tuple[CallLimit, ...] = ()

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
            if item.name != "mode" and not is_unset(getattr(context, item.name))
        }  # the rest are the graph's values, as Studio leaves blank fields
        return replace(limits, **limits._merged(named))

    def _merged(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` (shared run options) as new values, each merged with this one's."""
        return {
            name: bound_named(AgentContext, name).merged(name, getattr(self, name), value)
            for name, value in options.items()
        }


Setting = TypeVar("Setting", int, float, int | None, str)
SettingsT = TypeVar("SettingsT")


def pattern_option(context: AgentContext | None, name: str, built: Setting) -> Setting:
    """A pattern's option as a run's ``context`` sets it, merged with the graph's ``built`` value
    as the option's bound says (a count may only come down). Values were checked when the
    context was made."""
    value = getattr(context, name, None)
    if is_unset(value):
        return built
    merged: Setting = bound_named(type(context), name).merged(name, built, value)
    return merged


def run_settings(settings: SettingsT, context: Any) -> SettingsT:
    """``settings`` (a dataclass of a pattern's values, named as its options) as a run's
    ``context`` sets them, each merged as its option's bound says; a field that is no run
    option stays the graph's."""
    values: Any = settings  # a dataclass instance, which the type variable cannot say
    merged = {
        item.name: pattern_option(context, item.name, getattr(values, item.name))
        for item in fields(values)
    }
    return cast(SettingsT, replace(values, **merged))


def refuse_unknown_options(context: Mapping[str, Any], schema: type) -> None:
    """A ``ValueError`` naming every option of ``context`` that ``schema`` (a dataclass) lacks,
    and its own."""
    known = [item.name for item in fields(schema)]
    unknown = sorted(str(name) for name in context if name not in known)
    if unknown:
        raise ValueError(BAD_CONTEXT.format(names=unknown, known=known))


def current_names(options: Mapping[str, Any]) -> dict[str, Any]:
    """Build ``options`` with each former name given as the option's current one (and a
    ``DeprecationWarning``); the two names with different values are a ``ValueError``."""
    current = dict(options)
    for old, new in renamed_options(AgentContext).items():
        if old in current:
            value = current.pop(old)
            current[new] = moved(old, new, value, current.get(new))
    return current


def _preset(mode: Mode) -> dict[str, Any]:
    """The limits ``mode`` presets (its retries are the graph's, not a limit)."""
    return {name: value for name, value in MODES[mode].items() if name != "retries"}
